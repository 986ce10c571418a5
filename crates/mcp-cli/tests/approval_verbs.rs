//! End-to-end tests of project server approval (`approve`, `deny`,
//! `reset-project-choices`, and the state `list` shows) run as the built
//! binary against a copy of `tests/fixtures/tree`: the user approves the
//! project's `echo` in `~/.claude/settings.json`; the project's
//! `unapproved` awaits approval; `docs` is the user's own server.

#![allow(clippy::expect_used)]

mod support;

use support::{Tree, check};

/// The approval state `list --json` reports for every server, by name.
fn states(tree: &Tree) -> Vec<(String, String)> {
    let run = check(tree, &["--json", "list"], 0);
    let json = run.json();
    let servers = json["servers"].as_array().expect("servers").clone();
    servers
        .iter()
        .map(|server| {
            (
                server["name"].as_str().expect("name").to_owned(),
                server["approval"].as_str().expect("approval").to_owned(),
            )
        })
        .collect()
}

fn state(tree: &Tree, name: &str) -> String {
    states(tree)
        .into_iter()
        .find(|(server, _)| server == name)
        .map(|(_, state)| state)
        .unwrap_or_else(|| panic!("no server {name}"))
}

/// This project's entry in `<home>/.claude.json`.
fn local_entry(tree: &Tree) -> serde_json::Value {
    let home: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("home/.claude.json is JSON");
    let project = tree.path("project").display().to_string();
    home["projects"][project.as_str()].clone()
}

#[test]
fn approve_and_deny_move_the_name_in_local_settings() {
    let tree = Tree::new("tree");
    assert_eq!(state(&tree, "unapproved"), "pending");

    let run = check(&tree, &["approve", "unapproved"], 0);
    assert_eq!(
        run.stdout,
        "approved project server `unapproved` in [ROOT]/home/.claude.json (projects[\"[ROOT]/project\"])\n"
    );
    assert_eq!(state(&tree, "unapproved"), "approved");
    let run = check(&tree, &["approve", "unapproved"], 0);
    assert_eq!(
        run.stdout,
        "project server `unapproved` was already approved in [ROOT]/home/.claude.json (projects[\"[ROOT]/project\"])\n"
    );

    // `echo` is approved in user settings; a local denial wins over it.
    let run = check(&tree, &["--json", "deny", "echo"], 0);
    insta::assert_json_snapshot!(run.json());
    assert_eq!(state(&tree, "echo"), "denied");
    check(&tree, &["deny", "unapproved"], 0);
    assert_eq!(state(&tree, "unapproved"), "denied");
    assert_eq!(
        local_entry(&tree),
        serde_json::json!({"enabledMcpjsonServers": [], "disabledMcpjsonServers": ["echo", "unapproved"]})
    );
    check(&tree, &["approve", "echo"], 0);
    assert_eq!(state(&tree, "echo"), "approved");

    // The rest of the file is kept, key order included.
    let home = tree.read("home/.claude.json");
    let order: Vec<usize> = ["numStartups", "mcpServers", "tipsHistory", "projects"]
        .iter()
        .map(|key| home.find(&format!("\"{key}\"")).expect("key kept"))
        .collect();
    assert!(order.is_sorted(), "{home}");
    assert!(home.contains("docs-secret-token"), "{home}");
}

