//! End-to-end tests of the config verbs (`list`, `get`, `add`, `add-json`,
//! `remove`, `enable`, `disable`, `check-config`) run as the built binary
//! against a copy of `tests/fixtures/tree`.

mod support;

use support::{Tree, check};

const PLUGIN: &str = "--plugin";

fn tree() -> Tree {
    Tree::new("tree")
}

/// Runs `args`, expects exit status `code`, an error naming `message`, and
/// no file of the tree touched.
#[track_caller]
fn check_refused(tree: &Tree, args: &[&str], code: i32, message: &str) {
    let before = tree.snapshot_files();
    let run = check(tree, args, code);
    assert!(
        run.stderr.starts_with("error: ") && run.stderr.contains(message),
        "stderr lacks `{message}`:\n{}",
        run.stderr
    );
    assert!(
        run.stdout.is_empty(),
        "a refusal printed on stdout: {}",
        run.stdout
    );
    assert_eq!(tree.snapshot_files(), before, "a refusal changed a file");
}

/// `text` with every run of spaces cut to two: the columns before the last
/// are padded to the real temporary path, which `[ROOT]` replaced, so their
/// widths differ from machine to machine.
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

#[test]
fn list_shows_every_merged_server_and_diagnostics() {
    let tree = tree();
    let plugin = tree.path("plugin");
    let plugin = plugin.to_str().expect("utf-8 path");
    let run = check(&tree, &[PLUGIN, plugin, "list"], 0);
    insta::assert_snapshot!(unpadded(&run.stdout));
    let run = check(&tree, &[PLUGIN, plugin, "--json", "list"], 0);
    insta::assert_json_snapshot!(run.json());
}

#[test]
fn get_redacts_secrets_unless_asked() {
    let tree = tree();
    let run = check(&tree, &["get", "echo"], 0);
    insta::assert_snapshot!(run.stdout);
    assert!(!run.stdout.contains("echo-secret-value"));
    let run = check(&tree, &["get", "docs", "--json"], 0);
    insta::assert_json_snapshot!(run.json());
    assert!(!run.stdout.contains("docs-secret-token"));
    assert_eq!(
        run.json()["config"]["transport"]["headers"]["Authorization"],
        "***"
    );

    let run = check(&tree, &["get", "docs", "--show-secrets"], 0);
    assert!(
        run.stdout
            .contains("Authorization: Bearer docs-secret-token"),
        "{}",
        run.stdout
    );
    let run = check(&tree, &["--json", "get", "echo", "--show-secrets"], 0);
    assert_eq!(
        run.json()["config"]["transport"]["env"]["API_KEY"],
        "echo-secret-value"
    );
}

#[test]
fn a_command_line_never_shows_what_it_took_from_variables() {
    let tree = tree();
    let entry =
        r#"{"command":"srv","args":["--key","${CLI_TEST_TOKEN}","https://u:pw@h.example/x"]}"#;
    check(&tree, &["add-json", "keyed", entry, "--scope", "user"], 0);
    let secret = "cli-test-secret-value";
    let run = |args: &[&str]| {
        let run = tree.run_with(args, |command| {
            command.env("CLI_TEST_TOKEN", secret);
        });
        assert_eq!(run.code, 0, "{args:?}: {}", run.stderr);
        run
    };
    for args in [
        &["get", "keyed"][..],
        &["--json", "get", "keyed"],
        &["list"],
        &["--json", "list"],
        &["check-config"],
        &["--json", "check-config"],
    ] {
        let shown = run(args);
        assert!(!shown.stdout.contains(secret), "{args:?}: {}", shown.stdout);
        assert!(!shown.stdout.contains("pw@"), "{args:?}: {}", shown.stdout);
    }
    let json = run(&["--json", "get", "keyed"]).json();
    assert_eq!(
        json["config"]["transport"]["args"],
        serde_json::json!(["--key", "***", "https://u:***@h.example/x"])
    );
    assert_eq!(
        json["signature"],
        "stdio:[srv|--key|***|https://u:***@h.example/x]"
    );
    let shown = run(&["--json", "get", "keyed", "--show-secrets"]).json();
    assert_eq!(shown["config"]["transport"]["args"][1], secret);
}

#[test]
fn get_of_an_unknown_server_fails_naming_it() {
    let tree = tree();
    let run = check(&tree, &["get", "nope"], 1);
    assert_eq!(
        run.stderr,
        "error: no server named `nope` (configured: docs, echo, search, unapproved)\n"
    );
}

