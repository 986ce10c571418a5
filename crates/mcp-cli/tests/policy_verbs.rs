//! End-to-end tests of the managed policy (`--managed-dir`): every verb
//! honours a server's verdict. Reports show a blocked server and the rule
//! (file:line); no verb starts it; `add`, `add-json`, `import` and
//! `approve` refuse a server the policy blocks, naming the rule; `get
//! --pin` prints an allow entry whose block names what changed; a
//! malformed managed file blocks everything, also in a running `serve`.

#![allow(clippy::expect_used)]

mod support;

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};
use support::{Tree, check, test_server};

/// The policy: a name and a url pattern denied.
const SETTINGS: &str = r#"{
  "deniedMcpServers": [
    {"serverName": "notes"},
    {"serverUrl": "https://*.evil.example/*"}
  ]
}
"#;

/// A tree whose user has two servers; `notes` would leave a file behind
/// if it ever started.
fn tree(managed: &[(&str, &str)]) -> Tree {
    let tree = Tree::new("empty");
    let marker = tree.path("spawned");
    let servers = json!({"mcpServers": {
        "notes": {"command": "sh", "args": ["-c", format!("touch {}", marker.display())]},
        "docs": {"type": "http", "url": "https://docs.example.com/mcp"},
    }});
    tree.write("home/.claude.json", &servers.to_string());
    for (file, text) in managed {
        tree.write(&format!("managed/{file}"), text);
    }
    tree
}

/// `text` with every run of spaces cut to two (table columns are padded
/// to the temporary path's width).
fn unpadded(text: &str) -> String {
    let mut out = String::new();
    let mut spaces = 0;
    for c in text.chars() {
        if c == ' ' {
            spaces += 1;
            continue;
        }
        out.push_str(if spaces > 1 { "  " } else { &" "[..spaces] });
        spaces = 0;
        out.push(c);
    }
    out
}

/// Runs `args`, expects failure naming `message` on stderr, and no file of
/// the tree touched.
#[track_caller]
fn check_refused(tree: &Tree, args: &[&str], message: &str) {
    let before = tree.snapshot_files();
    let run = tree.run(args);
    assert_ne!(
        run.code,
        0,
        "`{}` succeeded:\n{}",
        args.join(" "),
        run.stdout
    );
    assert!(
        run.stderr.contains(message),
        "stderr lacks `{message}`:\n{}",
        run.stderr
    );
    assert_eq!(tree.snapshot_files(), before, "a refusal changed a file");
}

#[test]
fn list_get_and_check_config_show_the_blocking_rule() {
    let tree = tree(&[("managed-settings.json", SETTINGS)]);
    let run = check(&tree, &["list"], 0);
    insta::assert_snapshot!(unpadded(&run.stdout));
    let run = check(&tree, &["get", "notes"], 0);
    // The hash covers the temporary path in the command.
    let stdout: Vec<String> = run
        .stdout
        .lines()
        .map(|line| match line.strip_prefix("  hash       ") {
            Some(hash) if hash.len() == 16 => "  hash       [HASH]".to_owned(),
            _ => line.to_owned(),
        })
        .collect();
    insta::assert_snapshot!(stdout.join("\n"));
    let run = check(&tree, &["--json", "get", "notes"], 0);
    insta::assert_json_snapshot!(run.json()["approvalBasis"]);
    let run = check(&tree, &["check-config"], 0);
    insta::assert_snapshot!(unpadded(&run.stdout));
    // Warnings fail a strict check: a blocked server is worth a look.
    check(&tree, &["check-config", "--strict"], 1);
    // The allowed server shows no rule.
    let run = check(&tree, &["get", "docs"], 0);
    assert!(!run.stdout.contains("policy"), "{}", run.stdout);
}

