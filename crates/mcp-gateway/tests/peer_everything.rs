//! The gateway in front of a server no one here wrote
//! (`@modelcontextprotocol/server-everything`, 2025-11-25):
//!
//! - Resource updates: it sends `notifications/resources/updated` for
//!   what it is subscribed to once its `toggle-subscriber-updates` tool is
//!   on. A 2025-11-25 session that subscribes and a 2026-07-28
//!   `subscriptions/listen` that names the resource both hear of it under
//!   the gateway's URI, and each stops hearing once it unsubscribes or its
//!   listen ends while the other still hears.
//! - Its own question to a 2026-07-28 client: `trigger-elicitation-request`
//!   asks with an `elicitation/create` of its own; the client gets it as an
//!   input round, answers in its retry, and the call ends with what the
//!   server made of the answer.
//! - Prompts: got by the prefixed name the gateway lists, twice (the
//!   second from the routes the first learned); an unlisted name refused.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::SessionRuntime;
use mcp_catalog::{MaterializeOptions, McpConnector, NamingStyle, RuntimeOptions, ServerSet};
use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_gateway::{Gateway, Naming, Relay, serve_stdio};
use mcp_test_peers as peers;
use mcp_transport::ConnectOptions;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

type Reader = Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>;
type Writer = tokio::io::WriteHalf<tokio::io::DuplexStream>;

/// One downstream client over the stdio shape.
struct Client {
    lines: Reader,
    input: Writer,
    /// Notifications seen while waiting, in order.
    seen: Vec<Value>,
}

impl Client {
    fn of(gateway: &Arc<Gateway>) -> Client {
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

    async fn send(&mut self, message: Value) {
        let line = format!("{message}\n");
        self.input.write_all(line.as_bytes()).await.unwrap();
    }

    async fn next(&mut self, within: Duration) -> Option<Value> {
        let line = tokio::time::timeout(within, self.lines.next_line())
            .await
            .ok()?
            .unwrap()
            .expect("the gateway is still there");
        Some(serde_json::from_str(&line).unwrap())
    }

    /// The answer to request `id` (notifications met on the way are kept).
    async fn answer(&mut self, id: u64, method: &str, params: Value) -> Value {
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

    async fn request(&mut self, id: u64, method: &str, params: Value) -> Value {
        let answer = self.answer(id, method, params).await;
        assert!(answer.get("error").is_none(), "{method}: {answer}");
        answer["result"].clone()
    }

    /// The error answer of a request that must fail.
    async fn request_error(&mut self, id: u64, method: &str, params: Value) -> Value {
        let answer = self.answer(id, method, params).await;
        answer
            .get("error")
            .cloned()
            .unwrap_or_else(|| panic!("{method} should have failed: {answer}"))
    }

    /// Waits (at most `within`) for a `notifications/resources/updated`.
    async fn update(&mut self, within: Duration) -> Option<Value> {
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

fn is_update(message: &Value) -> bool {
    message["method"] == "notifications/resources/updated"
}

fn modern_meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    })
}

/// A gateway in front of server-everything, with the relay its
/// questions go through.
fn everything_gateway() -> (Arc<Gateway>, Arc<SessionRuntime>) {
    let server = ServerConfig::new(
        "everything",
        TransportConfig::Stdio(
            StdioConfig::new(peers::node22().to_string_lossy().into_owned()).with_args(vec![
                peers::everything_script().to_string_lossy().into_owned(),
                "stdio".into(),
            ]),
        ),
    );
    let relay = Relay::new();
    let env = std::env::var("PATH")
        .map(|path| BTreeMap::from([("PATH".to_owned(), path)]))
        .unwrap_or_default();
    let mut connect = ConnectOptions::default().with_env(env);
    connect.session.handler = Some(relay.handler());
    let options = RuntimeOptions::default()
        .with_materialize(MaterializeOptions::default().with_utility_tools(false));
    let runtime = SessionRuntime::builder(
        "updates",
        ServerSet::all([server]),
        Arc::new(McpConnector::new(connect)),
    )
    .with_options(options)
    .build();
    let runtime = Arc::new(runtime);
    let gateway = Arc::new(
        Gateway::new(Arc::clone(&runtime), Naming::prefixed(NamingStyle::Claw)).with_relay(relay),
    );

    (gateway, runtime)
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_resource_update_reaches_every_client_that_follows_it() {
    let (gateway, runtime) = everything_gateway();

    // A 2025-11-25 session subscribes to the first resource listed.
    let mut session = Client::of(&gateway);
    session
        .request(
            1,
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}),
        )
        .await;
    session
        .send(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    let listed = session.request(2, "resources/list", json!({})).await;
    let uri = listed["resources"][0]["uri"].as_str().unwrap().to_owned();
    assert!(uri.starts_with("mcp-gateway://everything/"), "{uri}");
    assert_eq!(
        session
            .request(3, "resources/subscribe", json!({"uri": uri}))
            .await,
        json!({})
    );

    // A 2026-07-28 client follows the same resource on a listen.
    let mut listener = Client::of(&gateway);
    listener
        .send(
            json!({"jsonrpc": "2.0", "id": "listen-1", "method": "subscriptions/listen",
            "params": {"_meta": modern_meta(),
                "notifications": {"resourceSubscriptions": [uri, "mcp-gateway://nowhere/x"]}}}),
        )
        .await;
    let acknowledged = listener.next(Duration::from_secs(30)).await.unwrap();
    assert_eq!(
        acknowledged["method"], "notifications/subscriptions/acknowledged",
        "{acknowledged}"
    );
    assert_eq!(
        acknowledged["params"]["notifications"]["resourceSubscriptions"],
        json!([uri]),
        "a resource of no server is left out: {acknowledged}"
    );

    // The server starts sending updates for what it is subscribed to.
    let tools = session.request(4, "tools/list", json!({})).await;
    let toggle = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| name.ends_with("toggle-subscriber-updates"))
        .expect("server-everything's toggle-subscriber-updates")
        .to_owned();
    session
        .request(5, "tools/call", json!({"name": toggle, "arguments": {}}))
        .await;

