//! The gateway's HTTP side against hostile and careless clients: the gate
//! every request passes (Host, Origin, bearer token, body cap, content
//! type), the checks of a 2026-07-28 request and of a session, and one
//! client sending 10,000 requests at once. Each answer is checked through
//! one `check` helper; the upstream is an in-process server, which must
//! answer normally afterwards.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::net::SocketAddr;
use std::sync::Arc;

use mcp_catalog::{
    MaterializeOptions, McpConnector, NamingStyle, RuntimeOptions, ServerSet, SessionRuntime,
};
use mcp_config::{ServerConfig, TransportConfig};
use mcp_gateway::{Gateway, HttpOptions, Naming, serve_http};
use mcp_transport::ConnectOptions;
use mcp_transport::kinds::{SdkRegistry, ToolOutput, ToolRouter, ToolSpec};
use serde_json::{Value, json};

const MODERN: &str = "2026-07-28";

/// A gateway over one in-process server (`echo`) at a free loopback port.
async fn gateway(options: HttpOptions) -> SocketAddr {
    let router = ToolRouter::new("upstream", "1.0.0").with_tool(
        ToolSpec::new("echo", json!({"type": "object"})),
        |args: Value| async move { Ok::<_, String>(ToolOutput::structured(args)) },
    );
    let mut registry = SdkRegistry::new();
    registry.register("upstream", Arc::new(router));
    let connector =
        McpConnector::new(ConnectOptions::default().with_sdk_servers(Arc::new(registry)));
    let server = ServerConfig::new(
        "upstream",
        TransportConfig::Sdk {
            name: "upstream".into(),
        },
    );
    let runtime = SessionRuntime::builder("gate", ServerSet::all([server]), Arc::new(connector))
        .with_options(
            RuntimeOptions::default().with_materialize(
                MaterializeOptions::default()
                    .with_style(NamingStyle::Claw)
                    .with_utility_tools(false),
            ),
        )
        .build();
    let gateway = Arc::new(Gateway::new(
        Arc::new(runtime),
        Naming::passthrough(NamingStyle::Claw),
    ));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    tokio::spawn(serve_http(
        gateway,
        listener,
        options,
        std::future::pending(),
    ));
    addr
}

fn modern_call(id: u64, text: &str) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
    "name": "echo", "arguments": {"text": text},
    "_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }}})
}

/// One request: its headers (name, value) and body.
struct Sent<'a> {
    headers: Vec<(&'a str, String)>,
    body: Vec<u8>,
}

impl<'a> Sent<'a> {
    /// `body` with the headers a client sends with it, `Mcp-Method` and
    /// `Mcp-Name` (SEP-2243) included.
    fn json(body: &Value) -> Self {
        let mut headers = vec![
            ("content-type", "application/json".into()),
            ("accept", "application/json, text/event-stream".into()),
        ];
        if let Some(method) = body["method"].as_str() {
            headers.push(("mcp-method", method.to_owned()));
        }
        let params = &body["params"];
        if let Some(name) = params["name"].as_str().or(params["uri"].as_str()) {
            headers.push(("mcp-name", name.to_owned()));
        }
        Sent {
            headers,
            body: body.to_string().into_bytes(),
        }
    }

    fn with(mut self, name: &'a str, value: impl Into<String>) -> Self {
        self.headers.retain(|(existing, _)| *existing != name);
        self.headers.push((name, value.into()));
        self
    }
}

/// Sends `sent` to `addr` and checks the status and, when given, the
/// JSON-RPC error code of the answer (or that it is a result).
async fn check(what: &str, addr: SocketAddr, sent: Sent<'_>, status: u16, code: Option<i64>) {
    let client = reqwest::Client::new();
    let mut request = client.post(format!("http://{addr}/mcp")).body(sent.body);
    for (name, value) in sent.headers {
        request = request.header(name, value);
    }
    let response = request.send().await.unwrap();
    assert_eq!(response.status().as_u16(), status, "{what}: status");
    let text = response.text().await.unwrap();
    if status == 202 {
        return;
    }
    let answer: Value = serde_json::from_str(&text)
        .unwrap_or_else(|_| panic!("{what}: not one JSON answer: {text}"));
    match code {
        Some(code) => assert_eq!(answer["error"]["code"], code, "{what}: {answer}"),
        None => assert!(answer.get("result").is_some(), "{what}: {answer}"),
    }
}