#[test]
fn no_verb_starts_a_blocked_server() {
    let tree = tree(&[("managed-settings.json", SETTINGS)]);
    for args in [
        &["tools", "notes"][..],
        &["tools"],
        &["probe", "notes"],
        &["probe"],
        &["call", "notes", "anything"],
        &["resources", "notes"],
        &["--trust-project", "tools", "notes"],
    ] {
        let run = tree.run(args);
        assert!(
            !tree.path("spawned").exists(),
            "`{}` started the blocked server:\n{}{}",
            args.join(" "),
            run.stdout,
            run.stderr
        );
    }
    let run = tree.run(&["probe", "notes"]);
    assert!(
        run.stdout.contains("notes") && run.stdout.contains("blocked by policy"),
        "{}",
        run.stdout
    );
    // Described on the command line, the same server is refused too.
    let marker = tree.path("spawned");
    let touch = format!("touch {}", marker.display());
    check_refused(
        &tree,
        &["tools", "--name", "notes", "--", "sh", "-c", &touch],
        "deniedMcpServers[0].serverName",
    );
    assert!(!marker.exists());
}

#[test]
fn add_and_import_refuse_what_the_policy_blocks() {
    let tree = tree(&[("managed-settings.json", SETTINGS)]);
    let rule = "[ROOT]/managed/managed-settings.json:4 `deniedMcpServers[1].serverUrl` https://*.evil.example/*";
    for scope in ["user", "project", "local"] {
        check_refused(
            &tree,
            &[
                "add",
                "--scope",
                scope,
                "--transport",
                "http",
                "bad",
                "https://mcp.evil.example/mcp",
            ],
            rule,
        );
    }
    check_refused(
        &tree,
        &[
            "add-json",
            "bad",
            r#"{"type": "sse", "url": "https://a.evil.example/sse"}"#,
        ],
        rule,
    );
    check_refused(
        &tree,
        &["add", "notes", "--", "other-program"],
        "server `notes` is blocked by policy: `notes` is on a deny list (by [ROOT]/managed/managed-settings.json:3 `deniedMcpServers[0].serverName` notes)",
    );
    tree.write(
        "home/.codex/config.toml",
        "[mcp_servers.fine]\nurl = \"https://fine.example/mcp\"\n\n[mcp_servers.bad]\nurl = \"https://x.evil.example/mcp\"\n",
    );
    // One blocked server refuses the whole import: nothing is written.
    check_refused(&tree, &["import", "--from", "codex"], rule);
    // What the policy allows is still written.
    check(
        &tree,
        &[
            "add",
            "--transport",
            "http",
            "fine",
            "https://fine.example/mcp",
        ],
        0,
    );
}

#[test]
fn managed_mcp_json_refuses_every_add() {
    let tree = tree(&[(
        "managed-mcp.json",
        r#"{"mcpServers": {"corp": {"type": "http", "url": "https://corp.example/mcp"}}}"#,
    )]);
    check_refused(
        &tree,
        &[
            "add",
            "--transport",
            "http",
            "test",
            "https://example.com/mcp",
        ],
        "managed-mcp.json has exclusive control",
    );
    let run = check(&tree, &["--json", "list"], 0);
    let servers = run.json()["servers"].clone();
    let states: Vec<(String, String, String)> = servers
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap_or_default().to_owned(),
                s["scope"].as_str().unwrap_or_default().to_owned(),
                s["approvalBasis"]["basis"]
                    .as_str()
                    .unwrap_or_default()
                    .to_owned(),
            )
        })
        .collect();
    let expected = [
        ("corp", "managed", "not-needed"),
        ("docs", "user", "blocked"),
        ("notes", "user", "blocked"),
    ]
    .map(|(a, b, c)| (a.to_owned(), b.to_owned(), c.to_owned()));
    assert_eq!(states, expected);
}

#[test]
fn a_malformed_managed_file_fails_closed() {
    let tree = tree(&[(
        "managed-settings.json",
        "{\n  \"deniedMcpServers\": [\n    {\"serverName\": \"x\"\n  ]\n}\n",
    )]);
    let run = check(&tree, &["check-config"], 1);
    insta::assert_snapshot!(unpadded(&run.stdout));
    let run = check(&tree, &["list"], 0);
    assert_eq!(
        run.stdout.matches("blocked by policy").count(),
        4,
        "{}",
        run.stdout
    );
    check_refused(
        &tree,
        &[
            "add",
            "--transport",
            "http",
            "fine",
            "https://fine.example/mcp",
        ],
        "the managed policy could not be read",
    );
    tree.run(&["tools", "notes"]);
    assert!(!tree.path("spawned").exists());
}

