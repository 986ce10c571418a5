//! Hostile projects and plugins against consent and confinement, run as the
//! built binary with real processes: a "server" here is a script that only
//! leaves a marker file when it runs, so a test can tell whether `probe`
//! started it.

#![allow(clippy::expect_used)]
#![cfg(unix)]

mod support;

use std::os::unix::fs::{PermissionsExt, symlink};
use std::path::{Path, PathBuf};

use serde_json::{Value, json};
use support::{Tree, check};

/// Writes an executable script at `path` that creates `marker` and exits.
fn marker_script(path: &Path, marker: &Path) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    let text = format!("#!/bin/sh\necho ran > '{}'\n", marker.display());
    std::fs::write(path, text).expect("write script");
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
}

fn probe_with(tree: &Tree, args: &[&str]) {
    let mut all = args.to_vec();
    all.extend(["probe", "--timeout", "5"]);
    // The outcome does not matter (the scripts are no MCP servers): only
    // whether the marker appears does.
    tree.run(&all);
}

fn write_json(tree: &Tree, rel: &str, value: &Value) {
    tree.write(rel, &serde_json::to_string_pretty(value).expect("json"));
}

fn server<'a>(list: &'a Value, name: &str) -> &'a Value {
    list["servers"]
        .as_array()
        .expect("servers")
        .iter()
        .find(|s| s["name"] == name)
        .unwrap_or_else(|| panic!("no server {name} in {list:#}"))
}

// ------------------------------------------------- 1. plugin path confinement

#[test]
fn probe_never_runs_a_program_outside_the_plugin_root() {
    // (row, entry, runs): `runs` says whether the marker must appear.
    let rows: &[(&str, Value, bool)] = &[
        (
            "the issue's example: a relative command through a symlink",
            json!({"command": "linkdir/tool"}),
            false,
        ),
        (
            "explicitly relative command through a symlink",
            json!({"command": "./linkdir/tool"}),
            false,
        ),
        (
            "a `..` after the symlink",
            json!({"command": "bin/../linkdir/tool"}),
            false,
        ),
        (
            "an arg the interpreter runs, through a symlink",
            json!({"command": "/bin/sh", "args": ["linkdir/tool"]}),
            false,
        ),
        (
            "a cwd through a symlink",
            json!({"command": "/bin/sh", "args": ["tool"], "cwd": "linkdir"}),
            false,
        ),
        // The same program inside the root runs: the rows above can fail.
        (
            "control: the program inside the root",
            json!({"command": "bin/tool"}),
            true,
        ),
        (
            "control: an arg inside the root",
            json!({"command": "/bin/sh", "args": ["bin/tool"]}),
            true,
        ),
    ];
    for (row, entry, runs) in rows {
        let tree = Tree::new("empty");
        let marker = tree.path("ran");
        let plugin = tree.path("plugin");
        marker_script(&tree.path("outside/tool"), &marker);
        marker_script(&plugin.join("bin/tool"), &marker);
        symlink("../outside", plugin.join("linkdir")).expect("symlink");
        write_json(
            &tree,
            "plugin/.mcp.json",
            &json!({"mcpServers": {"s": entry}}),
        );
        let plugin_arg = plugin.display().to_string();
        let args = ["--plugin", plugin_arg.as_str()];

        let mut check_args = args.to_vec();
        check_args.push("check-config");
        let run = tree.run(&check_args);
        if !*runs {
            assert_eq!(run.code, 1, "{row}: check-config passed:\n{}", run.stdout);
            assert!(
                run.stdout.contains("leaves the plugin root"),
                "{row}: {}",
                run.stdout
            );
        }
        probe_with(&tree, &args);
        assert_eq!(
            marker.exists(),
            *runs,
            "{row}: the marker {} after probe",
            if *runs { "is missing" } else { "appeared" }
        );
    }
}

// ------------------------------------------------- 3. a project approving itself

