//! Fault injection: one agent turn over two servers, one healthy and one
//! misbehaving in a scripted way, through the catalog runtime a host uses.
//!
//! Every fault is one row of the table at the bottom, checked by [`check`]:
//! the turn (fetch the catalog, call a tool of each server at once) ends
//! within the faulty server's timeouts plus slack; the faulty server's
//! outcome is the expected one and an error names it; the healthy server's
//! tool answers in the same turn; after shutdown no process is left; and
//! this process's peak memory grew by less than [`MEMORY_BOUND`]. Each row
//! prints one `fault ...` line (outcome, time, memory) for the record.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_catalog::{McpConnector, ModelBlock, ResultStatus, ServerSet, SessionRuntime};
use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_integration_tests::fault_net::{FaultyHttp, HttpFault, Trigger, serve_faulty_http};
use mcp_integration_tests::harness::{entry, test_env};
use mcp_integration_tests::measure::{peak_rss, running};
use mcp_integration_tests::misbehaving::{Fault, Script};
use mcp_integration_tests::net::{
    Loopback, NetKind, serve_legacy_sse, serve_streamable_http, serve_ws,
};
use mcp_integration_tests::server::{ExampleServer, ServerOptions};
use mcp_transport::ConnectOptions;
use mcp_transport::StdioOptions;
use serde_json::{Value, json};

const EXAMPLE: &str = env!("CARGO_BIN_EXE_mcp-example-server");
const MISBEHAVING: &str = env!("CARGO_BIN_EXE_mcp-misbehaving-server");
const MIB: usize = 1024 * 1024;

/// The faulty server's usual timeouts. Connecting gets more room: a busy
/// machine may take a while to start a process, and most rows need the
/// handshake to succeed before their fault.
fn faulty_timeouts() -> Timeouts {
    Timeouts::default()
        .with_connect(Duration::from_secs(5))
        .with_request(Duration::from_secs(2))
        .with_tool_call(Duration::from_secs(2))
}
/// On top of the timeouts: room for a loaded 2-core machine. A hang would
/// blow through any bound; this one only has to be finite and fair.
const SLACK: Duration = Duration::from_secs(10);
/// How much this process's peak memory may grow during one turn.
const MEMORY_BOUND: usize = 64 * MIB;
/// Credentials the faulty HTTP server must never pass on.
const SECRET_HEADERS: [(&str, &str); 2] = [
    ("authorization", "Bearer fault-suite-secret"),
    ("x-api-key", "fault-suite-key"),
];

/// How the faulty server is reached.
enum Faulty {
    /// `mcp-misbehaving-server` over stdio.
    Stdio(Script),
    /// The faulty loopback server over streamable HTTP.
    Http(HttpFault, Trigger),
    /// The faulty loopback server as a legacy SSE url (every request).
    Sse(HttpFault),
    /// The faulty loopback server as a WebSocket url (every request).
    Ws(HttpFault),
    /// The example server over a network kind; its `crash` tool kills the
    /// loopback server and every connection mid-session.
    Dropped(NetKind),
}

/// What the turn must report for the faulty server.
enum Expect {
    /// An error naming the server and containing each fragment.
    Fails(&'static [&'static str]),
    /// The fault is survivable: its tool answers, in this turn and the next.
    Works,
}

struct Case {
    faulty: Faulty,
    /// The faulty server's tool the turn calls, and its arguments.
    tool: &'static str,
    arguments: Value,
    expect: Expect,
    /// The faulty server's timeouts; the turn may take their sum.
    timeouts: Timeouts,
}

/// A case that calls the faulty server's `echo`.
fn case(faulty: Faulty, expect: Expect) -> Case {
    Case {
        faulty,
        tool: "echo",
        arguments: json!({"text": "hello"}),
        expect,
        timeouts: faulty_timeouts(),
    }
}

fn stdio(fault: Fault, at: &str, expect: Expect) -> Case {
    case(Faulty::Stdio(Script::new(fault, at)), expect)
}

fn http(fault: HttpFault, at: &str, expect: Expect) -> Case {
    case(Faulty::Http(fault, Trigger::Method(at.to_owned())), expect)
}