#[test]
fn approve_refuses_a_blocked_project_server() {
    let tree = tree(&[("managed-settings.json", SETTINGS)]);
    tree.write(
        "project/.mcp.json",
        r#"{"mcpServers": {
  "evil": {"type": "http", "url": "https://x.evil.example/mcp"},
  "fine": {"type": "http", "url": "https://fine.example/mcp"}
}}"#,
    );
    let rule = "server `evil` is blocked by policy: `evil` is on a deny list (by [ROOT]/managed/managed-settings.json:4 `deniedMcpServers[1].serverUrl` https://*.evil.example/*)";
    check_refused(&tree, &["approve", "evil"], rule);
    // With an approvable name beside it, nothing is approved.
    check_refused(&tree, &["approve", "fine", "evil"], rule);
    check_refused(&tree, &["approve", "fine", "evil"], "nothing was approved");
    // `--all` approves what awaits approval; a blocked server awaits none.
    let run = check(&tree, &["approve", "--all"], 0);
    assert!(
        run.stdout.contains("`fine`") && !run.stdout.contains("evil"),
        "{}",
        run.stdout
    );
    let run = check(&tree, &["--json", "get", "evil"], 0);
    assert_eq!(run.json()["approvalBasis"]["basis"], "blocked");
    // Denying it is no loosening, and is recorded.
    check(&tree, &["deny", "evil"], 0);
}

#[test]
fn get_pin_prints_an_allow_entry_that_names_what_changed() {
    let tree = tree(&[]);
    let run = check(&tree, &["get", "docs", "--pin"], 0);
    let entry = run.json();
    assert_eq!(entry["serverName"], "docs");
    assert_eq!(entry["configHash"].as_str().map(str::len), Some(16));
    let parts: Vec<&String> = entry["pinned"]
        .as_object()
        .expect("pinned")
        .keys()
        .collect();
    assert_eq!(
        parts,
        [
            "headers",
            "required",
            "timeouts",
            "toolFilter",
            "type",
            "url"
        ]
    );
    // Digests only: the url itself is not printed.
    assert!(!run.stdout.contains("docs.example.com"), "{}", run.stdout);
    let settings = json!({"allowedMcpServers": [entry]});
    tree.write("managed/managed-settings.json", &settings.to_string());
    let run = check(&tree, &["--json", "get", "docs"], 0);
    assert_eq!(
        run.json()["approvalBasis"]["basis"],
        "not-needed",
        "{}",
        run.stdout
    );
    // The url changes: blocked, and the message names the url.
    tree.write(
        "home/.claude.json",
        r#"{"mcpServers": {"docs": {"type": "http", "url": "https://docs.example.net/mcp"}}}"#,
    );
    let run = check(&tree, &["--json", "get", "docs"], 0);
    let basis = &run.json()["approvalBasis"];
    assert_eq!(basis["basis"], "blocked", "{basis}");
    assert_eq!(basis["rule"]["key"], "allowedMcpServers[0].serverName");
    let reason = basis["reason"].as_str().unwrap_or_default();
    assert!(
        reason.starts_with("`docs`: its url changed since it was pinned"),
        "{reason}"
    );
    let run = tree.run(&["tools", "docs"]);
    assert!(
        run.stderr.contains("its url changed"),
        "{}\n{}",
        run.stdout,
        run.stderr
    );
}

/// `mcp-cli serve` over stdio, spoken to one request at a time.
struct Serve {
    child: Child,
    input: ChildStdin,
    answers: mpsc::Receiver<Value>,
    next_id: u64,
}

