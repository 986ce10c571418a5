//! The cross-transport behaviour suite: every test body runs against every
//! transport kind through its [`Harness`]. Adding a kind is one line in the
//! `transport_suite!` invocation at the bottom.

// Test bodies are plain functions shared by the generated tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_integration_tests::harness::{Harness, SdkHarness, StdioHarness};
use mcp_integration_tests::net::{NetHarness, NetKind};
use mcp_integration_tests::server::ServerOptions;
use mcp_transport::protocol::LATEST_PROTOCOL_VERSION;
use mcp_transport::{
    CallOptions, ClientHandler, ClientSession, ErrorObject, ListKind, ListLimits, Progress,
    ServerEvent, SessionOptions, TransportErrorKind,
};
use serde_json::{Value, json};

fn session_options() -> SessionOptions {
    SessionOptions {
        connect_timeout: Duration::from_secs(20),
        request_timeout: Duration::from_secs(20),
        tool_call_timeout: Duration::from_secs(20),
        ..SessionOptions::default()
    }
}

async fn connect(harness: &dyn Harness, server: ServerOptions) -> ClientSession {
    connect_with(harness, server, session_options()).await
}

async fn connect_with(
    harness: &dyn Harness,
    server: ServerOptions,
    session: SessionOptions,
) -> ClientSession {
    match harness.connect(&server, session).await {
        Ok(session) => session,
        Err(e) => panic!("{}: connect failed: {e}", harness.kind()),
    }
}

fn first_text(result: &mcp_transport::protocol::CallToolResult) -> &str {
    result.content[0]["text"].as_str().unwrap_or_default()
}

async fn cancelled_count(session: &ClientSession) -> u64 {
    let result = session.call_tool("cancelled", None).await.unwrap();
    first_text(&result).parse().unwrap()
}

/// Polls the server's cancellation counter until it reaches `at_least`.
async fn wait_cancelled(session: &ClientSession, at_least: u64) -> u64 {
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let count = cancelled_count(session).await;
        if count >= at_least || Instant::now() > deadline {
            return count;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn initialize(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    assert_eq!(session.protocol_version(), LATEST_PROTOCOL_VERSION);
    assert_eq!(session.initialize_result().server_info.name, "example");
    assert!(session.has_capability("tools"));
    assert_eq!(session.kind(), harness.kind());
    session.close().await.unwrap();
}

async fn negotiates_an_older_version(harness: &dyn Harness) {
    let server = ServerOptions {
        protocol_version: Some("2025-03-26".to_string()),
        ..ServerOptions::default()
    };
    let session = connect(harness, server).await;
    assert_eq!(session.protocol_version(), "2025-03-26");
    session.close().await.unwrap();
}

async fn refuses_an_unknown_version(harness: &dyn Harness) {
    let server = ServerOptions {
        protocol_version: Some("1999-01-01".to_string()),
        ..ServerOptions::default()
    };
    let error = harness
        .connect(&server, session_options())
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), TransportErrorKind::UnsupportedVersion { version, .. } if version == "1999-01-01"),
        "{error}"
    );
    let message = error.to_string();
    assert!(message.starts_with("example-"), "{message}");
    assert!(message.contains("1999-01-01"), "{message}");
}

async fn lists_tools_across_pages(harness: &dyn Harness) {
    let server = ServerOptions {
        page_size: 3,
        extra_tools: 7,
        ..ServerOptions::default()
    };
    let session = connect(harness, server.clone()).await;
    let tools = session.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    assert!(
        names.contains(&"echo") && names.contains(&"extra-6"),
        "{names:?}"
    );
    let unique: std::collections::HashSet<&str> = names.iter().copied().collect();
    assert_eq!(unique.len(), names.len(), "duplicates in {names:?}");
    session.close().await.unwrap();

    // Page by page, the same list as in one page.
    let one_page = connect(
        harness,
        ServerOptions {
            page_size: 0,
            ..server
        },
    )
    .await;
    let all = one_page.list_tools().await.unwrap();
    assert_eq!(tools, all);
    assert!(
        all.len() > 3 * 5,
        "only {} tools: not several pages",
        all.len()
    );
    one_page.close().await.unwrap();
}

