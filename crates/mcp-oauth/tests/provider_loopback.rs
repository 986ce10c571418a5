//! `OAuthProvider` against a loopback authorization and resource server:
//! the browser path through the loopback listener, PKCE verified by the
//! server, refresh once on 401, a refused refresh falling back to a new
//! login, the step-up limit, resource mismatch, the metadata override and a
//! forged `state`.

#![allow(clippy::unwrap_used)]

mod support;

use std::sync::Arc;

use mcp_config::McpOAuthConfig;
use mcp_oauth::protocol::MAX_STEP_UPS;
use mcp_oauth::{
    AuthProvider, CredentialStore, MemoryCredentialStore, OAuthProvider, OAuthSettings,
};
use support::{browser, call, fixture, lock, serve};

#[tokio::test(flavor = "multi_thread")]
async fn browser_login_then_refresh_once_on_401() {
    let f = fixture(McpOAuthConfig::default()).await;
    assert_eq!(call(&f).await.unwrap(), 200);
    {
        let b = lock(&f.server);
        assert_eq!(b.authorize_requests, 1);
        assert_eq!(b.token_requests, ["authorization_code"]);
    }
    let tokens = f.provider.tokens().await.unwrap().unwrap();
    assert_eq!(tokens.access_token.expose(), "access-1-beef");
    assert_eq!(tokens.scope.as_deref(), Some("read"));

    // The server forgets the access token: one refresh, no new login.
    lock(&f.server).live_access.clear();
    assert_eq!(call(&f).await.unwrap(), 200);
    let b = lock(&f.server);
    assert_eq!(b.authorize_requests, 1);
    assert_eq!(b.token_requests, ["authorization_code", "refresh_token"]);
    let stored = f.store.load(f.provider.store_key()).unwrap().unwrap();
    assert_eq!(
        stored.tokens.unwrap().refresh_token.unwrap().expose(),
        "refresh-2-cafe"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn refused_refresh_falls_back_to_a_new_login() {
    let f = fixture(McpOAuthConfig::default()).await;
    assert_eq!(call(&f).await.unwrap(), 200);
    {
        let mut b = lock(&f.server);
        b.live_access.clear();
        b.refuse_refresh = true;
    }
    assert_eq!(call(&f).await.unwrap(), 200);
    let b = lock(&f.server);
    assert_eq!(b.authorize_requests, 2);
    assert_eq!(
        b.token_requests,
        ["authorization_code", "refresh_token", "authorization_code"]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_forgotten_client_registers_again() {
    let f = fixture(McpOAuthConfig::default()).await;
    assert_eq!(call(&f).await.unwrap(), 200);
    {
        let mut b = lock(&f.server);
        b.live_access.clear();
        b.forget_clients = true;
    }
    // The refresh gets invalid_client: the registration is dropped and the
    // login that follows registers anew.
    assert_eq!(call(&f).await.unwrap(), 200);
    let b = lock(&f.server);
    assert_eq!(b.registrations, 2);
    assert_eq!(b.authorize_requests, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn step_up_stops_after_the_limit() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).always_insufficient_scope = true;
    let mut statuses = Vec::new();
    for _ in 0..5 {
        statuses.push(call(&f).await.unwrap());
    }
    assert_eq!(statuses, [403; 5]);
    // One login for the first 401, then at most MAX_STEP_UPS step-ups.
    assert_eq!(
        lock(&f.server).authorize_requests,
        1 + MAX_STEP_UPS as usize
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn mismatched_resource_is_refused_before_authorizing() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).prm_resource = Some("https://evil.example.com/mcp".into());
    let err = call(&f).await.unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "protected resource metadata for loopback names resource https://evil.example.com/mcp, which does not match {}",
            f.url
        )
    );
    assert_eq!(lock(&f.server).authorize_requests, 0);
}

#[tokio::test(flavor = "multi_thread")]
async fn login_finds_metadata_named_only_by_the_401() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).prm_only_at_custom_path = true;
    f.provider.login().await.unwrap();
    // The scope comes from the metadata the 401 pointed at.
    assert_eq!(
        lock(&f.server).authorize_scopes,
        [Some("read offline_access".to_owned())]
    );
    assert_eq!(call(&f).await.unwrap(), 200);
    let stored = f.store.load(f.provider.store_key()).unwrap().unwrap();
    assert_eq!(stored.resource.as_deref(), Some(f.url.as_str()));
}

#[tokio::test(flavor = "multi_thread")]
async fn a_login_elsewhere_is_picked_up_without_a_new_one() {
    let f = fixture(McpOAuthConfig::default()).await;
    let host = OAuthProvider::new(
        OAuthSettings::new("loopback", &f.url, McpOAuthConfig::default()),
        Arc::new(f.store.clone()),
        Arc::new(browser()),
    )
    .unwrap();
    assert_eq!(host.authorization().await.unwrap(), None);
    // A `login` command signs in through its own provider and store handle.
    f.provider.login().await.unwrap();
    assert_eq!(
        host.authorization().await.unwrap().as_deref(),
        Some("Bearer access-1-beef")
    );
    assert_eq!(lock(&f.server).authorize_requests, 1);
}

#[tokio::test(flavor = "multi_thread")]
async fn metadata_override_is_used() {
    let (base, server) = serve().await;
    lock(&server).metadata_only_at_custom_path = true;
    let url = format!("{base}/mcp");
    let config = McpOAuthConfig::default()
        .with_auth_server_metadata_url(format!("{base}/custom/as-metadata"));
    let provider = OAuthProvider::new(
        OAuthSettings::new("loopback", &url, config),
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(browser()),
    )
    .unwrap();
    provider.login().await.unwrap();
    assert!(provider.tokens().await.unwrap().is_some());
    assert_eq!(lock(&server).authorize_requests, 1);

    let refused = OAuthProvider::new(
        OAuthSettings::new(
            "loopback",
            &url,
            McpOAuthConfig::default().with_auth_server_metadata_url("http://as.example.com/meta"),
        ),
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(browser()),
    )
    .unwrap_err();
    assert_eq!(
        refused.to_string(),
        "oauth settings for loopback: oauth.authServerMetadataUrl: plain http is allowed only on loopback, and only for a server on loopback; use https"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn forged_state_is_refused() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).wrong_state = true;
    let err = call(&f).await.unwrap_err().to_string();
    assert_eq!(
        err,
        "authorization for loopback failed: the redirect's state does not match the request (possible forgery)"
    );
    assert!(lock(&f.server).token_requests.is_empty());
}
