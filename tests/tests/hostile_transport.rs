//! Hostile servers against every transport: a table per class, each row
//! through one `check` helper, against real processes and loopback servers
//! (`mcp-scripted-server`, `mcp_integration_tests::scripted`).
//!
//! - deep messages are decoded up to `MAX_DEPTH` (512 levels) and refused
//!   past it, up to the deepest message that fits the 16 MiB cap (eight
//!   million levels), without overflowing a 2 MiB worker stack of a debug
//!   build, and a refused answer fails its request at once;
//! - answers that cannot be decoded but whose id can be found (not JSON,
//!   truncated, not UTF-8, not JSON-RPC, a bad batch element) fail that
//!   request at once, and the session goes on;
//! - a tool schema deeper than serde_json's default limit (the 65
//!   levels) no longer loses the server's tools;
//! - a stdio server dies with its host when the host is SIGKILLed, and not
//!   when the thread that spawned it exits.
//!
//! "At once" is asserted against a request timeout of 30 s: each failing
//! row must end in well under [`AT_ONCE`].

#![allow(clippy::unwrap_used, clippy::print_stderr, clippy::expect_used)]

use std::io::{BufRead, BufReader};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use mcp_config::{RemoteConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_integration_tests::harness::{entry, test_env};
use mcp_integration_tests::measure::running;
use mcp_integration_tests::scripted::{Kind, SCHEMA_LEVELS, Scripted, serve};
use mcp_transport::{ClientSession, ConnectOptions, ServerEvent};
use serde_json::{Value, json};

const SCRIPTED: &str = env!("CARGO_BIN_EXE_mcp-scripted-server");
/// Told to hang at `hostile/hold`, it never reads its stdin again: only a
/// signal can end it once its host is gone.
const MISBEHAVING: &str = env!("CARGO_BIN_EXE_mcp-misbehaving-server");
const HOST: &str = env!("CARGO_BIN_EXE_mcp-stdio-host");

fn timeouts() -> Timeouts {
    Timeouts::default()
        .with_connect(Duration::from_secs(20))
        .with_request(Duration::from_secs(30))
        .with_tool_call(Duration::from_secs(30))
}
/// A failing row must end well under the request timeout: this bound
/// leaves room for scanning 16 MiB in a debug build on a loaded machine.
const AT_ONCE: Duration = Duration::from_secs(5);

/// How the scripted server is reached.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Via {
    Stdio,
    Net(Kind),
}

const EVERY_KIND: [Via; 6] = [
    Via::Stdio,
    Via::Net(Kind::HttpJson),
    Via::Net(Kind::HttpSse),
    Via::Net(Kind::HttpGetStream),
    Via::Net(Kind::LegacySse),
    Via::Net(Kind::Ws),
];

fn name_of(via: Via) -> String {
    match via {
        Via::Stdio => "hostile-stdio".to_owned(),
        Via::Net(kind) => format!("hostile-{kind:?}").to_lowercase(),
    }
}

async fn connect(via: Via) -> (ClientSession, Option<Scripted>) {
    let remote = |url: &str| RemoteConfig::new(url.to_owned());
    let (transport, server) = match via {
        Via::Stdio => (
            TransportConfig::Stdio(StdioConfig::new(SCRIPTED.to_owned())),
            None,
        ),
        Via::Net(kind) => {
            let server = serve(kind).await;
            let config = match kind {
                Kind::LegacySse => TransportConfig::Sse(remote(&server.url)),
                Kind::Ws => TransportConfig::Ws(remote(&server.url)),
                _ => TransportConfig::Http(remote(&server.url)),
            };
            (config, Some(server))
        }
    };
    let config = entry(&name_of(via), transport, timeouts());
    let options = ConnectOptions::default().with_env(test_env());
    let session = mcp_transport::connect(&config, &options)
        .await
        .unwrap_or_else(|e| panic!("{via:?}: connect: {e}"));
    (session, server)
}

