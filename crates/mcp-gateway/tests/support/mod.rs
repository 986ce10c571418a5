//! What the gateway's peer tests share: a downstream client over the
//! stdio shape, and a gateway in front of servers over the real connector.

#![allow(dead_code, clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::SessionRuntime;
use mcp_catalog::{MaterializeOptions, McpConnector, NamingStyle, RuntimeOptions, ServerSet};
use mcp_config::ServerConfig;
use mcp_gateway::{Gateway, Naming, Relay, serve_stdio};
use mcp_transport::ConnectOptions;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

type Reader = Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>;
type Writer = tokio::io::WriteHalf<tokio::io::DuplexStream>;

/// One downstream client over the stdio shape.
pub(crate) struct Client {
    lines: Reader,
    input: Writer,
    /// Notifications seen while waiting, in order.
    pub(crate) seen: Vec<Value>,
}

impl Client {
    pub(crate) fn of(gateway: &Arc<Gateway>) -> Client {
        let (client, server) = tokio::io::duplex(1 << 20);
        let (server_in, server_out) = tokio::io::split(server);
        tokio::spawn(serve_stdio(Arc::clone(gateway), server_in, server_out));
        let (output, input) = tokio::io::split(client);
        Client {
            lines: BufReader::new(output).lines(),
            input,
            seen: Vec::new(),
        }
    }

    /// A client that opened a 2025-11-25 session (`initialize`, id 1, and
    /// `notifications/initialized`).
    pub(crate) async fn session_of(gateway: &Arc<Gateway>) -> Client {
        let mut client = Client::of(gateway);
        client
            .request(
                1,
                "initialize",
                json!({"protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}),
            )
            .await;
        client
            .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
            .await;
        client
    }

    pub(crate) async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.input.write_all(line.as_bytes()).await.unwrap();
    }

    pub(crate) async fn next(&mut self, within: Duration) -> Option<Value> {
        let line = tokio::time::timeout(within, self.lines.next_line())
            .await
            .ok()?
            .unwrap()
            .expect("the gateway is still there");
        Some(serde_json::from_str(&line).unwrap())
    }

    /// The answer to request `id` (notifications met on the way are kept).
    pub(crate) async fn answer(&mut self, id: u64, method: &str, params: Value) -> Value {
        self.send(json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
        loop {
            let message = self
                .next(Duration::from_secs(30))
                .await
                .expect("an answer within 30 s");
            if message["id"] == id && message.get("method").is_none() {
                return message;
            }
            self.seen.push(message);
        }
    }

    pub(crate) async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let answer = self.answer(id, method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// The error answer of a request that must fail.
    pub(crate) async fn request_error(&mut self, id: u64, method: &str, params: Value) -> Value {
        let answer = self.answer(id, method, params).await;
        answer
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("{method} should have failed: {answer}"))
    }

    /// Waits (at most `within`) for a `notifications/resources/updated`.
    pub(crate) async fn update(&mut self, within: Duration) -> Option<Value> {
        if let Some(at) = self.seen.iter().position(is_update) {
            return Some(self.seen.remove(at));
        }
        let deadline = tokio::time::Instant::now() + within;
        loop {
            let left = deadline.saturating_duration_since(tokio::time::Instant::now());
            let message = self.next(left).await?;
            if is_update(&message) {
                return Some(message);
            }
        }
    }
}

pub(crate) fn is_update(message: &Value) -> bool {
    message["method"] == "notifications/resources/updated"
}

pub(crate) fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A gateway over `servers`, named by `naming`, with the relay their
/// questions go through; the runtime behind it.
pub(crate) fn gateway_over(
    servers: Vec<ServerConfig>,
    naming: Naming,
) -> (Arc<Gateway>, Arc<SessionRuntime>) {
    let relay = Relay::new();
    let env = std::env::var("PATH")
        .map(|path| BTreeMap::from([("PATH".to_owned(), path)]))
        .unwrap_or_default();
    let mut connect = ConnectOptions::default().with_env(env);
    connect.session.handler = Some(relay.handler());
    let options = RuntimeOptions::default()
        .with_materialize(MaterializeOptions::default().with_utility_tools(false));
    let runtime = SessionRuntime::builder(
        "gateway",
        ServerSet::all(servers),
        Arc::new(McpConnector::new(connect)),
    )
    .with_options(options)
    .build();
    let runtime = Arc::new(runtime);
    let gateway = Arc::new(Gateway::new(Arc::clone(&runtime), naming).with_relay(relay));
    (gateway, runtime)
}

/// [`gateway_over`] with prefixed names in Claude Code's style.
pub(crate) fn prefixed_gateway(servers: Vec<ServerConfig>) -> (Arc<Gateway>, Arc<SessionRuntime>) {
    gateway_over(servers, Naming::prefixed(NamingStyle::Claw))
}
