//! `connect()` puts `${secret:NAME}` in from `ConnectOptions::secrets`
//! before anything is opened: no store, a missing secret and a held one,
//! through one `check` helper. No error shows a value.

// Test helpers outside `#[test]` functions unwrap too.
#![allow(clippy::unwrap_used)]

use std::sync::Arc;

use mcp_config::secret::{MemorySecretStore, SecretName, SecretStore, SecretValue};
use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::{ConnectOptions, TransportErrorKind, connect};

const VALUE: &str = "v4lue-that-never-shows";

fn stdio(env: &str) -> ServerConfig {
    let mut stdio = StdioConfig::new("/nonexistent/mcp-secret-test-server");
    stdio.env.insert("K".into(), env.into());
    ServerConfig::new("srv", TransportConfig::Stdio(stdio))
}

fn http(header: &str) -> ServerConfig {
    // Port 9 on loopback: nothing answers, the connect fails fast.
    let remote = RemoteConfig::new("http://127.0.0.1:9/mcp")
        .with_headers([("X-Key".to_owned(), header.to_owned())]);
    ServerConfig::new("srv", TransportConfig::Http(remote))
}

/// Connects `config` with `store` and expects the failure `kind` names,
/// with each of `parts` in its message and no value anywhere.
async fn check(
    config: ServerConfig,
    store: Option<&Arc<MemorySecretStore>>,
    kind: &str,
    parts: &[&str],
) {
    let mut options = ConnectOptions::default();
    if let Some(store) = store {
        options = options.with_secrets(store.clone());
    }
    let error = connect(&config, &options).await.err().unwrap();
    let got = match error.kind() {
        TransportErrorKind::NoSecretStore { .. } => "no store",
        TransportErrorKind::Secret { .. } => "secret",
        TransportErrorKind::Spawn { .. } => "spawn",
        TransportErrorKind::Http { .. }
        | TransportErrorKind::Io { .. }
        | TransportErrorKind::ConnectionLost { .. } => "http",
        other => panic!("{other:?}"),
    };
    assert_eq!(got, kind, "{error}");
    let shown = format!("{error} {error:?} {options:?}");
    for part in parts {
        assert!(shown.contains(part), "{shown} lacks {part}");
    }
    assert!(!shown.contains(VALUE), "{shown}");
}

#[tokio::test]
async fn secrets_are_put_in_before_the_transport_opens() {
    let store = Arc::new(MemorySecretStore::new());
    store
        .set(&SecretName::new("api").unwrap(), &SecretValue::new(VALUE))
        .unwrap();
    // No store: the first secret the entry names, and the server.
    check(stdio("${secret:api}"), None, "no store", &["`api`", "srv"]).await;
    check(
        http("Bearer ${secret:api}"),
        None,
        "no store",
        &["`api`", "srv"],
    )
    .await;
    // A secret the store does not hold.
    check(
        stdio("${secret:gone}"),
        Some(&store),
        "secret",
        &["`gone`", "`srv`", "memory"],
    )
    .await;
    check(
        http("${secret:gone}"),
        Some(&store),
        "secret",
        &["`gone`", "`srv`"],
    )
    .await;
    // Held: resolution passes and the transport is what fails.
    check(stdio("${secret:api}"), Some(&store), "spawn", &["srv"]).await;
    check(http("${secret:api}"), Some(&store), "http", &["srv"]).await;
    // No reference: no store needed.
    check(stdio("plain"), None, "spawn", &["srv"]).await;
}
