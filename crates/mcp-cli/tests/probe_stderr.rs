//! `probe` shows a failing server's stderr around its first error-looking
//! line, not only its end (issue 16 item 7): a server that prints its
//! error and then forty lines of usage text (as kubernetes-mcp-server does
//! for an unknown flag) shows the error, a `…` line, and the last lines.
//! The servers are small scripts run as the built binary runs any server.

#![allow(clippy::expect_used)]
#![cfg(unix)]

mod support;

use std::os::unix::fs::PermissionsExt;

use support::Tree;

/// A tree whose project has one server, `name`, running `script`.
fn tree_with(name: &str, script: &str) -> Tree {
    let tree = Tree::new("empty");
    tree.write("project/server.sh", script);
    let path = tree.path("project/server.sh");
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).expect("chmod");
    let entry = serde_json::json!({"mcpServers": {name: {"command": path}}});
    tree.write("project/.mcp.json", &entry.to_string());
    tree.write(
        "home/.claude/settings.json",
        r#"{"enableAllProjectMcpServers": true}"#,
    );
    tree
}

/// Prints what kubernetes-mcp-server prints for an unknown flag (an error
/// line, then the usage text), and exits 1.
fn usage_after_error() -> String {
    let mut script = String::from("#!/bin/sh\n{\necho 'starting kubernetes-mcp-server'\n");
    script.push_str("echo 'Error: unknown flag: --bogus'\necho 'Usage:'\n");
    script.push_str("echo '  kubernetes-mcp-server [command] [flags]'\necho 'Flags:'\n");
    for i in 1..=40 {
        script.push_str(&format!(
            "echo '      --flag-{i:02} string   what flag {i} sets'\n"
        ));
    }
    script.push_str("} >&2\nexit 1\n");
    script
}

#[test]
fn probe_shows_the_error_above_the_usage_text_and_the_last_lines() {
    let tree = tree_with("k8s", &usage_after_error());
    let run = tree.run(&["probe"]);
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    let shown: Vec<&str> = run
        .stdout
        .lines()
        .filter_map(|line| line.strip_prefix("      | "))
        .collect();
    assert_eq!(
        shown,
        [
            "starting kubernetes-mcp-server",
            "Error: unknown flag: --bogus",
            "Usage:",
            "  kubernetes-mcp-server [command] [flags]",
            "Flags:",
            "…",
            "      --flag-33 string   what flag 33 sets",
            "      --flag-34 string   what flag 34 sets",
            "      --flag-35 string   what flag 35 sets",
            "      --flag-36 string   what flag 36 sets",
            "      --flag-37 string   what flag 37 sets",
            "      --flag-38 string   what flag 38 sets",
            "      --flag-39 string   what flag 39 sets",
            "      --flag-40 string   what flag 40 sets",
        ],
        "{}",
        run.stdout
    );
    // `--json` keeps the whole tail.
    let run = tree.run(&["--json", "probe"]);
    let tail = run.json()["servers"][0]["stderrTail"]
        .as_str()
        .expect("a tail")
        .to_owned();
    assert!(tail.contains("Error: unknown flag: --bogus"), "{tail}");
    assert!(
        tail.contains("--flag-01") && tail.ends_with("what flag 40 sets"),
        "{tail}"
    );
}

#[test]
fn probe_of_a_server_that_hangs_silently_hints_at_the_environment() {
    let tree = tree_with("quiet", "#!/bin/sh\nexec sleep 30\n");
    let run = tree.run_with(&["probe", "--timeout", "1"], |command| {
        command.env("HTTPS_PROXY", "http://user:s3cret@proxy.test:3128");
    });
    assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains("connect timed out after 1s; the server wrote nothing on stderr; if it downloads packages (npx, uvx), check its network settings: HTTPS_PROXY is passed to it"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("s3cret"), "{}", run.stdout);
    assert!(!run.stdout.contains("      | "), "{}", run.stdout);
}
