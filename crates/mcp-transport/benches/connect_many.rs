//! Cold connect of many stdio servers at once, and the memory of a process
//! holding idle sessions.
//!
//! - `idle sessions`: the process's resident memory (`VmRSS`) and peak
//!   (`VmHWM`) while it holds 20 initialized, idle sessions (measured
//!   first, so the peak is theirs).
//! - `cold connect N`: spawn + `initialize` + `tools/list` of N servers
//!   concurrently, for N = 1, 10, 20 (median of a few rounds). With a server
//!   that waits in `initialize`, N servers should take about as long as one.
//!
//! The server binary is `$MCP_EXAMPLE_SERVER` (any MCP server), else
//! `target/release/mcp-example-server`, built on demand. Variables named in
//! `$MCP_BENCH_SERVER_ENV` (comma-separated) are passed on to the servers,
//! e.g. a delay a minimal server applies to `initialize`. The runtime is
//! multi-thread unless `$MCP_BENCH_RUNTIME` is `current-thread`.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::expect_used)]

mod support;
use support::server_binary;

use std::collections::BTreeMap;
use std::path::Path;
use std::time::{Duration, Instant};

use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::{ClientSession, ConnectOptions};

fn server_env() -> BTreeMap<String, String> {
    std::env::var("MCP_BENCH_SERVER_ENV")
        .unwrap_or_default()
        .split(',')
        .filter(|name| !name.is_empty())
        .filter_map(|name| Some((name.to_string(), std::env::var(name).ok()?)))
        .collect()
}

fn config(binary: &Path, index: usize) -> ServerConfig {
    ServerConfig::new(
        format!("bench-{index}"),
        TransportConfig::Stdio(
            StdioConfig::new(binary.to_string_lossy().into_owned()).with_env(server_env()),
        ),
    )
}

async fn connect_all(binary: &Path, count: usize) -> Vec<ClientSession> {
    let options = ConnectOptions::default().with_env(BTreeMap::new());
    let configs: Vec<ServerConfig> = (0..count).map(|i| config(binary, i)).collect();
    futures::future::join_all(configs.iter().map(|config| async {
        let session = mcp_transport::connect(config, &options).await.unwrap();
        session.list_tools().await.unwrap();
        session
    }))
    .await
}

fn status_kib(field: &str) -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn main() {
    let binary = server_binary();
    let runtime = match std::env::var("MCP_BENCH_RUNTIME").as_deref() {
        Ok("current-thread") => tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap(),
        _ => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
            .unwrap(),
    };
    runtime.block_on(async {
        let rss_before = status_kib("VmRSS:");
        let sessions = connect_all(&binary, 20).await;
        tokio::time::sleep(Duration::from_millis(500)).await;
        println!(
            "idle sessions 20: VmRSS {} KiB   VmHWM {} KiB   (before any session: VmRSS {} KiB)",
            status_kib("VmRSS:"),
            status_kib("VmHWM:"),
            rss_before
        );
        for session in &sessions {
            session.close().await.unwrap();
        }
        for count in [1, 10, 20] {
            let mut times = Vec::new();
            for _ in 0..5 {
                let started = Instant::now();
                let sessions = connect_all(&binary, count).await;
                times.push(started.elapsed());
                for session in &sessions {
                    session.close().await.unwrap();
                }
            }
            times.sort();
            println!(
                "cold connect {count:2}: median {:8.2} ms   min {:8.2} ms",
                millis(times[times.len() / 2]),
                millis(times[0])
            );
        }
    });
}

fn millis(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}
