//! A hostile client over stdio: lines past the 16 MiB cap, JSON nested
//! past the depth ceiling, text that is not JSON, a cut message, an
//! unknown method and a message of the wrong shape each get a named error
//! and nothing else, and the connection answers the next request as if
//! nothing happened; the upstream server is neither called nor harmed.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use mcp_catalog::{
    MaterializeOptions, McpConnector, NamingStyle, RuntimeOptions, ServerSet, SessionRuntime,
};
use mcp_config::{ServerConfig, TransportConfig};
use mcp_gateway::{Gateway, Naming, serve_stdio};
use mcp_transport::ConnectOptions;
use mcp_transport::kinds::{SdkRegistry, ToolOutput, ToolRouter, ToolSpec};
use mcp_transport::wire::{DEFAULT_MAX_MESSAGE_BYTES, MAX_DEPTH};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};

type Reader = Lines<BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>>;
type Writer = tokio::io::WriteHalf<tokio::io::DuplexStream>;

async fn send(input: &mut Writer, bytes: &[u8]) {
    input.write_all(bytes).await.unwrap();
    input.write_all(b"\n").await.unwrap();
}

async fn next(lines: &mut Reader) -> Value {
    let line = tokio::time::timeout(Duration::from_secs(30), lines.next_line())
        .await
        .expect("an answer within 30 s")
        .unwrap()
        .expect("the gateway is still there");
    serde_json::from_str(&line).unwrap()
}

/// Sends `bytes` as one line; the answer must be an error with `code`
/// whose message starts with `why`, and a ping right after is answered.
async fn check(
    lines: &mut Reader,
    input: &mut Writer,
    what: &str,
    bytes: &[u8],
    code: i64,
    why: &str,
) {
    send(input, bytes).await;
    let answer = next(lines).await;
    assert_eq!(answer["error"]["code"], code, "{what}: {answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains(why), "{what}: {message}");
    send(input, br#"{"jsonrpc":"2.0","id":"after","method":"ping"}"#).await;
    let pong = next(lines).await;
    assert_eq!(
        pong,
        json!({"jsonrpc": "2.0", "id": "after", "result": {}}),
        "{what}: then {pong}"
    );
}

#[tokio::test]
async fn hostile_lines_get_named_errors_and_the_connection_goes_on() {
    let calls = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&calls);
    let router = ToolRouter::new("one", "1.0.0").with_tool(
        ToolSpec::new("echo", json!({"type": "object"})),
        move |arguments: Value| {
            counted.fetch_add(1, Ordering::SeqCst);
            async move { Ok::<_, String>(ToolOutput::text(arguments.to_string())) }
        },
    );
    let mut registry = SdkRegistry::new();
    registry.register("one", Arc::new(router));
    let connector =
        McpConnector::new(ConnectOptions::default().with_sdk_servers(Arc::new(registry)));
    let server = ServerConfig::new("one", TransportConfig::Sdk { name: "one".into() });
    let options = RuntimeOptions::default()
        .with_materialize(MaterializeOptions::default().with_utility_tools(false));
    let runtime = SessionRuntime::builder("hostile", ServerSet::all([server]), Arc::new(connector))
        .with_options(options)
        .build();
    let gateway = Arc::new(Gateway::new(
        Arc::new(runtime),
        Naming::prefixed(NamingStyle::Claw),
    ));
    let (client, served) = tokio::io::duplex(1 << 20);
    let (served_in, served_out) = tokio::io::split(served);
    let serving = tokio::spawn(serve_stdio(gateway, served_in, served_out));
    let (output, mut input) = tokio::io::split(client);
    let mut lines = BufReader::new(output).lines();
    send(
        &mut input,
        br#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}"#,
    )
    .await;
    assert!(next(&mut lines).await["result"].is_object());

    let huge = {
        let mut text = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"mcp__one__echo","arguments":{"x":""#.to_vec();
        text.resize(text.len() + DEFAULT_MAX_MESSAGE_BYTES, b'a');
        text.extend_from_slice(br#""}}}"#);
        text
    };
    let deep = {
        let mut text = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"mcp__one__echo","arguments":{"x":"#.to_vec();
        text.extend(std::iter::repeat_n(b'[', MAX_DEPTH * 4));
        text.extend(std::iter::repeat_n(b']', MAX_DEPTH * 4));
        text.extend_from_slice(b"}}}");
        text
    };
    for (what, bytes, code, why) in [
        ("past the size cap", huge.as_slice(), -32700, "larger than"),
        (
            "nested past the depth ceiling",
            deep.as_slice(),
            -32600,
            "levels deep (limit 512)",
        ),
        ("not JSON", b"hello there".as_slice(), -32700, ""),
        (
            "a cut message",
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/ca"#.as_slice(),
            -32700,
            "",
        ),
        (
            "an array of nothing",
            b"[]".as_slice(),
            -32600,
            "empty batch",
        ),
        ("a number", b"42".as_slice(), -32600, ""),
        (
            "an unknown method",
            br#"{"jsonrpc":"2.0","id":5,"method":"tools/explode"}"#.as_slice(),
            -32601,
            "tools/explode",
        ),
        (
            "a call of no tool",
            br#"{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"nope"}}"#
                .as_slice(),
            -32602,
            "unknown tool",
        ),
    ] {
        check(&mut lines, &mut input, what, bytes, code, why).await;
    }
    assert_eq!(
        calls.load(Ordering::SeqCst),
        0,
        "no hostile line reached the server"
    );
    send(
        &mut input,
        br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"mcp__one__echo","arguments":{"x":1}}}"#,
    )
    .await;
    let called = next(&mut lines).await;
    assert_eq!(
        called["result"]["content"][0]["text"], r#"{"x":1}"#,
        "{called}"
    );
    assert_eq!(calls.load(Ordering::SeqCst), 1);
    // The client closes its side: the gateway ends cleanly.
    input.shutdown().await.unwrap();
    tokio::time::timeout(Duration::from_secs(30), serving)
        .await
        .expect("the gateway ends when its input does")
        .unwrap()
        .unwrap();
}
