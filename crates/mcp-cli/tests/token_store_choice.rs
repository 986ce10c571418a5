//! `--token-store` and `MCP_TOKEN_STORE`: `file` is the default (every
//! other OAuth test runs with it); `secret-store` is refused, naming the
//! choice, by every verb that needs tokens when the process has no secret
//! store (this build has none), and tokens never fall back to a file.

mod support;

use support::{Tree, check};

fn tree() -> Tree {
    let tree = Tree::new("empty");
    check(
        &tree,
        &[
            "add",
            "--transport",
            "http",
            "remote",
            "http://127.0.0.1:9/mcp",
            "--scope",
            "user",
        ],
        0,
    );
    tree
}

const REFUSED: &str = "error: --token-store secret-store (or MCP_TOKEN_STORE): no OS secret store is available to this process; use --token-store file";

#[test]
fn the_choice_is_a_flag_or_a_variable_and_file_is_the_default() {
    let tree = tree();
    for (args, var, code) in [
        (&["auth-status"][..], None, 0),
        (&["--token-store", "file", "auth-status"], None, 0),
        (&["auth-status"], Some("file"), 0),
        (&["--token-store", "secret-store", "auth-status"], None, 1),
        (&["auth-status"], Some("secret-store"), 1),
        (
            &["--token-store", "secret-store", "logout", "remote"],
            None,
            1,
        ),
        (
            &["login", "remote", "--no-browser"],
            Some("secret-store"),
            1,
        ),
        // The flag wins over the variable.
        (
            &["--token-store", "file", "auth-status"],
            Some("secret-store"),
            0,
        ),
    ] {
        let run = tree.run_with(args, |command| {
            if let Some(value) = var {
                command.env("MCP_TOKEN_STORE", value);
            }
        });
        assert_eq!(
            run.code, code,
            "{args:?} {var:?}: {}{}",
            run.stdout, run.stderr
        );
        if code == 0 {
            assert!(run.stdout.contains("remote"), "{}", run.stdout);
        } else {
            assert!(
                run.stderr.contains(REFUSED),
                "{args:?} {var:?}: {}",
                run.stderr
            );
        }
    }
    // Nothing was written where the file store keeps tokens.
    assert!(!tree.path("home/.mcp-cli/credentials").exists());
}

#[test]
fn an_unknown_store_is_a_usage_error() {
    let tree = tree();
    let run = tree.run(&["--token-store", "keychain", "auth-status"]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("invalid value 'keychain' for '--token-store <STORE>'"),
        "{}",
        run.stderr
    );
    let run = tree.run_with(&["auth-status"], |command| {
        command.env("MCP_TOKEN_STORE", "keychain");
    });
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stderr
            .contains("error: MCP_TOKEN_STORE=keychain: expected `file` or `secret-store`"),
        "{}",
        run.stderr
    );
}
