//! The peer matrix: every real peer `cargo xtask peers` installs, at both
//! wire generations (the session proposes 2026-07-28 or 2025-11-25), over
//! every transport the peer offers, driven through the catalog's
//! `SessionRuntime` as a host drives it:
//!
//! - the negotiated revision (`probe`), the listing and a plain call;
//! - a list change the catalog observes: the peer's `toggle` tool adds the
//!   tool `extra` and notifies (over `subscriptions/listen` at 2026-07-28,
//!   `notifications/tools/list_changed` before), and the next catalog has it;
//! - a task, where the peer has one (rmcp's `slow` under the tasks
//!   extension at 2026-07-28, server-everything's `simulate-research-query`,
//!   `taskSupport: "required"`, at 2025-11-25);
//! - an elicitation answered by the test's handler: an `input_required`
//!   result at 2026-07-28, an `elicitation/create` request before, one
//!   handler for both.
//!
//! One table ([`ROWS`]) says what each row expects; a step a peer does not
//! offer at a row (a stateless HTTP server has no stream for a list change
//! at 2025-11-25, say) is `None` there, never a skipped test. Each peer has
//! one test that runs its rows in turn and reports every row's steps, so a
//! failure names the row and the step. Peer tests are ignored by a plain
//! `cargo test`; run with `-- --include-ignored` (as `.ci/run` does).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::print_stderr)]

