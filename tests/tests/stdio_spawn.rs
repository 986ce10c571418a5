//! How a stdio server is started: which file runs (the `PATH` search of
//! the child's environment, never a shell), what a failed start says, and
//! the state the child starts in (its own process group, no signal
//! blocked, SIGPIPE at its default even though the host ignores it, no
//! zombie left once it is gone).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_config::StdioConfig;
use mcp_transport::kinds::StdioTransport;
use mcp_transport::{StdioOptions, TransportErrorKind};

/// What a start should come to.
#[derive(Debug)]
enum Expect {
    /// Started, and the process runs this file.
    Runs(&'static str),
    /// Refused, with this text in the error.
    Fails(&'static str),
}

/// A directory of programs for the `PATH` cases: `good/` holds an
/// executable `cat` look-alike (a symlink to the real `cat`), `plain/` a
/// file named `cat` that is not executable, `empty/` nothing.
fn programs() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    for sub in ["good", "plain", "empty"] {
        std::fs::create_dir(dir.path().join(sub)).unwrap();
    }
    let cat = which("cat");
    std::os::unix::fs::symlink(&cat, dir.path().join("good/server")).unwrap();
    let plain = dir.path().join("plain/server");
    std::fs::write(&plain, "not a program").unwrap();
    std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
    dir
}

fn which(program: &str) -> std::path::PathBuf {
    std::env::var("PATH")
        .unwrap()
        .split(':')
        .map(|dir| Path::new(dir).join(program))
        .find(|candidate| candidate.is_file())
        .unwrap_or_else(|| panic!("no {program} on PATH"))
}

/// The file a process runs, as the kernel reports it.
fn exe_of(pid: u32) -> std::path::PathBuf {
    std::fs::read_link(format!("/proc/{pid}/exe")).unwrap()
}

/// Starts `program` with `PATH` set to `path` (relative to `root`, `:`
/// separated, `None` for no `PATH` at all) and checks the outcome.
async fn check(root: &Path, program: &str, path: Option<&str>, expect: Expect) {
    let mut env = BTreeMap::new();
    if let Some(path) = path {
        let joined: Vec<String> = path
            .split(':')
            .map(|dir| {
                if dir.is_empty() {
                    String::new()
                } else {
                    root.join(dir).display().to_string()
                }
            })
            .collect();
        env.insert("PATH".to_string(), joined.join(":"));
    }
    let config = StdioConfig::new(program.to_string()).with_cwd(root.join("good"));
    let options = StdioOptions::default()
        .with_base_env(env)
        .with_stdin_close_grace(Duration::from_millis(200))
        .with_sigterm_grace(Duration::from_millis(200));
    let case = format!("{program} with PATH={path:?}");
    match (
        StdioTransport::spawn("spawn-case", &config, &options),
        expect,
    ) {
        (Ok(transport), Expect::Runs(file)) => {
            let pid = transport.pid().unwrap();
            assert_eq!(exe_of(pid), which(file).canonicalize().unwrap(), "{case}");
        }
        (Err(error), Expect::Fails(text)) => {
            assert!(
                matches!(error.kind(), TransportErrorKind::Spawn { .. }),
                "{case}: {error}"
            );
            let message = error.to_string();
            assert!(
                message.starts_with(&format!("spawn-case: failed to start `{program}`:"))
                    && message.contains(text),
                "{case}: {message}"
            );
        }
        (Ok(transport), Expect::Fails(text)) => {
            panic!(
                "{case}: started pid {:?}, expected {text:?}",
                transport.pid()
            )
        }
        (Err(error), Expect::Runs(_)) => panic!("{case}: {error}"),
    }
}

#[tokio::test]
async fn the_program_is_found_as_execvp_finds_it_and_never_through_a_shell() {
    let dir = programs();
    let root = dir.path();
    let cases = [
        // Found in the first directory that has it.
        ("server", Some("empty:good"), Expect::Runs("cat")),
        // A file that is not executable is passed over for a later one…
        ("server", Some("plain:good"), Expect::Runs("cat")),
        // …and reported when nothing else is found.
        (
            "server",
            Some("plain:empty"),
            Expect::Fails("Permission denied"),
        ),
        (
            "server",
            Some("empty"),
            Expect::Fails("No such file or directory"),
        ),
        // An empty entry is the working directory (`good/` here).
        ("server", Some(":empty"), Expect::Runs("cat")),
        // Without PATH, execvp's default, which has no `server`.
        ("server", None, Expect::Fails("No such file or directory")),
        // A path is run as is, relative to the working directory.
        ("./server", Some("empty"), Expect::Runs("cat")),
        (
            "../plain/server",
            Some("good"),
            Expect::Fails("Permission denied"),
        ),
        ("bad\0name", Some("good"), Expect::Fails("nul byte")),
    ];
    for (program, path, expect) in cases {
        check(root, program, path, expect).await;
    }
}

#[tokio::test]
async fn a_script_without_an_interpreter_line_is_refused_not_run_by_a_shell() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("ran");
    let script = dir.path().join("server");
    std::fs::write(&script, format!("touch {}\n", marker.display())).unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    let config = StdioConfig::new(script.display().to_string());
    let error = StdioTransport::spawn("script", &config, &StdioOptions::default()).unwrap_err();
    assert!(error.to_string().contains("Exec format error"), "{error}");
    assert!(!marker.exists(), "a shell ran the script");
}