async fn refuses_a_repeated_cursor(harness: &dyn Harness) {
    let server = ServerOptions {
        page_size: 3,
        repeat_cursor: true,
        ..ServerOptions::default()
    };
    let session = connect(harness, server).await;
    let error = session.list_tools().await.unwrap_err();
    assert!(error.to_string().contains("repeated the cursor"), "{error}");
    assert!(error.to_string().starts_with("example-"), "{error}");
    session.close().await.unwrap();
}

async fn stops_past_the_page_cap(harness: &dyn Harness) {
    let server = ServerOptions {
        page_size: 2,
        ..ServerOptions::default()
    };
    let mut options = session_options();
    options.list_limits = ListLimits {
        max_pages: 2,
        ..ListLimits::default()
    };
    let session = connect_with(harness, server, options).await;
    let error = session.list_tools().await.unwrap_err();
    assert!(error.to_string().contains("more than 2 pages"), "{error}");
    session.close().await.unwrap();
}

async fn calls_tools(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let echo = session
        .call_tool("echo", Some(json!({"text": "hi there"})))
        .await
        .unwrap();
    assert_eq!(first_text(&echo), "hi there");
    assert!(!echo.is_error);
    let add = session
        .call_tool("add", Some(json!({"a": 2, "b": 40})))
        .await
        .unwrap();
    assert_eq!(add.structured_content, Some(json!({"sum": 42.0})));
    let fail = session.call_tool("fail", None).await.unwrap();
    assert!(fail.is_error);
    let unknown = session.call_tool("nope", None).await.unwrap_err();
    assert!(
        matches!(unknown.kind(), TransportErrorKind::Rpc { code: -32602, method, .. } if method == "tools/call"),
        "{unknown}"
    );
    session.close().await.unwrap();
}

async fn many_requests_in_flight(harness: &dyn Harness) {
    let session = Arc::new(connect(harness, ServerOptions::default()).await);
    let calls = (0..200).map(|n| {
        let session = Arc::clone(&session);
        async move {
            let result = session
                .call_tool("echo", Some(json!({"text": format!("call {n}")})))
                .await
                .unwrap();
            assert_eq!(first_text(&result), format!("call {n}"));
        }
    });
    futures::future::join_all(calls).await;
    session.close().await.unwrap();
}

async fn resources_and_prompts(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let resources = session.list_resources().await.unwrap();
    assert_eq!(resources[0].uri, "example://greeting");
    let read = session.read_resource("example://greeting").await.unwrap();
    assert_eq!(read.contents[0]["text"], "hello from the example server");
    let templates = session.list_resource_templates().await.unwrap();
    assert_eq!(templates[0].uri_template, "example://items/{id}");
    let prompts = session.list_prompts().await.unwrap();
    assert_eq!(prompts[0].name, "greet");
    let prompt = session
        .get_prompt("greet", Some(json!({"name": "Ada"})))
        .await
        .unwrap();
    assert_eq!(prompt.messages[0]["content"]["text"], "Say hello to Ada.");
    let missing = session
        .read_resource("example://missing")
        .await
        .unwrap_err();
    assert!(
        matches!(missing.kind(), TransportErrorKind::Rpc { code: -32002, .. }),
        "{missing}"
    );
    session.close().await.unwrap();
}

