//! The catalog runtime over real transports: `mcp-example-server` child
//! processes over stdio and the same server in-process over `sdk`.

#![allow(clippy::unwrap_used)]

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::{
    CatalogErrorKind, McpConnector, ModelBlock, ResultStatus, ServerSet, SessionRuntime,
};
use mcp_config::{ServerConfig, Timeouts, TransportConfig};
use mcp_integration_tests::harness::{StdioHarness, entry, test_env};
use mcp_integration_tests::server::{ExampleServer, ServerOptions};
use mcp_transport::ConnectOptions;
use mcp_transport::kinds::SdkRegistry;
use serde_json::json;

fn stdio_entry(name: &str, options: ServerOptions) -> ServerConfig {
    let mut config = StdioHarness::new(env!("CARGO_BIN_EXE_mcp-example-server"))
        .config(&options, Timeouts::default());
    config.name = name.to_owned();
    config
}

fn connector() -> McpConnector {
    let mut registry = SdkRegistry::new();
    registry.register(
        "example",
        Arc::new(ExampleServer::new(ServerOptions::default()))
            as Arc<dyn mcp_transport::kinds::SdkServer>,
    );
    McpConnector::new(
        ConnectOptions::default()
            .with_env(test_env())
            .with_sdk_servers(Arc::new(registry)),
    )
}

fn runtime(servers: Vec<ServerConfig>) -> SessionRuntime {
    SessionRuntime::builder("session", ServerSet::all(servers), Arc::new(connector()))
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build()
}

async fn text_of(runtime: &SessionRuntime, tool: &str) -> String {
    let result = runtime.call(tool, json!({})).await.unwrap();
    match &result.content[0] {
        ModelBlock::Text { text } => text.clone(),
        other => panic!("text expected, got {other:?}"),
    }
}

fn alive(pid: &str) -> bool {
    Path::new("/proc").join(pid).exists()
}

#[tokio::test]
async fn stdio_and_sdk_servers_build_one_catalog_and_answer_calls() {
    let sdk = entry(
        "inproc",
        TransportConfig::Sdk {
            name: "example".into(),
        },
        Timeouts::default(),
    );
    let runtime = runtime(vec![
        stdio_entry("alpha", ServerOptions::default()),
        stdio_entry("beta", ServerOptions::default()),
        sdk,
    ]);
    let catalog = runtime.catalog().await.unwrap();
    for server in ["alpha", "beta", "inproc"] {
        assert!(
            catalog.get(&format!("{server}__echo")).is_some(),
            "{:#?}",
            catalog.report()
        );
        // the example server has a resource and a prompt
        assert!(catalog.get(&format!("{server}__resources_read")).is_some());
        assert!(catalog.get(&format!("{server}__prompts_get")).is_some());
    }
    let echo = runtime
        .call("beta__echo", json!({"text": "hello"}))
        .await
        .unwrap();
    assert_eq!(echo.status, ResultStatus::Ok);
    let fail = runtime.call("alpha__fail", json!({})).await.unwrap();
    assert_eq!(fail.status, ResultStatus::Error);
    assert_eq!(
        fail.content,
        vec![ModelBlock::Text {
            text: "this tool always fails".into()
        }]
    );
    let read = runtime
        .call(
            "inproc__resources_read",
            json!({"uri": "example://greeting"}),
        )
        .await
        .unwrap();
    assert_eq!(read.status, ResultStatus::Ok);
    let error = runtime
        .call("alpha__echo", json!({"text": 5}))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), CatalogErrorKind::InvalidArguments { path, .. } if path == "/text"),
        "{error}"
    );
    runtime.shutdown().await;
}