#[test]
fn add_stdio_to_project_keeps_the_rest_of_the_file() {
    let tree = tree();
    let run = check(
        &tree,
        &[
            "add",
            "files",
            "--scope",
            "project",
            "--env",
            "ROOT=/data",
            "--",
            "fs-server",
            "--root",
            "/data",
        ],
        0,
    );
    assert_eq!(
        run.stdout,
        "added stdio server `files` in [ROOT]/project/.mcp.json (project)\napproved it for this project in [ROOT]/home/.claude.json (projects[\"[ROOT]/project\"]), as you added it\n"
    );
    insta::assert_snapshot!(tree.read("project/.mcp.json"));
    let run = check(&tree, &["--json", "get", "files"], 0);
    assert_eq!(run.json()["config"]["transport"]["command"], "fs-server");
    assert_eq!(run.json()["scope"], "project");
}

#[test]
fn add_remote_to_user_scope_keeps_keys_and_order() {
    let tree = tree();
    let run = check(
        &tree,
        &[
            "--json",
            "add",
            "api",
            "--scope",
            "user",
            "--transport",
            "sse",
            "--url",
            "https://api.example.test/sse",
            "--header",
            "X-Api-Key: k-123",
            "--client-id",
            "cli-app",
            "--callback-port",
            "8765",
        ],
        0,
    );
    insta::assert_json_snapshot!(run.json());
    insta::assert_snapshot!(tree.read("home/.claude.json"));
}

