//! The claude.ai proxy transport end to end: a loopback proxy (which
//! insists on `X-Mcp-Server-Id` and the host's bearer credentials) in front
//! of a real peer, `@modelcontextprotocol/server-everything` over
//! streamable HTTP. Ignored by a plain `cargo test`; run with
//! `-- --include-ignored`, a missing peer fails it with the command that
//! installs the peers (`cargo xtask peers`).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use mcp_test_peers as peers;

use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_config::{ProxyConfig, TransportConfig};
use mcp_integration_tests::harness::entry;
use mcp_integration_tests::net::{Loopback, ProxyExpectations, serve_proxy};
use mcp_oauth::{AuthError, AuthProvider, Challenge, ChallengeOutcome};
use mcp_transport::{ConnectOptions, SessionOptions};
use serde_json::json;

struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn everything_http(port: u16) -> Peer {
    let node = peers::node22();
    let script = peers::everything_script();
    let mut command = Command::new(node);
    // Its own process group, so nothing it starts outlives the test.
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let child = command
        .arg(script)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start server-everything");
    let mut peer = Peer(child);
    peers::wait_until_listening(
        &mut peer.0,
        "server-everything",
        port,
        Duration::from_secs(30),
    );
    peer
}

#[derive(Debug)]
struct HostCredentials(&'static str);

#[async_trait]
impl AuthProvider for HostCredentials {
    async fn authorization(&self) -> Result<Option<String>, AuthError> {
        Ok(Some(self.0.to_owned()))
    }

    async fn on_challenge(&self, _: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        Ok(ChallengeOutcome::GiveUp)
    }
}

fn proxy_entry(url: &str, id: &str) -> mcp_config::ServerConfig {
    entry(
        "claude.ai Everything",
        TransportConfig::ClaudeAiProxy(ProxyConfig::new(url.to_owned(), id.to_owned())),
        mcp_config::Timeouts::default(),
    )
}

/// server-everything behind the loopback proxy, and the options of a host
/// holding the proxy's credentials.
async fn everything_behind_the_proxy() -> (Peer, Loopback, ConnectOptions) {
    let port = peers::free_port();
    let peer = everything_http(port);
    let proxy = serve_proxy(
        format!("http://127.0.0.1:{port}/mcp"),
        ProxyExpectations {
            server_id: "srv_everything".into(),
            authorization: "Bearer host-token".into(),
        },
    )
    .await;
    let options = ConnectOptions::default()
        .with_session(SessionOptions::default())
        .with_claudeai_credentials(Arc::new(HostCredentials("Bearer host-token")));
    (peer, proxy, options)
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn the_proxy_carries_the_server_id_and_host_credentials_to_a_real_peer() {
    let (_peer, proxy, options) = everything_behind_the_proxy().await;
    let session = mcp_transport::connect(&proxy_entry(&proxy.url, "srv_everything"), &options)
        .await
        .unwrap();
    assert_eq!(session.kind(), "claudeai-proxy");
    let tools = session.list_tools().await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let result = session
        .call_tool("echo", Some(json!({"message": "through the proxy"})))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text(), Some("Echo: through the proxy"));
    session.close().await.unwrap();

    // Wrong id: the proxy knows no such server.
    let err = mcp_transport::connect(&proxy_entry(&proxy.url, "srv_other"), &options)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("HTTP 404"), "{err}");
    // No credentials: refused.
    let bare = ConnectOptions::default();
    let err = mcp_transport::connect(&proxy_entry(&proxy.url, "srv_everything"), &bare)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("HTTP 401"), "{err}");
}

/// The server behind the proxy dies with nothing in flight: the only sign
/// is the server's stream, which the proxy now answers with 502. The
/// session ends (with that answer as its reason) instead of living on with
/// no stream and no server.
#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_session_ends_when_the_server_behind_the_proxy_dies() {
    let (peer, proxy, options) = everything_behind_the_proxy().await;
    let session = mcp_transport::connect(&proxy_entry(&proxy.url, "srv_everything"), &options)
        .await
        .unwrap();
    assert!(session.list_tools().await.is_ok());
    assert!(!session.is_closed());

    drop(peer);
    // Three refused reopenings a retry delay (1 s) apart, with room for two
    // shared cores.
    let reason = tokio::time::timeout(Duration::from_secs(15), session.closed())
        .await
        .expect("the session ends once the proxy cannot reach the server");
    let reason = reason.to_string();
    assert!(reason.contains("HTTP 502"), "{reason}");
    assert!(reason.starts_with("claude.ai Everything"), "{reason}");
    let later = session.list_tools().await.unwrap_err();
    assert_eq!(later.to_string(), reason);
}