/// A network server killed mid-session by calling its `crash` tool.
fn dropped(kind: NetKind) -> Case {
    Case {
        tool: "crash",
        arguments: json!({}),
        ..case(Faulty::Dropped(kind), Expect::Fails(&["tools/call failed"]))
    }
}

fn remote(url: &str) -> RemoteConfig {
    RemoteConfig::new(url.to_owned()).with_headers(
        SECRET_HEADERS
            .iter()
            .map(|(name, value)| (name.to_string(), value.to_string())),
    )
}

/// What keeps the faulty server running, and how to find its process.
enum Running {
    Process { pid_file: std::path::PathBuf },
    Faulty(FaultyHttp),
    Loopback(Loopback),
}

async fn start(faulty: &Faulty, dir: &std::path::Path) -> (TransportConfig, Running) {
    match faulty {
        Faulty::Stdio(script) => {
            let pid_file = dir.join("faulty.pid");
            let mut args = script.to_args();
            args.extend(["--pid-file".to_owned(), pid_file.display().to_string()]);
            let transport =
                TransportConfig::Stdio(StdioConfig::new(MISBEHAVING.to_owned()).with_args(args));
            (transport, Running::Process { pid_file })
        }
        Faulty::Http(fault, trigger) => {
            let server = serve_faulty_http(fault.clone(), trigger.clone()).await;
            let transport = TransportConfig::Http(remote(&server.url));
            (transport, Running::Faulty(server))
        }
        Faulty::Sse(fault) => {
            let server = serve_faulty_http(fault.clone(), Trigger::Always).await;
            let transport = TransportConfig::Sse(remote(&server.url));
            (transport, Running::Faulty(server))
        }
        Faulty::Ws(fault) => {
            let server = serve_faulty_http(fault.clone(), Trigger::Always).await;
            let url = server.url.replacen("http://", "ws://", 1);
            let transport = TransportConfig::Ws(remote(&url));
            (transport, Running::Faulty(server))
        }
        Faulty::Dropped(kind) => {
            let core = Arc::new(ExampleServer::new(ServerOptions::default()));
            let (loopback, transport) = match kind {
                NetKind::Http => {
                    let server = serve_streamable_http(core).await;
                    let transport = TransportConfig::Http(remote(&server.url));
                    (server, transport)
                }
                NetKind::Sse => {
                    let server = serve_legacy_sse(core).await;
                    let transport = TransportConfig::Sse(remote(&server.url));
                    (server, transport)
                }
                NetKind::Ws | NetKind::Proxy => {
                    let server = serve_ws(core).await;
                    let transport = TransportConfig::Ws(remote(&server.url));
                    (server, transport)
                }
            };
            (transport, Running::Loopback(loopback))
        }
    }
}

fn healthy_entry() -> ServerConfig {
    // Generous timeouts: the healthy server must not fail because the
    // machine is busy.
    let mut config = entry(
        "healthy",
        TransportConfig::Stdio(
            StdioConfig::new(EXAMPLE.to_owned()).with_args(ServerOptions::default().to_args()),
        ),
        Timeouts::default()
            .with_connect(Duration::from_secs(30))
            .with_request(Duration::from_secs(30))
            .with_tool_call(Duration::from_secs(30)),
    );
    config.name = "healthy".to_owned();
    config
}

fn runtime(servers: Vec<ServerConfig>) -> SessionRuntime {
    let connector = McpConnector::new(
        ConnectOptions::default().with_env(test_env()).with_stdio(
            StdioOptions::default()
                .with_stdin_close_grace(Duration::from_millis(500))
                .with_sigterm_grace(Duration::from_millis(500)),
        ),
    );
    SessionRuntime::builder(
        "agent-session",
        ServerSet::all(servers),
        Arc::new(connector),
    )
    .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
    .build()
}

/// What one turn got from each server.
#[derive(Debug)]
struct Turn {
    healthy: Result<String, String>,
    faulty: Result<String, String>,
}

