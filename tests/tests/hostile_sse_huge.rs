//! One 50 MiB SSE event, on every stream that carries events: a
//! streamable-HTTP answer, its GET stream, and the legacy SSE stream. The
//! request it answers fails at once as too large (not at its timeout),
//! memory stays bounded, and the session goes on. Alone in its test binary
//! so the peak-memory readings are not disturbed by other tests.

#![allow(clippy::unwrap_used, clippy::print_stderr, clippy::expect_used)]

use std::time::{Duration, Instant};

use mcp_config::{RemoteConfig, Timeouts, TransportConfig};
use mcp_integration_tests::harness::entry;
use mcp_integration_tests::measure::peak_rss;
use mcp_integration_tests::scripted::{Kind, serve};
use mcp_transport::ConnectOptions;
use serde_json::json;

const MIB: usize = 1024 * 1024;
fn timeouts() -> Timeouts {
    Timeouts::default()
        .with_connect(Duration::from_secs(20))
        .with_request(Duration::from_secs(30))
        .with_tool_call(Duration::from_secs(30))
}
/// What "at once" means for a 50 MiB event on loopback in a debug build.
const AT_ONCE: Duration = Duration::from_secs(2);
/// The cap (16 MiB) may be buffered once; nothing more.
const MEMORY_BOUND: usize = 40 * MIB;

/// Asks for a 50 MiB event shaped `shape` over `kind`; the request must
/// fail within `within` naming the cap, and the session must still answer.
async fn check(kind: Kind, shape: &str, within: Duration) {
    let server = serve(kind).await;
    let remote = RemoteConfig::new(server.url.clone());
    let transport = match kind {
        Kind::LegacySse => TransportConfig::Sse(remote),
        _ => TransportConfig::Http(remote),
    };
    let name = format!("huge-{kind:?}").to_lowercase();
    let config = entry(&name, transport, timeouts());
    let session = mcp_transport::connect(&config, &ConnectOptions::default())
        .await
        .unwrap();
    let before = peak_rss();
    let started = Instant::now();
    let outcome = session
        .request(
            "hostile/answer",
            Some(json!({"shape": shape, "bytes": 50 * MIB})),
        )
        .await;
    let elapsed = started.elapsed();
    let grown = peak_rss().saturating_sub(before);
    let row = format!("{kind:?} {shape}");
    eprintln!(
        "hostile huge {row}: {} ms, peak memory +{} MiB: {outcome:?}",
        elapsed.as_millis(),
        grown / MIB
    );
    let error = outcome.expect_err(&row).to_string();
    assert!(error.starts_with(&name), "{row}: {error}");
    assert!(
        error.contains("hostile/answer failed") && error.contains("message too large"),
        "{row}: {error}"
    );
    assert!(elapsed < within, "{row}: took {elapsed:?}");
    assert!(
        grown < MEMORY_BOUND,
        "{row}: peak memory grew by {} MiB",
        grown / MIB
    );
    // The session survives (a legacy stream first skips the rest).
    session
        .ping()
        .await
        .unwrap_or_else(|e| panic!("{row}: {e}"));
    assert!(!session.is_closed(), "{row}");
    let _ = session.close().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_50_mib_sse_event_fails_its_request_at_once_with_bounded_memory() {
    check(Kind::HttpSse, "huge", AT_ONCE).await;
    check(Kind::HttpGetStream, "huge", AT_ONCE).await;
    check(Kind::LegacySse, "huge", AT_ONCE).await;
    // The id after the 50 MiB: found while the rest is skipped, so the
    // request fails once the event is over, still far from its timeout.
    check(Kind::HttpSse, "huge-id-last", AT_ONCE).await;
    check(Kind::HttpGetStream, "huge-id-last", Duration::from_secs(10)).await;
    check(Kind::LegacySse, "huge-id-last", Duration::from_secs(10)).await;
}
