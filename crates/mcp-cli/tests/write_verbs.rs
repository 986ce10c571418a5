//! End-to-end tests of the write-side verbs as a user of `claude mcp`
//! reaches for them: `approve NAME…`, `approve --all`, `deny NAME…`;
//! `add` in `claude mcp add`'s shapes with `--cwd`, the timeouts and the
//! tool filter; `add --scope project` approving what the user added; the
//! `mcp-cli approve NAME` hint wherever a pending server is reported; and
//! the command or url `list` shows. Run as the built binary against copies
//! of `tests/fixtures/tree` and `tests/fixtures/empty`.

#![allow(clippy::expect_used)]

mod support;

use serde_json::{Value, json};
use support::{Tree, check, test_server};

/// The approval state `list --json` reports for `name`.
fn approval(tree: &Tree, name: &str) -> String {
    let run = check(tree, &["--json", "list"], 0);
    run.json()["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|server| server["name"] == name)
        .map(|server| server["approval"].as_str().expect("approval").to_owned())
        .unwrap_or_else(|| panic!("no server {name} in {}", run.stdout))
}

/// The fixture tree with two more project servers awaiting approval:
/// `unapproved`, `extra1` and `extra2` are pending, `echo` is approved by
/// the user's settings.json, `docs` is the user's own.
fn tree_with_pending() -> Tree {
    let tree = Tree::new("tree");
    tree.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
            "echo": {"command": "example-server", "args": ["--mode", "echo"]},
            "unapproved": {"command": "other-server"},
            "extra1": {"command": "one-server"},
            "extra2": {"command": "two-server"}
        }}"#,
    );
    tree
}

const LOCAL: &str = "[ROOT]/home/.claude.json (projects[\"[ROOT]/project\"])";

#[test]
fn approve_takes_several_names_or_all_pending_ones() {
    let tree = tree_with_pending();
    let run = check(&tree, &["approve", "unapproved", "extra1"], 0);
    assert_eq!(
        run.stdout,
        format!(
            "approved project server `unapproved` in {LOCAL}\napproved project server `extra1` in {LOCAL}\n"
        )
    );
    assert_eq!(approval(&tree, "unapproved"), "approved");
    assert_eq!(approval(&tree, "extra1"), "approved");
    assert_eq!(approval(&tree, "extra2"), "pending");

    // `--all` approves what is pending, and says which.
    let run = check(&tree, &["--json", "approve", "--all"], 0);
    assert_eq!(
        run.json(),
        json!({
            "action": "approve",
            "file": "[ROOT]/home/.claude.json",
            "servers": [{"name": "extra2", "changed": true, "approval": "approved"}],
        })
    );
    assert_eq!(approval(&tree, "extra2"), "approved");
    let run = check(&tree, &["approve", "--all"], 0);
    assert_eq!(run.stdout, "no project servers await approval\n");

    // `deny` takes several names too; `--all` never approves a denied server.
    let run = check(&tree, &["deny", "extra1", "extra2"], 0);
    assert_eq!(
        run.stdout,
        format!(
            "denied project server `extra1` in {LOCAL}\ndenied project server `extra2` in {LOCAL}\n"
        )
    );
    check(&tree, &["approve", "--all"], 0);
    assert_eq!(approval(&tree, "extra1"), "denied");
    assert_eq!(approval(&tree, "extra2"), "denied");

    // Several names give one JSON document listing each.
    let run = check(&tree, &["--json", "approve", "extra1", "unapproved"], 0);
    assert_eq!(
        run.json()["servers"],
        json!([
            {"name": "extra1", "changed": true, "approval": "approved"},
            {"name": "unapproved", "changed": false, "approval": "approved"},
        ])
    );
}

