//! SIGINT, SIGTERM and SIGHUP to the built `mcp-cli` while a server hangs
//! (REFERENCE §1.6a): the CLI cancels, closes every session with the stdio
//! close sequence, and exits 128 + the signal's number; the server's whole
//! process group (the server and a grandchild it started) is gone within
//! 5 s of the signal. Real processes: the workspace's test servers behind
//! a small wrapper script that starts the grandchild and keeps the pid and
//! stderr files in the test's temporary folder.

#![allow(clippy::expect_used)]
#![cfg(target_os = "linux")]

mod support;

use std::fs;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;
use support::{Tree, test_server};

/// Starts a grandchild in the server's process group, then becomes the
/// server, its stderr in a file the test can watch.
const WRAPPER: &str = r#"#!/bin/sh
dir=$1
shift
sleep 300 &
echo $! > "$dir/grandchild"
exec "$@" 2> "$dir/stderr"
"#;

/// How long the group may outlive the signal.
const GONE_WITHIN: Duration = Duration::from_secs(5);

struct Case {
    name: &'static str,
    /// The verb and its arguments.
    verb: &'static [&'static str],
    /// The server: `misbehaving` hangs at this method; `example` is the
    /// example server with these flags.
    server: Server,
    /// Seen when the server is hanging: (file under the pid folder or
    /// `cli-stderr`, text).
    ready: (&'static str, &'static str),
    signal: Signal,
    /// The signal is sent a second time 200 ms later: the CLI stops
    /// waiting for the graceful close and the group dies within 1.5 s.
    twice: bool,
    status: i32,
}

enum Server {
    HangsAt(&'static str),
    Example(&'static [&'static str]),
}

const SLOW_CALL: &[&str] = &[
    "call",
    "mcp__hang__slow",
    "--arg",
    "steps=1000",
    "--arg",
    "step_ms=100",
];

#[test]
fn a_signal_closes_every_server_and_exits_with_its_status() {
    let cases = [
        Case {
            name: "call hanging in tools/call, SIGINT",
            verb: &["call", "mcp__hang__echo", "--arg", "text=x"],
            server: Server::HangsAt("tools/call"),
            ready: ("stderr", "hanging at tools/call"),
            signal: Signal::SIGINT,
            twice: false,
            status: 130,
        },
        Case {
            name: "call hanging in tools/call, SIGTERM",
            verb: &["call", "mcp__hang__echo", "--arg", "text=x"],
            server: Server::HangsAt("tools/call"),
            ready: ("stderr", "hanging at tools/call"),
            signal: Signal::SIGTERM,
            twice: false,
            status: 143,
        },
        Case {
            name: "call hanging in tools/call, SIGHUP",
            verb: &["call", "mcp__hang__echo", "--arg", "text=x"],
            server: Server::HangsAt("tools/call"),
            ready: ("stderr", "hanging at tools/call"),
            signal: Signal::SIGHUP,
            twice: false,
            status: 129,
        },
        Case {
            name: "probe hanging in tools/list, SIGINT",
            verb: &["probe"],
            server: Server::HangsAt("tools/list"),
            ready: ("stderr", "hanging at tools/list"),
            signal: Signal::SIGINT,
            twice: false,
            status: 130,
        },
        Case {
            name: "tools hanging in tools/list, SIGTERM",
            verb: &["tools"],
            server: Server::HangsAt("tools/list"),
            ready: ("stderr", "hanging at tools/list"),
            signal: Signal::SIGTERM,
            twice: false,
            status: 143,
        },
        Case {
            name: "a call in progress on a server that ignores stdin closing and SIGTERM, SIGINT",
            verb: SLOW_CALL,
            server: Server::Example(&[
                "--spawn-grandchild",
                "--ignore-sigterm",
                "--ignore-stdin-close",
            ]),
            ready: ("cli-stderr", "progress 1/1000"),
            signal: Signal::SIGINT,
            twice: false,
            status: 130,
        },
        Case {
            name: "the same, SIGINT twice",
            verb: SLOW_CALL,
            server: Server::Example(&[
                "--spawn-grandchild",
                "--ignore-sigterm",
                "--ignore-stdin-close",
            ]),
            ready: ("cli-stderr", "progress 1/1000"),
            signal: Signal::SIGINT,
            twice: true,
            status: 130,
        },
    ];
    let misbehaving = test_server("mcp-misbehaving-server");
    let example = test_server("mcp-example-server");
    for case in &cases {
        check(case, &misbehaving, &example);
    }
}