async fn delivers_progress_and_progress_resets_the_timeout(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    // 6 steps of 100 ms = 600 ms in all, far past the 300 ms timeout; each
    // progress notification restarts it.
    let options = CallOptions::with_progress(move |p| sink.lock().unwrap().push(p))
        .timeout(Duration::from_millis(300));
    let result = session
        .call_tool_with("slow", Some(json!({"steps": 6, "step_ms": 100})), &options)
        .await
        .unwrap();
    assert_eq!(first_text(&result), "finished 6 steps");
    let seen: Vec<Progress> = seen.lock().unwrap().clone();
    let values: Vec<f64> = seen.iter().map(|p| p.progress).collect();
    assert_eq!(values, vec![1.0, 2.0, 3.0, 4.0, 5.0, 6.0]);
    assert_eq!(seen[0].total, Some(6.0));
    assert_eq!(seen[0].message.as_deref(), Some("step 1 of 6"));
    session.close().await.unwrap();
}

async fn times_out_and_cancels(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let options = CallOptions::default().timeout(Duration::from_millis(200));
    let started = Instant::now();
    let error = session
        .call_tool_with("slow", Some(json!({"steps": 1, "step_ms": 5000})), &options)
        .await
        .unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(
        matches!(error.kind(), TransportErrorKind::Timeout { method, .. } if method == "tools/call"),
        "{error}"
    );
    assert!(error.to_string().starts_with("example-"), "{error}");
    assert_eq!(wait_cancelled(&session, 1).await, 1);
    session.close().await.unwrap();
}

async fn dropping_a_call_cancels_it(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let call = session.call_tool("slow", Some(json!({"steps": 1, "step_ms": 5000})));
    assert!(
        tokio::time::timeout(Duration::from_millis(200), call)
            .await
            .is_err()
    );
    assert_eq!(wait_cancelled(&session, 1).await, 1);
    // The session is still healthy.
    session.ping().await.unwrap();
    session.close().await.unwrap();
}

async fn surfaces_list_changed(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let mut events = session.events();
    session.call_tool("touch", None).await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            match events.recv().await.unwrap() {
                ServerEvent::ListChanged(kind) => return kind,
                ServerEvent::Notification(_) => {}
            }
        }
    })
    .await
    .unwrap();
    assert_eq!(event, ListKind::Tools);
    let tools = session.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "touched-0"));
    session.close().await.unwrap();
}

async fn answers_ping_both_ways(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    session.ping().await.unwrap();
    let answer = session.call_tool("ping_client", None).await.unwrap();
    assert!(!answer.is_error, "{answer:?}");
    assert_eq!(first_text(&answer), "{}");
    session.close().await.unwrap();
}

#[derive(Debug)]
struct Roots;

#[async_trait]
impl ClientHandler for Roots {
    fn capabilities(&self) -> Value {
        json!({"roots": {"listChanged": false}})
    }

    async fn list_roots(&self, _params: Option<Value>) -> Result<Value, ErrorObject> {
        Ok(json!({"roots": [{"uri": "file:///work/project", "name": "project"}]}))
    }
}

async fn answers_server_requests(harness: &dyn Harness) {
    let mut options = session_options();
    options.handler = Some(Arc::new(Roots));
    let session = connect_with(harness, ServerOptions::default(), options).await;
    let answer = session.call_tool("ask_roots", None).await.unwrap();
    let roots: Value = serde_json::from_str(first_text(&answer)).unwrap();
    assert_eq!(roots["roots"][0]["uri"], "file:///work/project");
    session.close().await.unwrap();

    // Without a handler the server hears -32601.
    let session = connect(harness, ServerOptions::default()).await;
    let answer = session.call_tool("ask_roots", None).await.unwrap();
    assert!(answer.is_error);
    assert!(first_text(&answer).contains("-32601"), "{answer:?}");
    session.close().await.unwrap();
}