/// How deep a value nests, without recursing.
fn depth(value: &Value) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 1usize)];
    while let Some((value, level)) = stack.pop() {
        let children: Vec<&Value> = match value {
            Value::Array(items) => items.iter().collect(),
            Value::Object(map) => map.values().collect(),
            _ => continue,
        };
        deepest = deepest.max(level);
        stack.extend(children.into_iter().map(|child| (child, level + 1)));
    }
    deepest
}

/// What a row expects of its request.
#[derive(Debug, Clone, Copy)]
enum Expect {
    /// An answer whose `deep` member nests this many levels; it is cloned,
    /// compared, serialised and dropped on the worker that received it.
    Decoded(usize),
    /// An answer (of any shape).
    Answered,
    /// An error naming the server and containing each fragment, at once.
    FailsAtOnce(&'static [&'static str]),
}

/// The request of one row, its outcome, how long it took, and that the
/// session still answers afterwards.
async fn check(via: Via, params: Value, expect: Expect) {
    let (session, _server) = connect(via).await;
    let mut events = session.events();
    let row = format!("{via:?} {params}");
    let row: String = row.chars().take(120).collect();
    let started = Instant::now();
    let outcome = session
        .request("hostile/answer", Some(params.clone()))
        .await;
    let elapsed = started.elapsed();
    eprintln!(
        "hostile {row}: {} ms: {}",
        elapsed.as_millis(),
        match &outcome {
            Ok(_) => "answered".to_owned(),
            Err(e) => e.to_string().chars().take(200).collect(),
        }
    );
    assert!(elapsed < AT_ONCE, "{row}: took {elapsed:?}");
    match expect {
        Expect::Decoded(levels) => {
            let result = outcome.unwrap_or_else(|e| panic!("{row}: {e}"));
            let deep = &result["deep"];
            assert_eq!(depth(deep), levels, "{row}");
            // What a host does with a result, on this 2 MiB worker stack.
            let copy = result.clone();
            assert_eq!(copy, result, "{row}");
            assert!(serde_json::to_vec(&copy).unwrap().len() > levels, "{row}");
            drop(copy);
            drop(result);
        }
        Expect::Answered => {
            outcome.unwrap_or_else(|e| panic!("{row}: {e}"));
        }
        Expect::FailsAtOnce(fragments) => {
            let error = outcome.expect_err(&row).to_string();
            assert!(error.starts_with(&name_of(via)), "{row}: {error}");
            for fragment in fragments {
                assert!(
                    error.contains(fragment),
                    "{row}: {fragment:?} not in {error}"
                );
            }
        }
    }
    // Other requests on the session are unaffected.
    session
        .ping()
        .await
        .unwrap_or_else(|e| panic!("{row}: ping after: {e}"));
    assert!(!session.is_closed(), "{row}");
    if params["shape"] == "batch-deep" {
        // The batch's good element still arrived.
        let event = tokio::time::timeout(Duration::from_secs(5), events.recv())
            .await
            .unwrap_or_else(|_| panic!("{row}: the batch's notification never came"))
            .unwrap();
        assert!(
            matches!(&event, ServerEvent::Notification(n) if n.method == "notifications/message"),
            "{row}: {event:?}"
        );
    }
    let _ = session.close().await;
}

/// A multi-thread runtime whose workers have a 2 MiB stack (tokio's
/// default, stated so the rows prove it).
fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .thread_stack_size(2 * 1024 * 1024)
        .enable_all()
        .build()
        .unwrap()
}

const TOO_DEEP: &[&str] = &[
    "hostile/answer failed",
    "could not be decoded",
    "deep (limit 512)",
];
const NOT_JSON: &[&str] = &["hostile/answer failed", "could not be decoded", "not JSON"];
const NOT_JSON_RPC: &[&str] = &[
    "hostile/answer failed",
    "could not be decoded",
    "invalid JSON-RPC",
];

