//! No secret (client secret, code, PKCE verifier, access or refresh token)
//! appears in any `Debug` output, error message or log line of a login, a
//! refresh and a failed login. Its own test binary: `tracing` caches which
//! call sites are enabled process-wide, so log capture must not share a
//! process with other tests.

#![allow(clippy::unwrap_used)]

mod support;

use std::sync::{Arc, Mutex};

use mcp_config::McpOAuthConfig;
use mcp_oauth::CredentialStore;
use support::{CLIENT_SECRET, call, fixture, lock};

/// Collects log lines from this crate.
#[derive(Clone, Default)]
struct Logs(Arc<Mutex<Vec<u8>>>);

impl std::io::Write for Logs {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test(flavor = "current_thread")]
async fn no_secret_in_debug_errors_or_logs() {
    let logs = Logs::default();
    let sink = logs.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_max_level(tracing::Level::TRACE)
        .with_writer(move || sink.clone())
        .finish();
    let _guard = tracing::subscriber::set_default(subscriber);

    let f = fixture(McpOAuthConfig::default()).await;
    let mut texts = Vec::new();
    assert_eq!(call(&f).await.unwrap(), 200);
    lock(&f.server).live_access.clear();
    assert_eq!(call(&f).await.unwrap(), 200);
    texts.push(format!("{:?}", f.provider));
    texts.push(format!("{:?}", f.provider.tokens().await.unwrap()));
    texts.push(format!("{:?}", f.store));
    texts.push(format!(
        "{:?}",
        f.store.load(f.provider.store_key()).unwrap()
    ));
    // Errors from each refusing step.
    {
        let mut b = lock(&f.server);
        b.live_access.clear();
        b.refuse_refresh = true;
        b.wrong_state = true;
    }
    let err = call(&f).await.unwrap_err();
    texts.push(err.to_string());
    texts.push(format!("{err:?}"));
    let bad_code = mcp_oauth::protocol::request_token(
        &reqwest::Client::new(),
        "loopback",
        &format!("{}/token", lock(&f.server).base),
        &mcp_oauth::protocol::ClientAuth::Basic {
            client_id: "client-1".into(),
            client_secret: CLIENT_SECRET.into(),
        },
        vec![
            ("grant_type", "authorization_code".into()),
            ("code", "code-1-c0ffee".into()),
        ],
    )
    .await
    .unwrap()
    .unwrap_err();
    texts.push(bad_code.to_string());
    let log_text = String::from_utf8(logs.0.lock().unwrap().clone()).unwrap();
    assert!(log_text.contains("refreshing access token"), "{log_text}");
    texts.push(log_text);

    let secrets = lock(&f.server).secrets.clone();
    assert!(secrets.len() >= 6, "{secrets:?}");
    for text in &texts {
        for secret in &secrets {
            assert!(
                !text.contains(secret.as_str()),
                "secret {secret} leaked into: {text}"
            );
        }
    }
    assert!(texts.iter().any(|t| t.contains("***")));
}
