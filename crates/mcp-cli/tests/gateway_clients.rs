//! `mcp-cli serve` to real MCP clients no one on this project wrote: the
//! scenario drivers on the TypeScript SDK 2.x, Python `mcp` 2.3 and rmcp
//! 3.11 clients (`peers/clients/`), and the MCP Inspector CLI. The
//! upstream is `peers/ts_everything.mjs` over stdio, served with
//! `--passthrough`, so the clients see its names and URIs unchanged.
//!
//! One table: client × downstream transport (stdio, where the client
//! starts the gateway; streamable HTTP on a free loopback port) × protocol
//! revision (2026-07-28 and 2025-11-25: every client here can pin both).
//! A row lists the steps it runs and what each must do; [`check`] runs one
//! row and names every step that did otherwise, with its detail.
//!
//! Every process runs in a process group of its own, killed when its row
//! ends; `HOME`, `--home` and `--project` are a temporary folder, and
//! nothing goes beyond loopback. The peers come from `cargo xtask peers`;
//! each test is ignored by a plain `cargo test`, and run with
//! `-- --include-ignored` a missing peer fails it with that command.

#![allow(clippy::expect_used)]
#![cfg(unix)]

mod support;

use std::ffi::OsString;
use std::io::{BufRead, BufReader, Read};
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use Client::{Inspector, Py, Rmcp, Ts};
use Downstream as D;
use mcp_test_peers as peers;
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};
use support::Tree;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Client {
    /// `peers/clients/ts_client.mjs`, `@modelcontextprotocol/client` 2.4.0.
    Ts,
    /// `peers/clients/py_client.py`, Python `mcp` 2.3.0.
    Py,
    /// `.peers/bin/rmcp-peer-client`, rmcp 3.11.0.
    Rmcp,
    /// The MCP Inspector CLI 2.12.0: one request per run, no elicitation
    /// capability, so only `list`, `call`, `read` and `prompt`.
    Inspector,
}

#[derive(Clone, Copy, Debug)]
enum Downstream {
    /// The client starts `mcp-cli serve` as its stdio server.
    Stdio,
    /// `mcp-cli serve --listen 127.0.0.1:0`; the client gets the URL it
    /// prints.
    Http,
}

const MODERN: &str = "2026-07-28";
const LEGACY: &str = "2025-11-25";

/// A step that fails today for a known gap of the gateway. It still runs:
/// the row fails once it passes, so the gap closing is noticed and the
/// step moves to the row's passing steps.
#[derive(Debug)]
struct KnownFailure {
    step: &'static str,
    /// What the step's detail says when it is this gap and nothing else.
    evidence: &'static str,
    why: &'static str,
}

/// One client on one transport at one revision.
#[derive(Debug)]
struct Row {
    client: Client,
    downstream: Downstream,
    revision: &'static str,
    /// The steps that must pass (`connect` is the drivers' handshake
    /// check, always run by them).
    pass: &'static [&'static str],
    /// The steps that must fail today, and why.
    fail: &'static [KnownFailure],
}

/// Every step of the drivers.
const ALL_STEPS: &[&str] = &[
    "connect",
    "list",
    "call",
    "read",
    "prompt",
    "elicit",
    "list_changed",
    "cancel",
];

/// What the Inspector's CLI can do: one request per run, and it declares
/// no elicitation capability, so no `elicit`, `list_changed` or `cancel`.
const INSPECTOR_STEPS: &[&str] = &["list", "call", "read", "prompt"];

const fn row(
    client: Client,
    downstream: Downstream,
    revision: &'static str,
    pass: &'static [&'static str],
    fail: &'static [KnownFailure],
) -> Row {
    Row {
        client,
        downstream,
        revision,
        pass,
        fail,
    }
}