/// The hexadecimal mask after `field:` in `/proc/<pid>/status`.
fn signal_mask(pid: u32, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let line = status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .unwrap_or_else(|| panic!("no {field} in the status of {pid}"));
    u64::from_str_radix(line.trim(), 16).unwrap()
}

#[tokio::test]
async fn a_server_starts_in_its_own_group_with_no_signal_blocked_and_sigpipe_at_its_default() {
    // The host catches a signal and, as every Rust program does, ignores
    // SIGPIPE; neither may reach the server, and nothing stays blocked
    // from the spawn (signals are blocked while the child is created).
    let _caught =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::user_defined1()).unwrap();
    let config = StdioConfig::new("cat");
    let options = StdioOptions::default().with_base_env(BTreeMap::from([(
        "PATH".to_string(),
        std::env::var("PATH").unwrap(),
    )]));
    let transport = StdioTransport::spawn("cat", &config, &options).unwrap();
    let pid = transport.pid().unwrap();
    assert_eq!(
        signal_mask(pid, "SigBlk:"),
        0,
        "signals blocked in the server"
    );
    let sigpipe = 1u64 << (13 - 1);
    assert_eq!(
        signal_mask(pid, "SigIgn:") & sigpipe,
        0,
        "SIGPIPE ignored in the server"
    );
    // Caught handlers are not checked: exec itself resets them, and the
    // parent may look while the kernel is still in the middle of the exec.
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    let after_name = &stat[stat.rfind(')').unwrap() + 2..];
    let fields: Vec<&str> = after_name.split(' ').collect();
    // state, ppid, pgrp
    assert_eq!(
        fields[1],
        std::process::id().to_string(),
        "the host is the parent"
    );
    assert_eq!(fields[2], pid.to_string(), "the server leads its own group");
}

#[tokio::test]
async fn a_dropped_server_is_killed_and_reaped() {
    let config = StdioConfig::new("cat");
    let options = StdioOptions::default().with_base_env(BTreeMap::from([(
        "PATH".to_string(),
        std::env::var("PATH").unwrap(),
    )]));
    let pids: Vec<u32> = (0..8)
        .map(|_| {
            let transport = StdioTransport::spawn("cat", &config, &options).unwrap();
            transport.pid().unwrap()
        })
        .collect();
    // Each transport was dropped at once: its child is killed, then reaped
    // (no zombie), from a task of this runtime.
    let started = Instant::now();
    for pid in pids {
        while Path::new(&format!("/proc/{pid}")).exists() {
            assert!(
                started.elapsed() < Duration::from_secs(5),
                "process {pid} is still there (a zombie is not reaped)"
            );
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}
