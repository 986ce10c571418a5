//! What a stdio child inherits, and what a silent one's timeout says
//! (issue 16 item 3), with real child processes.
//!
//! The proxy, trust-store and `XDG_*` variables of the host reach the
//! child; `envPassthrough` adds the names an entry lists; a refused key
//! never arrives, whichever list names it, and no other host variable
//! does. A server that hangs in `initialize` without writing a byte on
//! stderr times out with a note naming the proxy and CA variables it was
//! given (names, never values).

#![allow(clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_config::{LoadOptions, ServerConfig, StdioConfig, Timeouts, TransportConfig, load};
use mcp_integration_tests::harness::{StdioHarness, entry, test_env};
use mcp_integration_tests::server::ServerOptions;
use mcp_transport::{ConnectOptions, TransportErrorKind, connect};
use serde_json::{Value, json};

const ARGV_REPORT: &str = env!("CARGO_BIN_EXE_mcp-argv-report");
const EXAMPLE: &str = env!("CARGO_BIN_EXE_mcp-example-server");

/// A proxy url with credentials in it: its value must never be shown.
const PROXY: &str = "http://user:pr0xy-pass@proxy.test:3128";

fn stdio(name: &str, command: &str, args: &[&str], passthrough: &[&str]) -> ServerConfig {
    entry(
        name,
        TransportConfig::Stdio(
            StdioConfig::new(command.to_owned())
                .with_args(args.iter().map(|a| (*a).to_owned()))
                .with_env_passthrough(passthrough.iter().map(|n| (*n).to_owned())),
        ),
        Timeouts::default().with_connect(Duration::from_secs(10)),
    )
}

/// The host's environment: network and XDG variables, a secret, a refused
/// key and the variables the entries ask for.
fn host_env() -> BTreeMap<String, String> {
    let mut env = test_env();
    for (key, value) in [
        ("HTTPS_PROXY", PROXY),
        ("no_proxy", "localhost,.internal"),
        ("NODE_EXTRA_CA_CERTS", "/etc/corp/ca.pem"),
        ("SSL_CERT_FILE", "/etc/corp/bundle.pem"),
        ("XDG_CACHE_HOME", "/home/u/.cache"),
        ("XDG_CONFIG_HOME", "/home/u/.config"),
        ("AWS_PROFILE", "aws-profile-value"),
        ("KUBECONFIG", "/home/u/.kube/config"),
        ("HOST_SECRET_TOKEN", "host-secret-value"),
        ("LD_PRELOAD", "/nonexistent/evil.so"),
        ("NODE_OPTIONS", "--require /nonexistent/evil.js"),
    ] {
        env.insert(key.to_owned(), value.to_owned());
    }
    env
}

fn read_report(path: &Path) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("no report at {}: {e}", path.display()));
    let value: Value = serde_json::from_str(&text).unwrap();
    serde_json::from_value(value["env"].clone()).unwrap()
}

/// One child: which host variables it must and must not have received.
#[track_caller]
fn check(child: &BTreeMap<String, String>, via: &str, present: &[&str], absent: &[&str]) {
    let host = host_env();
    for key in present {
        assert_eq!(child.get(*key), host.get(*key), "{via}: `{key}`");
    }
    for key in absent {
        assert!(
            !child.contains_key(*key),
            "{via}: `{key}` reached the child"
        );
    }
}