#[test]
fn approve_all_approves_every_pending_server_at_once() {
    let tree = tree_with_pending();
    let run = check(&tree, &["approve", "--all"], 0);
    assert_eq!(
        run.stdout,
        format!(
            "approved project server `extra1` in {LOCAL}\napproved project server `extra2` in {LOCAL}\napproved project server `unapproved` in {LOCAL}\n"
        )
    );
    for name in ["extra1", "extra2", "unapproved", "echo"] {
        assert_eq!(approval(&tree, name), "approved", "{name}");
    }
}

#[test]
fn a_list_with_a_wrong_name_writes_nothing() {
    let tree = tree_with_pending();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["approve", "extra1", "nope", "docs"],
            1,
            "error: nothing was approved: no project server named `nope`; server `docs` is not a project server: it comes from user scope ([ROOT]/home/.claude.json); only servers from the project's .mcp.json",
        ),
        (
            &["deny", "extra1", "ghost"],
            1,
            "error: nothing was denied: no project server named `ghost`; only servers from",
        ),
        (
            &["approve", "extra1", "bad\tname"],
            2,
            "error: invalid server name `bad\\tname`",
        ),
        (&["approve"], 2, "error: the following required arguments"),
        (&["deny"], 2, "error: the following required arguments"),
        (
            &["approve", "--all", "extra1"],
            2,
            "error: the argument '--all' cannot be used with",
        ),
    ];
    for (args, code, message) in cases {
        let before = tree.snapshot_files();
        let run = check(&tree, args, *code);
        assert!(run.stderr.starts_with(message), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert_eq!(tree.snapshot_files(), before, "{args:?} changed a file");
    }
    assert_eq!(approval(&tree, "extra1"), "pending");
}

/// Runs `add NAME ARGS…` into user scope and expects the entry written
/// under `NAME` in `<home>/.claude.json` to be `entry` (`[ROOT]` standing
/// for the tree).
#[track_caller]
fn check_added(tree: &Tree, name: &str, args: &[&str], entry: &Value) {
    let mut argv = vec!["add", "-s", "user"];
    argv.extend(args);
    let run = check(tree, &argv, 0);
    assert!(run.stdout.starts_with("added "), "{args:?}: {}", run.stdout);
    let home = tree
        .read("home/.claude.json")
        .replace(&tree.root().display().to_string(), "[ROOT]");
    let home: Value = serde_json::from_str(&home).expect("home/.claude.json is JSON");
    assert_eq!(&home["mcpServers"][name], entry, "{args:?}");
    // The loader takes what was written as it is.
    let run = check(tree, &["check-config", "--strict"], 0);
    assert!(!run.stdout.contains(&format!("`{name}`")), "{}", run.stdout);
}

