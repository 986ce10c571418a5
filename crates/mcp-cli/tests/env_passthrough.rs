//! `envPassthrough` through the config verbs (issue 16 item 3): written by
//! `add-json`, kept by `disable`/`enable`, shown by `get` (names only),
//! and a refused name refused before anything is written.

mod support;

use support::{Tree, check};

#[test]
fn env_passthrough_is_written_kept_and_shown_and_refused_names_are_refused() {
    let tree = Tree::new("empty");
    let entry = r#"{"command":"srv","envPassthrough":["AWS_PROFILE","KUBECONFIG"]}"#;
    check(&tree, &["add-json", "k8s", entry, "--scope", "user"], 0);
    check(&tree, &["disable", "k8s", "--scope", "user"], 0);
    check(&tree, &["enable", "k8s", "--scope", "user"], 0);
    let file: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    assert_eq!(
        file["mcpServers"]["k8s"]["envPassthrough"],
        serde_json::json!(["AWS_PROFILE", "KUBECONFIG"])
    );

    let run = tree.run_with(&["get", "k8s"], |command| {
        command.env("AWS_PROFILE", "aws-profile-value");
    });
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("  envPassthrough  AWS_PROFILE, KUBECONFIG\n"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("aws-profile-value"), "{}", run.stdout);
    let json = check(&tree, &["--json", "get", "k8s"], 0).json();
    assert_eq!(
        json["config"]["transport"]["envPassthrough"],
        serde_json::json!(["AWS_PROFILE", "KUBECONFIG"])
    );

    let before = tree.snapshot_files();
    let run = check(
        &tree,
        &[
            "add-json",
            "evil",
            r#"{"command":"srv","envPassthrough":["LD_PRELOAD"]}"#,
            "--scope",
            "user",
        ],
        2,
    );
    assert!(
        run.stderr.contains("`envPassthrough` names `LD_PRELOAD`"),
        "{}",
        run.stderr
    );
    assert_eq!(tree.snapshot_files(), before, "a refusal changed a file");
}
