//! Load: 1,000 concurrent tool calls over one session, then 100 host
//! sessions × 10 servers in this one process. Every call must complete with
//! its own answer; wall time and peak memory are printed (`load ...`
//! lines) for the record, and peak memory has a loose ceiling. One test, so
//! the two phases run one after the other and the peak readings are not
//! mixed with other tests'.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::sync::Arc;
use std::time::{Duration, Instant};

use mcp_catalog::{
    McpConnector, ModelBlock, ModelResult, ResultStatus, RuntimeManager, ServerSet, SessionRuntime,
};
use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_integration_tests::harness::{entry, test_env};
use mcp_integration_tests::measure::{current_rss, peak_rss};
use mcp_integration_tests::net::{Loopback, serve_streamable_http};
use mcp_integration_tests::server::{ExampleServer, ServerOptions};
use mcp_transport::ConnectOptions;
use serde_json::json;

const MIB: usize = 1024 * 1024;
/// Generous: a busy 2-core machine runs this next to other test binaries.
fn timeouts() -> Timeouts {
    Timeouts::default()
        .with_connect(Duration::from_secs(60))
        .with_request(Duration::from_secs(60))
        .with_tool_call(Duration::from_secs(60))
}
/// Peak memory of the whole test process may not pass this.
const PEAK_CEILING: usize = 1024 * MIB;

fn text(result: &ModelResult) -> &str {
    assert_eq!(result.status, ResultStatus::Ok, "{result:?}");
    match &result.content[0] {
        ModelBlock::Text { text } => text,
        other => panic!("text expected, got {other:?}"),
    }
}

fn connector() -> Arc<McpConnector> {
    Arc::new(McpConnector::new(
        ConnectOptions::default().with_env(test_env()),
    ))
}

fn report(phase: &str, calls: usize, started: Instant) {
    let elapsed = started.elapsed();
    eprintln!(
        "load {phase}: {calls} calls in {} ms ({:.0} calls/s), peak RSS {} MiB, RSS now {} MiB",
        elapsed.as_millis(),
        calls as f64 / elapsed.as_secs_f64(),
        peak_rss() / MIB,
        current_rss() / MIB,
    );
}

/// 1,000 `echo` calls at once over one stdio session.
async fn concurrent_calls_over_one_session() {
    let config = entry(
        "example",
        TransportConfig::Stdio(
            StdioConfig::new(env!("CARGO_BIN_EXE_mcp-example-server").to_owned())
                .with_args(ServerOptions::default().to_args()),
        ),
        timeouts(),
    );
    let runtime = SessionRuntime::builder("load", ServerSet::all(vec![config]), connector())
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build();
    let catalog = runtime.catalog().await.unwrap();
    let echo = catalog.get("example__echo").unwrap();
    let started = Instant::now();
    let calls = (0..1000).map(|n| {
        let runtime = &runtime;
        async move {
            let result = runtime
                .call_tool(echo, json!({"text": format!("call {n}")}))
                .await
                .unwrap();
            assert_eq!(text(&result), format!("call {n}"));
        }
    });
    futures::future::join_all(calls).await;
    report(
        "1000 concurrent calls over one stdio session",
        1000,
        started,
    );
    runtime.shutdown().await;
}

/// 100 host sessions, each connecting 10 streamable HTTP servers and
/// calling a tool of each, all at once.
async fn many_sessions_times_many_servers() {
    let mut loopbacks: Vec<Loopback> = Vec::new();
    let mut servers: Vec<ServerConfig> = Vec::new();
    for n in 0..10 {
        let loopback =
            serve_streamable_http(Arc::new(ExampleServer::new(ServerOptions::default()))).await;
        servers.push(entry(
            &format!("server{n}"),
            TransportConfig::Http(RemoteConfig::new(loopback.url.clone())),
            timeouts(),
        ));
        loopbacks.push(loopback);
    }
    let manager = RuntimeManager::builder(ServerSet::all(servers), connector())
        .with_options(mcp_catalog::RuntimeOptions::default().with_materialize(openclaw()))
        .build();
    let started = Instant::now();
    let sessions = (0..100).map(|session| {
        let lease = manager.lease(&format!("session-{session}"));
        async move {
            let catalog = lease.catalog().await.unwrap();
            let calls = (0..10).map(|server| {
                let tool = catalog.get(&format!("server{server}__echo")).unwrap();
                let lease = &lease;
                async move {
                    let result = lease
                        .call_tool(tool, json!({"text": format!("{session}/{server}")}))
                        .await
                        .unwrap();
                    assert_eq!(text(&result), format!("{session}/{server}"));
                }
            });
            futures::future::join_all(calls).await;
        }
    });
    futures::future::join_all(sessions).await;
    report(
        "100 sessions x 10 streamable HTTP servers (connect, list, call)",
        1000,
        started,
    );
    assert_eq!(manager.session_ids().len(), 100);
    manager.shutdown().await;
    drop(loopbacks);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn load() {
    let whole = async {
        concurrent_calls_over_one_session().await;
        many_sessions_times_many_servers().await;
    };
    // Completion is the claim; the bound only turns a hang into a failure.
    tokio::time::timeout(Duration::from_secs(300), whole)
        .await
        .expect("the load test hangs");
    let peak = peak_rss();
    assert!(
        peak < PEAK_CEILING,
        "peak memory {} MiB is past the {} MiB ceiling",
        peak / MIB,
        PEAK_CEILING / MIB
    );
}

/// These tests predate the `claw` default and are about other things
/// than naming: they keep the `server__tool` names they were written for.
fn openclaw() -> mcp_catalog::MaterializeOptions {
    mcp_catalog::MaterializeOptions::default().with_style(mcp_catalog::NamingStyle::OpenClaw)
}