#[test]
fn a_cloned_project_cannot_approve_itself_until_trusted() {
    // Each row is what the project ships in .claude/settings.local.json;
    // the server `p` is in .mcp.json unless the row defines its own.
    let rows: &[(&str, Value)] = &[
        (
            "the issue's example: enable all",
            json!({"enableAllProjectMcpServers": true}),
        ),
        ("approve by name", json!({"enabledMcpjsonServers": ["p"]})),
        (
            "its own server",
            json!({"mcpServers": {"p": {"command": "MARKER"}}, "enableAllProjectMcpServers": true}),
        ),
    ];
    for (row, local) in rows {
        let tree = Tree::new("empty");
        let marker = tree.path("ran");
        let script = tree.path("project/bin/server");
        marker_script(&script, &marker);
        let script = script.display().to_string();
        let local = local.to_string().replace("MARKER", &script);
        tree.write("project/.claude/settings.local.json", &local);
        if !local.contains("mcpServers") {
            write_json(
                &tree,
                "project/.mcp.json",
                &json!({"mcpServers": {"p": {"command": script}}}),
            );
        }

        let list = check(&tree, &["--json", "list"], 0).json();
        assert_eq!(list["project"]["trusted"], false, "{row}");
        assert_eq!(server(&list, "p")["approval"], "pending", "{row}: {list:#}");
        assert_eq!(server(&list, "p")["scope"], "project", "{row}");
        probe_with(&tree, &[]);
        assert!(
            !marker.exists(),
            "{row}: an untrusted project started its server"
        );
        let human = check(&tree, &["list"], 0).stdout;
        assert!(
            human.contains("project [ROOT]/project is not trusted"),
            "{row}: {human}"
        );

        let run = check(&tree, &["trust"], 0);
        assert_eq!(
            run.stdout,
            "trusted project [ROOT]/project in [ROOT]/home/.claude.json (projects[\"[ROOT]/project\"]): files inside it now count as your consent\n",
            "{row}"
        );
        let list = check(&tree, &["--json", "list"], 0).json();
        assert_eq!(list["project"]["trusted"], true, "{row}");
        assert_eq!(
            server(&list, "p")["approval"],
            "approved",
            "{row}: {list:#}"
        );
        let human = check(&tree, &["list"], 0).stdout;
        assert!(
            human.contains("project [ROOT]/project is trusted"),
            "{row}: {human}"
        );
        probe_with(&tree, &[]);
        assert!(marker.exists(), "{row}: trusted, the server did not start");

        std::fs::remove_file(&marker).expect("rm marker");
        check(&tree, &["untrust"], 0);
        let list = check(&tree, &["--json", "list"], 0).json();
        assert_eq!(list["project"]["trusted"], false, "{row}");
        assert_eq!(server(&list, "p")["approval"], "pending", "{row}");
        probe_with(&tree, &[]);
        assert!(
            !marker.exists(),
            "{row}: untrusted again, the server started"
        );
    }
}

#[test]
fn trust_writes_only_the_trust_key_through_the_editor() {
    let tree = Tree::new("tree");
    let before: Value = serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    check(&tree, &["trust"], 0);
    let run = check(&tree, &["trust"], 0);
    assert!(
        run.stdout
            .starts_with("project [ROOT]/project was already trusted"),
        "{}",
        run.stdout
    );
    let after: Value = serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    let project = tree.path("project").display().to_string();
    assert_eq!(
        after["projects"][project.as_str()],
        json!({"hasTrustDialogAccepted": true})
    );
    let mut rest = after.clone();
    rest.as_object_mut()
        .expect("object")
        .shift_remove("projects");
    assert_eq!(rest, before, "other keys changed");
    let run = check(&tree, &["--json", "untrust"], 0);
    assert_eq!(run.json()["trusted"], false);
    assert_eq!(run.json()["changed"], true);
}

// -------------------------------------------- 4. approval records the server