#[tokio::test]
async fn the_gate_refuses_what_it_must_and_lets_the_rest_through() {
    let addr = gateway(HttpOptions::default().with_allowed_origin("https://app.example")).await;
    let call = || Sent::json(&modern_call(1, "hi"));
    check("a plain call", addr, call(), 200, None).await;
    // DNS rebinding: a name other than loopback in Host.
    for host in [
        "evil.example.com",
        "127.0.0.2",
        "localhost.evil.example",
        "[::2]",
    ] {
        check(host, addr, call().with("host", host), 403, Some(-32600)).await;
    }
    for host in ["localhost", "localhost:1", "127.0.0.1:9", "[::1]:8080"] {
        check(host, addr, call().with("host", host), 200, None).await;
    }
    for origin in [
        "http://evil.example.com",
        "null",
        "https://app.example.evil",
        "file://",
    ] {
        check(
            origin,
            addr,
            call().with("origin", origin),
            403,
            Some(-32600),
        )
        .await;
    }
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://app.example",
    ] {
        check(origin, addr, call().with("origin", origin), 200, None).await;
    }
    check(
        "not JSON",
        addr,
        call().with("content-type", "text/plain"),
        415,
        Some(-32600),
    )
    .await;
    let huge = Sent {
        body: vec![b' '; 5 * 1024 * 1024],
        ..call()
    };
    check("a body past the cap", addr, huge, 413, Some(-32600)).await;
    check(
        "unparsable",
        addr,
        Sent {
            body: b"{".to_vec(),
            ..call()
        },
        400,
        Some(-32700),
    )
    .await;
    check(
        "a batch",
        addr,
        Sent::json(&json!([modern_call(1, "a"), modern_call(2, "b")])),
        400,
        Some(-32600),
    )
    .await;
    // 2026-07-28: headers agree with the body, and _meta is complete.
    for (header, value) in [
        ("mcp-method", "tools/list"),
        ("mcp-name", "other"),
        ("mcp-protocol-version", "2025-11-25"),
    ] {
        check(header, addr, call().with(header, value), 400, Some(-32020)).await;
    }
    for header in ["mcp-method", "mcp-name"] {
        let mut sent = call();
        sent.headers.retain(|(name, _)| *name != header);
        check(header, addr, sent, 400, Some(-32020)).await;
    }
    let mut no_capabilities = modern_call(1, "x");
    no_capabilities["params"]["_meta"]
        .as_object_mut()
        .unwrap()
        .remove("io.modelcontextprotocol/clientCapabilities");
    check(
        "no capabilities",
        addr,
        Sent::json(&no_capabilities),
        400,
        Some(-32602),
    )
    .await;
    let mut future = modern_call(1, "x");
    future["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("2099-01-01");
    check(
        "an unknown revision",
        addr,
        Sent::json(&future),
        400,
        Some(-32022),
    )
    .await;
    let ping = json!({"jsonrpc": "2.0", "id": 3, "method": "ping", "params": {"_meta": {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}}}});
    check(
        "a removed method",
        addr,
        Sent::json(&ping),
        404,
        Some(-32601),
    )
    .await;
    // Older revisions: a session first.
    let list = json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"});
    check("no session", addr, Sent::json(&list), 400, Some(-32600)).await;
    check(
        "an unknown session",
        addr,
        Sent::json(&list).with("mcp-session-id", "0123"),
        404,
        Some(-32600),
    )
    .await;
    // After all that, the upstream answers as before.
    check("a call afterwards", addr, call(), 200, None).await;
}

