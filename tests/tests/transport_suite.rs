//! The cross-transport behaviour suite: every test body runs against every
//! transport kind through its [`Harness`], at both wire generations: the
//! session pinned to 2026-07-28 (per-request `_meta`, no handshake) and to
//! 2025-11-25 (the `initialize` handshake), against the dual-era example
//! server. Adding a kind is one line in the `transport_suite!` invocation
//! at the bottom. The version negotiation table, the Multi Round-Trip and
//! caching tests follow the suite.

// Test bodies are plain functions shared by the generated tests.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_integration_tests::harness::{Harness, SdkHarness, StdioHarness};
use mcp_integration_tests::net::{NetHarness, NetKind};
use mcp_integration_tests::server::{Era, Scope, ServerOptions};
use mcp_transport::CacheScope;
use mcp_transport::KNOWN_PROTOCOL_VERSIONS;
use mcp_transport::types::ListLimits;
use mcp_transport::types::is_modern;
use mcp_transport::{
    CallOptions, ClientHandler, ClientSession, ErrorObject, ListKind, Progress, ServerEvent,
    SessionOptions, TransportErrorKind,
};
use serde_json::{Value, json};

/// The modern wire generation.
const MODERN: &str = "2026-07-28";
/// The newest legacy wire generation.
const LEGACY: &str = "2025-11-25";

/// Generous timeouts, negotiating up to `version`.
fn unpinned_options(version: &str) -> SessionOptions {
    SessionOptions::default()
        .with_protocol_version(version.to_owned())
        .with_connect_timeout(Duration::from_secs(20))
        .with_request_timeout(Duration::from_secs(20))
        .with_tool_call_timeout(Duration::from_secs(20))
}

/// [`unpinned_options`] that speak exactly `version`.
fn session_options(version: &str) -> SessionOptions {
    unpinned_options(version).with_pin_protocol(true)
}

