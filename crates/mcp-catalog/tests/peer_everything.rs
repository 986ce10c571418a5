//! The catalog of a real peer no one on this project wrote:
//! `@modelcontextprotocol/server-everything` over stdio. Snapshots of every
//! provider profile, and the runtime calling its tools.
//!
//! The peer comes from `cargo xtask peers` (into `.peers/`). Each test is
//! ignored by a plain `cargo test`; run with `-- --include-ignored`, a
//! missing peer fails it with the command that installs the peers.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

mod support;

use mcp_test_peers as peers;

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_catalog::{Connector, ServerEvents, ServerSet, SessionRuntime};
use mcp_catalog::{
    MaterializeOptions, McpConnector, ModelBlock, NamingStyle, ProviderProfile, ServerTools,
    materialize,
};
use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::ConnectOptions;
use serde_json::json;

/// The server-everything entry; a missing peer fails the test.
fn everything() -> ServerConfig {
    let script = peers::everything_script();
    let node = peers::node22();
    ServerConfig::new(
        "everything",
        TransportConfig::Stdio(
            StdioConfig::new(node.to_string_lossy().into_owned())
                .with_args(vec![script.to_string_lossy().into_owned(), "stdio".into()]),
        ),
    )
    .with_required(true)
}

fn connector() -> McpConnector {
    let env = std::env::var("PATH")
        .map(|path| BTreeMap::from([("PATH".to_string(), path)]))
        .unwrap_or_default();
    McpConnector::new(ConnectOptions::default().with_env(env))
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn server_everything_catalog_in_every_profile() {
    let config = everything();
    // One listing through a bare connection, materialised per profile.
    let connection = connector()
        .connect(&config, ServerEvents::detached("everything"))
        .await
        .unwrap();
    let listing = ServerTools::new("everything", connection.list_tools().await.unwrap())
        .with_features(connection.features());
    connection.close().await;
    assert!(listing.tools.iter().any(|t| t.name == "echo"));

    for (style, profile) in [
        (NamingStyle::OpenClaw, ProviderProfile::Generic),
        (NamingStyle::OpenClaw, ProviderProfile::Anthropic),
        (NamingStyle::OpenClaw, ProviderProfile::OpenAiStrict),
        (NamingStyle::OpenClaw, ProviderProfile::Gemini),
        (NamingStyle::Claw, ProviderProfile::Anthropic),
    ] {
        let options = MaterializeOptions::default()
            .with_style(style)
            .with_profile(profile);
        let catalog = materialize(std::slice::from_ref(&listing), &options);
        for tool in catalog.tools() {
            let problems = support::problems_for(profile, tool.input_schema());
            assert!(
                problems.is_empty(),
                "{} {}: {problems:?}",
                profile.as_str(),
                tool.name()
            );
        }
        insta::assert_json_snapshot!(
            format!("everything_{}_{}", style.as_str(), profile.as_str()),
            catalog.report()
        );
    }
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn the_runtime_calls_server_everything() {
    let config = everything();
    let runtime = SessionRuntime::builder("peer", ServerSet::all([config]), Arc::new(connector()))
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build();
    let catalog = runtime.catalog().await.unwrap();
    assert!(
        catalog.get("everything__echo").is_some(),
        "{:#?}",
        catalog.report()
    );
    // Its instructions, surfaced for the host, within the cut.
    let instructions = catalog.instructions();
    assert_eq!(instructions.len(), 1, "{instructions:?}");
    assert_eq!(instructions[0].server, "everything");
    assert!(!instructions[0].text.is_empty());
    assert!(instructions[0].text.chars().count() <= mcp_catalog::tools::MAX_INSTRUCTIONS_CHARS);
    let combined = catalog.combined_instructions().unwrap();
    assert!(combined.starts_with("## everything\n"), "{combined}");

    let echo = runtime
        .call("everything__echo", json!({"message": "hi"}))
        .await
        .unwrap();
    assert!(!echo.is_error());
    assert_eq!(
        echo.content,
        vec![ModelBlock::Text {
            text: "Echo: hi".into()
        }]
    );

    let sum = runtime
        .call("everything__get-sum", json!({"a": 2, "b": 3}))
        .await
        .unwrap();
    let ModelBlock::Text { text } = &sum.content[0] else {
        panic!("text expected: {sum:?}")
    };
    assert!(text.contains('5'), "{text}");

    let image = runtime
        .call("everything__get-tiny-image", json!({}))
        .await
        .unwrap();
    assert!(
        image
            .content
            .iter()
            .any(|b| matches!(b, ModelBlock::Image { mime_type, .. } if mime_type == "image/png")),
        "{image:?}"
    );

    let structured = runtime
        .call(
            "everything__get-structured-content",
            json!({"location": "New York"}),
        )
        .await
        .unwrap();
    let ModelBlock::Text { text } = &structured.content[0] else {
        panic!("text expected")
    };
    assert!(text.starts_with("structuredContent:\n{"), "{text}");

    // it lists resources and prompts, so it keeps its utility tools, and
    // prompts_get takes its arguments as an object
    for utility in [
        "resources_list",
        "resources_read",
        "prompts_list",
        "prompts_get",
    ] {
        let name = format!("everything__{utility}");
        assert!(catalog.get(&name).is_some(), "{name} missing");
    }
    let prompt = runtime
        .call(
            "everything__prompts_get",
            json!({"name": "args-prompt", "arguments": {"city": "Paris"}}),
        )
        .await
        .unwrap();
    assert!(
        prompt
            .content
            .iter()
            .any(|b| matches!(b, ModelBlock::Text { text } if text.contains("Paris"))),
        "{prompt:?}"
    );
    // an unknown argument name is warned on
    let warned = runtime
        .call("everything__echo", json!({"message": "hi", "loud": true}))
        .await
        .unwrap();
    assert_eq!(
        warned.warnings,
        ["argument `loud` is not in the schema of tool `everything__echo`; it takes: message"]
    );

    // arguments are checked before anything goes out
    let error = runtime
        .call("everything__get-sum", json!({"a": "two", "b": 3}))
        .await
        .unwrap_err();
    assert!(error.to_string().contains("at /a"), "{error}");

    // the session stays open between turns
    let again = runtime.catalog().await.unwrap();
    assert_eq!(again.tools().len(), catalog.tools().len());
    assert!(runtime.is_connected("everything"));
    runtime.shutdown().await;
    assert!(!runtime.is_connected("everything"));
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