fn check(case: &Case, misbehaving: &Path, example: &Path) {
    let tree = Tree::new("empty");
    let pids = tree.path("pids");
    fs::create_dir_all(&pids).expect("mkdir");
    let wrapper = pids.join("server.sh");
    fs::write(&wrapper, WRAPPER).expect("write wrapper");
    make_executable(&wrapper);
    let mut args = vec![pids.display().to_string()];
    match case.server {
        Server::HangsAt(method) => args.extend([
            misbehaving.display().to_string(),
            "--fault".to_owned(),
            "hang".to_owned(),
            "--at".to_owned(),
            method.to_owned(),
        ]),
        Server::Example(flags) => {
            args.push(example.display().to_string());
            args.extend(flags.iter().map(|f| (*f).to_owned()));
        }
    }
    let entry = serde_json::json!({
        "mcpServers": {"hang": {"command": wrapper, "args": args}}
    });
    tree.write("project/.mcp.json", &entry.to_string());
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );

    let cli_stderr = pids.join("cli-stderr");
    let mut cli = tree
        .std_command()
        .args(case.verb)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(fs::File::create(&cli_stderr).expect("create stderr file"))
        .spawn()
        .expect("start mcp-cli");
    let (file, text) = case.ready;
    let ready = wait_for(Duration::from_secs(30), || {
        fs::read_to_string(pids.join(file)).is_ok_and(|seen| seen.contains(text))
    });
    if !ready {
        let _ = cli.kill();
        panic!(
            "{}: the server never got to hang ({text:?} not in {file})\nmcp-cli stderr:\n{}",
            case.name,
            fs::read_to_string(&cli_stderr).unwrap_or_default()
        );
    }
    let group = read_pid(&pids.join("grandchild"))
        .and_then(process_group)
        .unwrap_or_else(|| panic!("{}: no grandchild", case.name));
    let members = group_members(group);
    assert!(
        members.len() >= 2,
        "{}: the server's group {group} should hold the server and its grandchild: {members:?}",
        case.name
    );

    kill(Pid::from_raw(cli.id() as i32), case.signal).expect("send the signal");
    let signalled = Instant::now();
    let limit = if case.twice {
        std::thread::sleep(Duration::from_millis(200));
        kill(Pid::from_raw(cli.id() as i32), case.signal).expect("send the signal again");
        Duration::from_millis(1500)
    } else {
        GONE_WITHIN
    };
    let gone = wait_for(limit, || group_members(group).is_empty());
    let left = group_members(group);
    let status = wait_exit(&mut cli, Duration::from_secs(10));
    for pid in &left {
        let _ = kill(Pid::from_raw(*pid), Signal::SIGKILL);
    }
    let stderr = fs::read_to_string(&cli_stderr).unwrap_or_default();
    assert!(
        gone,
        "{}: the server's process group {group} still runs {:?} after {:?}: {left:?}\nmcp-cli stderr:\n{stderr}",
        case.name,
        case.signal,
        signalled.elapsed()
    );
    assert_eq!(
        status,
        Some(case.status),
        "{}: mcp-cli's exit status\nstderr:\n{stderr}",
        case.name
    );
    assert!(
        stderr.contains(&format!("interrupted by {}", case.signal.as_str())),
        "{}: stderr does not say what happened:\n{stderr}",
        case.name
    );
}

#[test]
fn a_signal_ends_a_sign_in_that_waits_on_the_server() {
    // A server that accepts connections and never answers: the sign-in
    // waits in discovery until the signal.
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    let held = std::thread::spawn(move || {
        let mut kept = Vec::new();
        for stream in listener.incoming().take(8).flatten() {
            kept.push(stream);
        }
        kept.len()
    });
    let tree = Tree::new("empty");
    tree.write(
        "home/.claude.json",
        &serde_json::json!({
            "mcpServers": {"remote": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp")}}
        })
        .to_string(),
    );
    let mut cli = tree
        .std_command()
        .args(["login", "remote", "--no-browser"])
        .stdin(Stdio::piped())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start mcp-cli");
    std::thread::sleep(Duration::from_millis(800));
    assert!(
        cli.try_wait().expect("poll").is_none(),
        "login ended before the signal"
    );
    kill(Pid::from_raw(cli.id() as i32), Signal::SIGINT).expect("send SIGINT");
    let status = wait_exit(&mut cli, GONE_WITHIN);
    let mut stderr = String::new();
    if status.is_some() {
        let _ = cli.stderr.take().map(|mut e| e.read_to_string(&mut stderr));
    }
    assert_eq!(status, Some(130), "login's exit status\nstderr:\n{stderr}");
    drop(held);
}

fn make_executable(path: &Path) {
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn wait_for(limit: Duration, mut done: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + limit;
    loop {
        if done() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The exit code, or `None` when it did not exit in time (then it is
/// killed) or was killed by a signal.
fn wait_exit(child: &mut Child, limit: Duration) -> Option<i32> {
    let mut status = None;
    let exited = wait_for(limit, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    if !exited {
        let _ = child.kill();
        let _ = child.wait();
        return None;
    }
    status.and_then(|s| s.code())
}

fn read_pid(path: &PathBuf) -> Option<i32> {
    fs::read_to_string(path).ok()?.trim().parse().ok()
}

/// `/proc/PID/stat`: `pid (comm) state ppid pgrp …`; the name may hold
/// spaces and parentheses, so fields are read after the last `)`.
fn stat(pid: i32) -> Option<(char, i32)> {
    let text = fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let rest = &text[text.rfind(')')? + 1..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((state, pgrp))
}

fn process_group(pid: i32) -> Option<i32> {
    stat(pid).map(|(_, group)| group)
}

/// Live (not zombie) processes of a process group.
fn group_members(group: i32) -> Vec<i32> {
    let Ok(entries) = fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter_map(|entry| entry.file_name().to_str()?.parse::<i32>().ok())
        .filter(|pid| matches!(stat(*pid), Some((state, g)) if g == group && state != 'Z' && state != 'X'))
        .collect()
}