async fn connect(harness: &dyn Harness, version: &str, server: ServerOptions) -> ClientSession {
    connect_with(harness, server, session_options(version)).await
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

fn first_text(result: &mcp_transport::CallToolResult) -> &str {
    result.content[0].as_text().unwrap_or_default()
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

/// At 2026-07-28, waits until the session's `subscriptions/listen` is
/// open on the server, so a change made now is not missed; older
/// revisions need no subscription.
async fn wait_listening(session: &ClientSession) {
    if !session.is_modern() {
        return;
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    loop {
        let result = session.call_tool("listeners", None).await.unwrap();
        if first_text(&result) != "0" {
            return;
        }
        assert!(Instant::now() < deadline, "the session never listened");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

async fn initialize(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
    assert_eq!(session.protocol_version(), version);
    assert_eq!(session.is_modern(), is_modern(version));
    // From `initialize`, or from `server/discover`'s `_meta` at 2026-07-28.
    assert_eq!(session.initialize_result().server_info.name, "example");
    assert!(session.has_capability("tools"));
    assert_eq!(session.kind(), harness.kind());
    session.close().await.unwrap();
}

async fn negotiates_an_older_version(harness: &dyn Harness, version: &str) {
    // A legacy server that knows only 2025-03-26; the session may go down
    // from `version` to any older revision.
    let server = ServerOptions::only_version("2025-03-26");
    let session = connect_with(harness, server, unpinned_options(version)).await;
    assert_eq!(session.protocol_version(), "2025-03-26");
    session.close().await.unwrap();
}

async fn refuses_an_unknown_version(harness: &dyn Harness, version: &str) {
    let server = ServerOptions::only_version("1999-01-01");
    let error = harness
        .connect(&server, unpinned_options(version))
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

async fn lists_tools_across_pages(harness: &dyn Harness, version: &str) {
    let server = ServerOptions {
        page_size: 3,
        extra_tools: 7,
        ..ServerOptions::default()
    };
    let session = connect(harness, version, server.clone()).await;
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
        version,
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

async fn refuses_a_repeated_cursor(harness: &dyn Harness, version: &str) {
    let server = ServerOptions {
        page_size: 3,
        repeat_cursor: true,
        ..ServerOptions::default()
    };
    let session = connect(harness, version, server).await;
    let error = session.list_tools().await.unwrap_err();
    assert!(error.to_string().contains("repeated the cursor"), "{error}");
    assert!(error.to_string().starts_with("example-"), "{error}");
    session.close().await.unwrap();
}

async fn stops_past_the_page_cap(harness: &dyn Harness, version: &str) {
    let server = ServerOptions {
        page_size: 2,
        ..ServerOptions::default()
    };
    let mut options = session_options(version);
    options.list_limits = ListLimits::default().with_max_pages(2);
    let session = connect_with(harness, server, options).await;
    let error = session.list_tools().await.unwrap_err();
    assert!(error.to_string().contains("more than 2 pages"), "{error}");
    session.close().await.unwrap();
}

async fn calls_tools(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
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

async fn many_requests_in_flight(harness: &dyn Harness, version: &str) {
    let session = Arc::new(connect(harness, version, ServerOptions::default()).await);
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

async fn resources_and_prompts(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
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
    // Invalid params from 2026-07-28 on, the older -32002 before.
    let code = if is_modern(version) { -32602 } else { -32002 };
    assert!(
        matches!(missing.kind(), TransportErrorKind::Rpc { code: c, .. } if *c == code),
        "{missing}"
    );
    session.close().await.unwrap();
}

async fn delivers_progress_and_advancing_progress_keeps_a_call_alive(
    harness: &dyn Harness,
    version: &str,
) {
    let session = connect(harness, version, ServerOptions::default()).await;
    let seen: Arc<Mutex<Vec<Progress>>> = Arc::default();
    let sink = Arc::clone(&seen);
    // 6 steps of 100 ms = 600 ms in all, far past the 300 ms inactivity
    // limit; each advancing progress notification restarts it, within the
    // total.
    let options = CallOptions::default()
        .with_progress(move |p| sink.lock().unwrap().push(p))
        .with_timeout(Duration::from_secs(20))
        .with_idle_timeout(Duration::from_millis(300));
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

async fn times_out_and_cancels(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
    let options = CallOptions::default().with_timeout(Duration::from_millis(200));
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

/// Each call keeps its own deadline, whichever was sent first: a short one
/// sent while a long one waits times out on time, and the long one, still
/// answered within its own, is unaffected.
async fn each_call_keeps_its_own_deadline(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
    let long = CallOptions::default().with_timeout(Duration::from_secs(20));
    let short = CallOptions::default().with_timeout(Duration::from_millis(200));
    let answered =
        session.call_tool_with("slow", Some(json!({"steps": 1, "step_ms": 3000})), &long);
    let timed_out = async {
        // Sent once the long call is on its way.
        tokio::time::sleep(Duration::from_millis(50)).await;
        let started = Instant::now();
        let error = session
            .call_tool_with("slow", Some(json!({"steps": 1, "step_ms": 5000})), &short)
            .await
            .unwrap_err();
        (error, started.elapsed())
    };
    let (answered, (error, waited)) = tokio::join!(answered, timed_out);
    assert_eq!(first_text(&answered.unwrap()), "finished 1 steps");
    assert!(
        matches!(error.kind(), TransportErrorKind::Timeout { .. }),
        "{error}"
    );
    assert!(waited < Duration::from_millis(2500), "waited {waited:?}");
    session.close().await.unwrap();
}

async fn dropping_a_call_cancels_it(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
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

async fn surfaces_list_changed(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
    let mut events = session.events();
    wait_listening(&session).await;
    session.call_tool("touch", None).await.unwrap();
    let event = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let ServerEvent::ListChanged(kind) = events.recv().await.unwrap() {
                return kind;
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

async fn answers_ping_both_ways(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
    // `server/discover` stands in for ping at 2026-07-28.
    session.ping().await.unwrap();
    let answer = session.call_tool("ping_client", None).await.unwrap();
    if is_modern(version) {
        // No server-to-client requests at all at 2026-07-28.
        assert!(answer.is_error, "{answer:?}");
    } else {
        assert!(!answer.is_error, "{answer:?}");
        assert_eq!(first_text(&answer), "{}");
    }
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

async fn answers_server_requests(harness: &dyn Harness, version: &str) {
    let mut options = session_options(version);
    options.handler = Some(Arc::new(Roots));
    let session = connect_with(harness, ServerOptions::default(), options).await;
    let answer = session.call_tool("ask_roots", None).await.unwrap();
    let roots: Value = serde_json::from_str(first_text(&answer)).unwrap();
    assert_eq!(roots["roots"][0]["uri"], "file:///work/project");
    session.close().await.unwrap();

    let session = connect(harness, version, ServerOptions::default()).await;
    if is_modern(version) {
        // Without a handler the input request cannot be answered: the
        // call fails naming it.
        let error = session.call_tool("ask_roots", None).await.unwrap_err();
        assert!(
            matches!(error.kind(), TransportErrorKind::InputRequestFailed { method, input, .. }
                if method == "tools/call" && input == "roots/list"),
            "{error}"
        );
    } else {
        // Without a handler the server hears -32601.
        let answer = session.call_tool("ask_roots", None).await.unwrap();
        assert!(answer.is_error);
        assert!(first_text(&answer).contains("-32601"), "{answer:?}");
    }
    session.close().await.unwrap();
}

async fn server_crash_fails_calls_promptly(harness: &dyn Harness, version: &str) {
    let session = Arc::new(connect(harness, version, ServerOptions::default()).await);
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
    // At 2026-07-28 there is no connection behind a proxy: the proxy keeps
    // answering (502) for the dead server, so each request fails on its
    // own and the session has nothing to end.
    if is_modern(version) && harness.kind() == "claudeai-proxy" {
        let later = session
            .call_tool("echo", Some(json!({"text": "x"})))
            .await
            .unwrap_err();
        assert!(later.to_string().starts_with("example-"), "{later}");
        return;
    }
    // Over the network the end of the connection is learnt a moment after
    // the broken answer streams; over stdio both are the child's exit. The
    // bound is generous: the whole suite runs at once on two shared cores.
    let reason = tokio::time::timeout(Duration::from_secs(10), session.closed())
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

async fn survives_a_notification_flood(harness: &dyn Harness, version: &str) {
    let mut options = session_options(version);
    options.event_capacity = 64;
    // At 2026-07-28 a server logs only to requests that name a level.
    options.log_level = Some("info".to_owned());
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

async fn close_ends_the_session(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
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

/// Answers form elicitations with a name, counting them.
#[derive(Debug, Default)]
struct Person {
    asked: Mutex<Vec<Value>>,
}

#[async_trait]
impl ClientHandler for Person {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}}})
    }

    async fn elicit(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let params = params.unwrap_or(Value::Null);
        let asked = {
            let mut asked = self.asked.lock().unwrap();
            asked.push(params);
            asked.len()
        };
        Ok(json!({"action": "accept", "content": {"name": format!("Ada {asked}")}}))
    }
}

/// One host handler serves the server→client `elicitation/create` of
/// 2025-11-25 and the `input_required` rounds of 2026-07-28 alike.
async fn elicits_through_the_handler(harness: &dyn Harness, version: &str) {
    let person = Arc::new(Person::default());
    let mut options = session_options(version);
    options.handler = Some(Arc::clone(&person) as Arc<dyn ClientHandler>);
    let session = connect_with(harness, ServerOptions::default(), options).await;
    let once = session.call_tool("elicit", None).await.unwrap();
    assert!(!once.is_error, "{once:?}");
    assert_eq!(first_text(&once), "hello Ada 1");
    assert_eq!(
        once.structured_content,
        Some(json!({"action": "accept", "content": {"name": "Ada 1"}}))
    );
    let thrice = session
        .call_tool("elicit", Some(json!({"rounds": 3})))
        .await
        .unwrap();
    assert_eq!(first_text(&thrice), "hello Ada 4");
    let asked = person.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 4);
    assert_eq!(asked[0]["mode"], "form");
    assert_eq!(asked[3]["message"], "What is your name? (question 3 of 3)");
    assert_eq!(asked[0]["requestedSchema"]["required"], json!(["name"]));
    session.close().await.unwrap();
}

/// `ttlMs`/`cacheScope` reach a [`mcp_transport::Listing`] at 2026-07-28;
/// older servers say nothing, which reads as "no ttl, private".
async fn listings_carry_cache_hints(harness: &dyn Harness, version: &str) {
    let session = connect(harness, version, ServerOptions::default()).await;
    let tools = session.list_tools_listing().await.unwrap();
    let prompts = session.list_prompts_listing().await.unwrap();
    let resources = session.list_resources_listing().await.unwrap();
    let templates = session.list_resource_templates_listing().await.unwrap();
    assert!(tools.items.iter().any(|t| t.name == "echo"));
    let hints = [
        (tools.ttl, tools.scope),
        (prompts.ttl, prompts.scope),
        (resources.ttl, resources.scope),
        (templates.ttl, templates.scope),
    ];
    let expected = if is_modern(version) {
        (Some(Duration::from_secs(60)), CacheScope::Public)
    } else {
        (None, CacheScope::Private)
    };
    assert_eq!(hints, [expected; 4]);
    session.close().await.unwrap();

    // Over several pages, private, with a short ttl.
    let server = ServerOptions {
        page_size: 4,
        ttl_ms: 1500,
        cache_scope: Scope::Private,
        ..ServerOptions::default()
    };
    let session = connect(harness, version, server).await;
    let tools = session.list_tools_listing().await.unwrap();
    assert!(tools.items.len() > 4 * 3, "{}", tools.items.len());
    let expected = is_modern(version).then_some(Duration::from_millis(1500));
    assert_eq!((tools.ttl, tools.scope), (expected, CacheScope::Private));
    session.close().await.unwrap();
}

/// Instantiates every test body for each `kind => harness` pair.
macro_rules! transport_suite {
    ($($kind:ident => $harness:expr;)+) => {$(
        mod $kind {
            use super::*;

            /// The session pinned to 2026-07-28.
            mod modern {
                use super::*;
                transport_suite!(@generation $harness, MODERN);
            }

            /// The session pinned to 2025-11-25.
            mod legacy {
                use super::*;
                transport_suite!(@generation $harness, LEGACY);
            }
        }
    )+};
    (@generation $harness:expr, $version:expr) => {
            transport_suite!(@tests $harness, $version;
                initialize,
                negotiates_an_older_version,
                refuses_an_unknown_version,
                lists_tools_across_pages,
                refuses_a_repeated_cursor,
                stops_past_the_page_cap,
                calls_tools,
                many_requests_in_flight,
                resources_and_prompts,
                delivers_progress_and_advancing_progress_keeps_a_call_alive,
                times_out_and_cancels,
                each_call_keeps_its_own_deadline,
                dropping_a_call_cancels_it,
                surfaces_list_changed,
                answers_ping_both_ways,
                answers_server_requests,
                server_crash_fails_calls_promptly,
                survives_a_notification_flood,
                close_ends_the_session,
                elicits_through_the_handler,
                listings_carry_cache_hints,
            );
    };
    (@tests $harness:expr, $version:expr; $($test:ident,)+) => {$(
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            let harness = $harness;
            crate::$test(&harness, $version).await;
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

// ---------------------------------------------------------------- version negotiation

/// What a negotiation should end in.
#[derive(Debug, Clone, Copy)]
enum Outcome {
    /// A session at this revision.
    Session(&'static str),
    /// `TransportErrorKind::VersionNegotiation`.
    Negotiation,
    /// `TransportErrorKind::NoCommonVersion`.
    NoCommon,
    /// Any failure whose message names this revision (a server's refusal
    /// of `initialize`, the only hint a legacy session gets).
    RefusedNaming(&'static str),
}

/// Connects `harness` with `session` options to a server with `server`
/// options and checks the outcome.
async fn check(
    harness: &dyn Harness,
    row: &str,
    server: ServerOptions,
    session: SessionOptions,
    outcome: Outcome,
) {
    let kind = harness.kind();
    let connected = harness.connect(&server, session).await;
    match (outcome, connected) {
        (Outcome::Session(version), Ok(session)) => {
            assert_eq!(session.protocol_version(), version, "{kind}: {row}");
            assert_eq!(session.is_modern(), is_modern(version), "{kind}: {row}");
            // The chosen revision serves requests, not just the handshake.
            let tools = session.list_tools().await.unwrap();
            assert!(tools.iter().any(|t| t.name == "echo"), "{kind}: {row}");
            session.close().await.unwrap();
        }
        (Outcome::Negotiation, Err(error)) => assert!(
            matches!(error.kind(), TransportErrorKind::VersionNegotiation { .. }),
            "{kind}: {row}: {error}"
        ),
        (Outcome::NoCommon, Err(error)) => assert!(
            matches!(error.kind(), TransportErrorKind::NoCommonVersion { .. }),
            "{kind}: {row}: {error}"
        ),
        (Outcome::RefusedNaming(version), Err(error)) => assert!(
            error.to_string().contains(version),
            "{kind}: {row}: {error}"
        ),
        (outcome, Ok(session)) => panic!(
            "{kind}: {row}: expected {outcome:?}, got a session at {}",
            session.protocol_version()
        ),
        (outcome, Err(error)) => panic!("{kind}: {row}: expected {outcome:?}, got {error}"),
    }
}

/// The rows every transport kind passes with the transports of today:
/// whatever a server knows, the session settles on the newest revision
/// both sides support.
async fn negotiation_table(harness: &dyn Harness) {
    let newest = unpinned_options(MODERN);
    for &version in KNOWN_PROTOCOL_VERSIONS {
        let row = format!("server knows only {version}");
        let server = ServerOptions::only_version(version);
        check(
            harness,
            &row,
            server,
            newest.clone(),
            Outcome::Session(version),
        )
        .await;
    }
    check(
        harness,
        "dual-era server",
        ServerOptions::default(),
        newest.clone(),
        Outcome::Session(MODERN),
    )
    .await;
    for &version in KNOWN_PROTOCOL_VERSIONS {
        let row = format!("dual-era server, session pinned to {version}");
        let pinned = session_options(version);
        check(
            harness,
            &row,
            ServerOptions::default(),
            pinned,
            Outcome::Session(version),
        )
        .await;
    }
    check(
        harness,
        "session capped at 2025-06-18",
        ServerOptions::default(),
        unpinned_options("2025-06-18"),
        Outcome::Session("2025-06-18"),
    )
    .await;
    check(
        harness,
        "legacy server, session pinned to 2026-07-28",
        ServerOptions::default().legacy(),
        session_options(MODERN),
        Outcome::NoCommon,
    )
    .await;
    check(
        harness,
        "modern server, session pinned to 2025-11-25",
        ServerOptions::only_version(MODERN),
        session_options(LEGACY),
        Outcome::RefusedNaming(MODERN),
    )
    .await;
}

/// The rows where the server refuses a modern request with
/// `UnsupportedProtocolVersionError`: the session must read the error's
/// `data.supported`.
async fn negotiation_refusals(harness: &dyn Harness) {
    let newest = unpinned_options(MODERN);
    let lying = ServerOptions {
        lie_about_versions: true,
        ..ServerOptions::default()
    };
    check(
        harness,
        "lying dual-era server",
        lying,
        newest.clone(),
        Outcome::Negotiation,
    )
    .await;
    let lying_modern = ServerOptions {
        lie_about_versions: true,
        ..ServerOptions::only_version(MODERN)
    };
    check(
        harness,
        "lying modern server",
        lying_modern,
        newest.clone(),
        Outcome::Negotiation,
    )
    .await;
    let future = ServerOptions {
        era: Era::Modern,
        modern_versions: vec!["2099-01-01".to_owned()],
        ..ServerOptions::default()
    };
    check(
        harness,
        "modern server of a later revision",
        future,
        newest.clone(),
        Outcome::NoCommon,
    )
    .await;
    // A dual-era server whose modern revision the client does not know
    // lists its legacy ones too: the session goes down to those.
    let later_dual = ServerOptions {
        modern_versions: vec!["2099-01-01".to_owned()],
        ..ServerOptions::default()
    };
    check(
        harness,
        "dual-era server of a later revision",
        later_dual,
        newest.clone(),
        Outcome::Session(LEGACY),
    )
    .await;
    // A legacy server claiming a revision that has no initialize.
    let claims_modern = ServerOptions {
        protocol_version: Some(MODERN.to_owned()),
        ..ServerOptions::default().legacy()
    };
    check(
        harness,
        "legacy server answering initialize with 2026-07-28",
        claims_modern,
        newest,
        Outcome::Negotiation,
    )
    .await;
}

fn stdio() -> StdioHarness {
    StdioHarness::new(env!("CARGO_BIN_EXE_mcp-example-server"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_table_over_stdio() {
    negotiation_table(&stdio()).await;
    negotiation_refusals(&stdio()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_table_in_process() {
    negotiation_table(&SdkHarness::default()).await;
    negotiation_refusals(&SdkHarness::default()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_table_over_http() {
    negotiation_table(&NetHarness(NetKind::Http)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_table_over_websocket() {
    negotiation_table(&NetHarness(NetKind::Ws)).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn negotiation_refusals_over_http() {
    negotiation_refusals(&NetHarness(NetKind::Http)).await;
}

// ---------------------------------------------------------------- Multi Round-Trip Requests

/// A server that asks again every round is cut off after
/// `max_input_rounds` with a named error, and the session stays usable.
async fn endless_input_rounds_are_a_named_error(harness: &dyn Harness) {
    let mut options = session_options(MODERN);
    options.handler = Some(Arc::new(Person::default()));
    options.max_input_rounds = 3;
    let session = connect_with(harness, ServerOptions::default(), options).await;
    let error = session
        .call_tool("elicit", Some(json!({"rounds": 1000})))
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), TransportErrorKind::InputRoundsExceeded { method, rounds: 3 } if method == "tools/call"),
        "{error}"
    );
    assert!(error.to_string().starts_with("example-"), "{error}");
    // Within the bound, the same tool completes.
    let done = session
        .call_tool("elicit", Some(json!({"rounds": 3})))
        .await
        .unwrap();
    assert_eq!(first_text(&done), "hello Ada 6");
    session.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_input_rounds_over_stdio() {
    endless_input_rounds_are_a_named_error(&stdio()).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn endless_input_rounds_over_http() {
    endless_input_rounds_are_a_named_error(&NetHarness(NetKind::Http)).await;
}
