//! Two processes refresh the same rotating refresh token at once. The file
//! store's lock serialises them and the second re-reads the store, so
//! exactly one refresh request reaches the authorization server and both
//! processes end with the same valid token.
//!
//! The processes are this test run again with `MCP_OAUTH_RACE_CHILD` set:
//! it then plays one racing process instead of the server. One test does
//! both jobs, so no test can pass without doing its work.

use std::collections::HashSet;
use std::path::PathBuf;
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use axum::extract::{Form, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Json};
use axum::routing::post;
use mcp_config::McpOAuthConfig;
use mcp_oauth::{
    AuthProvider, ClientRegistration, CredentialStore, FileCredentialStore, HeadlessPrompt,
    OAuthProvider, OAuthSettings, Secret, StoreKey, StoredCredentials, TokenSet,
};
use serde_json::json;

const CHILD_ENV: &str = "MCP_OAUTH_RACE_CHILD";

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
    if std::env::var_os(CHILD_ENV).is_some() {
        race_as_child().await;
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
    let store = FileCredentialStore::new(dir.path());
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
                }),
                dpop_key: None,
            },
        )
        .unwrap();

    let exe = std::env::current_exe().unwrap();
    let children: Vec<_> = (0..2)
        .map(|i| {
            Command::new(&exe)
                .args([
                    "--exact",
                    "two_processes_refresh_a_rotating_token_once",
                    "--nocapture",
                ])
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
}

/// One of the racing processes: the test run again as a child.
#[allow(clippy::unwrap_used, clippy::expect_used)] // test code, outside the `#[test]` function
async fn race_as_child() {
    let dir = PathBuf::from(std::env::var_os("RACE_DIR").unwrap());
    let url = std::env::var("RACE_URL").unwrap();
    let provider = OAuthProvider::new(
        settings(&url),
        Arc::new(FileCredentialStore::new(dir)),
        Arc::new(HeadlessPrompt::new().unwrap()),
    )
    .unwrap();
    let header = provider.authorization().await.unwrap().expect("a token");
    std::fs::write(std::env::var_os("RACE_OUT").unwrap(), header).unwrap();
}