use mcp_test_peers as peers;

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_catalog::{McpConnector, ModelBlock, ServerSet, SessionRuntime};
use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, TransportConfig};
use mcp_integration_tests::harness::test_env;
use mcp_transport::{ClientHandler, ConnectOptions, ErrorObject, SessionOptions};
use serde_json::{Map, Value, json};

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";
const TASKS_EXTENSION: &str = "io.modelcontextprotocol/tasks";
/// The catalog's name for the peer's tools is `peer__<tool>`.
const SERVER: &str = "peer";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Peer {
    /// `peers/ts_server.mjs` on `@modelcontextprotocol/server` 2.4.
    TsSdk,
    /// `peers/py_modern_server.py` on Python `mcp` 2.3.
    PyMcp,
    /// `peers/rmcp-server` on rmcp 3.11.
    Rmcp,
    /// `@modelcontextprotocol/server-everything` 2026.8.31 (2025-11-25 only).
    Everything,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Wire {
    Stdio,
    /// Streamable HTTP on 127.0.0.1, `/mcp`.
    Http,
}

/// A tool call and a piece of the text it must answer with.
#[derive(Debug, Clone, Copy)]
struct Call {
    tool: &'static str,
    arguments: &'static str,
    expect: &'static str,
}

const fn call(tool: &'static str, arguments: &'static str, expect: &'static str) -> Option<Call> {
    Some(Call {
        tool,
        arguments,
        expect,
    })
}

/// One row of the matrix.
#[derive(Debug, Clone, Copy)]
struct Row {
    peer: Peer,
    wire: Wire,
    /// What the session proposes (`SessionOptions::protocol_version`).
    propose: &'static str,
    /// What it must end up speaking.
    negotiated: &'static str,
    /// The plain call.
    call: Call,
    /// Whether the peer's `toggle` makes a list change the catalog sees.
    list_change: bool,
    task: Option<Call>,
    elicitation: Option<Call>,
}

const ECHO: Call = Call {
    tool: "echo",
    arguments: r#"{"text": "hi"}"#,
    expect: "hi",
};
const EVERYTHING_ECHO: Call = Call {
    tool: "echo",
    arguments: r#"{"message": "hi"}"#,
    expect: "Echo: hi",
};
const CONFIRM: Option<Call> = call("confirm", "{}", "confirmed: true");
const RMCP_TASK: Option<Call> = call("slow", r#"{"ms": 300}"#, "done");
const RESEARCH_TASK: Option<Call> = call(
    "simulate-research-query",
    r#"{"topic": "peer matrix"}"#,
    "Research Report: peer matrix",
);
const EVERYTHING_ELICITATION: Option<Call> = call(
    "trigger-elicitation-request",
    "{}",
    "User provided the requested information",
);

const fn row(peer: Peer, wire: Wire, propose: &'static str, negotiated: &'static str) -> Row {
    Row {
        peer,
        wire,
        propose,
        negotiated,
        call: ECHO,
        list_change: true,
        task: None,
        elicitation: CONFIRM,
    }
}

/// The matrix. Where a row differs from [`row`]'s defaults, it says why.
const ROWS: &[Row] = &[
    // TypeScript SDK 2.x: no server-side tasks extension in 2.4.
    row(Peer::TsSdk, Wire::Stdio, MODERN, MODERN),
    row(Peer::TsSdk, Wire::Stdio, LEGACY, LEGACY),
    row(Peer::TsSdk, Wire::Http, MODERN, MODERN),
    // Stateless HTTP at 2025-11-25: no stream to notify on, and each
    // request is served by a fresh instance that never saw the client's
    // `initialize` capabilities, so it elicits nothing.
    Row {
        list_change: false,
        elicitation: None,
        ..row(Peer::TsSdk, Wire::Http, LEGACY, LEGACY)
    },
    // Python mcp 2.3: no server-side tasks extension.
    row(Peer::PyMcp, Wire::Stdio, MODERN, MODERN),
    row(Peer::PyMcp, Wire::Stdio, LEGACY, LEGACY),
    row(Peer::PyMcp, Wire::Http, MODERN, MODERN),
    row(Peer::PyMcp, Wire::Http, LEGACY, LEGACY),
    // rmcp 3.11: tasks (SEP-2663) at 2026-07-28 only.
    Row {
        task: RMCP_TASK,
        ..row(Peer::Rmcp, Wire::Stdio, MODERN, MODERN)
    },
    row(Peer::Rmcp, Wire::Stdio, LEGACY, LEGACY),
    Row {
        task: RMCP_TASK,
        ..row(Peer::Rmcp, Wire::Http, MODERN, MODERN)
    },
    row(Peer::Rmcp, Wire::Http, LEGACY, LEGACY),
    // server-everything speaks up to 2025-11-25, so a session proposing
    // 2026-07-28 falls back to it; it has no tool that changes its list.
    Row {
        call: EVERYTHING_ECHO,
        list_change: false,
        task: RESEARCH_TASK,
        elicitation: EVERYTHING_ELICITATION,
        ..row(Peer::Everything, Wire::Stdio, MODERN, LEGACY)
    },
    Row {
        call: EVERYTHING_ECHO,
        list_change: false,
        task: RESEARCH_TASK,
        elicitation: EVERYTHING_ELICITATION,
        ..row(Peer::Everything, Wire::Stdio, LEGACY, LEGACY)
    },
    Row {
        call: EVERYTHING_ECHO,
        list_change: false,
        task: RESEARCH_TASK,
        elicitation: EVERYTHING_ELICITATION,
        ..row(Peer::Everything, Wire::Http, MODERN, LEGACY)
    },
    Row {
        call: EVERYTHING_ECHO,
        list_change: false,
        task: RESEARCH_TASK,
        elicitation: EVERYTHING_ELICITATION,
        ..row(Peer::Everything, Wire::Http, LEGACY, LEGACY)
    },
];

/// Answers every elicitation by accepting it, with a value of the right
/// type for each required field of the requested schema.
struct Accepting;

#[async_trait]
impl ClientHandler for Accepting {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {}})
    }

    async fn elicit(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let schema = params
            .as_ref()
            .and_then(|params| params.get("requestedSchema"))
            .cloned()
            .unwrap_or_else(|| json!({}));
        let mut content = Map::new();
        let properties = schema.get("properties").and_then(Value::as_object);
        let required = schema.get("required").and_then(Value::as_array);
        for name in required.into_iter().flatten().filter_map(Value::as_str) {
            let property = properties
                .and_then(|properties| properties.get(name))
                .cloned()
                .unwrap_or_else(|| json!({}));
            content.insert(name.to_owned(), value_for(&property));
        }
        Ok(json!({"action": "accept", "content": content}))
    }
}

/// A value `property` (a primitive elicitation schema) accepts.
fn value_for(property: &Value) -> Value {
    if let Some(first) = property
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|values| values.first())
    {
        return first.clone();
    }
    if let Some(default) = property.get("default") {
        return default.clone();
    }
    match property.get("type").and_then(Value::as_str) {
        Some("boolean") => json!(true),
        Some("integer") | Some("number") => property.get("minimum").cloned().unwrap_or(json!(1)),
        _ => match property.get("format").and_then(Value::as_str) {
            Some("email") => json!("peer@example.com"),
            Some("uri") => json!("https://example.com/"),
            Some("date") => json!("2026-01-01"),
            Some("date-time") => json!("2026-01-01T00:00:00Z"),
            _ => json!("peer matrix"),
        },
    }
}