#[test]
fn deep_messages_decode_or_fail_that_request_at_once() {
    runtime().block_on(async {
        for via in EVERY_KIND {
            // Past serde_json's default limit of 128, up to MAX_DEPTH (the
            // envelope and `result` are two levels).
            check(
                via,
                json!({"shape": "nest-arrays", "levels": 200}),
                Expect::Decoded(200),
            )
            .await;
            check(
                via,
                json!({"shape": "nest-objects", "levels": 510}),
                Expect::Decoded(510),
            )
            .await;
            check(
                via,
                json!({"shape": "nest-arrays", "levels": 510}),
                Expect::Decoded(510),
            )
            .await;
            // One level past it, far past it, and the deepest messages that
            // fit the cap (eight million arrays, 2.8 million objects).
            check(
                via,
                json!({"shape": "nest-arrays", "levels": 511}),
                Expect::FailsAtOnce(TOO_DEEP),
            )
            .await;
            check(
                via,
                json!({"shape": "nest-objects", "levels": 100_000}),
                Expect::FailsAtOnce(TOO_DEEP),
            )
            .await;
            check(
                via,
                json!({"shape": "max-arrays"}),
                Expect::FailsAtOnce(TOO_DEEP),
            )
            .await;
            check(
                via,
                json!({"shape": "max-objects"}),
                Expect::FailsAtOnce(TOO_DEEP),
            )
            .await;
            // The id after the deep part; a batch whose other element is kept.
            check(
                via,
                json!({"shape": "id-last", "levels": 1_000_000}),
                Expect::FailsAtOnce(TOO_DEEP),
            )
            .await;
            check(
                via,
                json!({"shape": "batch-deep", "levels": 600}),
                Expect::FailsAtOnce(TOO_DEEP),
            )
            .await;
        }
    });
}

#[test]
fn undecodable_answers_with_an_id_fail_that_request_at_once() {
    runtime().block_on(async {
        for via in EVERY_KIND {
            check(
                via,
                json!({"shape": "not-json"}),
                Expect::FailsAtOnce(NOT_JSON),
            )
            .await;
            check(
                via,
                json!({"shape": "truncated"}),
                Expect::FailsAtOnce(NOT_JSON),
            )
            .await;
            check(
                via,
                json!({"shape": "both"}),
                Expect::FailsAtOnce(NOT_JSON_RPC),
            )
            .await;
            check(
                via,
                json!({"shape": "bad-error"}),
                Expect::FailsAtOnce(NOT_JSON_RPC),
            )
            .await;
            check(
                via,
                json!({"shape": "no-version"}),
                Expect::FailsAtOnce(NOT_JSON_RPC),
            )
            .await;
            // HTTP bodies and SSE data are read as UTF-8 with replacement
            // characters, so only raw stdio lines and WebSocket frames are
            // refused.
            let invalid_utf8 = match via {
                Via::Stdio | Via::Net(Kind::Ws) => Expect::FailsAtOnce(NOT_JSON),
                Via::Net(_) => Expect::Answered,
            };
            check(via, json!({"shape": "invalid-utf8"}), invalid_utf8).await;
        }
    });
}

#[test]
fn schemas_and_results_deeper_than_serde_defaults_arrive_typed() {
    runtime().block_on(async {
        for via in EVERY_KIND {
            let (session, _server) = connect(via).await;
            let started = Instant::now();
            let tools = session
                .list_tools()
                .await
                .unwrap_or_else(|e| panic!("{via:?}: {e}"));
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["echo", "deep"], "{via:?}");
            // Each schema level is an object and its `properties`.
            assert_eq!(
                depth(&tools[1].input_schema),
                2 * SCHEMA_LEVELS + 1,
                "{via:?}"
            );
            assert!(started.elapsed() < AT_ONCE, "{via:?}");
            // Up to the ceiling (tools/list answer: 4 levels of envelope).
            let params = json!({"levels": 250});
            let deep = session.request("tools/list", Some(params)).await;
            assert!(deep.is_ok(), "{via:?}: {deep:?}");
            let started = Instant::now();
            let error = session
                .request("tools/list", Some(json!({"levels": 300})))
                .await
                .unwrap_err();
            assert!(started.elapsed() < AT_ONCE, "{via:?}");
            assert!(
                error
                    .to_string()
                    .contains("tools/list failed: the answer could not be decoded"),
                "{via:?}: {error}"
            );
            assert!(!error.is_fatal(), "{via:?}: {error}");
            // A typed result at the ceiling goes through the library's own
            // conversion (`structuredContent`: message, result, then 510).
            let result = session
                .call_tool("deep", Some(json!({"levels": 510})))
                .await
                .unwrap_or_else(|e| panic!("{via:?}: {e}"));
            assert_eq!(depth(result.structured_content.as_ref().unwrap()), 510);
            let started = Instant::now();
            let error = session
                .call_tool("deep", Some(json!({"levels": 511})))
                .await
                .unwrap_err();
            assert!(started.elapsed() < AT_ONCE, "{via:?}");
            assert!(
                error.to_string().contains("deep (limit 512)"),
                "{via:?}: {error}"
            );
            session.ping().await.unwrap();
            let _ = session.close().await;
        }
    });
}

