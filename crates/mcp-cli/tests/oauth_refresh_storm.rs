//! A short-lived token is refreshed about once per lifetime, never per
//! request: against fastmcp's OAuth authorization server with 20 s access
//! tokens, one `probe` and 20 `call`s, each its own `mcp-cli` process
//! sharing the stored credentials, spend at most two token requests in
//! all (the sign-in's code exchange, and at most one refresh should the
//! run outlast three quarters of the lifetime). Then `logout` revokes the
//! tokens at the server's RFC 7009 endpoint and leaves nothing behind.
//!
//! The sign-in itself runs in-process (`mcp_oauth` with a plain HTTP
//! client as the browser) into the same credential folder `mcp-cli` uses;
//! the browser sign-in through `mcp-cli login` is `browser_login.rs`.
//!
//! Ignored by a plain `cargo test` like the other peer tests; with
//! `-- --include-ignored` a missing fastmcp peer fails it.

#![allow(clippy::expect_used)]

mod support;

use std::io::Write as _;
use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_config::McpOAuthConfig;
use mcp_oauth::{FileCredentialStore, InteractivePrompt, OAuthProvider, OAuthSettings};
use support::Tree;

use mcp_test_peers as peers;
use peers::{fastmcp_oauth_peer, free_port};

const SERVER: &str = "secure";
const LIFETIME_SECS: u64 = 20;

/// What the peer's authorization server has served so far.
fn served(port: u16) -> serde_json::Value {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(async {
        reqwest::get(format!("http://127.0.0.1:{port}/test/token-requests"))
            .await
            .expect("ask the peer")
            .json()
            .await
            .expect("json")
    })
}

#[test]
#[ignore = "needs cargo xtask peers"]
fn a_twenty_second_token_serves_a_probe_and_twenty_calls_with_at_most_two_token_requests() {
    let port = free_port();
    let _peer = fastmcp_oauth_peer(port, Some(LIFETIME_SECS));
    let url = format!("http://127.0.0.1:{port}/mcp");
    let tree = Tree::new("empty");
    let run = tree.run(&["add", SERVER, "--scope", "user", "--url", &url]);
    assert_eq!(run.code, 0, "add: {}{}", run.stdout, run.stderr);

    // Sign in where `mcp-cli` keeps credentials.
    let store = Arc::new(FileCredentialStore::new(
        tree.path("home").join(".mcp-cli").join("credentials"),
    ));
    let browser = InteractivePrompt::new(|url| {
        let url = url.clone();
        tokio::spawn(async move {
            let _ = reqwest::get(url).await;
        });
        Ok(())
    });
    let provider = OAuthProvider::new(
        OAuthSettings::new(SERVER, &url, McpOAuthConfig::default()),
        store,
        Arc::new(browser),
    )
    .expect("provider");
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    runtime.block_on(provider.login()).expect("sign in");
    drop(runtime);
    let signed_in = Instant::now();
    assert_eq!(served(port)["code"], 1);

    let run = tree.run(&["probe", SERVER]);
    assert_eq!(run.code, 0, "probe: {}{}", run.stdout, run.stderr);
    for i in 0..20 {
        let message = format!("message={i}");
        let run = tree.run(&["call", "mcp__secure__echo", "--arg", &message]);
        assert_eq!(run.code, 0, "call {i}: {}{}", run.stdout, run.stderr);
        assert!(run.stdout.contains(&format!("Echo: {i}")), "{}", run.stdout);
    }
    let took = signed_in.elapsed();
    let counts = served(port);
    let spent = counts["code"].as_u64().unwrap_or(0) + counts["refresh"].as_u64().unwrap_or(0);
    assert!(
        took < Duration::from_secs(LIFETIME_SECS),
        "the run outlasted the token ({took:?}), so it proves nothing"
    );
    assert!(
        spent <= 2,
        "{spent} token requests for a probe and 20 calls in {took:?}: {counts}"
    );
    // The measurement itself, on the stream the harness does not capture.
    let _ = writeln!(
        std::io::stderr(),
        "refresh storm: {spent} token request(s) ({counts}) for a probe and 20 calls in {took:?}"
    );

    // Logout revokes at the server and removes the files: the access
    // token it held is refused afterwards.
    let stored: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::fs::read_dir(tree.path("home/.mcp-cli/credentials"))
                .expect("credentials folder")
                .map(|e| e.expect("entry").path())
                .find(|p| p.extension().is_some_and(|x| x == "json"))
                .expect("a credentials file"),
        )
        .expect("read credentials"),
    )
    .expect("credentials json");
    let access = stored["tokens"]["access_token"]
        .as_str()
        .expect("an access token")
        .to_owned();
    let status_with = |token: &str| {
        let runtime = tokio::runtime::Runtime::new().expect("runtime");
        runtime.block_on(async {
            reqwest::Client::new()
                .post(&url)
                .bearer_auth(token)
                .header("accept", "application/json, text/event-stream")
                .json(&serde_json::json!({"jsonrpc": "2.0", "id": 1, "method": "ping"}))
                .send()
                .await
                .expect("post")
                .status()
                .as_u16()
        })
    };
    // (Without a session the server answers 400; what matters is that it
    // is not 401.)
    assert_ne!(status_with(&access), 401, "the token works before logout");
    let run = tree.run(&["logout", SERVER]);
    assert_eq!(run.code, 0, "logout: {}{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains("revoked the refresh token and access token at http://127.0.0.1:"),
        "{}",
        run.stdout
    );
    assert!(
        served(port)["revoke"].as_u64() >= Some(1),
        "the server revoked: {}",
        served(port)
    );
    assert_eq!(status_with(&access), 401, "the revoked token is refused");
    let left: Vec<_> = std::fs::read_dir(tree.path("home/.mcp-cli/credentials"))
        .expect("credentials folder")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert!(left.is_empty(), "nothing left after logout: {left:?}");
    let run = tree.run(&["call", "mcp__secure__echo", "--arg", "message=after"]);
    assert_ne!(run.code, 0, "signed out: {}", run.stdout);
}
