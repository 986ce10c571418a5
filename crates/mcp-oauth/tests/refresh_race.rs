//! Two processes refresh the same rotating refresh token at once. The
//! store's lock serialises them and the second re-reads the store, so
//! exactly one refresh request reaches the authorization server and both
//! processes end with the same valid token. Run once with the file store
//! and once with the secret store, whose lock is the same lock file and
//! whose values here sit in a secret store both processes share
//! (`SharedFileSecrets`, test support standing in for the OS store: what
//! is checked is the credential store's lock and re-read, not an OS
//! store).
//!
//! The processes are this test run again with `MCP_OAUTH_RACE_CHILD` set:
//! it then plays one racing process instead of the server. One test does
//! both jobs, so no test can pass without doing its work.

// Test code: the racing children and the shared store support sit outside
// the `#[test]` functions, and a failure there must fail the test.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json};
use axum::routing::post;
use mcp_config::EditError;
use mcp_config::McpOAuthConfig;
use mcp_config::secret::{SecretName, SecretStore, SecretValue};
use mcp_oauth::{
    AuthProvider, ClientRegistration, CredentialStore, FileCredentialStore, HeadlessPrompt,
    OAuthProvider, OAuthSettings, Secret, SecretCredentialStore, StoreKey, StoredCredentials,
    TokenSet,
};
use serde_json::json;

const CHILD_ENV: &str = "MCP_OAUTH_RACE_CHILD";

/// Test support: a secret store two processes share, one file per secret
/// in a folder, replaced atomically. It stands in for the OS store, which
/// is shared across processes too; it has no lock of its own. A file
/// system failure fails the test (it panics).
#[derive(Debug)]
struct SharedFileSecrets {
    dir: PathBuf,
}

impl SecretStore for SharedFileSecrets {
    fn kind(&self) -> &'static str {
        "test files"
    }

    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError> {
        match std::fs::read_to_string(self.dir.join(name.as_str())) {
            Ok(text) => Ok(Some(SecretValue::new(text))),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
            Err(e) => panic!("test secret {name}: {e}"),
        }
    }

    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError> {
        let tmp = self
            .dir
            .join(format!(".{}.{}", name.as_str(), std::process::id()));
        std::fs::write(&tmp, value.expose()).unwrap();
        std::fs::rename(&tmp, self.dir.join(name.as_str())).unwrap();
        Ok(())
    }

    fn remove(&self, name: &SecretName) -> Result<bool, EditError> {
        match std::fs::remove_file(self.dir.join(name.as_str())) {
            Ok(()) => Ok(true),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => panic!("test secret {name}: {e}"),
        }
    }

    fn names(&self) -> Result<Vec<SecretName>, EditError> {
        let mut names = Vec::new();
        for entry in std::fs::read_dir(&self.dir).unwrap() {
            let file = entry.unwrap().file_name();
            if let Ok(name) = SecretName::new(&file.to_string_lossy()) {
                names.push(name);
            }
        }
        names.sort();
        Ok(names)
    }
}

/// The store a racing process uses over `dir`: `file`, or `secret` (values
/// in `dir/secrets`, lock files in `dir/locks`).
fn store_of(kind: &str, dir: &std::path::Path) -> Arc<dyn CredentialStore> {
    match kind {
        "file" => Arc::new(FileCredentialStore::new(dir)),
        "secret" => {
            let secrets = dir.join("secrets");
            std::fs::create_dir_all(&secrets).unwrap();
            Arc::new(SecretCredentialStore::new(
                Arc::new(SharedFileSecrets { dir: secrets }),
                dir.join("locks"),
            ))
        }
        other => panic!("no store kind {other}"),
    }
}

#[derive(Default)]
struct Server {
    refresh_requests: usize,
    live_refresh: HashSet<String>,
    live_access: HashSet<String>,
}

async fn token(
    State(server): State<Arc<Mutex<Server>>>,
    Form(form): Form<std::collections::HashMap<String, String>>,
) -> axum::response::Response {
    // Widen the window in which a second, unserialised refresh would land.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let mut s = server.lock().unwrap_or_else(|p| p.into_inner());
    s.refresh_requests += 1;
    let presented = form.get("refresh_token").cloned().unwrap_or_default();
    if form.get("grant_type").map(String::as_str) != Some("refresh_token")
        || !s.live_refresh.remove(&presented)
    {
        return (
            StatusCode::BAD_REQUEST,
            Json(json!({"error": "invalid_grant"})),
        )
            .into_response();
    }
    let n = s.refresh_requests;
    let (access, refresh) = (format!("access-{n}"), format!("refresh-{n}"));
    s.live_access.clear();
    s.live_access.insert(access.clone());
    s.live_refresh.insert(refresh.clone());
    Json(json!({
        "access_token": access,
        "refresh_token": refresh,
        "token_type": "Bearer",
        "expires_in": 3600
    }))
    .into_response()
}