#[test]
fn add_defaults_to_local_scope_under_the_project_key() {
    let tree = tree();
    check(&tree, &["add", "mine", "--", "my-server"], 0);
    let home: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    let project = tree.path("project").display().to_string();
    assert_eq!(
        home["projects"][project.as_str()]["mcpServers"]["mine"]["command"],
        "my-server"
    );
    let run = check(&tree, &["--json", "list"], 0);
    let mine = run.json()["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|s| s["name"] == "mine")
        .cloned()
        .expect("mine listed");
    assert_eq!(mine["scope"], "local");
}

#[test]
fn add_json_accepts_both_dialects_and_refuses_bad_input() {
    let tree = tree();
    check(
        &tree,
        &[
            "add-json",
            "claw",
            r#"{"type":"ws","url":"wss://ws.example.test/mcp"}"#,
            "--scope",
            "project",
        ],
        0,
    );
    check(
        &tree,
        &[
            "add-json",
            "oc",
            r#"{"url":"https://x.example.test/mcp","transport":"streamable-http"}"#,
            "--scope",
            "openclaw",
        ],
        0,
    );
    insta::assert_snapshot!(tree.read("openclaw/openclaw.json"));

    check_refused(
        &tree,
        &["add-json", "x", "{\"command\": "],
        2,
        "invalid JSON for server `x`: EOF while parsing",
    );
    check_refused(
        &tree,
        &["add-json", "x", "[]"],
        2,
        "invalid entry for server `x`: expected a JSON object, got an array",
    );
    check_refused(
        &tree,
        &["add-json", "x", r#"{"command": ""}"#],
        2,
        "invalid entry for server `x`",
    );
    check_refused(
        &tree,
        &[
            "add-json",
            "x",
            r#"{"command": "a", "env": {"LD_PRELOAD": "/evil.so"}}"#,
        ],
        2,
        "LD_PRELOAD",
    );
    check_refused(
        &tree,
        &["add-json", "x", r#"{"type": "http", "url": "ftp://a"}"#],
        2,
        "scheme `ftp`",
    );
    check_refused(
        &tree,
        &["add-json", "bad\u{1b}name", r#"{"command": "a"}"#],
        2,
        "invalid server name `bad\\u{1b}name`: must not hold control or invisible formatting characters",
    );
    check_refused(
        &tree,
        &["add", "", "--", "a"],
        2,
        "invalid server name ``: must not be empty",
    );
    check_refused(
        &tree,
        &["add", "x"],
        2,
        "server `x` needs a command after `--` (stdio) or --url URL (remote)",
    );
    check_refused(
        &tree,
        &["add", "x", "--url", "https://a.test", "--", "cmd"],
        2,
        "not both",
    );
    check_refused(
        &tree,
        &["add", "x", "--env", "NOVALUE", "--", "cmd"],
        2,
        "invalid env `NOVALUE`: expected KEY=VALUE",
    );
    check_refused(
        &tree,
        &[
            "add",
            "x",
            "--url",
            "https://a.test",
            "--header",
            "Bad Header: secret",
        ],
        2,
        "invalid header `Bad Header:***`",
    );
    check_refused(
        &tree,
        &["add", "x", "--url", "https://a.test", "--env", "A=b"],
        2,
        "--env is for stdio servers",
    );
    check_refused(
        &tree,
        &[
            "add",
            "x",
            "--transport",
            "ws",
            "--url",
            "wss://a.test",
            "--client-id",
            "c",
        ],
        2,
        "ws servers have no OAuth",
    );
    check_refused(
        &tree,
        &["add", "echo", "--scope", "project", "--", "cmd"],
        1,
        "server `echo` already exists in [ROOT]/project/.mcp.json (pass --force to replace it)",
    );
}

#[test]
fn add_force_replaces_in_place() {
    let tree = tree();
    check(
        &tree,
        &[
            "add",
            "echo",
            "--scope",
            "project",
            "--force",
            "--",
            "new-server",
        ],
        0,
    );
    let file: serde_json::Value =
        serde_json::from_str(&tree.read("project/.mcp.json")).expect("json");
    let names: Vec<&String> = file["mcpServers"]
        .as_object()
        .expect("map")
        .keys()
        .collect();
    assert_eq!(names, ["echo", "unapproved"]);
    assert_eq!(file["mcpServers"]["echo"]["command"], "new-server");
}

#[test]
fn writes_refuse_files_that_are_not_plain_json() {
    let tree = tree();
    tree.write(
        "project/.mcp.json",
        "{\n  // shared servers\n  \"mcpServers\": {}\n}\n",
    );
    check_refused(
        &tree,
        &["add", "a", "--scope", "project", "--", "x"],
        1,
        "[ROOT]/project/.mcp.json:2:3: not plain JSON",
    );
}

#[test]
fn remove_finds_the_scope_or_asks_for_one() {
    let tree = tree();
    let run = check(&tree, &["remove", "unapproved"], 0);
    assert_eq!(
        run.stdout,
        "removed server `unapproved` from [ROOT]/project/.mcp.json (project)\n"
    );
    assert!(!tree.read("project/.mcp.json").contains("unapproved"));

    check(&tree, &["add", "docs", "--scope", "project", "--", "x"], 0);
    check_refused(
        &tree,
        &["remove", "docs"],
        2,
        "server `docs` is in several scopes (user, project); choose one with --scope",
    );
    check(&tree, &["remove", "docs", "--scope", "user"], 0);
    assert!(!tree.read("home/.claude.json").contains("docs-secret-token"));
    check_refused(&tree, &["remove", "ghost"], 1, "no server named `ghost`");
    check_refused(
        &tree,
        &["remove", "ghost", "--scope", "user"],
        1,
        "no server named `ghost` in [ROOT]/home/.claude.json",
    );
}

#[test]
fn disable_tombstones_a_plugin_server_and_enable_restores_it() {
    let tree = tree();
    let plugin = tree.path("plugin");
    let plugin = plugin.to_str().expect("utf-8 path");
    let names = |tree: &Tree| -> Vec<String> {
        let run = check(tree, &[PLUGIN, plugin, "--json", "list"], 0);
        run.json()["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .filter(|s| s["enabled"] == true)
            .map(|s| s["name"].as_str().expect("name").to_owned())
            .collect()
    };
    assert!(names(&tree).contains(&"notes".to_owned()));
    let before = tree.read("home/.claude.json");
    let run = check(&tree, &[PLUGIN, plugin, "disable", "notes"], 0);
    assert_eq!(
        run.stdout,
        "disabled server `notes` in [ROOT]/home/.claude.json (local)\n"
    );
    assert!(!names(&tree).contains(&"notes".to_owned()));
    let run = check(&tree, &[PLUGIN, plugin, "enable", "notes"], 0);
    assert_eq!(
        run.stdout,
        "enabled server `notes` in [ROOT]/home/.claude.json (local)\n"
    );
    assert!(names(&tree).contains(&"notes".to_owned()));
    // The tombstone is gone again; the only trace is the emptied project key.
    let after: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    let before: serde_json::Value = serde_json::from_str(&before).expect("json");
    assert_eq!(after["mcpServers"], before["mcpServers"]);
}

#[test]
fn disable_and_enable_an_entry_in_its_own_file() {
    let tree = tree();
    let original = tree.read("project/.mcp.json");
    check(&tree, &["disable", "echo"], 0);
    let run = check(&tree, &["--json", "get", "echo"], 0);
    assert_eq!(run.json()["config"]["enabled"], false);
    let run = check(&tree, &["disable", "echo"], 0);
    assert_eq!(
        run.stdout,
        "server `echo` was already disabled in [ROOT]/project/.mcp.json (project)\n"
    );
    check(&tree, &["enable", "echo"], 0);
    let run = check(&tree, &["--json", "get", "echo"], 0);
    assert_eq!(run.json()["config"]["enabled"], true);
    // Same servers, same keys, same order: only the layout may differ.
    let now: serde_json::Value =
        serde_json::from_str(&tree.read("project/.mcp.json")).expect("json");
    let then: serde_json::Value = serde_json::from_str(&original).expect("json");
    assert_eq!(now.to_string(), then.to_string());
}

#[test]
fn check_config_is_the_shared_check() {
    let tree = tree();
    let run = check(&tree, &["check-config"], 0);
    insta::assert_snapshot!(run.stdout);
    tree.write(
        "project/.mcp.json",
        "{\"mcpServers\": {\"bad\": {\"command\": \"x\", \"colour\": 1}, \"worse\": {\"args\": []}}}",
    );
    let run = check(&tree, &["--json", "check-config"], 1);
    insta::assert_json_snapshot!(run.json());
    tree.write(
        "project/.mcp.json",
        "{\"mcpServers\": {\"bad\": {\"command\": \"x\", \"colour\": 1}}}",
    );
    check(&tree, &["check-config"], 0);
    check(&tree, &["check-config", "--strict"], 1);
}

#[test]
fn concurrent_adds_from_separate_processes_lose_nothing() {
    let tree = tree();
    let children: Vec<_> = (0..8)
        .map(|index| {
            let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mcp-cli"));
            command
                .arg("--home")
                .arg(tree.path("home"))
                .arg("--project")
                .arg(tree.path("project"))
                .args([
                    "add",
                    &format!("parallel-{index}"),
                    "--scope",
                    "project",
                    "--",
                    "server",
                ])
                .stdout(std::process::Stdio::null())
                .spawn()
                .expect("spawn")
        })
        .collect();
    for mut child in children {
        assert!(child.wait().expect("wait").success());
    }
    let file: serde_json::Value =
        serde_json::from_str(&tree.read("project/.mcp.json")).expect("json");
    let servers = file["mcpServers"].as_object().expect("map");
    for index in 0..8 {
        assert!(
            servers.contains_key(&format!("parallel-{index}")),
            "lost parallel-{index}"
        );
    }
    assert!(servers.contains_key("echo") && servers.contains_key("unapproved"));
}

#[test]
fn usage_errors_exit_2_and_help_exits_0() {
    let tree = tree();
    let run = check(&tree, &["frobnicate"], 2);
    assert!(run.stderr.contains("unrecognized subcommand 'frobnicate'"));
    check(&tree, &["add", "--scope", "galaxy", "x", "--", "y"], 2);
    check(&tree, &["call"], 2);
    let run = check(&tree, &["--help"], 0);
    for verb in [
        "list",
        "get",
        "add",
        "add-json",
        "remove",
        "enable",
        "disable",
        "probe",
        "tools",
        "call",
        "login",
        "logout",
        "auth-status",
        "check-config",
    ] {
        assert!(
            run.stdout.contains(&format!("\n  {verb} ")),
            "help lacks {verb}"
        );
    }
}

#[test]
fn trust_project_approves_pending_servers_for_one_run() {
    let tree = tree();
    let approval = |args: &[&str]| -> String {
        let run = check(&tree, args, 0);
        let json = run.json();
        let servers = json["servers"].as_array().expect("servers").clone();
        let unapproved = servers
            .iter()
            .find(|s| s["name"] == "unapproved")
            .expect("listed");
        unapproved["approval"]
            .as_str()
            .expect("approval")
            .to_owned()
    };
    assert_eq!(approval(&["--json", "list"]), "pending");
    assert_eq!(approval(&["--json", "--trust-project", "list"]), "approved");
    assert_eq!(approval(&["--json", "list"]), "pending");
}