/// The table. Every driver row runs every step, at both revisions (at
/// 2026-07-28 the elicitation reaches the client as an input round the
/// gateway passes on; at 2025-11-25 as a request the gateway sends it).
/// The Inspector rows run what its CLI can do.
const ROWS: &[Row] = &[
    row(Ts, D::Stdio, MODERN, ALL_STEPS, &[]),
    row(Ts, D::Stdio, LEGACY, ALL_STEPS, &[]),
    row(Ts, D::Http, MODERN, ALL_STEPS, &[]),
    row(Ts, D::Http, LEGACY, ALL_STEPS, &[]),
    row(Py, D::Stdio, MODERN, ALL_STEPS, &[]),
    row(Py, D::Stdio, LEGACY, ALL_STEPS, &[]),
    row(Py, D::Http, MODERN, ALL_STEPS, &[]),
    row(Py, D::Http, LEGACY, ALL_STEPS, &[]),
    row(Rmcp, D::Stdio, MODERN, ALL_STEPS, &[]),
    row(Rmcp, D::Stdio, LEGACY, ALL_STEPS, &[]),
    row(Rmcp, D::Http, MODERN, ALL_STEPS, &[]),
    row(Rmcp, D::Http, LEGACY, ALL_STEPS, &[]),
    row(Inspector, D::Stdio, MODERN, INSPECTOR_STEPS, &[]),
    row(Inspector, D::Stdio, LEGACY, INSPECTOR_STEPS, &[]),
    row(Inspector, D::Http, MODERN, INSPECTOR_STEPS, &[]),
    row(Inspector, D::Http, LEGACY, INSPECTOR_STEPS, &[]),
];

/// A driver run never takes this long: its connect and each step have
/// 20 s limits of their own.
const DRIVER_DEADLINE: Duration = Duration::from_secs(120);
/// One Inspector request.
const INSPECTOR_DEADLINE: Duration = Duration::from_secs(60);