fn key(url: &str) -> StoreKey {
    StoreKey::new("race", url)
}

fn settings(url: &str) -> OAuthSettings {
    OAuthSettings::new("race", url, McpOAuthConfig::default())
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_refresh_a_rotating_token_once() {
    race("file", "two_processes_refresh_a_rotating_token_once").await;
}

#[tokio::test(flavor = "multi_thread")]
async fn two_processes_sharing_a_secret_store_refresh_once() {
    race(
        "secret",
        "two_processes_sharing_a_secret_store_refresh_once",
    )
    .await;
}

/// The server and two racing children over a `kind` store; in a child, one
/// racing process.
async fn race(kind: &str, test: &str) {
    if std::env::var_os(CHILD_ENV).is_some() {
        race_as_child(kind).await;
        return;
    }
    let server = Arc::new(Mutex::new(Server::default()));
    server
        .lock()
        .unwrap()
        .live_refresh
        .insert("refresh-0".into());
    let app = axum::Router::new()
        .route("/token", post(token))
        .with_state(server.clone());
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    tokio::spawn(async move { axum::serve(listener, app).await });

    let dir = tempfile::tempdir().unwrap();
    let url = format!("{base}/mcp");
    let store = store_of(kind, dir.path());
    store
        .save(
            &key(&url),
            &StoredCredentials {
                issuer: Some(base.clone()),
                token_endpoint: Some(format!("{base}/token")),
                resource: Some(url.clone()),
                client: Some(ClientRegistration {
                    client_id: "client-1".into(),
                    client_secret: None,
                    token_endpoint_auth_method: "none".into(),
                    redirect_uri: None,
                }),
                tokens: Some(TokenSet {
                    access_token: Secret::new("access-0"),
                    refresh_token: Some(Secret::new("refresh-0")),
                    expires_at: Some(1),
                    scope: None,
                    lifetime: None,
                }),
                ..StoredCredentials::default()
            },
        )
        .unwrap();

    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|i| {
            Command::new(&exe)
                .args(["--exact", test, "--nocapture"])
                .env(CHILD_ENV, "1")
                .env("RACE_DIR", dir.path())
                .env("RACE_URL", &url)
                .env("RACE_OUT", dir.path().join(format!("out-{i}")))
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap()
        })
        .collect();
    for mut child in children {
        let status = tokio::task::spawn_blocking(move || child.wait().unwrap())
            .await
            .unwrap();
        assert!(status.success(), "child process failed: {status}");
    }

    let s = server.lock().unwrap();
    assert_eq!(
        s.refresh_requests, 1,
        "exactly one refresh reached the server"
    );
    let outs: Vec<String> = (0..2)
        .map(|i| std::fs::read_to_string(dir.path().join(format!("out-{i}"))).unwrap())
        .collect();
    for out in &outs {
        let token = out.strip_prefix("Bearer ").expect("a bearer header");
        assert!(
            s.live_access.contains(token),
            "{token} is valid at the server"
        );
    }
    assert_eq!(outs[0], outs[1]);
    let stored = store.load(&key(&url)).unwrap().unwrap().tokens.unwrap();
    assert_eq!(stored.access_token.expose(), "access-1");
    assert_eq!(
        stored.refresh_token.as_ref().map(Secret::expose),
        Some("refresh-1")
    );
    if kind == "secret" {
        // The tokens live in the secret store only; the folder the lock
        // files are in holds nothing else.
        let locks: Vec<String> = std::fs::read_dir(dir.path().join("locks"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(locks, [format!("{}.lock", key(&url).file_stem())]);
    }
}

/// One of the racing processes: the test run again as a child.
async fn race_as_child(kind: &str) {
    let dir = PathBuf::from(std::env::var_os("RACE_DIR").unwrap());
    let url = std::env::var("RACE_URL").unwrap();
    let provider = OAuthProvider::new(
        settings(&url),
        store_of(kind, &dir),
        Arc::new(HeadlessPrompt::new().unwrap()),
    )
    .unwrap();
    let header = provider.authorization().await.unwrap().expect("a token");
    std::fs::write(std::env::var_os("RACE_OUT").unwrap(), header).unwrap();
}