fn text_of(result: &mcp_catalog::ModelResult) -> String {
    result
        .content
        .iter()
        .map(|block| match block {
            ModelBlock::Text { text } => text.clone(),
            other => format!("{other:?}"),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

/// Calls `server`'s `tool` through the catalog; when the server is not in
/// the catalog, its diagnostics are the error the model would see.
async fn call(
    runtime: &SessionRuntime,
    catalog: &mcp_catalog::Catalog,
    server: &str,
    tool: &str,
    arguments: Value,
) -> Result<String, String> {
    let Some(tool) = catalog.get(&format!("{server}__{tool}")) else {
        let notes: Vec<String> = catalog
            .diagnostics()
            .iter()
            .filter(|d| d.server == server)
            .map(|d| d.message.clone())
            .collect();
        return Err(if notes.is_empty() {
            format!("no tool {server}__{tool} and no diagnostic")
        } else {
            notes.join("; ")
        });
    };
    match runtime.call_tool(tool, arguments).await {
        Ok(result) if result.status == ResultStatus::Ok => Ok(text_of(&result)),
        Ok(result) => Err(format!("tool error: {}", text_of(&result))),
        Err(error) => Err(error.to_string()),
    }
}

/// What a host does for one model turn: the catalog, then one call per
/// server, at once. Each step must end within `limit`.
async fn agent_turn(runtime: &SessionRuntime, case: &Case, name: &str, limit: Duration) -> Turn {
    let catalog = match bounded(name, "building the catalog", limit, runtime.catalog()).await {
        Ok(catalog) => catalog,
        Err(error) => {
            return Turn {
                healthy: Err(error.to_string()),
                faulty: Err(error.to_string()),
            };
        }
    };
    let calls = async {
        tokio::join!(
            call(
                runtime,
                &catalog,
                "healthy",
                "echo",
                json!({"text": "still here"})
            ),
            call(
                runtime,
                &catalog,
                "faulty",
                case.tool,
                case.arguments.clone()
            ),
        )
    };
    let (healthy, faulty) = bounded(name, "calling both servers", limit, calls).await;
    Turn { healthy, faulty }
}

/// Awaits one step of a row, failing the row by name when the step does
/// not end: a hang shows as this row's failure, saying where it stopped,
/// instead of stalling the suite.
async fn bounded<T>(
    name: &str,
    step: &str,
    limit: Duration,
    future: impl std::future::Future<Output = T>,
) -> T {
    match tokio::time::timeout(limit, future).await {
        Ok(output) => output,
        Err(_) => panic!("{name}: {step} did not end within {limit:?}"),
    }
}

async fn assert_gone(pid: i32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(10);
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "{what} (pid {pid}) is still running"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

async fn check(name: &str, case: Case) {
    let dir = tempfile::tempdir().unwrap();
    let (transport, running_server) = start(&case.faulty, dir.path()).await;
    let faulty = entry("faulty", transport, case.timeouts);
    let runtime = runtime(vec![healthy_entry(), faulty]);
    let budget = case.timeouts.connect + case.timeouts.request + case.timeouts.tool_call;
    let limit = budget + SLACK;

    let memory_before = peak_rss();
    let started = Instant::now();
    let turn = agent_turn(&runtime, &case, name, limit).await;
    let elapsed = started.elapsed();
    let grown = peak_rss().saturating_sub(memory_before);
    let outcome = match &turn.faulty {
        Ok(text) => format!("ok {:?}", text.chars().take(60).collect::<String>()),
        Err(error) => format!("error: {error}"),
    };
    eprintln!(
        "fault {name}: {} ms, peak memory +{} KiB: {outcome}",
        elapsed.as_millis(),
        grown / 1024
    );

    // (a) the turn ends within its timeouts
    assert!(
        elapsed < limit,
        "{name}: the turn took {elapsed:?} (budget {budget:?} + {SLACK:?})"
    );
    // (b) the faulty server's outcome, and an error names it
    match case.expect {
        Expect::Fails(fragments) => {
            let error = turn.faulty.as_ref().unwrap_err();
            assert!(
                error.contains("\"faulty\""),
                "{name}: the error does not name the server: {error}"
            );
            for fragment in fragments {
                assert!(
                    error.contains(fragment),
                    "{name}: expected {fragment:?} in: {error}"
                );
            }
        }
        Expect::Works => {
            assert!(turn.faulty.is_ok(), "{name}: {:?}", turn.faulty);
            let again = agent_turn(&runtime, &case, name, limit).await;
            assert!(again.faulty.is_ok(), "{name}, second turn: {again:?}");
        }
    }
    // (c) the healthy sibling answered in the same turn
    assert_eq!(
        turn.healthy.as_deref(),
        Ok("still here"),
        "{name}: the healthy server was affected"
    );
    // (e) bounded memory
    assert!(
        grown < MEMORY_BOUND,
        "{name}: peak memory grew by {} MiB",
        grown / MIB
    );

    // (d) nothing is left behind
    let healthy_pid: i32 = bounded(
        name,
        "asking the healthy server its pid",
        SLACK,
        runtime.call("healthy__pid", json!({})),
    )
    .await
    .map(|result| text_of(&result).parse().unwrap())
    .unwrap();
    let shutdown_started = Instant::now();
    bounded(
        name,
        "shutting the runtime down",
        Duration::from_secs(20),
        runtime.shutdown(),
    )
    .await;
    eprintln!(
        "fault {name}: shutdown took {} ms",
        shutdown_started.elapsed().as_millis()
    );
    assert_gone(healthy_pid, "the healthy server").await;
    match running_server {
        Running::Process { pid_file } => {
            let pid: i32 = std::fs::read_to_string(&pid_file)
                .unwrap()
                .trim()
                .parse()
                .unwrap();
            assert_gone(pid, "the faulty server").await;
        }
        Running::Faulty(server) => {
            // The client never followed the server elsewhere.
            let visits = server.other_origin.lock().unwrap().clone();
            assert!(
                visits.is_empty(),
                "{name}: requests reached another origin: {visits:?}"
            );
        }
        Running::Loopback(server) => drop(server),
    }
}

macro_rules! faults {
    ($($name:ident => $case:expr;)*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
            async fn $name() {
                check(stringify!($name), $case).await;
            }
        )*
    };
}

const CONNECT_FAILED: &[&str] = &["unavailable", "connect"];

faults! {
    // A crash at every protocol step.
    crash_at_initialize => stdio(Fault::Crash, "initialize", Expect::Fails(&["server exited (exit status: 1)", "crashing at initialize"]));
    crash_at_initialized => stdio(Fault::Crash, "notifications/initialized", Expect::Fails(&["unavailable", "server exited"]));
    crash_at_tools_list => stdio(Fault::Crash, "tools/list", Expect::Fails(&["unavailable", "server exited", "crashing at tools/list"]));
    crash_at_tools_call => stdio(Fault::Crash, "tools/call", Expect::Fails(&["tools/call failed", "server exited", "crashing at tools/call"]));
    // A hang at every protocol step.
    hang_at_initialize => stdio(Fault::Hang, "initialize", Expect::Fails(&["unavailable", "timed out"]));
    hang_at_initialized => stdio(Fault::Hang, "notifications/initialized", Expect::Fails(&["unavailable", "tools/list", "timed out"]));
    hang_at_tools_list => stdio(Fault::Hang, "tools/list", Expect::Fails(&["unavailable", "tools/list", "timed out"]));
    hang_at_tools_call => stdio(Fault::Hang, "tools/call", Expect::Fails(&["tools/call", "timed out"]));
    // Broken lines and answers.
    partial_line_at_initialize => stdio(Fault::PartialLine, "initialize", Expect::Fails(&["unavailable", "timed out"]));
    partial_line_at_tools_call => stdio(Fault::PartialLine, "tools/call", Expect::Fails(&["tools/call", "timed out"]));
    // An answer that is not UTF-8 still carries its id: that request
    // fails at once, saying why.
    invalid_utf8_at_initialize => stdio(Fault::InvalidUtf8, "initialize", Expect::Fails(&["unavailable", "the answer could not be decoded"]));
    invalid_utf8_at_tools_call => stdio(Fault::InvalidUtf8, "tools/call", Expect::Fails(&["tools/call failed", "the answer could not be decoded"]));
    unknown_id_at_tools_list => stdio(Fault::UnknownId, "tools/list", Expect::Fails(&["unavailable", "tools/list", "timed out"]));
    unknown_id_at_tools_call => stdio(Fault::UnknownId, "tools/call", Expect::Fails(&["tools/call", "timed out"]));
    duplicate_response_at_tools_list => stdio(Fault::DuplicateResponse, "tools/list", Expect::Works);
    duplicate_response_at_tools_call => stdio(Fault::DuplicateResponse, "tools/call", Expect::Works);
    // 50 MiB in one message, past the 16 MiB default cap.
    huge_answer_to_tools_list => stdio(Fault::Huge(50 * MIB), "tools/list", Expect::Fails(&["unavailable", "message too large"]));
    huge_answer_to_tools_call => stdio(Fault::Huge(50 * MIB), "tools/call", Expect::Fails(&["tools/call failed", "message too large"]));
    // 10,000 notifications a second during a call that takes 2 s (room
    // for a busy machine: the claim is that the call still answers).
    flood_during_a_call => Case {
        arguments: json!({"steps": 4, "step_ms": 500}),
        tool: "slow",
        timeouts: faulty_timeouts().with_tool_call(Duration::from_secs(15)),
        ..stdio(Fault::Flood(10_000), "notifications/initialized", Expect::Works)
    };
    // Slow-loris HTTP: headers or body that never end.
    http_slow_headers_at_initialize => http(HttpFault::SlowHeaders, "initialize", Expect::Fails(CONNECT_FAILED));
    http_slow_headers_at_tools_call => http(HttpFault::SlowHeaders, "tools/call", Expect::Fails(&["tools/call", "timed out"]));
    http_slow_body_at_tools_list => http(HttpFault::SlowBody, "tools/list", Expect::Fails(&["unavailable", "tools/list", "timed out"]));
    http_slow_body_at_tools_call => http(HttpFault::SlowBody, "tools/call", Expect::Fails(&["tools/call", "timed out"]));
    sse_slow_headers => case(Faulty::Sse(HttpFault::SlowHeaders), Expect::Fails(CONNECT_FAILED));
    ws_slow_headers => case(Faulty::Ws(HttpFault::SlowHeaders), Expect::Fails(CONNECT_FAILED));
    // An HTML page instead of MCP.
    http_html_at_initialize => http(HttpFault::Html, "initialize", Expect::Fails(CONNECT_FAILED));
    http_html_at_tools_call => http(HttpFault::Html, "tools/call", Expect::Fails(&["tools/call failed"]));
    sse_html => case(Faulty::Sse(HttpFault::Html), Expect::Fails(&["unavailable", "text/event-stream", "text/html"]));
    ws_html => case(Faulty::Ws(HttpFault::Html), Expect::Fails(&["unavailable", "WebSocket handshake"]));
    // A 500.
    http_500_at_initialize => http(HttpFault::Status(500), "initialize", Expect::Fails(&["unavailable", "HTTP 500", "upstream exploded"]));
    http_500_at_tools_list => http(HttpFault::Status(500), "tools/list", Expect::Fails(&["unavailable", "HTTP 500"]));
    http_500_at_tools_call => http(HttpFault::Status(500), "tools/call", Expect::Fails(&["tools/call failed", "HTTP 500"]));
    // A redirect to another origin: never followed, never given credentials.
    http_redirect_at_initialize => http(HttpFault::RedirectToOtherOrigin, "initialize", Expect::Fails(&["unavailable", "redirect"]));
    http_redirect_at_tools_call => http(HttpFault::RedirectToOtherOrigin, "tools/call", Expect::Fails(&["tools/call failed", "redirect"]));
    // 50 MiB in one HTTP answer, as JSON and as one SSE event.
    http_huge_json_answer_to_tools_call => http(HttpFault::HugeJson(50 * MIB), "tools/call", Expect::Fails(&["tools/call failed", "message too large"]));
    http_huge_event_answer_to_tools_call => http(HttpFault::HugeEvent(50 * MIB), "tools/call", Expect::Fails(&["tools/call failed", "message too large"]));
    // The connection dropped mid-session, for each network kind.
    dropped_websocket => dropped(NetKind::Ws);
    dropped_sse_stream => dropped(NetKind::Sse);
    dropped_http_server => dropped(NetKind::Http);
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
