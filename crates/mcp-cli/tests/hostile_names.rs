//! Hostile names and credentials through the built binary (issue 12 items
//! 12 and 16): every name the loader accepts is one every verb manages, a
//! name with control characters is refused everywhere and never printed
//! raw, and no url credential reaches `get`, `list`, `check-config` or
//! `auth-status`.

#![allow(clippy::expect_used)]

mod support;

use support::{Run, Tree, check};

fn project_server(tree: &Tree, name: &str) {
    let file = serde_json::json!({"mcpServers": {name: {"command": "srv"}}});
    tree.write("project/.mcp.json", &file.to_string());
}

/// `(name, approval, enabled)` of every server `list --json` shows.
fn listed(tree: &Tree) -> Vec<(String, String, bool)> {
    let json = check(tree, &["--json", "list"], 0).json();
    json["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .map(|s| {
            (
                s["name"].as_str().expect("name").to_owned(),
                s["approval"].as_str().expect("approval").to_owned(),
                s["enabled"].as_bool().expect("enabled"),
            )
        })
        .collect()
}

#[test]
fn every_name_the_loader_accepts_every_verb_manages() {
    #[track_caller]
    fn check_name(name: &str) {
        let tree = Tree::new("empty");
        project_server(&tree, name);
        let row =
            |approval: &str, enabled: bool| vec![(name.to_owned(), approval.to_owned(), enabled)];
        assert_eq!(listed(&tree), row("pending", true), "{name:?}");
        let get = check(&tree, &["--json", "get", "--", name], 0).json();
        assert_eq!(get["config"]["name"], name, "{name:?}");
        check(&tree, &["approve", "--", name], 0);
        assert_eq!(listed(&tree), row("approved", true), "{name:?}");
        check(&tree, &["deny", "--", name], 0);
        assert_eq!(listed(&tree), row("denied", true), "{name:?}");
        check(&tree, &["disable", "--scope", "project", "--", name], 0);
        assert_eq!(listed(&tree), row("denied", false), "{name:?}");
        check(&tree, &["enable", "--scope", "project", "--", name], 0);
        assert_eq!(listed(&tree), row("denied", true), "{name:?}");
        check(&tree, &["remove", "--scope", "project", "--", name], 0);
        assert_eq!(listed(&tree), [], "{name:?}");
        check(&tree, &["add", "--scope", "user", name, "--", "srv"], 0);
        assert_eq!(listed(&tree), row("approved", true), "{name:?}");
    }
    for name in [
        "my server",
        "my.server",
        "über",
        "-dash",
        "a/b",
        "emoji😀",
        "x",
    ] {
        check_name(name);
    }
}

/// No byte of `run`'s output is a control character other than a newline.
#[track_caller]
fn no_raw_controls(run: &Run, what: &str) {
    for (stream, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        assert!(
            !text.chars().any(
                |c| c != '\n' && mcp_config::json::escape_text(&c.to_string()) != c.to_string()
            ),
            "{what}: raw control or invisible character on {stream}: {text:?}"
        );
    }
}

#[test]
fn names_with_control_characters_are_refused_and_never_printed_raw() {
    #[track_caller]
    fn check_name(name: &str, shown: &str) {
        let tree = Tree::new("empty");
        let file = serde_json::json!({"mcpServers": {name: {"command": "srv"}, "good": {"command": "srv"}}});
        tree.write("home/.claude.json", &file.to_string());
        let names: Vec<String> = listed(&tree).into_iter().map(|(n, _, _)| n).collect();
        assert_eq!(names, ["good"], "{name:?}");
        let list = check(&tree, &["list"], 0);
        no_raw_controls(&list, "list");
        assert!(list.stdout.contains(shown), "{name:?}: {}", list.stdout);
        let checked = check(&tree, &["check-config"], 1);
        no_raw_controls(&checked, "check-config");
        assert!(
            checked.stdout.contains(shown),
            "{name:?}: {}",
            checked.stdout
        );
        for verb in [
            vec!["deny", "--", name],
            vec!["approve", "--", name],
            vec!["disable", "--", name],
            vec!["enable", "--", name],
            vec!["add", name, "--", "srv"],
        ] {
            let before = tree.snapshot_files();
            let run = check(&tree, &verb, 2);
            no_raw_controls(&run, verb[0]);
            assert!(
                run.stderr
                    .contains(&format!("invalid server name `{shown}`")),
                "{verb:?}: {}",
                run.stderr
            );
            assert_eq!(tree.snapshot_files(), before, "{verb:?} wrote");
        }
    }
    check_name("evil\u{1b}[31mred", "evil\\u{1b}[31mred");
    check_name("fake\nrow", "fake\\nrow");
    check_name("csi\u{9b}2J", "csi\\u{9b}2J");
    check_name("rtl\u{202e}txt", "rtl\\u{202e}txt");
}

#[test]
fn url_credentials_never_reach_get_list_or_check_config() {
    let tree = Tree::new("empty");
    let file = serde_json::json!({"mcpServers": {
        "remote": {"type": "http", "url": "https://user:hunter2@h.example/mcp?team=core&token=${TOKEN}"},
        "ws": {"type": "ws", "url": "wss://h.example/ws?k=${TOKEN}"},
        "bridge": {"command": "npx", "args": ["mcp-remote", "https://u:pw-in-arg@h.example/mcp"]},
    }});
    tree.write("home/.claude.json", &file.to_string());
    let run = |args: &[&str], code: i32| {
        let run = tree.run_with(args, |command| {
            command.env("TOKEN", "s3cr3t-value");
        });
        assert_eq!(run.code, code, "{args:?}: {run:?}");
        run
    };
    let secrets = ["hunter2", "s3cr3t-value", "pw-in-arg"];
    for args in [
        &["get", "remote"][..],
        &["--json", "get", "remote"],
        &["get", "ws"],
        &["--json", "get", "ws"],
        &["get", "bridge"],
        &["--json", "get", "bridge"],
        &["list"],
        &["--json", "list"],
        &["check-config"],
        &["--json", "check-config"],
        &["auth-status"],
        &["--json", "auth-status"],
    ] {
        let out = run(args, 0);
        for secret in secrets {
            assert!(
                !out.stdout.contains(secret) && !out.stderr.contains(secret),
                "{args:?} shows {secret}: {out:?}"
            );
        }
    }
    let get = run(&["get", "remote"], 0).stdout;
    assert!(
        get.contains("https://user:***@h.example/mcp?team=core&token=***"),
        "{get}"
    );
    let json = run(&["--json", "get", "remote"], 0).json();
    assert_eq!(
        json["signature"],
        "url:https://user:***@h.example/mcp?team=core&token=***"
    );
    assert_eq!(
        json["config"]["transport"]["url"],
        "https://user:***@h.example/mcp?team=core&token=***"
    );
    let bridge = run(&["--json", "get", "bridge"], 0).json();
    assert_eq!(
        bridge["config"]["transport"]["args"],
        serde_json::json!(["mcp-remote", "https://u:***@h.example/mcp"])
    );
    let status = run(&["--json", "auth-status"], 0).json();
    assert_eq!(
        status["servers"][0]["url"],
        "https://user:***@h.example/mcp?team=core&token=***"
    );
    // Asked for, the secrets are still there to see.
    let shown = run(&["get", "--show-secrets", "remote"], 0).stdout;
    assert!(
        shown.contains("hunter2") && shown.contains("s3cr3t-value"),
        "{shown}"
    );
}
