//! Tool search for hosts that lack it: with a token budget, the gateway
//! lists the pinned tools and what fits, plus `search_tools`; a search
//! loads what it finds, the client is told the list changed, and the
//! found tool is then listed and callable. Over stdio, at 2025-11-25.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::{
    MaterializeOptions, McpConnector, NamingStyle, RuntimeOptions, ServerSet, SessionRuntime,
    ToolBudget,
};
use mcp_config::{ServerConfig, TransportConfig};
use mcp_gateway::{Gateway, Naming, serve_stdio};
use mcp_transport::ConnectOptions;
use mcp_transport::kinds::{SdkRegistry, ToolOutput, ToolRouter, ToolSpec};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

/// Thirty tools `tool_00`…`tool_29`, each with a long description, and
/// one the search will look for.
fn router() -> ToolRouter {
    let mut router = ToolRouter::new("many", "1.0.0");
    for n in 0..30 {
        router = router.with_tool(
            ToolSpec::new(format!("tool_{n:02}"), json!({"type": "object"})).with_description(
                format!("Tool number {n}, which does a thing. {}", "x ".repeat(80)),
            ),
            move |_: Value| async move { Ok::<_, String>(ToolOutput::text(format!("tool {n}"))) },
        );
    }
    router.with_tool(
        ToolSpec::new("weather_forecast", json!({"type": "object"})).with_description(format!(
            "Forecasts the weather of a city. {}",
            "y ".repeat(80)
        )),
        |_: Value| async move { Ok::<_, String>(ToolOutput::text("sunny")) },
    )
}

struct Client {
    lines: Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>,
    input: tokio::io::WriteHalf<tokio::io::DuplexStream>,
    /// Notifications seen while waiting for answers.
    notices: Vec<String>,
}

impl Client {
    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let line = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params});
        self.input
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        loop {
            let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
                .await
                .expect("an answer within 10 s")
                .unwrap()
                .expect("the gateway is still there");
            let message: Value = serde_json::from_str(&line).unwrap();
            if message["id"] == id {
                return message["result"].clone();
            }
            if let Some(method) = message["method"].as_str() {
                self.notices.push(method.to_owned());
            }
        }
    }
}

fn names(listed: &Value) -> Vec<String> {
    listed["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|tool| tool["name"].as_str().unwrap().to_owned())
        .collect()
}

#[tokio::test]
async fn a_search_adds_what_it_finds_and_the_client_hears_of_it() {
    let mut registry = SdkRegistry::new();
    registry.register("many", Arc::new(router()));
    let connector =
        McpConnector::new(ConnectOptions::default().with_sdk_servers(Arc::new(registry)));
    let server = ServerConfig::new(
        "many",
        TransportConfig::Sdk {
            name: "many".into(),
        },
    );
    let budget = ToolBudget::new(600).with_pinned(["mcp__many__tool_29"]);
    let options = RuntimeOptions::default().with_materialize(
        MaterializeOptions::default()
            .with_utility_tools(false)
            .with_budget(budget),
    );
    let runtime = SessionRuntime::builder("search", ServerSet::all([server]), Arc::new(connector))
        .with_options(options)
        .build();
    let gateway = Arc::new(Gateway::new(
        Arc::new(runtime),
        Naming::prefixed(NamingStyle::Claw),
    ));
    let (client, server) = tokio::io::duplex(1 << 20);
    let (server_in, server_out) = tokio::io::split(server);
    tokio::spawn(serve_stdio(gateway, server_in, server_out));
    let (output, input) = tokio::io::split(client);
    let mut client = Client {
        lines: BufReader::new(output).lines(),
        input,
        notices: Vec::new(),
    };
    client
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
            "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;

    let listed = names(&client.request(2, "tools/list", json!({})).await);
    assert!(listed.contains(&"search_tools".to_owned()), "{listed:?}");
    assert!(
        listed.contains(&"mcp__many__tool_29".to_owned()),
        "pinned: {listed:?}"
    );
    assert!(
        listed.len() < 31,
        "the budget listed everything: {listed:?}"
    );
    assert!(!listed.contains(&"mcp__many__weather_forecast".to_owned()));

    let found = client
        .request(
            3,
            "tools/call",
            json!({"name": "search_tools", "arguments": {"query": "weather forecast"}}),
        )
        .await;
    assert_eq!(found["isError"], false, "{found}");
    let text = found["content"][0]["text"].as_str().unwrap();
    assert!(text.contains("mcp__many__weather_forecast"), "{text}");

    let relisted = names(&client.request(4, "tools/list", json!({})).await);
    assert!(
        client
            .notices
            .iter()
            .any(|notice| notice == "notifications/tools/list_changed"),
        "no list change announced: {:?}",
        client.notices
    );
    assert!(
        relisted.contains(&"mcp__many__weather_forecast".to_owned()),
        "{relisted:?}"
    );
    let called = client
        .request(
            5,
            "tools/call",
            json!({"name": "mcp__many__weather_forecast", "arguments": {}}),
        )
        .await;
    assert_eq!(called["content"][0]["text"], "sunny", "{called}");
}
