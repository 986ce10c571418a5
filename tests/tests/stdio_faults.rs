//! Stdio servers that misbehave: banners and garbage on stdout, handshakes
//! that never finish or die, servers that ignore SIGTERM, spawn failures,
//! and the guarantee that no child process outlives its session, whether it
//! is closed, dropped or its task is cancelled.

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use mcp_config::{StdioConfig, Timeouts, TransportConfig};
use mcp_integration_tests::harness::{StdioHarness, entry, test_env};
use mcp_integration_tests::server::ServerOptions;
use mcp_transport::StdioOptions;
use mcp_transport::{
    ClientSession, ConnectOptions, SessionOptions, TransportError, TransportErrorKind,
};
use serde_json::json;

const SERVER: &str = env!("CARGO_BIN_EXE_mcp-example-server");

fn timeouts(connect: Duration) -> Timeouts {
    Timeouts::default()
        .with_connect(connect)
        .with_request(Duration::from_secs(20))
        .with_tool_call(Duration::from_secs(20))
}

fn fast_shutdown() -> StdioOptions {
    StdioOptions::default()
        .with_stdin_close_grace(Duration::from_millis(300))
        .with_sigterm_grace(Duration::from_millis(300))
}

async fn connect(
    server: ServerOptions,
    connect_timeout: Duration,
) -> Result<ClientSession, TransportError> {
    let config = StdioHarness::new(SERVER).config(&server, timeouts(connect_timeout));
    let options = ConnectOptions::default()
        .with_env(test_env())
        .with_stdio(fast_shutdown())
        .with_session(SessionOptions::default());
    mcp_transport::connect(&config, &options).await
}

async fn tool_text(session: &ClientSession, tool: &str) -> String {
    let result = session.call_tool(tool, None).await.unwrap();
    result.content[0].as_text().unwrap().to_string()
}

async fn pid_of(session: &ClientSession, tool: &str) -> i32 {
    tool_text(session, tool).await.parse().unwrap()
}

/// Whether a process still runs (a zombie waiting to be reaped does not).
fn running(pid: i32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Ok(stat) => {
            // The state follows the parenthesised command name.
            let state = stat
                .rsplit_once(')')
                .and_then(|(_, rest)| rest.trim_start().chars().next());
            !matches!(state, Some('Z' | 'X') | None)
        }
        Err(_) => false,
    }
}

