//! Hostile or failing authorization servers: an answer without end is cut
//! at the cap with an error naming the server, and a refresh that meets a
//! passing failure (a 5xx, a 429) keeps every stored credential, so the
//! next request refreshes instead of asking for a new sign-in.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use mcp_config::McpOAuthConfig;
use mcp_oauth::CredentialStore;
use support::{call, fixture, lock};

#[tokio::test(flavor = "multi_thread")]
async fn a_token_answer_larger_than_the_cap_fails_naming_the_server() {
    let f = fixture(McpOAuthConfig::default()).await;
    lock(&f.server).huge_token_answer = true;
    let err = call(&f).await.unwrap_err().to_string();
    assert!(err.contains("for loopback failed"), "{err}");
    assert!(err.contains("larger than 1048576 bytes"), "{err}");
    assert!(f.provider.tokens().await.unwrap().is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_refresh_that_meets_a_passing_failure_keeps_the_stored_credentials() {
    for status in [503, 500, 429] {
        let f = fixture(McpOAuthConfig::default()).await;
        assert_eq!(call(&f).await.unwrap(), 200);
        let before = f.store.load(f.provider.store_key()).unwrap().unwrap();
        {
            let mut b = lock(&f.server);
            b.live_access.clear();
            b.refresh_failure = Some(status);
        }
        let err = call(&f).await.unwrap_err().to_string();
        assert!(
            err.contains("token refresh failed") && err.contains("stored credentials kept"),
            "{status}: {err}"
        );
        assert_eq!(
            f.store.load(f.provider.store_key()).unwrap().unwrap(),
            before,
            "{status}: nothing stored is lost"
        );
        // Once the server is back, the same refresh token works: no new
        // sign-in.
        lock(&f.server).refresh_failure = None;
        assert_eq!(call(&f).await.unwrap(), 200, "{status}");
        let b = lock(&f.server);
        assert_eq!(b.authorize_requests, 1, "{status}");
        assert_eq!(
            b.token_requests,
            ["authorization_code", "refresh_token", "refresh_token"],
            "{status}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_pasted_redirect_that_is_not_a_url_names_the_server() {
    use std::sync::Arc;

    use mcp_oauth::{InteractivePrompt, MemoryCredentialStore, OAuthProvider, OAuthSettings};

    let (base, _server) = support::serve().await;
    let prompt = InteractivePrompt::new(|_| Ok(()))
        .with_pasted_input(std::io::Cursor::new(b"hello, not a url\n".to_vec()));
    let provider = OAuthProvider::new(
        OAuthSettings::new("pasted", format!("{base}/mcp"), McpOAuthConfig::default()),
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(prompt),
    )
    .unwrap();
    let err = provider.login().await.unwrap_err().to_string();
    assert_eq!(
        err,
        "authorization for pasted failed: the pasted text is not a redirect url with a code and state"
    );
}
