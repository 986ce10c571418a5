//! End-to-end tests of `import --from HOST` and of the other-hosts hint of
//! `list` and `check-config`, run as the built binary against temporary
//! home and project folders.

mod support;

use mcp_config::secret::SecretStore as _;
use support::{Tree, check};

const CODEX: &str = r#"model = "gpt-5-codex"

[mcp_servers.docs]
command = "docs-server"
args = ["--stdio"]
env = { DOCS_TOKEN = "docs-secret-value" }
env_vars = ["HTTPS_PROXY"]
startup_timeout_sec = 20
tool_timeout_sec = 90
enabled_tools = ["search"]

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"
http_headers = { "X-Team" = "team-secret-value" }
experimental_flag = true

[mcp_servers."bad\u001bname"]
command = "x"
"#;

const VSCODE: &str = r#"{
  // asked when the server starts
  "inputs": [{"type": "promptString", "id": "api-key", "description": "API key", "password": true}],
  "servers": {
    "search": {
      "type": "http",
      "url": "https://search.example.com/mcp",
      "headers": {"Authorization": "Bearer ${input:api-key}"}
    },
    "local": {"command": "node", "args": ["${workspaceFolder}/server.js"], "env": {"HOME_DIR": "${env:HOME}"}}
  }
}"#;

fn tree() -> Tree {
    let tree = Tree::new("import-empty");
    tree.write("home/.codex/config.toml", CODEX);
    tree.write("project/.vscode/mcp.json", VSCODE);
    tree
}

#[test]
fn dry_run_json_shows_what_would_be_written_without_secrets() {
    let tree = tree();
    let before = tree.snapshot_files();
    let run = check(
        &tree,
        &["import", "--from", "codex", "--dry-run", "--json"],
        1,
    );
    assert!(!run.stdout.contains("secret-value"), "{}", run.stdout);
    insta::assert_json_snapshot!(run.json());
    let run = check(
        &tree,
        &["import", "--from", "vscode", "--dry-run", "--json"],
        0,
    );
    insta::assert_json_snapshot!(run.json());
    assert_eq!(tree.snapshot_files(), before, "a dry run wrote a file");
}

#[test]
fn import_writes_and_list_shows_the_servers() {
    let tree = tree();
    let run = check(&tree, &["import", "--from", "codex"], 1);
    assert!(
        run.stdout.contains("added stdio server `docs`"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout
            .contains("not translated: experimental_flag (config.toml:16:1)"),
        "{}",
        run.stdout
    );
    // The entry that could not be imported is named, with its position.
    assert!(
        run.stderr
            .contains("config.toml:18:14: error: server `bad\\u{1b}name`"),
        "{}",
        run.stderr
    );
    assert!(!run.stdout.contains("secret-value") && !run.stderr.contains("secret-value"));
    let written: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    assert_eq!(
        written["mcpServers"]["docs"]["env"]["DOCS_TOKEN"],
        "docs-secret-value"
    );
    assert_eq!(
        written["mcpServers"]["figma"]["headers"]["Authorization"],
        "Bearer ${FIGMA_TOKEN}"
    );
    let run = check(&tree, &["list"], 0);
    assert!(run.stdout.contains("docs "), "{}", run.stdout);
    assert!(run.stdout.contains("figma "), "{}", run.stdout);

    // A second import refuses the names it finds, and writes nothing.
    let before = tree.snapshot_files();
    let run = check(&tree, &["import", "--from", "codex"], 1);
    assert!(
        run.stderr
            .contains("`docs` (user), `figma` (user) already exist"),
        "{}",
        run.stderr
    );
    assert_eq!(tree.snapshot_files(), before);
    check(&tree, &["import", "--from", "codex", "--force", "docs"], 0);
}

/// A VS Code file whose one input is not a password.
const VSCODE_PLAIN: &str = r#"{
  "inputs": [{"type": "promptString", "id": "region", "description": "Region"}],
  "servers": {
    "local": {"command": "node", "args": ["${workspaceFolder}/server.js", "--region", "${input:region}"], "env": {"HOME_DIR": "${env:HOME}"}}
  }
}"#;

