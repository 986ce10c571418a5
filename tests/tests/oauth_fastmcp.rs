//! OAuth end to end against a real authorization server no one on this
//! project wrote: a Python `fastmcp` server with its `InMemoryOAuthProvider`
//! (dynamic registration, PKCE S256, rotating refresh tokens), reached
//! through the streamable HTTP transport with `mcp_oauth::OAuthProvider` as
//! its auth provider: login, tool call, real expiry, refresh, logout.
//!
//! The peer comes from `cargo xtask peers` (`.peers/venv`). The test is
//! ignored by a plain `cargo test`; run with `-- --include-ignored`, a
//! missing peer fails it with the command that installs the peers.

#![allow(clippy::unwrap_used, clippy::print_stderr, clippy::expect_used)]

use std::sync::Arc;
use std::time::Duration;

use mcp_config::McpOAuthConfig;
use mcp_oauth::{
    AuthProvider, CredentialStore, FileCredentialStore, InteractivePrompt, OAuthProvider,
    OAuthSettings,
};
use mcp_transport::HttpOptions;
use mcp_transport::kinds::StreamableHttpTransport;
use mcp_transport::{ClientSession, SessionOptions};
use serde_json::{Value, json};

use mcp_test_peers as peers;
use peers::{fastmcp_oauth_peer, free_port};

/// A client session over streamable HTTP with `auth` as its provider.
async fn connect(url: &str, auth: Arc<dyn AuthProvider>) -> ClientSession {
    let mut options = HttpOptions::new("py-oauth", url);
    options.auth = Some(auth);
    let transport = StreamableHttpTransport::connect(options).await.unwrap();
    ClientSession::initialize(Box::new(transport), "py-oauth", SessionOptions::default())
        .await
        .unwrap()
}

async fn echo(session: &ClientSession, message: &str) -> String {
    let result = session
        .call_tool("echo", Some(json!({"message": message})))
        .await
        .unwrap();
    result.content[0].as_text().unwrap_or_default().to_owned()
}

/// Status of an MCP POST made with `token`, bypassing the provider.
async fn status_with(url: &str, token: &str) -> u16 {
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
        .send()
        .await
        .unwrap()
        .status()
        .as_u16()
}

#[tokio::test(flavor = "multi_thread")]
#[ignore = "needs cargo xtask peers"]
async fn login_call_expiry_refresh_logout_against_fastmcp() {
    let port = free_port();
    let access_token_secs = 5;
    let _peer = fastmcp_oauth_peer(port, Some(access_token_secs));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(FileCredentialStore::new(dir.path().join("credentials")));
    let mut settings = OAuthSettings::new("py-oauth", &url, McpOAuthConfig::default());
    settings.refresh_margin = Duration::from_secs(1);
    // The "browser": follows the authorization URL and its redirects, so
    // the code arrives through the loopback callback listener.
    let browser = InteractivePrompt::new(|url| {
        let url = url.clone();
        tokio::spawn(async move {
            let _ = reqwest::get(url).await;
        });
        Ok(())
    });
    let provider =
        Arc::new(OAuthProvider::new(settings, store.clone(), Arc::new(browser)).unwrap());
    assert_eq!(provider.authorization().await.unwrap(), None);

    // Login happens on the server's first 401: discovery, dynamic
    // registration, authorization code + PKCE through the loopback
    // listener, token.
    let session = connect(&url, provider.clone()).await;
    assert_eq!(echo(&session, "one").await, "Echo: one");
    let first = provider
        .tokens()
        .await
        .unwrap()
        .expect("tokens after login");
    let first_access = first.access_token.expose().to_owned();
    let first_refresh = first.refresh_token.clone().expect("a refresh token");
    assert_eq!(first.scope.as_deref(), Some("mcp:tools"));
    let path = store.path_for(provider.store_key());
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
    }
    let stored = store.load(provider.store_key()).unwrap().unwrap();
    let client_reg = stored.client.clone().expect("registered client");
    assert_eq!(stored.resource.as_deref(), Some(url.as_str()));

    // Real expiry: wait until the server itself refuses the token.
    let expires_at = first.expires_at.expect("expiry");
    let now = mcp_oauth::protocol::now_secs();
    tokio::time::sleep(Duration::from_secs(expires_at.saturating_sub(now) + 1)).await;
    assert_eq!(status_with(&url, &first_access).await, 401, "expired token");

    // The next call refreshes first, then succeeds.
    assert_eq!(echo(&session, "two").await, "Echo: two");
    let second = provider
        .tokens()
        .await
        .unwrap()
        .expect("tokens after refresh");
    assert_ne!(second.access_token.expose(), first_access);
    assert_ne!(
        second.refresh_token.as_ref(),
        Some(&first_refresh),
        "rotated"
    );
    assert_eq!(
        store.load(provider.store_key()).unwrap().unwrap().tokens,
        Some(second.clone()),
        "refreshed tokens are persisted"
    );
    // Rotation: the old refresh token is dead at the server.
    // (The client registered for `client_secret_post`, which fastmcp lists
    // next to Basic.)
    assert_eq!(client_reg.token_endpoint_auth_method, "client_secret_post");
    let secret = client_reg
        .client_secret
        .as_ref()
        .map(|s| s.expose().to_owned())
        .unwrap_or_default();
    let reused = reqwest::Client::new()
        .post(format!("http://127.0.0.1:{port}/token"))
        .form(&[
            ("grant_type", "refresh_token"),
            ("refresh_token", first_refresh.expose()),
            ("client_id", client_reg.client_id.as_str()),
            ("client_secret", secret.as_str()),
        ])
        .send()
        .await
        .unwrap();
    assert!(reused.status().is_client_error());
    let body: Value = reused.json().await.unwrap();
    assert_eq!(body["error"], "invalid_grant", "{body}");

    session.close().await.unwrap();

    // Logout revokes at the server and removes the stored credentials.
    let signed_out = provider.logout().await.unwrap();
    assert!(signed_out.had_credentials);
    assert!(
        matches!(&signed_out.revocation, mcp_oauth::Revocation::Revoked { tokens, .. } if tokens.len() == 2),
        "{signed_out:?}"
    );
    assert_eq!(
        status_with(&url, second.access_token.expose()).await,
        401,
        "revoked"
    );
    assert!(!path.exists(), "credentials file removed");
    assert_eq!(provider.tokens().await.unwrap(), None);
    assert_eq!(provider.authorization().await.unwrap(), None);
    assert_eq!(store.load(provider.store_key()).unwrap(), None);
}