impl Serve {
    fn start(tree: &Tree) -> Serve {
        let mut child = tree
            .std_command()
            .arg("serve")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start mcp-cli serve");
        let input = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (sender, answers) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                let Ok(message) = serde_json::from_str::<Value>(&line) else {
                    continue;
                };
                if sender.send(message).is_err() {
                    return;
                }
            }
        });
        let mut serve = Serve {
            child,
            input,
            answers,
            next_id: 0,
        };
        serve.request(
            "initialize",
            json!({"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "t", "version": "1"}}),
        );
        serve.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        serve
    }

    fn send(&mut self, message: &Value) {
        writeln!(self.input, "{message}").expect("write to serve");
    }

    /// The answer to one request (notifications in between are skipped).
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = self.next_id;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let message = self
                .answers
                .recv_timeout(left)
                .unwrap_or_else(|_| panic!("no answer to `{method}` within 20 s"));
            if message["id"] == id {
                return message;
            }
        }
    }

    fn tool_names(&mut self) -> Vec<String> {
        let listed = self.request("tools/list", json!({}));
        let mut names: Vec<String> = listed["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("no tools in {listed}"))
            .iter()
            .filter_map(|tool| tool["name"].as_str().map(str::to_owned))
            .collect();
        names.sort();
        names
    }

    /// The names of the servers whose tools are served, once they are
    /// `want` (a reload follows an edit after a quiet time).
    #[track_caller]
    fn wait_for_servers(&mut self, want: &[&str]) {
        let deadline = Instant::now() + Duration::from_secs(15);
        loop {
            let names = self.tool_names();
            let served: Vec<&str> = ["alpha", "beta"]
                .into_iter()
                .filter(|server| names.iter().any(|name| name.contains(server)))
                .collect();
            if served == want {
                return;
            }
            assert!(
                Instant::now() < deadline,
                "served {served:?}, want {want:?}: {names:?}"
            );
            std::thread::sleep(Duration::from_millis(200));
        }
    }

    /// Calls the `echo` tool `tool` with the text `hi`.
    fn echo(&mut self, tool: &str) -> Value {
        self.request(
            "tools/call",
            json!({"name": tool, "arguments": {"text": "hi"}}),
        )
    }
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `serve` applies a policy change while it runs: a deny rule withdraws
/// that server's tools, and a managed file that no longer parses withdraws
/// every server (fail closed) rather than keeping the last good set.
#[test]
fn serve_reload_applies_the_policy_and_fails_closed() {
    let tree = Tree::new("empty");
    let example = test_server("mcp-example-server").display().to_string();
    let servers = json!({"mcpServers": {
        "alpha": {"command": example, "args": []},
        "beta": {"command": example, "args": []},
    }});
    tree.write("home/.claude.json", &servers.to_string());
    // No managed file yet: one deployed while serving applies too.
    std::fs::create_dir_all(tree.path("managed")).expect("mkdir managed");
    let mut serve = Serve::start(&tree);
    serve.wait_for_servers(&["alpha", "beta"]);
    let names = serve.tool_names();
    let echo = names
        .iter()
        .find(|name| name.contains("alpha") && name.ends_with("echo"))
        .unwrap_or_else(|| panic!("no echo of alpha in {names:?}"))
        .clone();
    let called = serve.echo(&echo);
    assert_eq!(called["result"]["content"][0]["text"], "hi", "{called}");

    tree.write(
        "managed/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "beta"}]}"#,
    );
    serve.wait_for_servers(&["alpha"]);

    tree.write(
        "managed/managed-settings.json",
        "{\"deniedMcpServers\": [{\"serverName\": \"beta\"}\n",
    );
    serve.wait_for_servers(&[]);
    let called = serve.echo(&echo);
    assert!(
        called["error"].is_object() || called["result"]["isError"] == true,
        "a withdrawn server's tool was called: {called}"
    );
    assert_ne!(called["result"]["content"][0]["text"], "hi", "{called}");

    // Fixed, the policy lets alpha back.
    tree.write(
        "managed/managed-settings.json",
        r#"{"deniedMcpServers": [{"serverName": "beta"}]}"#,
    );
    serve.wait_for_servers(&["alpha"]);
}