#[test]
fn add_takes_claude_mcp_adds_shapes_and_the_common_fields() {
    let tree = Tree::new("empty");
    let cases: &[(&[&str], Value)] = &[
        (
            &[
                "-t",
                "http",
                "api",
                "https://api.example.test/mcp",
                "-H",
                "Authorization: Bearer t0k",
            ],
            json!({"type": "http", "url": "https://api.example.test/mcp", "headers": {"Authorization": "Bearer t0k"}}),
        ),
        (
            &[
                "--transport",
                "sse",
                "events",
                "https://api.example.test/sse",
            ],
            json!({"type": "sse", "url": "https://api.example.test/sse"}),
        ),
        // A lone url after the name is a remote server, as a url-only entry is.
        (
            &["bare", "https://bare.example.test/mcp"],
            json!({"type": "http", "url": "https://bare.example.test/mcp"}),
        ),
        // The command after the name, or after `--`, or split around it.
        (
            &["fs", "fs-server", "/data"],
            json!({"type": "stdio", "command": "fs-server", "args": ["/data"]}),
        ),
        (
            &[
                "-e",
                "ROOT=/data",
                "--env",
                "MODE=ro",
                "fs2",
                "--",
                "npx",
                "-y",
                "pkg",
            ],
            json!({"type": "stdio", "command": "npx", "args": ["-y", "pkg"], "env": {"ROOT": "/data", "MODE": "ro"}}),
        ),
        (
            &["fs3", "npx", "--", "-y", "pkg"],
            json!({"type": "stdio", "command": "npx", "args": ["-y", "pkg"]}),
        ),
        // --timeout is every timeout; the finer flags win over it.
        (
            &[
                "git",
                "--cwd",
                "/work/repo",
                "--timeout",
                "120",
                "--",
                "uvx",
                "mcp-server-git",
            ],
            json!({
                "type": "stdio", "command": "uvx", "args": ["mcp-server-git"], "cwd": "/work/repo",
                "connectionTimeoutMs": 120_000, "requestTimeoutMs": 120_000, "toolCallTimeoutMs": 120_000,
            }),
        ),
        (
            &[
                "slow",
                "--timeout",
                "10",
                "--connect-timeout",
                "2.5",
                "--tool-timeout",
                "300",
                "--",
                "s",
            ],
            json!({
                "type": "stdio", "command": "s", "args": [],
                "connectionTimeoutMs": 2_500, "requestTimeoutMs": 10_000, "toolCallTimeoutMs": 300_000,
            }),
        ),
        (
            &["boot", "--connect-timeout", "90", "--", "s"],
            json!({"type": "stdio", "command": "s", "args": [], "connectionTimeoutMs": 90_000}),
        ),
        (
            &[
                "some",
                "--include-tools",
                "read_*,list_dir",
                "--include-tools",
                "stat",
                "--exclude-tools",
                "write*",
                "--",
                "s",
            ],
            json!({"type": "stdio", "command": "s", "args": [], "toolFilter": {"include": ["read_*", "list_dir", "stat"], "exclude": ["write*"]}}),
        ),
        (
            &[
                "-t",
                "http",
                "ro",
                "https://ro.example.test/mcp",
                "--tool-timeout",
                "5",
                "--exclude-tools",
                "admin_*",
            ],
            json!({"type": "http", "url": "https://ro.example.test/mcp", "toolCallTimeoutMs": 5_000, "toolFilter": {"exclude": ["admin_*"]}}),
        ),
        (
            &[
                "both",
                "--tool-filter",
                "read_*,!read_secret",
                "--tool-filter",
                "stat",
                "--",
                "s",
            ],
            json!({"type": "stdio", "command": "s", "args": [], "toolFilter": {"include": ["read_*", "stat"], "exclude": ["read_secret"]}}),
        ),
        // A relative --cwd is made absolute from where `add` ran; `~` is
        // left for the loader.
        (
            &["rel", "--cwd", "sub/dir", "--", "s"],
            json!({"type": "stdio", "command": "s", "args": [], "cwd": "[ROOT]/project/sub/dir"}),
        ),
        (
            &["home", "--cwd", "~/repo", "--", "s"],
            json!({"type": "stdio", "command": "s", "args": [], "cwd": "~/repo"}),
        ),
    ];
    for (args, entry) in cases {
        // The name is the first value that is neither a flag nor a flag's
        // value, as in each row below.
        let name = args
            .iter()
            .enumerate()
            .find(|(i, arg)| !arg.starts_with('-') && (*i == 0 || !args[i - 1].starts_with('-')))
            .map(|(_, arg)| *arg)
            .expect("a name");
        check_added(&tree, name, args, entry);
    }

    // The fields reach the loaded server.
    let run = check(&tree, &["--json", "get", "slow"], 0);
    assert_eq!(
        run.json()["config"]["timeouts"],
        json!({"connect": 2_500, "request": 10_000, "toolCall": 300_000})
    );
    let run = check(&tree, &["--json", "get", "git"], 0);
    assert_eq!(run.json()["config"]["transport"]["cwd"], "/work/repo");
    let run = check(&tree, &["--json", "get", "some"], 0);
    assert_eq!(
        run.json()["config"]["toolFilter"],
        json!({"include": ["read_*", "list_dir", "stat"], "exclude": ["write*"]})
    );
}