async fn assert_gone(pid: i32, what: &str) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while running(pid) {
        assert!(
            Instant::now() < deadline,
            "{what} (pid {pid}) is still running"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

fn pid_in_banner(stderr: &str) -> i32 {
    let start = stderr.find("(pid ").unwrap() + "(pid ".len();
    let end = start + stderr[start..].find(')').unwrap();
    stderr[start..end].parse().unwrap()
}

#[tokio::test]
async fn skips_garbage_lines_on_stdout() {
    let server = ServerOptions {
        garbage_lines: true,
        page_size: 2,
        ..ServerOptions::default()
    };
    let session = connect(server, Duration::from_secs(20)).await.unwrap();
    let echo = session
        .call_tool("echo", Some(json!({"text": "still fine"})))
        .await
        .unwrap();
    assert_eq!(echo.content[0].as_text(), Some("still fine"));
    assert!(session.list_tools().await.unwrap().len() > 10);
    session.close().await.unwrap();
}

/// A modern-only server slower to answer `server/discover` than the
/// probe waits (an interpreter importing its packages on a loaded
/// machine) refuses the `initialize` sent after the probe timed out; the
/// session then asks `server/discover` again and speaks 2026-07-28, as
/// with a server that answered in time.
#[tokio::test]
async fn a_modern_server_slower_than_the_probe_is_asked_again() {
    let server = ServerOptions {
        era: mcp_integration_tests::server::Era::Modern,
        init_delay_ms: 800,
        ..ServerOptions::default()
    };
    let config = StdioHarness::new(SERVER).config(&server, timeouts(Duration::from_secs(20)));
    let options = ConnectOptions::default()
        .with_env(test_env())
        .with_stdio(fast_shutdown())
        .with_session(SessionOptions::default().with_discover_timeout(Duration::from_millis(200)));
    let session = mcp_transport::connect(&config, &options).await.unwrap();
    assert_eq!(session.protocol_version(), "2026-07-28");
    assert!(!session.list_tools().await.unwrap().is_empty());
    session.close().await.unwrap();
}

#[tokio::test]
async fn connect_timeout_is_honoured_when_initialize_is_never_answered() {
    let server = ServerOptions {
        never_answer_initialize: true,
        ..ServerOptions::default()
    };
    // Long enough that a debug build of the server has written its banner
    // on a loaded two-core machine (the tail is what the test checks);
    // short enough that a timeout that was not honoured shows.
    let timeout = Duration::from_secs(2);
    let started = Instant::now();
    let error = connect(server, timeout).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let server = error.server();
    let TransportErrorKind::ConnectTimeout {
        after, stderr_tail, ..
    } = error.kind()
    else {
        panic!("unexpected error: {error}");
    };
    assert_eq!(server, "example-stdio");
    assert!(*after >= timeout);
    assert!(
        stderr_tail.contains("serving \"example\" on stdio"),
        "{stderr_tail}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("example-stdio: connect timed out after"),
        "{message}"
    );
    assert!(message.contains("stderr:"), "{message}");
    // The child was killed with the failed session.
    assert_gone(
        pid_in_banner(stderr_tail),
        "server that never answered initialize",
    )
    .await;
}

#[tokio::test]
async fn exit_during_initialize_reports_status_and_stderr() {
    let server = ServerOptions {
        exit_during_initialize: true,
        ..ServerOptions::default()
    };
    let started = Instant::now();
    let error = connect(server, Duration::from_secs(20)).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "took {:?}",
        started.elapsed()
    );
    let TransportErrorKind::ServerExited {
        status,
        stderr_tail,
        ..
    } = error.kind()
    else {
        panic!("unexpected error: {error}");
    };
    assert!(status.contains("exit status: 2"), "{status}");
    assert!(
        stderr_tail.contains("fatal: exiting during initialize"),
        "{stderr_tail}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("example-stdio: server exited (exit status: 2)"),
        "{message}"
    );
    assert!(
        message.contains("fatal: exiting during initialize"),
        "{message}"
    );
}

#[tokio::test]
async fn spawn_failure_names_the_server_and_command() {
    let config = entry(
        "missing",
        TransportConfig::Stdio(StdioConfig::new("/nonexistent/mcp-server")),
        Timeouts::default(),
    );
    let error = mcp_transport::connect(&config, &ConnectOptions::default())
        .await
        .unwrap_err();
    assert!(
        matches!(error.kind(), TransportErrorKind::Spawn { .. }),
        "{error}"
    );
    let message = error.to_string();
    assert!(
        message.starts_with("missing: failed to start `/nonexistent/mcp-server`:"),
        "{message}"
    );
}

#[tokio::test]
async fn child_gets_the_allow_listed_environment_and_its_cwd() {
    let dir = tempfile::tempdir().unwrap();
    let mut base = test_env();
    base.insert("HOME".to_string(), "/home/tester".to_string());
    base.insert("SECRET_TOKEN".to_string(), "do-not-pass".to_string());
    base.insert("LD_PRELOAD".to_string(), "/evil.so".to_string());
    let config = entry(
        "env-check",
        TransportConfig::Stdio(
            StdioConfig::new(SERVER.to_string())
                .with_env(BTreeMap::from([(
                    "MY_SETTING".to_string(),
                    "1".to_string(),
                )]))
                .with_cwd(dir.path().to_path_buf()),
        ),
        timeouts(Duration::from_secs(20)),
    );
    let options = ConnectOptions::default()
        .with_env(base)
        .with_stdio(fast_shutdown());
    let session = mcp_transport::connect(&config, &options).await.unwrap();
    let result = session.call_tool("environment", None).await.unwrap();
    let info = result.structured_content.unwrap();
    let names: Vec<&str> = info["names"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n.as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["HOME", "MY_SETTING", "PATH"]);
    let cwd = std::path::PathBuf::from(info["cwd"].as_str().unwrap());
    assert_eq!(
        cwd.canonicalize().unwrap(),
        dir.path().canonicalize().unwrap()
    );
    session.close().await.unwrap();
}

#[tokio::test]
async fn close_leaves_no_process_behind() {
    let server = ServerOptions {
        spawn_grandchild: true,
        ..ServerOptions::default()
    };
    let session = connect(server, Duration::from_secs(20)).await.unwrap();
    let pid = pid_of(&session, "pid").await;
    let grandchild = pid_of(&session, "grandchild_pid").await;
    assert!(running(pid) && running(grandchild));
    session.close().await.unwrap();
    assert_gone(pid, "server").await;
    assert_gone(grandchild, "grandchild").await;
}

#[tokio::test]
async fn dropping_the_session_kills_the_process_group() {
    let server = ServerOptions {
        spawn_grandchild: true,
        ..ServerOptions::default()
    };
    let session = connect(server, Duration::from_secs(20)).await.unwrap();
    let pid = pid_of(&session, "pid").await;
    let grandchild = pid_of(&session, "grandchild_pid").await;
    drop(session);
    assert_gone(pid, "server").await;
    assert_gone(grandchild, "grandchild").await;
}

#[tokio::test]
async fn cancelling_the_owning_task_kills_the_process_group() {
    let (pids_tx, pids_rx) = tokio::sync::oneshot::channel();
    let task = tokio::spawn(async move {
        let server = ServerOptions {
            spawn_grandchild: true,
            ..ServerOptions::default()
        };
        let session = connect(server, Duration::from_secs(20)).await.unwrap();
        let pids = (
            pid_of(&session, "pid").await,
            pid_of(&session, "grandchild_pid").await,
        );
        pids_tx.send(pids).unwrap();
        // Busy with a long call when the task is cancelled.
        let _ = session
            .call_tool("slow", Some(json!({"steps": 1, "step_ms": 60000})))
            .await;
    });
    let (pid, grandchild) = pids_rx.await.unwrap();
    task.abort();
    let _ = task.await;
    assert_gone(pid, "server").await;
    assert_gone(grandchild, "grandchild").await;
}

#[tokio::test]
async fn a_server_ignoring_stdin_close_and_sigterm_is_killed() {
    let server = ServerOptions {
        ignore_stdin_close: true,
        ignore_sigterm: true,
        spawn_grandchild: true,
        ..ServerOptions::default()
    };
    let session = connect(server, Duration::from_secs(20)).await.unwrap();
    let pid = pid_of(&session, "pid").await;
    let grandchild = pid_of(&session, "grandchild_pid").await;
    let started = Instant::now();
    session.close().await.unwrap();
    // Both grace periods passed before SIGKILL.
    assert!(
        started.elapsed() >= Duration::from_millis(600),
        "closed after {:?}",
        started.elapsed()
    );
    assert_gone(pid, "server").await;
    assert_gone(grandchild, "grandchild").await;
}

#[tokio::test]
async fn a_server_that_exits_on_stdin_close_is_not_signalled() {
    let config = StdioHarness::new(SERVER)
        .config(&ServerOptions::default(), timeouts(Duration::from_secs(20)));
    let options = ConnectOptions::default().with_env(test_env()).with_stdio(
        StdioOptions::default()
            .with_stdin_close_grace(Duration::from_secs(8))
            .with_sigterm_grace(Duration::from_secs(8)),
    );
    let session = mcp_transport::connect(&config, &options).await.unwrap();
    let pid = pid_of(&session, "pid").await;
    let started = Instant::now();
    session.close().await.unwrap();
    // Inside the stdin grace period: the server left on its own, unsignalled.
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "closed after {:?}",
        started.elapsed()
    );
    assert_gone(pid, "server").await;
}