#[test]
fn a_server_changed_after_approve_is_pending_again() {
    // (row, the entry approved, the entry after the change, what changed)
    let rows: &[(&str, Value, Value, &[&str])] = &[
        (
            "the issue's example: a shell instead",
            json!({"command": "SCRIPT", "args": ["--token", "tok3n"]}),
            json!({"command": "/bin/sh", "args": ["-c", "SCRIPT"]}),
            &["command", "args"],
        ),
        (
            "a new env",
            json!({"command": "SCRIPT"}),
            json!({"command": "SCRIPT", "env": {"PATH": "/tmp/evil"}}),
            &["env"],
        ),
        (
            "another url",
            json!({"type": "http", "url": "http://127.0.0.1:9/mcp"}),
            json!({"type": "http", "url": "http://127.0.0.1:9/other"}),
            &["url"],
        ),
    ];
    for (row, before, after, changed) in rows {
        let tree = Tree::new("empty");
        let marker = tree.path("ran");
        let script = tree.path("project/bin/server");
        marker_script(&script, &marker);
        let script = script.display().to_string();
        let write = |entry: &Value| {
            let text = json!({"mcpServers": {"p1": entry}})
                .to_string()
                .replace("SCRIPT", &script);
            tree.write("project/.mcp.json", &text);
        };
        write(before);
        check(&tree, &["approve", "p1"], 0);
        let list = check(&tree, &["--json", "list"], 0).json();
        assert_eq!(server(&list, "p1")["approval"], "approved", "{row}");
        assert_eq!(
            server(&list, "p1")["approvalBasis"]["basis"],
            "recorded",
            "{row}"
        );
        let home = tree.read("home/.claude.json");
        assert!(
            !home.contains("tok3n"),
            "{row}: the record holds a secret: {home}"
        );

        write(after);
        let list = check(&tree, &["--json", "list"], 0).json();
        let p1 = server(&list, "p1");
        assert_eq!(
            p1["approval"], "pending",
            "{row}: a changed server stayed approved"
        );
        assert_eq!(p1["approvalBasis"]["fields"], json!(changed), "{row}");
        let human = check(&tree, &["list"], 0).stdout;
        let message = format!(
            "changed since it was approved ({} changed)",
            changed.join(", ")
        );
        assert!(
            human.contains(&message),
            "{row}: no `{message}` in:\n{human}"
        );
        assert!(
            human
                .lines()
                .any(|l| l.starts_with("p1 ")
                    && l.contains(&format!("changed: {}", changed.join(", ")))),
            "{row}: the row of p1 does not say what changed:\n{human}"
        );
        probe_with(&tree, &[]);
        assert!(!marker.exists(), "{row}: the changed server ran");

        // Approving again approves what it is now.
        check(&tree, &["approve", "p1"], 0);
        let list = check(&tree, &["--json", "list"], 0).json();
        assert_eq!(server(&list, "p1")["approval"], "approved", "{row}");
    }
}

#[test]
fn list_says_when_a_server_is_approved_by_name_only() {
    let tree = Tree::new("tree");
    // `echo` is approved in the user's settings.json, by name.
    let human = check(&tree, &["list"], 0).stdout;
    let echo = human
        .lines()
        .find(|l| l.starts_with("echo "))
        .expect("echo row");
    assert!(echo.contains("by name only"), "{human}");
    let docs = human
        .lines()
        .find(|l| l.starts_with("docs "))
        .expect("docs row");
    assert!(!docs.contains("by name only"), "{human}");
    let list = check(&tree, &["--json", "list"], 0).json();
    assert_eq!(server(&list, "echo")["approvalBasis"]["basis"], "name-only");
    assert_eq!(
        server(&list, "docs")["approvalBasis"]["basis"],
        "not-needed"
    );
}

// ----------------------------------- 5. a project re-enabling a disabled plugin