#[test]
fn add_refuses_shapes_that_say_two_things() {
    let tree = Tree::new("empty");
    let cases: &[(&[&str], &str)] = &[
        (
            &[
                "x",
                "https://a.example.test/mcp",
                "--url",
                "https://b.example.test/mcp",
            ],
            "give the url either after the name or as --url, not both",
        ),
        (
            &["-t", "http", "x", "https://a.example.test/mcp", "extra"],
            "a remote server takes one url after its name, not 2 values",
        ),
        (
            &["-t", "http", "x", "https://a.example.test/mcp", "--", "cmd"],
            "give either a command after `--` (stdio) or a url (remote), not both",
        ),
        (
            &["x", "https://a.example.test/mcp", "--cwd", "/tmp"],
            "--cwd is for stdio servers",
        ),
        (
            &["x", "--timeout", "0", "--", "cmd"],
            "expected a positive number of seconds",
        ),
        (
            &["x", "--timeout", "soon", "--", "cmd"],
            "expected a positive number of seconds",
        ),
        (
            &["x", "-e", "A=b", "https://a.example.test/mcp"],
            "--env is for stdio servers",
        ),
    ];
    for (args, message) in cases {
        let before = tree.snapshot_files();
        let mut argv = vec!["add"];
        argv.extend(*args);
        let run = check(&tree, &argv, 2);
        assert!(run.stderr.contains(message), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert_eq!(tree.snapshot_files(), before, "{args:?} changed a file");
    }
}

#[test]
fn a_project_server_the_user_adds_is_approved_and_starts() {
    let tree = Tree::new("empty");
    let server = test_server("mcp-example-server");
    let server = server.to_str().expect("utf-8 path");
    let run = check(&tree, &["add", "ex", "-s", "project", "--", server], 0);
    assert_eq!(
        run.stdout,
        format!(
            "added stdio server `ex` in [ROOT]/project/.mcp.json (project)\napproved it for this project in {LOCAL}, as you added it\n"
        )
    );
    let run = check(
        &tree,
        &[
            "--json",
            "add-json",
            "ex2",
            "-s",
            "project",
            &json!({"command": server}).to_string(),
        ],
        0,
    );
    assert_eq!(
        run.json()["approval"],
        json!({"approval": "approved", "file": "[ROOT]/home/.claude.json"})
    );
    let run = check(&tree, &["--json", "list"], 0);
    for name in ["ex", "ex2"] {
        let listed = run.json()["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .expect("listed");
        assert_eq!(listed["scope"], "project", "{name}");
        assert_eq!(listed["approval"], "approved", "{name}");
        assert_eq!(listed["approvalBasis"]["basis"], "recorded", "{name}");
    }
    // Nothing waits: probe and tools start both.
    let run = check(&tree, &["--json", "probe"], 0);
    let probed = run.json();
    let statuses: Vec<&str> = probed["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| s["status"].as_str().unwrap_or_default())
        .collect();
    assert_eq!(statuses, ["ok", "ok"], "{}", run.stdout);
    let run = check(&tree, &["--json", "tools"], 0);
    let tools = run.json();
    let names: Vec<&str> = tools
        .as_array()
        .expect("tools")
        .iter()
        .filter_map(|tool| tool["name"].as_str())
        .collect();
    assert!(
        names.iter().any(|n| n.starts_with("mcp__ex__")),
        "{names:?}"
    );
    assert!(
        names.iter().any(|n| n.starts_with("mcp__ex2__")),
        "{names:?}"
    );
    assert!(!run.stderr.contains("awaits approval"), "{}", run.stderr);
}

#[test]
fn the_approval_note_names_the_command_that_approves() {
    let tree = Tree::new("empty");
    let server = test_server("mcp-example-server");
    let entry = json!({"command": server});
    tree.write(
        "project/.mcp.json",
        &json!({"mcpServers": {"pending": entry, "my server": entry}}).to_string(),
    );
    let run = check(&tree, &["list"], 0);
    assert!(
        run.stdout.ends_with(
            "to let these start, run `mcp-cli approve 'my server' pending` (or `mcp-cli approve --all`)\n"
        ),
        "{}",
        run.stdout
    );
    let run = check(&tree, &["probe", "pending"], 0);
    assert_eq!(
        run.stdout.split_whitespace().collect::<Vec<_>>().join(" "),
        "skip pending stdio pending approval: run `mcp-cli approve pending`"
    );
    let run = check(&tree, &["tools"], 0);
    assert!(
        run.stderr.contains(
            "project server `pending` (from [ROOT]/project/.mcp.json) was not started: it awaits approval; run `mcp-cli approve pending` to start it"
        ),
        "{}",
        run.stderr
    );
    assert!(
        run.stderr
            .contains("run `mcp-cli approve 'my server'` to start it"),
        "{}",
        run.stderr
    );
    // One pending server gets the one command.
    check(&tree, &["approve", "my server"], 0);
    let run = check(&tree, &["list"], 0);
    assert!(
        run.stdout
            .ends_with("to let `pending` start, run `mcp-cli approve pending`\n"),
        "{}",
        run.stdout
    );
    check(&tree, &["approve", "pending"], 0);
    let run = check(&tree, &["list"], 0);
    assert!(!run.stdout.contains("mcp-cli approve"), "{}", run.stdout);
}

#[test]
fn list_shows_the_command_or_the_url_without_secrets() {
    let tree = Tree::new("empty");
    check(
        &tree,
        &[
            "add",
            "-s",
            "user",
            "-t",
            "http",
            "remote",
            "https://me:hunter2@api.example.test/mcp?token=abc123&region=eu",
        ],
        0,
    );
    check(
        &tree,
        &[
            "add",
            "-s",
            "user",
            "-e",
            "API_KEY=env-secret",
            "local",
            "--",
            "fs-server",
            "--root",
            "/my data",
            "--upstream=https://u:pw-secret@up.example.test/",
        ],
        0,
    );
    let run = check(&tree, &["list"], 0);
    for secret in ["hunter2", "abc123", "env-secret", "pw-secret"] {
        assert!(!run.stdout.contains(secret), "{secret}: {}", run.stdout);
    }
    let row = |name: &str| {
        run.stdout
            .lines()
            .find(|line| line.starts_with(name))
            .unwrap_or_else(|| panic!("no row {name}: {}", run.stdout))
            .to_owned()
    };
    assert!(
        row("remote").ends_with("  https://me:***@api.example.test/mcp?token=***&region=eu"),
        "{}",
        run.stdout
    );
    assert!(
        row("local")
            .ends_with("  fs-server --root '/my data' '--upstream=https://u:***@up.example.test/'"),
        "{}",
        run.stdout
    );
    assert!(run.stdout.starts_with("project "), "{}", run.stdout);
    assert!(
        run.stdout
            .lines()
            .nth(1)
            .is_some_and(|header| header.ends_with("COMMAND/URL")),
        "{}",
        run.stdout
    );

    let run = check(&tree, &["--json", "list"], 0);
    assert!(!run.stdout.contains("hunter2") && !run.stdout.contains("env-secret"));
    let servers = run.json()["servers"].clone();
    let server = |name: &str| {
        servers
            .as_array()
            .expect("servers")
            .iter()
            .find(|s| s["name"] == name)
            .cloned()
            .expect("listed")
    };
    assert_eq!(
        server("remote")["url"],
        "https://me:***@api.example.test/mcp?token=***&region=eu"
    );
    assert_eq!(server("local")["command"], "fs-server");
    assert_eq!(
        server("local")["args"],
        json!([
            "--root",
            "/my data",
            "--upstream=https://u:***@up.example.test/"
        ])
    );
    assert!(server("local").get("env").is_none());
}