#[test]
fn inputs_are_asked_for_or_refused() {
    let tree = tree();
    tree.write("project/plain.json", VSCODE_PLAIN);
    let before = tree.snapshot_files();
    let plain = ["import", "--from", "vscode", "--file", "plain.json"];
    let run = check(&tree, &plain, 1);
    assert!(
        run.stderr.contains(
            "input `region` (Region) needs a value; nothing written (pass --input region=VALUE)"
        ),
        "{}",
        run.stderr
    );
    assert_eq!(tree.snapshot_files(), before);
    let given = [&plain[..], &["--scope", "local", "--input", "region=eu-1"]].concat();
    check(&tree, &given, 0);
    // A local entry: its variables resolved, the input filled.
    let written: serde_json::Value =
        serde_json::from_str(&tree.read("home/.claude.json")).expect("json");
    let project = tree.path("project").display().to_string();
    let local = &written["projects"][project.as_str()]["mcpServers"];
    assert_eq!(local["local"]["args"][0], format!("{project}/server.js"));
    assert_eq!(local["local"]["args"][2], "eu-1");
    assert_eq!(local["local"]["env"]["HOME_DIR"], "${HOME}");
}

/// A password input is never written in clear: it goes to the secret
/// store as a reference: a store that cannot be opened refuses the import
/// (whether the value was given or not) and writes nothing; one that opens
/// holds the value, and the entry names it.
#[test]
fn a_password_input_is_never_written_in_clear() {
    let tree = tree();
    let before = tree.snapshot_files();
    // A store that cannot be opened: refused, nothing written.
    for args in [
        &[
            "--secret-store",
            "secret-service",
            "import",
            "--from",
            "vscode",
        ][..],
        &[
            "--secret-store",
            "secret-service",
            "import",
            "--from",
            "vscode",
            "--input",
            "api-key=k3y-value",
        ],
    ] {
        let run = tree.run_with(args, |command| {
            command.env("DBUS_SESSION_BUS_ADDRESS", "unix:path=/nonexistent");
        });
        assert_eq!(run.code, 1, "{}{}", run.stdout, run.stderr);
        assert!(!run.stdout.contains("k3y-value") && !run.stderr.contains("k3y-value"));
        assert_eq!(tree.snapshot_files(), before, "{}", run.stderr);
    }
    // A store that opens (a kernel-keyring namespace of this test's own):
    // the value goes there, the entry refers to it.
    let namespace = format!("mcp-cli-test-import-{}", std::process::id());
    let store = mcp_config::secret::OsSecretStore::open_in(
        mcp_config::secret::SecretBackend::KernelKeyring,
        &namespace,
    )
    .unwrap();
    let run = check(
        &tree,
        &[
            "--secret-store",
            "kernel-keyring",
            "--secret-namespace",
            &namespace,
            "import",
            "--from",
            "vscode",
            "--input",
            "api-key=k3y-value",
        ],
        0,
    );
    let held = mcp_config::secret::SecretName::new("vscode.api-key").unwrap();
    let value = store
        .get(&held)
        .unwrap()
        .map(|value| value.expose().to_owned());
    let _ = store.remove(&held);
    assert_eq!(value.as_deref(), Some("k3y-value"), "{}", run.stdout);
    assert!(!run.stdout.contains("k3y-value") && !run.stderr.contains("k3y-value"));
    let written: String = tree
        .snapshot_files()
        .into_iter()
        .map(|(_, bytes)| String::from_utf8_lossy(&bytes).into_owned())
        .collect::<Vec<_>>()
        .join("\n");
    assert!(!written.contains("k3y-value"), "{written}");
    assert!(written.contains("${secret:vscode.api-key}"), "{written}");
}

#[test]
fn list_and_check_config_name_other_hosts_files() {
    let tree = tree();
    let run = check(&tree, &["list"], 0);
    assert!(
        run.stdout.contains(
            "no servers configured\nfound servers in other hosts' files:\n  VS Code [ROOT]/project/.vscode/mcp.json (2 servers) — import with `mcp-cli import --from vscode`\n  Codex ~/.codex/config.toml (2 servers) — import with `mcp-cli import --from codex`\n"
        ),
        "{}",
        run.stdout
    );
    let run = check(&tree, &["check-config"], 0);
    assert!(
        run.stdout
            .contains("import with `mcp-cli import --from codex`"),
        "{}",
        run.stdout
    );
    let run = check(&tree, &["--json", "list"], 0);
    assert_eq!(run.json()["otherHosts"][1]["host"], "codex");
    assert_eq!(run.json()["otherHosts"][1]["servers"], 2);
}

#[test]
fn a_malformed_file_is_reported_at_its_position() {
    let tree = Tree::new("import-empty");
    tree.write(
        "home/.config/goose/config.yaml",
        "extensions:\n  a: [1, 2\n",
    );
    let run = check(&tree, &["import", "--from", "goose", "--dry-run"], 1);
    assert!(
        run.stderr.contains("config.yaml:3:1: error: invalid YAML"),
        "{}",
        run.stderr
    );
    let run = check(&tree, &["import", "--from", "zed"], 1);
    assert!(
        run.stderr.contains("error: no Zed config file found"),
        "{}",
        run.stderr
    );
}