    let heard = session
        .update(Duration::from_secs(15))
        .await
        .expect("the session hears of the update");
    assert_eq!(heard["params"]["uri"], uri, "{heard}");
    let heard = listener
        .update(Duration::from_secs(15))
        .await
        .expect("the listen hears of the update");
    assert_eq!(heard["params"]["uri"], uri, "{heard}");
    assert_eq!(
        heard["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"], "listen-1",
        "{heard}"
    );

    // The session unsubscribes: the listen still hears, the session not.
    assert_eq!(
        session
            .request(6, "resources/unsubscribe", json!({"uri": uri}))
            .await,
        json!({})
    );
    session.seen.clear();
    let heard = listener.update(Duration::from_secs(15)).await;
    assert!(heard.is_some(), "the listen still follows the resource");
    assert_eq!(session.update(Duration::from_millis(500)).await, None);

    // The listen ends: no one follows the resource, nothing is sent.
    listener
        .send(
            json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
            "params": {"requestId": "listen-1"}}),
        )
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    listener.seen.clear();
    while listener.next(Duration::from_millis(100)).await.is_some() {}
    assert_eq!(listener.update(Duration::from_secs(7)).await, None);
    runtime.shutdown().await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn an_older_servers_own_question_reaches_a_modern_client_as_an_input_round() {
    let (gateway, runtime) = everything_gateway();
    let mut client = Client::of(&gateway);
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
    let tools = client
        .request(1, "tools/list", json!({"_meta": meta}))
        .await;
    let elicit = tools["tools"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .find(|name| name.ends_with("trigger-elicitation-request"))
        .expect("server-everything's trigger-elicitation-request")
        .to_owned();
    let call = |state: Option<&str>, responses: Option<Value>| {
        let mut params = json!({"name": elicit, "arguments": {}, "_meta": meta});
        if let Some(state) = state {
            params["requestState"] = json!(state);
        }
        if let Some(responses) = responses {
            params["inputResponses"] = responses;
        }
        params
    };
    let round = client.request(2, "tools/call", call(None, None)).await;
    assert_eq!(round["resultType"], "input_required", "{round}");
    let (key, question) = round["inputRequests"]
        .as_object()
        .and_then(|requests| requests.iter().next())
        .expect("one input request");
    assert_eq!(question["method"], "elicitation/create", "{round}");
    assert!(question["params"]["requestedSchema"].is_object(), "{round}");
    let state = round["requestState"].as_str().unwrap().to_owned();

    // A made-up state names no held call.
    let forged = client
        .request_error(3, "tools/call", call(Some("mcp-gateway-held:00"), None))
        .await;
    assert_eq!(forged["code"], -32602, "{forged}");

    let answer = json!({key.clone(): {"action": "accept", "content": {"name": "Ada Lovelace"}}});
    let done = client
        .request(4, "tools/call", call(Some(&state), Some(answer)))
        .await;
    let text = done["content"].to_string();
    assert!(text.contains("Ada Lovelace"), "{done}");
    assert_ne!(done["resultType"], "input_required", "{done}");

    // The state was used up: a second retry with it is refused.
    let again = client
        .request_error(5, "tools/call", call(Some(&state), None))
        .await;
    assert_eq!(again["code"], -32602, "{again}");
    runtime.shutdown().await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_prompt_is_got_by_the_name_the_gateway_lists() {
    let (gateway, runtime) = everything_gateway();
    let mut client = Client::of(&gateway);
    let meta = modern_meta();
    let listed = client
        .request(1, "prompts/list", json!({"_meta": meta}))
        .await;
    let names: Vec<&str> = listed["prompts"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|prompt| prompt["name"].as_str())
        .collect();
    let simple = names
        .iter()
        .find(|name| name.ends_with("simple-prompt"))
        .unwrap_or_else(|| panic!("server-everything's simple-prompt in {names:?}"))
        .to_string();
    assert!(simple.starts_with("mcp__everything__"), "{simple}");
    // Got twice (the second from the names the first one learned), and a
    // name the gateway never listed is refused, naming it.
    for id in [2, 3] {
        let got = client
            .request(id, "prompts/get", json!({"name": simple, "_meta": meta}))
            .await;
        assert!(got["messages"][0]["content"]["text"].is_string(), "{got}");
    }
    let unknown = client
        .request_error(
            4,
            "prompts/get",
            json!({"name": "mcp__everything__nope", "_meta": meta}),
        )
        .await;
    assert!(
        unknown["message"]
            .as_str()
            .unwrap()
            .contains("unknown prompt"),
        "{unknown}"
    );
    runtime.shutdown().await;
}