#[test]
fn a_project_cannot_re_enable_a_plugin_the_user_disabled() {
    let rows: &[(&str, &str, bool)] = &[
        (
            "project/.claude/settings.json",
            r#"{"tools@m": true}"#,
            false,
        ),
        (
            "project/.claude/settings.local.json",
            r#"{"tools": true}"#,
            false,
        ),
        ("home/.claude/settings.json", r#"{"tools@m": true}"#, true),
    ];
    for (file, enabled, loads) in rows {
        let tree = Tree::new("empty");
        let marker = tree.path("ran");
        let script = tree.path("home/.claude/plugins/tools/bin/tool");
        marker_script(&script, &marker);
        write_json(
            &tree,
            "home/.claude/plugins/tools/.mcp.json",
            &json!({"mcpServers": {"plugin-tool": {"command": "./bin/tool"}}}),
        );
        write_json(
            &tree,
            "home/.claude/settings.json",
            &json!({"enabledPlugins": {"tools@m": false}}),
        );
        tree.write(file, &format!("{{\"enabledPlugins\": {enabled}}}"));
        let list = check(&tree, &["--json", "list"], 0).json();
        let listed = list["servers"]
            .as_array()
            .expect("servers")
            .iter()
            .any(|s| s["name"] == "plugin-tool");
        assert_eq!(listed, *loads, "{file}: {list:#}");
        probe_with(&tree, &[]);
        assert_eq!(marker.exists(), *loads, "{file}");
    }
}

// ------------------------------------------- 17. symlinked and oversized files

#[test]
fn add_writes_through_a_symlinked_home_config_and_keeps_the_link() {
    let tree = Tree::new("tree");
    let home = tree.path("home/.claude.json");
    let real = tree.path("dotfiles/claude.json");
    std::fs::create_dir_all(real.parent().expect("parent")).expect("mkdir");
    std::fs::rename(&home, &real).expect("move");
    symlink("../dotfiles/claude.json", &home).expect("symlink");
    check(&tree, &["add", "new", "--scope", "user", "--", "run-it"], 0);
    assert!(
        home.symlink_metadata()
            .expect("meta")
            .file_type()
            .is_symlink()
    );
    let value: Value = serde_json::from_str(&tree.read("dotfiles/claude.json")).expect("json");
    assert_eq!(value["mcpServers"]["new"]["command"], "run-it");
    assert_eq!(value["numStartups"], 7);
    check(&tree, &["trust"], 0);
    assert!(
        home.symlink_metadata()
            .expect("meta")
            .file_type()
            .is_symlink()
    );

    std::fs::remove_file(&real).expect("rm");
    let run = check(&tree, &["add", "other", "--scope", "user", "--", "x"], 1);
    assert!(
        run.stderr
            .contains("[ROOT]/home/.claude.json: a symlink to a missing file"),
        "{}",
        run.stderr
    );
    assert!(!real.exists(), "a dangling link's target was created");
}

#[test]
fn edits_that_the_loader_would_refuse_are_refused() {
    let cap = 8 << 20;
    let rows: &[(&str, usize, &[&str])] = &[
        (
            "a file past the read cap",
            cap + 1,
            &["add", "x", "--scope", "user", "--", "run"],
        ),
        (
            "an add that grows past the cap",
            cap - 30,
            &["add", "x", "--scope", "user", "--", "run"],
        ),
        ("trust of a file past the cap", cap + 1, &["trust"]),
        (
            "approve into a file past the cap",
            cap + 1,
            &["approve", "unapproved"],
        ),
    ];
    for (row, size, args) in rows {
        let tree = Tree::new("tree");
        let filler = "x".repeat(size - 12);
        let text = format!("{{\"big\": \"{filler}\"}}");
        tree.write("home/.claude.json", &text);
        let before: Vec<(PathBuf, Vec<u8>)> = tree.snapshot_files();
        let run = check(&tree, args, 1);
        assert!(
            run.stderr.contains("[ROOT]/home/.claude.json"),
            "{row}: {}",
            run.stderr
        );
        assert!(run.stderr.contains("8 MiB"), "{row}: {}", run.stderr);
        assert_eq!(tree.snapshot_files(), before, "{row}: a refused edit wrote");
    }
}