#[tokio::test]
async fn beyond_loopback_every_request_carries_the_token() {
    let addr = gateway(HttpOptions::default().with_bearer_token("s3cret-token")).await;
    let call = || Sent::json(&modern_call(1, "hi"));
    check("no token", addr, call(), 401, Some(-32600)).await;
    for wrong in [
        "Bearer s3cret-toke",
        "Bearer s3cret-token2",
        "s3cret-token",
        "Bearer ",
    ] {
        check(
            wrong,
            addr,
            call().with("authorization", wrong),
            401,
            Some(-32600),
        )
        .await;
    }
    check(
        "the token",
        addr,
        call().with("authorization", "Bearer s3cret-token"),
        200,
        None,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn ten_thousand_requests_at_once_are_each_answered() {
    let addr = gateway(HttpOptions::default()).await;
    let client = reqwest::Client::builder()
        .pool_max_idle_per_host(256)
        .build()
        .unwrap();
    let url = format!("http://{addr}/mcp");
    // All 10,000 are issued at once; like any client's pool, this one
    // opens at most 2,000 connections (HTTP/1 carries one request at a
    // time), which the gateway takes 1,024 at a time.
    let connections = Arc::new(tokio::sync::Semaphore::new(2000));
    let calls = (0..10_000u64).map(|id| {
        let client = client.clone();
        let url = url.clone();
        let connections = Arc::clone(&connections);
        async move {
            let _connection = connections.acquire().await.map_err(|e| e.to_string())?;
            let response = client
                .post(&url)
                .header("content-type", "application/json")
                .header("accept", "application/json, text/event-stream")
                .header("mcp-method", "tools/call")
                .header("mcp-name", "echo")
                .body(modern_call(id, &id.to_string()).to_string())
                .send()
                .await
                .map_err(|error| {
                    format!("{id}: {error} ({:?})", std::error::Error::source(&error))
                })?;
            let answer: Value = response
                .json()
                .await
                .map_err(|error| format!("{id}: {error}"))?;
            match answer["result"]["structuredContent"]["text"].as_str() {
                Some(text) if text == id.to_string() && answer["id"] == id => Ok(()),
                _ => Err(format!("{id}: {answer}")),
            }
        }
    });
    let outcomes = futures::future::join_all(calls).await;
    let failed: Vec<String> = outcomes.into_iter().filter_map(Result::err).collect();
    assert!(
        failed.is_empty(),
        "{} of 10000 failed, first: {:?}",
        failed.len(),
        failed.first()
    );
}

/// Opens an older-revision session; its id, or the refusal's status.
async fn initialize(addr: SocketAddr) -> Result<String, u16> {
    let response = reqwest::Client::new()
        .post(format!("http://{addr}/mcp"))
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(
            json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "clientInfo": {"name": "t", "version": "1"}}})
            .to_string(),
        )
        .send()
        .await
        .unwrap();
    match response.headers().get("mcp-session-id") {
        Some(id) => Ok(id.to_str().unwrap().to_owned()),
        None => Err(response.status().as_u16()),
    }
}

#[tokio::test]
async fn sessions_are_capped_and_an_unused_one_ends() {
    let ttl = std::time::Duration::from_secs(2);
    let addr = gateway(HttpOptions::default().with_sessions(2, ttl)).await;
    let first = initialize(addr).await.unwrap();
    let second = initialize(addr).await.unwrap();
    assert_ne!(first, second);
    // Past the cap: refused, naming why, until one ends.
    assert_eq!(initialize(addr).await, Err(503));
    let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"});
    // The second stays in use (a request every quarter of the TTL, far
    // inside it even on a loaded machine) while the first goes unused,
    // until the first has ended.
    let started = std::time::Instant::now();
    loop {
        tokio::time::sleep(ttl / 4).await;
        check(
            "a used session",
            addr,
            Sent::json(&list).with("mcp-session-id", second.clone()),
            200,
            None,
        )
        .await;
        if initialize(addr).await.is_ok() {
            break;
        }
        assert!(
            started.elapsed() < ttl * 10,
            "the unused session never ended"
        );
    }
    assert!(started.elapsed() >= ttl, "ended before its TTL");
    check(
        "an unused session",
        addr,
        Sent::json(&list).with("mcp-session-id", first),
        404,
        Some(-32600),
    )
    .await;
}