#[test]
#[ignore = "needs cargo xtask peers"]
fn typescript_sdk_client_through_the_gateway() {
    check_rows(Ts);
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn python_sdk_client_through_the_gateway() {
    check_rows(Py);
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn rmcp_client_through_the_gateway() {
    check_rows(Rmcp);
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn inspector_cli_through_the_gateway() {
    check_rows(Inspector);
}

/// Every row of `client`; fails listing every row that went wrong.
#[track_caller]
fn check_rows(client: Client) {
    let failures: Vec<String> = ROWS
        .iter()
        .filter(|row| row.client == client)
        .filter_map(|row| check(row).err())
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// Runs one row against a fresh gateway and upstream; `Err` names the row,
/// each step that did otherwise than the row says with its detail, and
/// the end of the client's and gateway's stderr.
fn check(row: &Row) -> Result<(), String> {
    let started = Instant::now();
    let tree = Tree::new("empty");
    let gateway = Gateway::new(&tree, row.downstream);
    let run = match row.client {
        Inspector => run_inspector(row, &tree, &gateway),
        _ => run_driver(row, &tree, &gateway),
    };
    let mut problems = run.problems;
    for step in row.pass {
        match run.steps.iter().find(|reported| reported.step == *step) {
            None => problems.push(format!("step `{step}` was not reported")),
            Some(reported) if !reported.ok => {
                problems.push(format!("step `{step}` failed: {}", reported.detail))
            }
            Some(_) => {}
        }
    }
    for known in row.fail {
        let step = known.step;
        match run.steps.iter().find(|reported| reported.step == step) {
            None => problems.push(format!("step `{step}` was not reported")),
            Some(reported) if reported.ok => problems.push(format!(
                "step `{step}` passed, though it is known to fail ({}): move it to the row's passing steps; detail: {}",
                known.why, reported.detail
            )),
            Some(reported) if !reported.detail.to_string().contains(known.evidence) => problems
                .push(format!(
                    "step `{step}` failed, but not only because {} (no `{}` in the detail): {}",
                    known.why, known.evidence, reported.detail
                )),
            Some(_) => {}
        }
    }
    for reported in &run.steps {
        let expected = row.pass.contains(&reported.step.as_str())
            || row.fail.iter().any(|known| known.step == reported.step);
        if !expected {
            problems.push(format!(
                "step `{}` was reported, though the row does not run it",
                reported.step
            ));
        }
    }
    #[allow(clippy::print_stderr)]
    {
        eprintln!(
            "{} over {:?} at {}: {} in {:.1?}",
            label(row.client),
            row.downstream,
            row.revision,
            if problems.is_empty() { "ok" } else { "FAILED" },
            started.elapsed()
        );
    }
    if problems.is_empty() {
        return Ok(());
    }
    Err(format!(
        "{} over {:?} at {}:\n  {}\nclient stderr (end):\n{}\ngateway stderr (end):\n{}",
        label(row.client),
        row.downstream,
        row.revision,
        problems.join("\n  "),
        tail(&run.stderr),
        tail(&gateway.stderr())
    ))
}

fn label(client: Client) -> &'static str {
    match client {
        Ts => "TypeScript SDK client",
        Py => "Python SDK client",
        Rmcp => "rmcp client",
        Inspector => "Inspector CLI",
    }
}

/// One `{"step", "ok", "detail"}` line of a driver (or of an Inspector
/// request, in the same shape).
#[derive(Debug)]
struct Reported {
    step: String,
    ok: bool,
    detail: Value,
}

/// What one row's client did.
#[derive(Debug, Default)]
struct ClientRun {
    steps: Vec<Reported>,
    /// What went wrong besides the steps (a crash, a timeout, an exit
    /// status that disagrees with the steps, a line that is no step).
    problems: Vec<String>,
    stderr: String,
}

/// Runs the row's scenario driver: `--steps` are the row's steps but
/// `connect` (which always runs), `--legacy` pins 2025-11-25.
fn run_driver(row: &Row, tree: &Tree, gateway: &Gateway) -> ClientRun {
    let mut command = match row.client {
        Ts => {
            let mut command = Command::new(peers::node22());
            command.arg(peers::ts_client_script());
            command
        }
        Py => {
            let (python, script) = peers::py_client();
            let mut command = Command::new(python);
            command.arg(script);
            command
        }
        Rmcp => Command::new(peers::rmcp_client()),
        Inspector => unreachable!("the Inspector has no driver"),
    };
    if row.revision == LEGACY {
        command.arg("--legacy");
    }
    let steps: Vec<&str> = row
        .pass
        .iter()
        .copied()
        .chain(row.fail.iter().map(|known| known.step))
        .filter(|step| *step != "connect")
        .collect();
    command.arg("--steps").arg(steps.join(","));
    match gateway.url() {
        Some(url) => command.args(["http", url]),
        None => command.arg("stdio").args(gateway_command(tree, None)),
    };
    isolate(&mut command, tree);
    let finished = run_to_end(command, DRIVER_DEADLINE);
    let mut run = ClientRun {
        stderr: finished.stderr,
        ..ClientRun::default()
    };
    for line in finished
        .stdout
        .lines()
        .filter(|line| !line.trim().is_empty())
    {
        match serde_json::from_str::<Value>(line) {
            Ok(step) => run.steps.push(Reported {
                step: step["step"].as_str().unwrap_or_default().to_owned(),
                ok: step["ok"] == true,
                detail: step["detail"].clone(),
            }),
            Err(_) => run
                .problems
                .push(format!("a stdout line is not a step: {line}")),
        }
    }
    // The drivers exit 0 exactly when every step passed.
    let wanted = if run.steps.iter().all(|step| step.ok) {
        0
    } else {
        1
    };
    match finished.status {
        None => run.problems.push(format!(
            "the driver was still running after {DRIVER_DEADLINE:?} and was killed"
        )),
        Some(status) if status.code() != Some(wanted) => run.problems.push(format!(
            "the driver ended with {status}, though its steps call for exit status {wanted}"
        )),
        Some(_) => {}
    }
    run
}

/// Runs one Inspector CLI request per row step (`--protocol-era modern`
/// pins 2026-07-28, `legacy` 2025-11-25) and judges its JSON output the
/// way the drivers judge theirs.
fn run_inspector(row: &Row, tree: &Tree, gateway: &Gateway) -> ClientRun {
    let (node, inspector) = (peers::node22(), peers::inspector_script());
    let era = if row.revision == MODERN {
        "modern"
    } else {
        "legacy"
    };
    let mut run = ClientRun::default();
    for step in row.pass {
        let (request, judge): (&[&str], fn(&Value) -> bool) = match *step {
            "list" => (&["--method", "tools/list"], |result| {
                result["tools"].as_array().is_some_and(|tools| {
                    tools.iter().any(|tool| tool["name"] == "test_simple_text")
                })
            }),
            "call" => (
                &["--method", "tools/call", "--tool-name", "test_simple_text"],
                |result| result["isError"] != true && has_text(&result["content"]),
            ),
            "read" => (
                &["--method", "resources/read", "--uri", "test://static-text"],
                |result| has_text(&result["contents"]),
            ),
            "prompt" => (
                &[
                    "--method",
                    "prompts/get",
                    "--prompt-name",
                    "test_simple_prompt",
                ],
                |result| {
                    result["messages"]
                        .as_array()
                        .is_some_and(|messages| !messages.is_empty())
                },
            ),
            other => panic!("the Inspector cannot run step `{other}`"),
        };
        let mut command = Command::new(&node);
        command
            .arg(&inspector)
            .args(["--cli", "--format", "json", "-q", "--protocol-era", era])
            .args(request);
        match gateway.url() {
            Some(url) => command.args(["--transport", "http", "--server-url", url]),
            None => command.arg("--").args(gateway_command(tree, None)),
        };
        isolate(&mut command, tree);
        let finished = run_to_end(command, INSPECTOR_DEADLINE);
        let answer: Value = serde_json::from_str(finished.stdout.trim()).unwrap_or(Value::Null);
        let ok = finished.status.is_some_and(|status| status.success()) && judge(&answer["result"]);
        let status = finished
            .status
            .map_or_else(|| "killed at the deadline".to_owned(), |s| s.to_string());
        run.steps.push(Reported {
            step: (*step).to_owned(),
            ok,
            detail: json!({
                "status": status,
                "stdout": finished.stdout.trim(),
                "stderr": finished.stderr.trim(),
            }),
        });
        run.stderr.push_str(&finished.stderr);
    }
    run
}

/// At least one text block (`{"text": …}`) in `blocks`.
fn has_text(blocks: &Value) -> bool {
    blocks.as_array().is_some_and(|blocks| {
        blocks
            .iter()
            .any(|block| block["text"].as_str().is_some_and(|text| !text.is_empty()))
    })
}

/// `mcp-cli serve --passthrough` (on `listen`, or stdio) with the tree's
/// folders as its home, project and OpenClaw home, serving ts_everything
/// over stdio.
fn gateway_command(tree: &Tree, listen: Option<&str>) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec![env!("CARGO_BIN_EXE_mcp-cli").into()];
    for (flag, folder) in [
        ("--home", "home"),
        ("--project", "project"),
        ("--openclaw-home", "openclaw"),
    ] {
        argv.push(flag.into());
        argv.push(tree.path(folder).into());
    }
    argv.extend(["serve".into(), "--passthrough".into()]);
    if let Some(listen) = listen {
        argv.extend(["--listen".into(), listen.into()]);
    }
    argv.push("--".into());
    argv.push(peers::node22().into());
    argv.push(peers::ts_everything_script().into());
    argv.push("stdio".into());
    argv
}

/// A minimal environment with `HOME` in the tree (the Inspector writes
/// `$HOME/.mcp-inspector/`), run from `.peers/` (where the drivers expect
/// to be), in a process group of its own.
fn isolate(command: &mut Command, tree: &Tree) {
    command
        .env_clear()
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .env("HOME", tree.path("home"))
        .current_dir(peers::peers_dir())
        .process_group(0);
}

/// A process and its process group (everything it started that stayed in
/// it), killed and reaped on drop.
struct Group(Child);

impl Drop for Group {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The gateway of an HTTP row, started by the test; none for a stdio row,
/// where the client starts it.
struct Gateway {
    http: Option<(Group, String)>,
    stderr: Arc<Mutex<String>>,
}

impl Gateway {
    fn new(tree: &Tree, downstream: Downstream) -> Gateway {
        let stderr = Arc::new(Mutex::new(String::new()));
        let http = match downstream {
            Downstream::Stdio => None,
            Downstream::Http => Some(Gateway::listen(tree, &stderr)),
        };
        Gateway { http, stderr }
    }

    /// `mcp-cli serve --listen 127.0.0.1:0`, once it says where it serves.
    fn listen(tree: &Tree, log: &Arc<Mutex<String>>) -> (Group, String) {
        let argv = gateway_command(tree, Some("127.0.0.1:0"));
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped());
        isolate(&mut command, tree);
        command.current_dir(tree.path("project"));
        let mut group = Group(command.spawn().expect("start mcp-cli serve"));
        let stderr = group.0.stderr.take().expect("the gateway's stderr");
        let (url_tx, url_rx) = mpsc::channel();
        let lines = Arc::clone(log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if let Some(url) = line.strip_prefix("serving MCP at ") {
                    let _ = url_tx.send(url.trim().to_owned());
                }
                let mut lines = lines
                    .lock()
                    .unwrap_or_else(|poisoned| poisoned.into_inner());
                lines.push_str(&line);
                lines.push('\n');
            }
        });
        match url_rx.recv_timeout(Duration::from_secs(30)) {
            Ok(url) => (group, url),
            Err(_) => {
                let status = group.0.try_wait().ok().flatten();
                panic!(
                    "mcp-cli serve --listen did not say where it serves (exit: {status:?}); stderr:\n{}",
                    log.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
                )
            }
        }
    }

    /// The HTTP URL, or `None` for a stdio row.
    fn url(&self) -> Option<&str> {
        self.http.as_ref().map(|(_, url)| url.as_str())
    }

    /// What the gateway printed (an HTTP row's; a stdio row's gateway
    /// writes to the client's stderr).
    fn stderr(&self) -> String {
        self.stderr
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
            .clone()
    }
}

