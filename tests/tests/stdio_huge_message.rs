//! A 50 MiB line from a stdio server: the client refuses it past the cap with
//! a clear error while its own memory stays bounded. Alone in its test binary
//! so the peak-memory reading is not disturbed by other tests.

#![allow(clippy::unwrap_used)]

use std::time::Duration;

use mcp_config::Timeouts;
use mcp_integration_tests::harness::{StdioHarness, test_env};
use mcp_integration_tests::server::ServerOptions;
use mcp_transport::StdioOptions;
use mcp_transport::wire::Codec;
use mcp_transport::{ConnectOptions, TransportErrorKind};
use serde_json::json;

const MIB: usize = 1024 * 1024;

/// Peak resident set size of this process, in bytes.
fn peak_rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let line = status.lines().find(|l| l.starts_with("VmHWM:")).unwrap();
    let kib: usize = line.split_whitespace().nth(1).unwrap().parse().unwrap();
    kib * 1024
}

#[tokio::test]
async fn a_message_past_the_cap_fails_clearly_with_bounded_memory() {
    let config = StdioHarness::new(env!("CARGO_BIN_EXE_mcp-example-server")).config(
        &ServerOptions::default(),
        Timeouts::default()
            .with_connect(Duration::from_secs(20))
            .with_request(Duration::from_secs(60))
            .with_tool_call(Duration::from_secs(60)),
    );
    let options = ConnectOptions::default()
        .with_env(test_env())
        .with_stdio(StdioOptions::default().with_codec(Codec::new(4 * MIB)));
    let session = mcp_transport::connect(&config, &options).await.unwrap();

    // Under the cap: fine.
    let result = session
        .call_tool("huge", Some(json!({"bytes": 3 * MIB})))
        .await
        .unwrap();
    assert_eq!(result.content[0].as_text().unwrap().len(), 3 * MIB);

    let before = peak_rss();
    let error = session
        .call_tool("huge", Some(json!({"bytes": 50 * MIB})))
        .await
        .unwrap_err();
    let grown = peak_rss().saturating_sub(before);
    assert!(
        matches!(error.kind(), TransportErrorKind::MessageTooLarge { max, .. } if *max == 4 * MIB),
        "{error}"
    );
    assert_eq!(
        error.to_string(),
        format!(
            "example-stdio: message too large: more than {} bytes",
            4 * MIB
        )
    );
    // Reading 50 MiB must not have buffered it: allow the cap plus slack.
    assert!(grown < 16 * MIB, "peak memory grew by {} MiB", grown / MIB);
    assert!(session.is_closed());
}