/// A peer process on a loopback port, killed when the row ends.
struct Running {
    child: Child,
}

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The program and arguments that run `peer` over stdio (or over HTTP on
/// `port`), with the environment it needs.
fn command(peer: Peer, port: Option<u16>) -> (PathBuf, Vec<String>, BTreeMap<String, String>) {
    let path = |p: PathBuf| p.to_string_lossy().into_owned();
    let port_arg = port.map(|port| port.to_string());
    let mode = |stdio: &str, http: &str| match &port_arg {
        None => vec![stdio.to_owned()],
        Some(port) => vec![http.to_owned(), port.clone()],
    };
    match peer {
        Peer::TsSdk => {
            let mut args = vec![path(peers::ts_server_script())];
            args.extend(mode("stdio", "http"));
            (peers::node22(), args, BTreeMap::new())
        }
        Peer::PyMcp => {
            let (python, script) = peers::py_modern_server();
            let mut args = vec![path(script)];
            args.extend(mode("stdio", "http"));
            (python, args, BTreeMap::new())
        }
        Peer::Rmcp => (peers::rmcp_server(), mode("stdio", "http"), BTreeMap::new()),
        Peer::Everything => {
            let script = path(peers::everything_script());
            match port {
                None => (
                    peers::node22(),
                    vec![script, "stdio".into()],
                    BTreeMap::new(),
                ),
                Some(port) => (
                    peers::node22(),
                    vec![script, "streamableHttp".into()],
                    BTreeMap::from([("PORT".to_owned(), port.to_string())]),
                ),
            }
        }
    }
}

/// The catalog entry for `row`'s peer, and the HTTP server behind it.
fn start(row: &Row) -> (ServerConfig, Option<Running>) {
    let (transport, running) = match row.wire {
        Wire::Stdio => {
            let (program, args, env) = command(row.peer, None);
            let transport = TransportConfig::Stdio(
                StdioConfig::new(program.to_string_lossy().into_owned())
                    .with_args(args)
                    .with_env(env),
            );
            (transport, None)
        }
        Wire::Http => {
            let port = peers::free_port();
            let (program, args, env) = command(row.peer, Some(port));
            let child = Command::new(program)
                .args(args)
                .envs(env)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .expect("starting the peer");
            let mut running = Running { child };
            peers::wait_until_listening(
                &mut running.child,
                &format!("{row:?}: the peer"),
                port,
                Duration::from_secs(30),
            );
            let transport =
                TransportConfig::Http(RemoteConfig::new(format!("http://127.0.0.1:{port}/mcp")));
            (transport, Some(running))
        }
    };
    let config = ServerConfig::new(SERVER, transport).with_required(true);
    (config, running)
}

fn runtime(row: &Row, config: ServerConfig) -> SessionRuntime {
    let session = SessionOptions::default()
        .with_protocol_version(row.propose.to_owned())
        .with_handler(Arc::new(Accepting))
        .with_extensions(Map::from_iter([(TASKS_EXTENSION.to_owned(), json!({}))]));
    let connector = McpConnector::new(
        ConnectOptions::default()
            .with_session(session)
            .with_env(test_env()),
    );
    SessionRuntime::builder("peer-matrix", ServerSet::all([config]), Arc::new(connector))
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build()
}

/// Calls `call` through the catalog and checks the text it answers with.
async fn check_call(runtime: &SessionRuntime, call: Call) -> Result<(), String> {
    let arguments: Value = serde_json::from_str(call.arguments).expect("arguments are JSON");
    let name = format!("{SERVER}__{}", call.tool);
    let result = tokio::time::timeout(Duration::from_secs(60), runtime.call(&name, arguments))
        .await
        .map_err(|_| format!("{}: no answer within 60 s", call.tool))?
        .map_err(|error| format!("{}: {error}", call.tool))?;
    let text: String = result
        .content
        .iter()
        .filter_map(|block| match block {
            ModelBlock::Text { text } => Some(text.as_str()),
            _ => None,
        })
        .collect::<Vec<_>>()
        .join("\n");
    if result.is_error() {
        return Err(format!("{}: error result: {text}", call.tool));
    }
    if !text.contains(call.expect) {
        return Err(format!(
            "{}: expected {:?} in the answer, got {text:?}",
            call.tool, call.expect
        ));
    }
    Ok(())
}

async fn check_listing(runtime: &SessionRuntime, row: &Row) -> Result<(), String> {
    let report = runtime.probe(SERVER).await;
    if let Some(error) = report.error {
        return Err(format!("probe: {error}"));
    }
    let identity = report.identity.ok_or("probe: no server identity")?;
    if identity.protocol_version != row.negotiated {
        return Err(format!(
            "negotiated {}, expected {}",
            identity.protocol_version, row.negotiated
        ));
    }
    let catalog = runtime
        .catalog()
        .await
        .map_err(|error| format!("catalog: {error}"))?;
    let wanted = format!("{SERVER}__{}", row.call.tool);
    if catalog.get(&wanted).is_none() {
        return Err(format!("catalog has no {wanted}: {:?}", catalog.report()));
    }
    Ok(())
}

/// `toggle` adds `extra`; the catalog must list it within 10 s without
/// being told to refetch.
async fn check_list_change(runtime: &SessionRuntime) -> Result<(), String> {
    let extra = format!("{SERVER}__extra");
    let before = runtime
        .catalog()
        .await
        .map_err(|error| format!("catalog: {error}"))?;
    if before.get(&extra).is_some() {
        return Err("extra is listed before the toggle".into());
    }
    check_call(
        runtime,
        Call {
            tool: "toggle",
            arguments: "{}",
            expect: "added",
        },
    )
    .await?;
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let catalog = runtime
            .catalog()
            .await
            .map_err(|error| format!("catalog: {error}"))?;
        if catalog.get(&extra).is_some() {
            return Ok(());
        }
        if Instant::now() > deadline {
            return Err("the catalog did not list `extra` within 10 s of the toggle".into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

/// Runs one row; each step's outcome by name (`None`: not offered there).
async fn run_row(row: &Row) -> Vec<(&'static str, Option<Result<(), String>>)> {
    let (config, _running) = start(row);
    let runtime = runtime(row, config);
    let mut steps = Vec::new();
    steps.push(("list", Some(check_listing(&runtime, row).await)));
    steps.push(("call", Some(check_call(&runtime, row.call).await)));
    let list_change = match row.list_change {
        true => Some(check_list_change(&runtime).await),
        false => None,
    };
    steps.push(("list change", list_change));
    let task = match row.task {
        Some(task) => Some(check_call(&runtime, task).await),
        None => None,
    };
    steps.push(("task", task));
    let elicitation = match row.elicitation {
        Some(elicitation) => Some(check_call(&runtime, elicitation).await),
        None => None,
    };
    steps.push(("elicitation", elicitation));
    runtime.shutdown().await;
    steps
}

/// Runs `peer`'s rows, prints one line per row and fails naming every
/// failed step.
async fn run_peer(peer: Peer) {
    let mut failures = Vec::new();
    for row in ROWS.iter().filter(|row| row.peer == peer) {
        let label = format!(
            "{:?} {:?} proposing {} (expects {})",
            row.peer, row.wire, row.propose, row.negotiated
        );
        let steps = run_row(row).await;
        let summary: Vec<String> = steps
            .iter()
            .map(|(step, outcome)| match outcome {
                None => format!("{step}: -"),
                Some(Ok(())) => format!("{step}: ok"),
                Some(Err(_)) => format!("{step}: FAILED"),
            })
            .collect();
        eprintln!("{label}: {}", summary.join(", "));
        for (step, outcome) in steps {
            if let Some(Err(error)) = outcome {
                failures.push(format!("{label}, {step}: {error}"));
            }
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn typescript_sdk_2_server() {
    run_peer(Peer::TsSdk).await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn python_mcp_2_3_server() {
    run_peer(Peer::PyMcp).await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn rmcp_3_11_server() {
    run_peer(Peer::Rmcp).await;
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn server_everything() {
    run_peer(Peer::Everything).await;
}

#[test]
fn every_peer_has_a_row_at_both_revisions_over_each_transport() {
    for peer in [Peer::TsSdk, Peer::PyMcp, Peer::Rmcp, Peer::Everything] {
        for wire in [Wire::Stdio, Wire::Http] {
            for propose in [MODERN, LEGACY] {
                let rows = ROWS
                    .iter()
                    .filter(|row| row.peer == peer && row.wire == wire && row.propose == propose)
                    .count();
                assert_eq!(rows, 1, "{peer:?} {wire:?} {propose}");
            }
        }
    }
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
