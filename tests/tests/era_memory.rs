//! The era memory against real stdio servers: a configuration whose server
//! answered `initialize` before is not probed with `server/discover`; a
//! server that has since become modern-only is still reached, and
//! forgotten as legacy; what a connect learns survives in the era file.

#![allow(clippy::unwrap_used)]

use std::sync::Arc;
use std::time::Duration;

use mcp_config::{ServerConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_integration_tests::harness::test_env;
use mcp_integration_tests::server::ServerOptions;
use mcp_transport::{ConnectOptions, EraMemory, SessionOptions, TransportError};

const EXAMPLE: &str = env!("CARGO_BIN_EXE_mcp-example-server");
const MISBEHAVING: &str = env!("CARGO_BIN_EXE_mcp-misbehaving-server");

fn server(program: &str, args: Vec<String>) -> ServerConfig {
    ServerConfig::new(
        "era",
        TransportConfig::Stdio(StdioConfig::new(program.to_owned()).with_args(args)),
    )
    .with_timeouts(
        Timeouts::default()
            .with_connect(Duration::from_secs(20))
            .with_request(Duration::from_secs(20)),
    )
}

/// A dual-era server that exits as soon as `server/discover` arrives: it
/// can only be reached by a session that does not probe.
fn dies_on_discover() -> ServerConfig {
    let args = ["--fault", "crash", "--at", "server/discover"]
        .map(str::to_owned)
        .to_vec();
    server(MISBEHAVING, args)
}

fn example(options: &ServerOptions) -> ServerConfig {
    server(EXAMPLE, options.to_args())
}

/// Connects `config` with `eras` (seeded as legacy first when `seeded`)
/// and returns the negotiated revision, and whether the memory then takes
/// the server for legacy.
async fn check(
    row: &str,
    config: &ServerConfig,
    eras: Option<Arc<EraMemory>>,
    seeded: bool,
) -> (Result<String, TransportError>, Option<bool>) {
    check_with(row, config, eras, seeded, SessionOptions::default()).await
}

/// [`check`] with the session's own options.
async fn check_with(
    row: &str,
    config: &ServerConfig,
    eras: Option<Arc<EraMemory>>,
    seeded: bool,
    session: SessionOptions,
) -> (Result<String, TransportError>, Option<bool>) {
    let key = EraMemory::key(config).unwrap();
    if let (Some(eras), true) = (&eras, seeded) {
        eras.record(&key, true);
        assert!(eras.assumes_legacy(&key), "{row}: seeded");
    }
    let mut options = ConnectOptions::default()
        .with_env(test_env())
        .with_session(session);
    if let Some(eras) = &eras {
        options = options.with_eras(Arc::clone(eras));
    }
    let outcome = mcp_transport::connect(config, &options).await;
    let version = outcome.map(|session| session.protocol_version().to_owned());
    (version, eras.map(|eras| eras.assumes_legacy(&key)))
}

#[tokio::test]
async fn a_server_found_legacy_before_is_not_probed() {
    let memory = Arc::new(EraMemory::in_memory());
    let (version, legacy) = check("seeded", &dies_on_discover(), Some(memory), true).await;
    assert_eq!(version.unwrap(), "2025-11-25");
    assert_eq!(legacy, Some(true));

    // The control: without the finding the probe reaches the server, which
    // dies of it.
    let (version, _) = check("no memory", &dies_on_discover(), None, false).await;
    assert!(version.is_err(), "the probe was not sent: {version:?}");
}

#[tokio::test]
async fn a_server_that_became_modern_is_reached_and_forgotten() {
    let modern_only = example(&ServerOptions::only_version("2026-07-28"));
    let memory = Arc::new(EraMemory::in_memory());
    let (version, legacy) = check("stale finding", &modern_only, Some(memory), true).await;
    assert_eq!(version.unwrap(), "2026-07-28");
    assert_eq!(legacy, Some(false));
}

#[tokio::test]
async fn what_a_connect_learns_survives_in_the_era_file() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("eras.json");
    let legacy_only = example(&ServerOptions::default().legacy());
    let memory = Arc::new(EraMemory::open(&file));
    let (version, legacy) = check("learning", &legacy_only, Some(memory), false).await;
    assert_eq!(version.unwrap(), "2025-11-25");
    assert_eq!(legacy, Some(true));
    let key = EraMemory::key(&legacy_only).unwrap();
    let restarted = EraMemory::open(&file);
    assert_eq!(restarted.problem(), None);
    assert!(restarted.assumes_legacy(&key));

    // A dual-era server is modern to a probing session: nothing is kept.
    let dual = example(&ServerOptions::default());
    let (version, legacy) = check("dual", &dual, Some(Arc::new(restarted)), false).await;
    assert_eq!(version.unwrap(), "2026-07-28");
    assert_eq!(legacy, Some(false));
}

#[tokio::test]
async fn a_session_held_to_older_revisions_learns_nothing() {
    // It never probes, so its `initialize` says nothing of whether the
    // server also speaks the modern era.
    let dual = example(&ServerOptions::default());
    let memory = Arc::new(EraMemory::in_memory());
    for session in [
        SessionOptions::default().with_protocol_version("2025-11-25"),
        SessionOptions::default()
            .with_protocol_version("2026-07-28")
            .with_pin_protocol(true),
    ] {
        let row = format!(
            "{} pinned {}",
            session.protocol_version, session.pin_protocol
        );
        let (version, legacy) =
            check_with(&row, &dual, Some(Arc::clone(&memory)), false, session).await;
        assert!(version.is_ok(), "{row}: {version:?}");
        assert_eq!(legacy, Some(false), "{row}");
    }
}