#[tokio::test]
async fn network_xdg_and_passthrough_variables_reach_a_child_and_refused_keys_never_do() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("report.json");
    let report_text = report.display().to_string();
    let listed = [
        "AWS_PROFILE",
        "LD_PRELOAD",
        "NODE_OPTIONS",
        "XDG_CONFIG_HOME",
    ];

    // Built by hand, refused names in the list and all ...
    let by_hand = stdio("by-hand", ARGV_REPORT, &[&report_text], &listed);
    // ... and read from a config file, where each refused name is an error.
    let home = dir.path().join("home");
    std::fs::create_dir_all(&home).unwrap();
    let file = json!({"mcpServers": {"from-file": {
        "command": ARGV_REPORT, "args": [report_text], "envPassthrough": listed,
    }}});
    std::fs::write(home.join(".claude.json"), file.to_string()).unwrap();
    let config = load(&LoadOptions::default().with_home(home));
    let errors: Vec<&str> = config
        .diagnostics
        .iter()
        .filter(|d| d.level == mcp_config::Level::Error)
        .map(|d| d.message.as_str())
        .collect();
    assert_eq!(errors.len(), 3, "{:#?}", config.diagnostics);
    for name in ["LD_PRELOAD", "NODE_OPTIONS", "XDG_CONFIG_HOME"] {
        assert!(errors.iter().any(|m| m.contains(name)), "{errors:?}");
    }
    let from_file = config.server("from-file").unwrap().config.clone();

    let options = ConnectOptions::default().with_env(host_env());
    for server in [by_hand, from_file] {
        let _ = std::fs::remove_file(&report);
        // The reporter is no MCP server: the handshake fails after it wrote.
        assert!(connect(&server, &options).await.is_err());
        let child = read_report(&report);
        check(
            &child,
            &server.name,
            &[
                "PATH",
                "HTTPS_PROXY",
                "no_proxy",
                "NODE_EXTRA_CA_CERTS",
                "SSL_CERT_FILE",
                "XDG_CACHE_HOME",
                "AWS_PROFILE",
            ],
            &[
                "KUBECONFIG",
                "HOST_SECRET_TOKEN",
                "LD_PRELOAD",
                "NODE_OPTIONS",
                "XDG_CONFIG_HOME",
            ],
        );
    }
}

/// Connects `server` with `env` and returns the connect timeout's message
/// and hint.
async fn timed_out(
    server: &ServerConfig,
    env: BTreeMap<String, String>,
) -> (String, Option<String>) {
    let options = ConnectOptions::default().with_env(env);
    let started = Instant::now();
    let error = connect(server, &options).await.unwrap_err();
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "{:?}",
        started.elapsed()
    );
    let TransportErrorKind::ConnectTimeout { hint, .. } = error.kind() else {
        panic!("unexpected error: {error}");
    };
    (error.to_string(), hint.clone())
}

#[tokio::test]
async fn a_silent_timeout_names_the_network_variables_and_never_their_values() {
    // `sleep` is a real child that never answers and never writes.
    let mut silent = stdio("silent", "sleep", &["30"], &["KUBECONFIG", "GH_HOST"]);
    silent.timeouts.connect = Duration::from_millis(500);

    let (message, hint) = timed_out(&silent, host_env()).await;
    let hint = hint.unwrap_or_else(|| panic!("no hint: {message}"));
    assert!(
        message.starts_with(
            "silent: connect timed out after 500ms; the server wrote nothing on stderr;"
        ),
        "{message}"
    );
    assert!(message.ends_with(&hint), "{message}");
    for name in [
        "HTTPS_PROXY",
        "no_proxy",
        "NODE_EXTRA_CA_CERTS",
        "SSL_CERT_FILE",
    ] {
        assert!(hint.contains(name), "{hint}");
    }
    // A listed name the host does not have is named too.
    assert!(
        hint.contains("`envPassthrough` names GH_HOST, not set here"),
        "{hint}"
    );
    assert!(hint.contains("envPassthrough"), "{hint}");
    for value in host_env().values() {
        assert!(
            !message.contains(value.as_str()),
            "a value is shown: {message}"
        );
    }

    // No network variable set: the note says so.
    let (_, hint) = timed_out(&silent, test_env()).await;
    let hint = hint.unwrap();
    assert!(
        hint.contains("a proxy or CA variable may be missing"),
        "{hint}"
    );
    assert!(hint.contains("none of HTTPS_PROXY"), "{hint}");

    // A server that wrote on stderr gets its stderr, not the note.
    let mut talking = StdioHarness::new(EXAMPLE).config(
        &ServerOptions {
            never_answer_initialize: true,
            ..ServerOptions::default()
        },
        Timeouts::default(),
    );
    talking.timeouts.connect = Duration::from_millis(500);
    let (message, hint) = timed_out(&talking, host_env()).await;
    assert_eq!(hint, None, "{message}");
    assert!(message.contains("stderr: "), "{message}");
    assert!(!message.contains("wrote nothing"), "{message}");
}
