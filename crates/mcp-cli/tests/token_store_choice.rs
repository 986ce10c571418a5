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

/// The secret store is chosen the same way: the flag, else
/// `MCP_SECRET_STORE` and `MCP_SECRET_NAMESPACE` from the environment;
/// a variable naming no store or no namespace is a usage error naming it,
/// and the variable's choice is the one used (a Secret Service on a bus
/// that is not there cannot be opened; the flag wins over it).
#[test]
fn the_secret_store_is_a_flag_or_a_variable() {
    let tree = tree();
    let namespace = format!("mcp-cli-test-choice-{}", std::process::id());
    // (arguments, MCP_SECRET_STORE, MCP_SECRET_NAMESPACE, status, expected)
    for (args, store, space, code, expected) in [
        (
            &["secret", "list"][..],
            Some("bogus"),
            None,
            2,
            "error: MCP_SECRET_STORE: unknown secret store `bogus`",
        ),
        (
            &["secret", "list"],
            None,
            Some("a/b"),
            2,
            "error: MCP_SECRET_NAMESPACE: not a namespace",
        ),
        (
            &["secret", "list"],
            Some("secret-service"),
            None,
            1,
            "the Secret Service: cannot be opened",
        ),
        (
            &["--secret-store", "kernel-keyring", "secret", "list"],
            Some("secret-service"),
            Some(namespace.as_str()),
            0,
            "0 secret(s) in the kernel keyring",
        ),
        (
            &["secret", "list"],
            Some("kernel-keyring"),
            Some(namespace.as_str()),
            0,
            "0 secret(s) in the kernel keyring",
        ),
    ] {
        let run = tree.run_with(args, |command| {
            command.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent");
            if let Some(store) = store {
                command.env("MCP_SECRET_STORE", store);
            }
            if let Some(space) = space {
                command.env("MCP_SECRET_NAMESPACE", space);
            }
        });
        assert_eq!(
            run.code, code,
            "{args:?} {store:?}: {}{}",
            run.stdout, run.stderr
        );
        assert!(
            run.stdout.contains(expected) || run.stderr.contains(expected),
            "{args:?} {store:?}: {}{}",
            run.stdout,
            run.stderr
        );
    }
}
