//! `--token-store` and `MCP_TOKEN_STORE`: `file` is the default (every
//! other OAuth test runs with it); `secret-store` keeps tokens in the
//! run's secret store (here a kernel-keyring namespace of the test's own),
//! and a secret store that cannot be opened (the Secret Service on a bus
//! that is not there) fails every verb that needs tokens, naming the
//! store: tokens never fall back to a file.

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

const REFUSED: &str = "the Secret Service: cannot be opened";

/// The secret store options of a row: a Secret Service that cannot be
/// reached, or a kernel-keyring namespace no one else uses.
fn store_args(reachable: bool) -> Vec<String> {
    if reachable {
        let namespace = format!("mcp-cli-test-tokens-{}", std::process::id());
        vec![
            "--secret-store".into(),
            "kernel-keyring".into(),
            "--secret-namespace".into(),
            namespace,
        ]
    } else {
        vec!["--secret-store".into(), "secret-service".into()]
    }
}

#[test]
fn the_choice_is_a_flag_or_a_variable_and_file_is_the_default() {
    let tree = tree();
    // (arguments, MCP_TOKEN_STORE, whether the secret store opens, status)
    for (args, var, reachable, code) in [
        (&["auth-status"][..], None, false, 0),
        (&["--token-store", "file", "auth-status"], None, false, 0),
        (&["auth-status"], Some("file"), false, 0),
        (
            &["--token-store", "secret-store", "auth-status"],
            None,
            false,
            1,
        ),
        (&["auth-status"], Some("secret-store"), false, 1),
        (
            &["--token-store", "secret-store", "logout", "remote"],
            None,
            false,
            1,
        ),
        (
            &["login", "remote", "--no-browser"],
            Some("secret-store"),
            false,
            1,
        ),
        // The flag wins over the variable.
        (
            &["--token-store", "file", "auth-status"],
            Some("secret-store"),
            false,
            0,
        ),
        // A store that opens holds no tokens yet.
        (
            &["--token-store", "secret-store", "auth-status"],
            None,
            true,
            0,
        ),
    ] {
        let mut full = store_args(reachable);
        full.extend(args.iter().map(|arg| (*arg).to_owned()));
        let full: Vec<&str> = full.iter().map(String::as_str).collect();
        let run = tree.run_with(&full, |command| {
            command.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent");
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
            // auth-status reports it on the server's row, other verbs as
            // their error.
            assert!(
                run.stderr.contains(REFUSED) || run.stdout.contains(REFUSED),
                "{args:?} {var:?}: {}{}",
                run.stdout,
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