async fn server_crash_fails_calls_promptly(harness: &dyn Harness) {
    let session = Arc::new(connect(harness, ServerOptions::default()).await);
    let slow = {
        let session = Arc::clone(&session);
        tokio::spawn(async move {
            session
                .call_tool("slow", Some(json!({"steps": 1, "step_ms": 30000})))
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    let error = session.call_tool("crash", None).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    let message = error.to_string();
    assert!(message.starts_with("example-"), "{message}");
    if harness.captures_stderr() {
        assert!(
            matches!(error.kind(), TransportErrorKind::ServerExited { status, .. } if status.contains('3')),
            "{error:?}"
        );
        assert!(message.contains("crash requested"), "{message}");
        assert!(error.stderr_tail().unwrap().contains("crash requested"));
    }
    let slow_error = slow.await.unwrap().unwrap_err();
    assert!(
        slow_error.to_string().starts_with("example-"),
        "{slow_error}"
    );
    // Over the network the end of the connection is learnt a moment after
    // the broken answer streams; over stdio both are the child's exit.
    let reason = tokio::time::timeout(Duration::from_secs(3), session.closed())
        .await
        .expect("the session ends after the crash");
    assert!(session.is_closed());
    if harness.captures_stderr() {
        assert_eq!(slow_error.to_string(), message);
        assert_eq!(reason.to_string(), message);
    }
    let later = session
        .call_tool("echo", Some(json!({"text": "x"})))
        .await
        .unwrap_err();
    assert_eq!(later.to_string(), reason.to_string());
    session.close().await.unwrap();
}

async fn survives_a_notification_flood(harness: &dyn Harness) {
    let mut options = session_options();
    options.event_capacity = 64;
    let session = connect_with(harness, ServerOptions::default(), options).await;
    let mut events = session.events();
    let result = session
        .call_tool("flood", Some(json!({"count": 20000})))
        .await
        .unwrap();
    assert_eq!(first_text(&result), "sent 20000 notifications");
    // The subscriber lagged (bounded buffer) instead of memory growing.
    assert!(matches!(
        events.try_recv(),
        Err(tokio::sync::broadcast::error::TryRecvError::Lagged(_))
    ));
    session.ping().await.unwrap();
    session.close().await.unwrap();
}

async fn close_ends_the_session(harness: &dyn Harness) {
    let session = connect(harness, ServerOptions::default()).await;
    let started = Instant::now();
    session.close().await.unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "close took {:?}",
        started.elapsed()
    );
    assert!(session.is_closed());
    let error = session.ping().await.unwrap_err();
    assert!(
        matches!(error.kind(), TransportErrorKind::Closed),
        "{error}"
    );
    assert!(error.to_string().starts_with("example-"), "{error}");
    // Closing twice is fine.
    session.close().await.unwrap();
}

/// Instantiates every test body for each `kind => harness` pair.
macro_rules! transport_suite {
    ($($kind:ident => $harness:expr;)+) => {$(
        mod $kind {
            use super::*;

            transport_suite!(@tests $harness;
                initialize,
                negotiates_an_older_version,
                refuses_an_unknown_version,
                lists_tools_across_pages,
                refuses_a_repeated_cursor,
                stops_past_the_page_cap,
                calls_tools,
                many_requests_in_flight,
                resources_and_prompts,
                delivers_progress_and_progress_resets_the_timeout,
                times_out_and_cancels,
                dropping_a_call_cancels_it,
                surfaces_list_changed,
                answers_ping_both_ways,
                answers_server_requests,
                server_crash_fails_calls_promptly,
                survives_a_notification_flood,
                close_ends_the_session,
            );
        }
    )+};
    (@tests $harness:expr; $($test:ident,)+) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            let harness = $harness;
            super::$test(&harness).await;
        }
    )+};
}

transport_suite! {
    stdio => StdioHarness::new(env!("CARGO_BIN_EXE_mcp-example-server"));
    sdk => SdkHarness::default();
    sdk_codec_roundtrip => SdkHarness { roundtrip_through_codec: true };
    http => NetHarness(NetKind::Http);
    sse => NetHarness(NetKind::Sse);
    ws => NetHarness(NetKind::Ws);
    claudeai_proxy => NetHarness(NetKind::Proxy);
}