#[test]
fn reset_forgets_this_projects_choices_only() {
    let tree = Tree::new("tree");
    let other = serde_json::json!({"enabledMcpjsonServers": ["x"]});
    let project = tree.path("project").display().to_string();
    let mut home: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("JSON");
    home["projects"] = serde_json::json!({
        "/elsewhere": other,
        project.as_str(): {"enableAllProjectMcpServers": true, "disabledMcpjsonServers": ["echo"]},
    });
    tree.write("home/.claude.json", &home.to_string());
    assert_eq!(state(&tree, "unapproved"), "approved");
    assert_eq!(state(&tree, "echo"), "denied");

    let run = check(&tree, &["reset-project-choices"], 0);
    assert_eq!(
        run.stdout,
        "reset the project server choices in [ROOT]/home/.claude.json (projects[\"[ROOT]/project\"])\nproject servers not approved: unapproved\n"
    );
    // `echo` is still approved by the user's own settings.json.
    assert_eq!(state(&tree, "echo"), "approved");
    assert_eq!(state(&tree, "unapproved"), "pending");
    assert_eq!(local_entry(&tree), serde_json::json!({}));
    let home: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("JSON");
    assert_eq!(home["projects"]["/elsewhere"], other);

    let run = check(&tree, &["--json", "reset-project-choices"], 0);
    insta::assert_json_snapshot!(run.json());
}

#[test]
fn only_project_servers_can_be_approved_or_denied() {
    let tree = Tree::new("tree");
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["approve", "docs"],
            1,
            "error: server `docs` is not a project server: it comes from user scope ([ROOT]/home/.claude.json); only servers from the project's .mcp.json, .claude.json or .claude/settings.json (and .claude/settings.local.json while the project is not trusted) need approval\n",
        ),
        (
            &["deny", "search"],
            1,
            "error: server `search` is not a project server: it comes from openclaw scope ([ROOT]/openclaw/openclaw.json); only servers from the project's .mcp.json, .claude.json or .claude/settings.json (and .claude/settings.local.json while the project is not trusted) need approval\n",
        ),
        (
            &["approve", "nope"],
            1,
            "error: no project server named `nope`; only servers from the project's .mcp.json, .claude.json or .claude/settings.json (and .claude/settings.local.json while the project is not trusted) need approval\n",
        ),
        (
            &["deny", "bad\tname"],
            2,
            "error: invalid server name `bad\\tname`: ",
        ),
    ];
    for (args, code, message) in cases {
        let before = tree.snapshot_files();
        let run = check(&tree, args, *code);
        assert!(run.stderr.starts_with(message), "{args:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert_eq!(tree.snapshot_files(), before, "{args:?} changed a file");
    }
}

#[test]
fn a_project_cannot_approve_itself() {
    let tree = Tree::new("tree");
    // Every file the project ships tries to approve its servers.
    let approve_all =
        r#"{"enableAllProjectMcpServers": true, "enabledMcpjsonServers": ["unapproved"]}"#;
    tree.write("project/.claude/settings.json", approve_all);
    tree.write("project/.claude.json", approve_all);
    assert_eq!(state(&tree, "unapproved"), "pending");
    let run = check(&tree, &["check-config"], 0);
    assert!(
        run.stdout
            .contains("`enableAllProjectMcpServers` in a project file is ignored"),
        "{}",
        run.stdout
    );
    // A host running without a person may trust the project for one run.
    let run = check(&tree, &["--trust-project", "--json", "list"], 0);
    let unapproved = run.json()["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|server| server["name"] == "unapproved")
        .cloned()
        .expect("unapproved listed");
    assert_eq!(unapproved["approval"], "approved");
    // ...but not past a denial.
    check(&tree, &["deny", "unapproved"], 0);
    let run = check(&tree, &["--trust-project", "list"], 0);
    assert!(
        run.stdout
            .lines()
            .any(|line| line.starts_with("unapproved") && line.contains("denied")),
        "{}",
        run.stdout
    );
}

#[test]
fn approving_cannot_undo_a_denial_kept_elsewhere() {
    let tree = Tree::new("tree");
    tree.write(
        "project/.claude/settings.local.json",
        r#"{"disabledMcpjsonServers": ["unapproved"]}"#,
    );
    let run = check(&tree, &["approve", "unapproved"], 1);
    assert_eq!(
        run.stderr,
        "error: project server `unapproved` is still denied: `disabledMcpjsonServers` in another user or local settings file (such as [ROOT]/project/.claude/settings.local.json) lists it\n"
    );
    assert_eq!(state(&tree, "unapproved"), "denied");
}
