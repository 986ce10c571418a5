//! The connecting verbs against real peers no one on this project wrote:
//! `@modelcontextprotocol/server-everything` over stdio, streamable HTTP and
//! legacy SSE, Python `mcp` 1.x over WebSocket, and a fastmcp server behind
//! fastmcp's in-memory OAuth authorization server for `login`, `logout`
//! and `auth-status`.
//!
//! The peers come from `cargo xtask peers` (into `.peers/`). Each test is
//! ignored by a plain `cargo test`; run with `-- --include-ignored`, a
//! missing peer fails it with the command that installs the peers.

#![allow(clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use support::Tree;

use mcp_test_peers as peers;
use peers::{everything_script, free_port, node22, python, scripts_dir, wait_until_listening};

/// A peer process listening on a port, killed on drop.
struct Peer {
    child: Child,
}

impl Peer {
    fn start(command: &Path, args: &[&str], env: &[(&str, String)], port: u16) -> Peer {
        let mut child = Command::new(command);
        child
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        for (key, value) in env {
            child.env(key, value);
        }
        let mut peer = Peer {
            child: child.spawn().expect("start the peer"),
        };
        wait_until_listening(&mut peer.child, "the peer", port, Duration::from_secs(30));
        peer
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A tree whose project approves every project server.
fn tree() -> Tree {
    let tree = Tree::new("empty");
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    tree
}

#[track_caller]
fn ok(tree: &Tree, args: &[&str]) -> support::Run {
    let run = tree.run(args);
    assert_eq!(
        run.code,
        0,
        "`mcp-cli {}`\nstdout:\n{}\nstderr:\n{}",
        args.join(" "),
        run.stdout,
        run.stderr
    );
    run
}

/// Probe, list and call `echo` of a server-everything named `everything`.
fn exercise_everything(tree: &Tree) {
    let run = ok(tree, &["--json", "probe"]);
    let report = &run.json()["servers"][0];
    assert_eq!(report["status"], "ok", "{report}");
    assert_eq!(report["serverInfo"]["name"], "mcp-servers/everything");
    assert!(report["tools"].as_u64().is_some_and(|n| n >= 5), "{report}");

    let run = ok(tree, &["--json", "tools"]);
    let names: Vec<String> = run
        .json()
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().unwrap_or("").to_owned())
        .collect();
    assert!(
        names.contains(&"mcp__everything__echo".to_owned()),
        "{names:?}"
    );
    assert!(
        names.contains(&"mcp__everything__get-sum".to_owned()),
        "{names:?}"
    );

    let run = ok(
        tree,
        &[
            "call",
            "mcp__everything__echo",
            "--arg",
            "message=hello peers",
        ],
    );
    assert_eq!(run.stdout, "Echo: hello peers\n");
    let run = ok(
        tree,
        &[
            "call",
            "mcp__everything__get-sum",
            "--arg",
            "a=2",
            "--arg",
            "b=3",
        ],
    );
    assert!(run.stdout.contains('5'), "{}", run.stdout);

    // A tool whose listing says it must run as a task (2025-11-25 tasks).
    let run = ok(
        tree,
        &[
            "call",
            "mcp__everything__simulate-research-query",
            "--arg",
            "topic=tides",
        ],
    );
    assert!(
        run.stdout.contains("# Research Report: tides"),
        "{}",
        run.stdout
    );
    browse_everything(tree, &[]);
}

/// `resources`, `prompts`, `read` and `prompt` of a server-everything
/// named `everything`, selected by `target` (empty: from config).
fn browse_everything(tree: &Tree, target: &[&str]) {
    let with = |args: &[&str]| -> Vec<String> {
        args.iter()
            .chain(target)
            .map(|arg| (*arg).to_owned())
            .collect()
    };
    let run = ok(tree, &as_strs(&with(&["--json", "resources"])));
    let listed = &run.json()["servers"][0];
    let uri = listed["resources"][0]["uri"]
        .as_str()
        .expect("a listed resource")
        .to_owned();
    assert!(
        listed["resourceTemplates"]
            .as_array()
            .is_some_and(|templates| !templates.is_empty()),
        "{listed}"
    );
    let run = ok(tree, &as_strs(&with(&["read", &uri])));
    assert!(!run.stdout.trim().is_empty(), "{uri} read as nothing");

    let run = ok(tree, &as_strs(&with(&["prompts"])));
    assert!(run.stdout.contains("simple-prompt"), "{}", run.stdout);
    assert!(
        run.stdout.contains("--arg city=… (required)"),
        "{}",
        run.stdout
    );
    let run = ok(
        tree,
        &as_strs(&with(&["prompt", "args-prompt", "--arg", "city=Lisbon"])),
    );
    assert!(run.stdout.contains("[user]"), "{}", run.stdout);
    assert!(run.stdout.contains("Lisbon"), "{}", run.stdout);
}

fn as_strs(args: &[String]) -> Vec<&str> {
    args.iter().map(String::as_str).collect()
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn server_everything_over_stdio() {
    let (node, script) = (node22(), everything_script());
    let tree = tree();
    let entry = serde_json::json!({"command": node, "args": [script, "stdio"]});
    ok(
        &tree,
        &[
            "add-json",
            "everything",
            &entry.to_string(),
            "--scope",
            "project",
        ],
    );
    exercise_everything(&tree);

    let run = ok(&tree, &["call", "mcp__everything__get-tiny-image"]);
    assert!(run.stdout.contains("[image image/png,"), "{}", run.stdout);
    let run = ok(
        &tree,
        &[
            "call",
            "mcp__everything__trigger-long-running-operation",
            "--arg",
            "duration=1",
            "--arg",
            "steps=2",
        ],
    );
    assert!(
        run.stderr.contains("progress 1/2"),
        "no progress:\n{}",
        run.stderr
    );
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn server_everything_over_streamable_http_and_sse() {
    let (node, script) = (node22(), everything_script());
    for (mode, transport, path) in [("streamableHttp", "http", "/mcp"), ("sse", "sse", "/sse")] {
        let port = free_port();
        let _peer = Peer::start(
            &node,
            &[script.to_str().expect("utf-8"), mode],
            &[("PORT", port.to_string())],
            port,
        );
        let tree = tree();
        let url = format!("http://127.0.0.1:{port}{path}");
        ok(
            &tree,
            &[
                "add",
                "everything",
                "--scope",
                "project",
                "--transport",
                transport,
                "--url",
                &url,
            ],
        );
        exercise_everything(&tree);
        // The same server given on the command line instead of config.
        let empty = Tree::new("empty");
        browse_everything(&empty, &["--url", &url, "--transport", transport]);
        let run = ok(
            &empty,
            &[
                "call",
                "echo",
                "--arg",
                "message=adhoc",
                "--url",
                &url,
                "--transport",
                transport,
            ],
        );
        assert_eq!(run.stdout, "Echo: adhoc\n");
    }
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn python_mcp_over_websocket() {
    let python = python("venv-ws");
    let script = scripts_dir().join("py_ws_server.py");
    let port = free_port();
    let _peer = Peer::start(
        &python,
        &[script.to_str().expect("utf-8"), &port.to_string()],
        &[],
        port,
    );
    let tree = tree();
    let url = format!("ws://127.0.0.1:{port}/ws");
    ok(
        &tree,
        &[
            "add",
            "py",
            "--scope",
            "project",
            "--transport",
            "ws",
            "--url",
            &url,
        ],
    );
    let run = ok(&tree, &["--json", "probe"]);
    assert_eq!(run.json()["servers"][0]["status"], "ok", "{}", run.stdout);
    let run = ok(
        &tree,
        &["call", "mcp__py__echo", "--arg", "message=over ws"],
    );
    assert!(run.stdout.contains("over ws"), "{}", run.stdout);
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn oauth_login_status_and_logout_against_fastmcp() {
    let python = python("venv");
    let script = scripts_dir().join("py_oauth_server.py");
    let port = free_port();
    let _peer = Peer::start(
        &python,
        &[script.to_str().expect("utf-8"), &port.to_string()],
        &[],
        port,
    );
    let tree = tree();
    let url = format!("http://127.0.0.1:{port}/mcp");
    ok(&tree, &["add", "secure", "--scope", "user", "--url", &url]);

    let run = tree.run(&["probe"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout
            .contains("the server needs a sign-in; run `mcp-cli login secure`"),
        "{}",
        run.stdout
    );
    let run = ok(&tree, &["--json", "auth-status"]);
    assert_eq!(run.json()["servers"][0]["status"], "signed out");

    // Sign in the way a browser would: follow the authorization url, whose
    // redirect reaches the CLI's loopback listener.
    let mut child = tree
        .std_command()
        .args(["login", "secure", "--no-browser"])
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start login");
    // Keep reading stderr to the end, as a terminal would.
    let stderr = child.stderr.take().expect("stderr");
    let (url_tx, url_rx) = std::sync::mpsc::channel();
    let reader = std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if line.trim().starts_with("http://") {
                let _ = url_tx.send(line.trim().to_owned());
            }
        }
    });
    let authorize = url_rx
        .recv_timeout(Duration::from_secs(30))
        .expect("the authorization url on stderr");
    assert!(
        authorize.contains("code_challenge_method=S256"),
        "{authorize}"
    );
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let status = runtime.block_on(async { reqwest::get(&authorize).await.map(|r| r.status()) });
    assert!(
        status.as_ref().is_ok_and(|s| s.is_success()),
        "the redirect did not complete: {status:?}"
    );
    let output = child.wait_with_output().expect("login ends");
    reader.join().expect("stderr reader");
    assert!(output.status.success(), "login failed");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        stdout.contains("signed in to `secure` at http://127.0.0.1:")
            && stdout.contains("; credentials saved in "),
        "{stdout}"
    );

    let run = ok(&tree, &["--json", "auth-status"]);
    assert_eq!(run.json()["servers"][0]["status"], "signed in");
    let credentials = std::fs::read_dir(tree.path("home/.mcp-cli/credentials"))
        .expect("credentials folder")
        .filter_map(Result::ok)
        .find(|entry| entry.file_name().to_string_lossy().ends_with(".json"))
        .expect("a credentials file");
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = credentials.metadata().expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }
    let run = ok(
        &tree,
        &["call", "mcp__secure__echo", "--arg", "message=signed"],
    );
    assert!(run.stdout.contains("Echo: signed"), "{}", run.stdout);
    for run in [ok(&tree, &["auth-status"]), ok(&tree, &["get", "secure"])] {
        assert!(
            !run.stdout.contains("access_token") && !run.stdout.contains("Bearer"),
            "{}",
            run.stdout
        );
    }

    let run = ok(&tree, &["logout", "secure"]);
    assert!(
        run.stdout.starts_with(
            "signed out of `secure`: revoked the refresh token and access token at http://127.0.0.1:"
        ) && run.stdout.contains("/revoke; removed "),
        "{}",
        run.stdout
    );
    let run = ok(&tree, &["logout", "secure"]);
    assert_eq!(run.stdout, "no stored credentials for `secure`\n");
    let run = ok(&tree, &["--json", "auth-status"]);
    assert_eq!(run.json()["servers"][0]["status"], "signed out");
    let run = tree.run(&["login", "nope"]);
    assert_eq!(
        (run.code, run.stderr.as_str()),
        (1, "error: no server named `nope` (configured: secure)\n")
    );
}