/// Starts `mcp-stdio-host` serving a server that ignores the end of its
/// stdin, spawned from
/// `spawn_from`; returns it and the server's pid once it is ready (the host
/// checks the server still answers after the spawning thread exited).
fn start_host(spawn_from: &str) -> (std::process::Child, i32) {
    let mut host = Command::new(HOST)
        .args(["--spawn-from", spawn_from, "--", MISBEHAVING])
        .args(["--fault", "hang", "--at", "hostile/hold"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(host.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let pid = line
        .trim()
        .strip_prefix("ready ")
        .and_then(|pid| pid.parse().ok())
        .unwrap_or_else(|| {
            let _ = host.kill();
            panic!(
                "{spawn_from}: the host did not get ready: {line:?} ({:?})",
                host.wait()
            )
        });
    (host, pid)
}

/// The names of `pid`'s threads (as the kernel keeps them: 15 bytes).
fn thread_names(pid: u32) -> Vec<String> {
    std::fs::read_dir(format!("/proc/{pid}/task"))
        .map(|tasks| {
            tasks
                .flatten()
                .filter_map(|task| std::fs::read_to_string(task.path().join("comm")).ok())
                .map(|name| name.trim_end().to_owned())
                .collect()
        })
        .unwrap_or_default()
}

fn check_host_death(spawn_from: &str) {
    let (mut host, server) = start_host(spawn_from);
    // The main thread starts its server itself; any other thread hands it
    // to the spawner thread.
    let spawner = thread_names(host.id())
        .iter()
        .any(|name| name == "mcp-stdio-spawn");
    assert_eq!(
        spawner,
        spawn_from != "main",
        "{spawn_from}: the host's spawner thread is {}",
        if spawner { "running" } else { "missing" }
    );
    // The spawning thread is long gone (the host waited 1.5 s and pinged).
    assert!(
        running(server),
        "{spawn_from}: the server died with its spawning thread"
    );
    // std's kill is SIGKILL: no drop, no shutdown sequence runs in the host.
    host.kill().unwrap();
    host.wait().unwrap();
    let killed = Instant::now();
    while running(server) {
        if killed.elapsed() > Duration::from_secs(5) {
            // Leave nothing behind, then fail.
            let _ = Command::new("kill")
                .args(["-9", &server.to_string()])
                .status();
            panic!("{spawn_from}: server {server} still ran 5 s after its host was killed");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    eprintln!(
        "hostile host-death {spawn_from}: server gone {} ms after SIGKILL",
        killed.elapsed().as_millis()
    );
}

#[test]
fn a_stdio_server_dies_with_its_killed_host_and_not_with_the_spawning_thread() {
    for spawn_from in ["main", "worker", "thread", "blocking"] {
        check_host_death(spawn_from);
    }
}

#[test]
fn an_orderly_host_exit_still_ends_its_server() {
    let (mut host, server) = start_host("thread");
    drop(host.stdin.take());
    assert!(host.wait().unwrap().success());
    let exited = Instant::now();
    while running(server) {
        assert!(
            exited.elapsed() < Duration::from_secs(5),
            "server {server} outlived its host"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}