/// A `touch` on the server invalidates the catalog without a reconnect:
/// over the `notifications/tools/list_changed` of the session at
/// 2025-11-25, over `subscriptions/listen` at 2026-07-28.
async fn list_changed_rebuilds_without_reconnecting(server: ServerOptions, modern: bool) {
    let runtime = runtime(vec![stdio_entry("alpha", server)]);
    let before = runtime.catalog().await.unwrap();
    assert!(before.get("alpha__touched-0").is_none());
    let pid = text_of(&runtime, "alpha__pid").await;
    if modern {
        // The subscription opens in the background: a change made before
        // the server has it would reach no one.
        for _ in 0..250 {
            if text_of(&runtime, "alpha__listeners").await != "0" {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        assert_eq!(text_of(&runtime, "alpha__listeners").await, "1");
    }
    runtime.call("alpha__touch", json!({})).await.unwrap();
    // the notification arrives on the session's reader; wait for it
    let mut after = runtime.catalog().await.unwrap();
    for _ in 0..100 {
        if after.get("alpha__touched-0").is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
        after = runtime.catalog().await.unwrap();
    }
    assert!(
        after.get("alpha__touched-0").is_some(),
        "{:#?}",
        after.report()
    );
    assert_eq!(text_of(&runtime, "alpha__pid").await, pid, "same process");
    runtime.shutdown().await;
}

#[tokio::test]
async fn list_changed_from_a_real_server_rebuilds_without_reconnecting() {
    list_changed_rebuilds_without_reconnecting(ServerOptions::default().legacy(), false).await;
}

#[tokio::test]
async fn list_changed_over_subscriptions_listen_rebuilds_without_reconnecting() {
    list_changed_rebuilds_without_reconnecting(ServerOptions::default(), true).await;
}

#[tokio::test]
async fn a_crashed_server_is_reconnected_and_a_changed_entry_restarts_only_itself() {
    let runtime = runtime(vec![
        stdio_entry("alpha", ServerOptions::default()),
        stdio_entry("beta", ServerOptions::default()),
    ]);
    runtime.catalog().await.unwrap();
    let alpha = text_of(&runtime, "alpha__pid").await;
    let beta = text_of(&runtime, "beta__pid").await;

    // crash: the call fails, the session ends, the next attempt reconnects
    runtime.call("alpha__crash", json!({})).await.unwrap_err();
    for _ in 0..100 {
        if !runtime.is_connected("alpha") {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    runtime.catalog().await.unwrap();
    let alpha_after_crash = text_of(&runtime, "alpha__pid").await;
    assert_ne!(alpha_after_crash, alpha);
    assert_eq!(text_of(&runtime, "beta__pid").await, beta);

    // a changed entry reconnects that server only
    let changed = stdio_entry(
        "beta",
        ServerOptions {
            name: "beta-2".into(),
            ..ServerOptions::default()
        },
    );
    let reconciled = runtime
        .reconcile(ServerSet::all([
            stdio_entry("alpha", ServerOptions::default()),
            changed,
        ]))
        .await;
    assert_eq!(reconciled.touched(), ["beta"]);
    runtime.catalog().await.unwrap();
    let beta_after = text_of(&runtime, "beta__pid").await;
    assert_ne!(beta_after, beta);
    assert_eq!(text_of(&runtime, "alpha__pid").await, alpha_after_crash);
    for _ in 0..150 {
        if !alive(&beta) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(&beta), "the old beta process is gone");

    runtime.shutdown().await;
    assert!(
        !alive(&alpha_after_crash) && !alive(&beta_after),
        "shutdown ends every child"
    );
}

#[tokio::test]
async fn a_required_server_that_never_initialises_fails_the_build() {
    let mut stuck = stdio_entry(
        "stuck",
        ServerOptions {
            never_answer_initialize: true,
            ..ServerOptions::default()
        },
    );
    stuck.required = true;
    stuck.timeouts.connect = Duration::from_millis(500);
    let runtime = runtime(vec![stuck, stdio_entry("alpha", ServerOptions::default())]);
    let error = runtime.catalog().await.unwrap_err();
    assert!(
        error
            .to_string()
            .starts_with("required server \"stuck\" failed: "),
        "{error}"
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn an_optional_server_that_fails_is_a_diagnostic() {
    let broken = stdio_entry(
        "broken",
        ServerOptions {
            exit_during_initialize: true,
            ..ServerOptions::default()
        },
    );
    let runtime = runtime(vec![broken, stdio_entry("alpha", ServerOptions::default())]);
    let catalog = runtime.catalog().await.unwrap();
    assert!(catalog.get("alpha__echo").is_some());
    let diagnostic = catalog
        .diagnostics()
        .iter()
        .find(|d| d.server == "broken")
        .unwrap();
    assert!(
        diagnostic
            .message
            .starts_with("server \"broken\" is unavailable: "),
        "{}",
        diagnostic.message
    );
    runtime.shutdown().await;
}

#[tokio::test]
async fn progress_reaches_the_caller() {
    let runtime = runtime(vec![stdio_entry("alpha", ServerOptions::default())]);
    let catalog = runtime.catalog().await.unwrap();
    let tool = catalog.get("alpha__slow").unwrap();
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
    let sink = Arc::clone(&seen);
    let progress: mcp_transport::ProgressCallback =
        Arc::new(move |p: mcp_transport::Progress| sink.lock().unwrap().push(p.progress));
    let result = runtime
        .call_tool_with_progress(tool, json!({"steps": 3, "step_ms": 10}), Some(progress))
        .await
        .unwrap();
    assert_eq!(result.status, ResultStatus::Ok);
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
    runtime.shutdown().await;
}

#[tokio::test]
async fn dropping_a_runtime_without_shutdown_ends_its_children() {
    let runtime = runtime(vec![stdio_entry("alpha", ServerOptions::default())]);
    runtime.catalog().await.unwrap();
    let pid = text_of(&runtime, "alpha__pid").await;
    drop(runtime);
    for _ in 0..250 {
        if !alive(&pid) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(!alive(&pid), "the child outlived its runtime");
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
