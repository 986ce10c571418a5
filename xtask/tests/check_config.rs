//! `cargo xtask check-config` as a user runs it: the built binary against
//! fixture trees in temporary folders.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;

#[path = "../../crates/mcp-config/tests/common/fixture_tree.rs"]
mod fixture_tree;

use fixture_tree::copy_tree;

fn fixture() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let source =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../crates/mcp-config/tests/fixtures/tree");
    copy_tree(&source, &root, &root.join("project"));
    (dir, root)
}

/// Runs `xtask check-config` with `args` in `cwd`, with a scrubbed
/// environment so the real home is never read.
fn check_config(cwd: &Path, args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_xtask"))
        .arg("check-config")
        .args(args)
        .current_dir(cwd)
        .env_clear()
        .env("HOME", cwd.join("no-such-home"))
        .output()
        .unwrap()
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

#[test]
fn json_output_has_the_documented_shape() {
    let (_dir, root) = fixture();
    let out = check_config(&root, &["--json", "--home", "home", "--project", "project"]);
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let object = json.as_object().unwrap();
    assert_eq!(
        object.keys().collect::<Vec<_>>(),
        ["servers", "diagnostics"]
    );
    let servers = json["servers"].as_array().unwrap();
    assert!(servers.len() > 5, "{servers:?}");
    for s in servers {
        let keys: Vec<&str> = s.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "name",
                "kind",
                "scope",
                "source",
                "enabled",
                "signature",
                "hash"
            ]
        );
        assert!(
            ["stdio", "sse", "http", "ws", "sdk", "claudeai-proxy"]
                .contains(&s["kind"].as_str().unwrap())
        );
        assert!(
            ["plugin", "user", "project", "local", "openclaw"]
                .contains(&s["scope"].as_str().unwrap())
        );
        assert_eq!(s["hash"].as_str().unwrap().len(), 16);
        assert!(s["enabled"].is_boolean());
    }
    let names: Vec<&str> = servers
        .iter()
        .map(|s| s["name"].as_str().unwrap())
        .collect();
    let mut sorted = names.clone();
    sorted.sort_unstable();
    assert_eq!(names, sorted, "servers are sorted by name");
    let diagnostics = json["diagnostics"].as_array().unwrap();
    for d in diagnostics {
        let keys: Vec<&str> = d.as_object().unwrap().keys().map(String::as_str).collect();
        assert_eq!(
            keys,
            [
                "level", "message", "file", "line", "column", "server", "field"
            ]
        );
        assert!(["error", "warning", "info"].contains(&d["level"].as_str().unwrap()));
    }
    // the fixture tree has errors (empty commands), so the exit status is 1
    assert!(diagnostics.iter().any(|d| d["level"] == "error"));
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn exit_codes_follow_errors_warnings_and_strict() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("home")).unwrap();
    std::fs::create_dir_all(root.join("project")).unwrap();
    let args = ["--home", "home", "--project", "project"];

    // nothing configured: clean
    assert_eq!(check_config(root, &args).status.code(), Some(0));

    // a warning (unknown field): 0, but 1 with --strict
    write(
        &root.join("project/.mcp.json"),
        r#"{"mcpServers": {"s": {"command": "x", "colour": "blue"}}}"#,
    );
    assert_eq!(check_config(root, &args).status.code(), Some(0));
    let strict = check_config(
        root,
        &["--strict", "--home", "home", "--project", "project"],
    );
    assert_eq!(strict.status.code(), Some(1));

    // an error: 1, and the human output names file, line and column
    write(
        &root.join("project/.mcp.json"),
        "{\"mcpServers\": {\n  \"s\": {\"command\": \"\"}}}",
    );
    let out = check_config(root, &args);
    assert_eq!(out.status.code(), Some(1));
    let text = String::from_utf8(out.stdout).unwrap();
    let project = root.canonicalize().unwrap().join("project/.mcp.json");
    assert!(
        text.contains(&format!(
            "{}:2:9: error: server `s`: `command` must not be empty",
            project.display()
        )),
        "{text}"
    );

    // usage errors: 2
    assert_eq!(
        check_config(root, &["--no-such-flag"]).status.code(),
        Some(2)
    );
    assert_eq!(
        check_config(root, &["--home", "missing-dir"]).status.code(),
        Some(2)
    );
}

#[test]
fn human_output_lists_each_server() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(
        &root.join("home/.claude.json"),
        r#"{"mcpServers": {"remote": {"type": "sse", "url": "https://x.example/sse"}}}"#,
    );
    write(
        &root.join("project/.mcp.json"),
        r#"{"mcpServers": {"local-tool": {"command": "tool"}}}"#,
    );
    let out = check_config(root, &["--home", "home", "--project", "project"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    let line = |name: &str| {
        text.lines()
            .find(|l| l.trim_start().starts_with(name))
            .unwrap_or_default()
            .to_owned()
    };
    let remote = line("remote");
    assert!(
        remote.contains("sse") && remote.contains("user") && remote.contains("home/.claude.json"),
        "{text}"
    );
    let local = line("local-tool");
    assert!(
        local.contains("stdio") && local.contains("project") && local.contains("pending approval"),
        "{text}"
    );
}

#[test]
fn the_bundled_example_passes() {
    let workspace = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let out = check_config(
        workspace,
        &["--home", "examples/home", "--project", "examples/project"],
    );
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{text}");
    for scope in ["user", "project", "plugin"] {
        assert!(
            text.lines().any(|l| l.contains(&format!(" {scope} "))),
            "{scope} missing: {text}"
        );
    }
    assert!(
        text.contains("mcp-example-server") || text.contains("example"),
        "{text}"
    );
}