/// How a process ended: `status` is `None` when it was killed at the
/// deadline.
struct Finished {
    status: Option<ExitStatus>,
    stdout: String,
    stderr: String,
}

/// Runs `command` (no stdin) to its end or `deadline`, then kills what is
/// left of its process group.
fn run_to_end(mut command: Command, deadline: Duration) -> Finished {
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut group = Group(command.spawn().expect("start the client"));
    let stdout = read_all(group.0.stdout.take().expect("stdout"));
    let stderr = read_all(group.0.stderr.take().expect("stderr"));
    let ends = Instant::now() + deadline;
    let status = loop {
        match group.0.try_wait() {
            Ok(Some(status)) => break Some(status),
            Ok(None) if Instant::now() < ends => std::thread::sleep(Duration::from_millis(20)),
            _ => break None,
        }
    };
    // Kills the group, so a grandchild that kept the pipes open lets go.
    drop(group);
    // A grandchild in another process group (the Python SDK starts its
    // stdio server in a session of its own) may keep stderr open a little
    // longer, until it sees its stdin close.
    let collect = |output: mpsc::Receiver<String>| {
        output
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| "[output not closed within 10 s]".to_owned())
    };
    Finished {
        status,
        stdout: collect(stdout),
        stderr: collect(stderr),
    }
}

/// Reads `from` to its end on a thread of its own.
fn read_all(mut from: impl Read + Send + 'static) -> mpsc::Receiver<String> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut bytes = Vec::new();
        let _ = from.read_to_end(&mut bytes);
        let _ = tx.send(String::from_utf8_lossy(&bytes).into_owned());
    });
    rx
}

/// The last lines of `text`.
fn tail(text: &str) -> String {
    let lines: Vec<&str> = text.lines().collect();
    lines[lines.len().saturating_sub(40)..].join("\n")
}