/// Every size a host can give a duration: none, the smallest, an ordinary
/// one, the largest, and a `u64` of milliseconds (past the clock's range
/// on some platforms).
const HOST_DURATIONS: [(&str, Duration); 5] = [
    ("zero", Duration::ZERO),
    ("1ns", Duration::from_nanos(1)),
    ("200ms", Duration::from_millis(200)),
    ("u64::MAX ms", Duration::from_millis(u64::MAX)),
    ("Duration::MAX", Duration::MAX),
];

/// Whether a duration stands for "wait, in practice forever".
fn endless(value: Duration) -> bool {
    value >= Duration::from_secs(3600)
}

/// A grace period of the stdio close path.
#[derive(Debug, Clone, Copy)]
enum Grace {
    StdinClose,
    Sigterm,
}

/// Closes a session to `server` with `grace` set to `value` (the other
/// grace 100 ms) and checks the close path neither panics nor cuts a wait
/// the host asked for short: it returns `Ok` with the server gone when
/// the server leaves within the waits; when a wait is endless and the
/// server does not leave, the close is still waiting a second later
/// (nothing was killed early), and dropping the session ends the server.
async fn check_grace(
    grace: Grace,
    value: Duration,
    (label, server): (&str, &ServerOptions),
    leaves: bool,
) {
    let short = Duration::from_millis(100);
    let stdio = match grace {
        Grace::StdinClose => StdioOptions::default()
            .with_stdin_close_grace(value)
            .with_sigterm_grace(short),
        Grace::Sigterm => StdioOptions::default()
            .with_stdin_close_grace(short)
            .with_sigterm_grace(value),
    };
    let config = StdioHarness::new(SERVER).config(server, timeouts(Duration::from_secs(20)));
    let options = ConnectOptions::default()
        .with_env(test_env())
        .with_stdio(stdio);
    let session = mcp_transport::connect(&config, &options).await.unwrap();
    let pid = pid_of(&session, "pid").await;
    let what = format!("{grace:?} grace {value:?}, a server that {label}");
    let close = tokio::time::timeout(Duration::from_secs(1), session.close()).await;
    match close {
        Ok(result) => {
            assert!(leaves || !endless(value), "{what}: closed early");
            result.unwrap_or_else(|e| panic!("{what}: {e}"));
        }
        Err(_) => {
            assert!(
                endless(value) && !leaves,
                "{what}: close took over a second"
            );
            assert!(running(pid), "{what}: the server was signalled early");
            drop(session);
        }
    }
    assert_gone(pid, &what).await;
}

/// Each grace period of the stdio close path × every size a host can
/// pass: the close never panics (`Instant + Duration::MAX` once did), a
/// server that leaves is reaped, and an endless grace waits as asked.
#[tokio::test]
async fn grace_periods_of_any_size_close_without_panicking() {
    let leaves = ("exits when stdin closes", &ServerOptions::default());
    let on_sigterm = (
        "exits on SIGTERM",
        &ServerOptions {
            ignore_stdin_close: true,
            ..ServerOptions::default()
        },
    );
    let on_sigkill = (
        "ignores SIGTERM",
        &ServerOptions {
            ignore_stdin_close: true,
            ignore_sigterm: true,
            ..ServerOptions::default()
        },
    );
    for (_, value) in HOST_DURATIONS {
        check_grace(Grace::StdinClose, value, leaves, true).await;
        check_grace(Grace::Sigterm, value, leaves, true).await;
        // An endless stdin grace never sends SIGTERM.
        check_grace(Grace::StdinClose, value, on_sigterm, !endless(value)).await;
        check_grace(Grace::Sigterm, value, on_sigterm, true).await;
        // Killed only after the SIGTERM grace.
        check_grace(Grace::Sigterm, value, on_sigkill, !endless(value)).await;
    }
}
