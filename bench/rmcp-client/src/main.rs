//! The rmcp client of `cargo xtask bench-compare`. Same command line and
//! output as every client of the benchmark (see `bench/README.md`):
//!
//! `rmcp-bench-client <scenario> <n> <calls> (-- <server argv…> | --url <url>)`
//!
//! prints one JSON line with the scenario's numbers and the process's own
//! peak RSS (`VmHWM`).
//!
//! `BENCH_WIRE` picks how it connects: unset or `2025-11-25`, rmcp's
//! documented `().serve(transport)` (the `initialize` handshake; rmcp offers
//! its newest revision and a 2025-era server answers with its own);
//! `2026-07-28`, `serve_with_lifecycle` in `ClientLifecycleMode::Auto`
//! (a `server/discover` probe first, per-request `_meta` after it, and the
//! handshake only for a server that does not know `server/discover`).

use std::process::Stdio;
use std::time::{Duration, Instant};

use rmcp::model::{CallToolRequestParams, ProtocolVersion};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, Peer, RoleClient, RunningService, ServiceExt,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use serde_json::{Value, json};

type Client = RunningService<RoleClient, ()>;

const MESSAGE: &str = "hello";

enum Target {
    Command(Vec<String>),
    Url(String),
}

/// The lifecycle of a 2026-07-28 row (`BENCH_WIRE=2026-07-28`), `None` for
/// the handshake of `serve`.
fn modern_lifecycle() -> Option<ClientLifecycleMode> {
    (std::env::var("BENCH_WIRE").as_deref() == Ok("2026-07-28")).then(|| {
        ClientLifecycleMode::Auto {
            preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            legacy_version: Some(ProtocolVersion::V_2025_11_25),
        }
    })
}

async fn connect(target: &Target) -> Client {
    let lifecycle = modern_lifecycle();
    match target {
        Target::Command(argv) => {
            let mut command = tokio::process::Command::new(&argv[0]);
            command.args(&argv[1..]);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(Stdio::null())
                .spawn()
                .expect("spawning the server");
            match lifecycle {
                Some(mode) => ().serve_with_lifecycle(transport, mode).await,
                None => ().serve(transport).await,
            }
            .expect("connecting")
        }
        Target::Url(url) => {
            let transport = StreamableHttpClientTransport::from_uri(url.as_str());
            match lifecycle {
                Some(mode) => ().serve_with_lifecycle(transport, mode).await,
                None => ().serve(transport).await,
            }
            .expect("connecting")
        }
    }
}

fn arguments() -> serde_json::Map<String, Value> {
    let mut map = serde_json::Map::new();
    map.insert("message".into(), Value::String(MESSAGE.into()));
    map
}

async fn call(peer: &Peer<RoleClient>) {
    let result = peer
        .call_tool(CallToolRequestParams::new("echo").with_arguments(arguments()))
        .await
        .expect("tools/call");
    assert!(result.is_error != Some(true), "echo reported an error");
}

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

async fn run(scenario: &str, n: usize, calls: usize, target: Target) -> Value {
    match scenario {
        "seq" => {
            let client = connect(&target).await;
            let peer = client.peer().clone();
            for _ in 0..calls / 10 + 10 {
                call(&peer).await;
            }
            let mut samples = Vec::with_capacity(calls);
            for _ in 0..calls {
                let started = Instant::now();
                call(&peer).await;
                samples.push(started.elapsed().as_nanos() as u64);
            }
            samples.sort_unstable();
            json!({"p50_ns": percentile(&samples, 0.5), "p99_ns": percentile(&samples, 0.99)})
        }
        "tput" => {
            let client = connect(&target).await;
            let peer = client.peer().clone();
            let burst = |total: usize| {
                let per_task = total / n;
                futures::future::join_all((0..n).map(|_| {
                    let peer = peer.clone();
                    tokio::spawn(async move {
                        for _ in 0..per_task {
                            call(&peer).await;
                        }
                    })
                }))
            };
            burst((calls / 10 + 10).max(n)).await;
            let started = Instant::now();
            burst(calls).await;
            let elapsed = started.elapsed();
            let done = calls / n * n;
            json!({"calls_per_s": done as f64 / elapsed.as_secs_f64()})
        }
        "catalog" => {
            let started = Instant::now();
            let clients = futures::future::join_all((0..n).map(|_| async {
                let client = connect(&target).await;
                let tools = client.peer().list_all_tools().await.expect("tools/list");
                (client, tools.len())
            }))
            .await;
            let wall = started.elapsed();
            let tools: usize = clients.iter().map(|(_, tools)| tools).sum();
            json!({"wall_ns": wall.as_nanos() as u64, "tools": tools})
        }
        "idle" => {
            let clients = futures::future::join_all((0..n).map(|_| connect(&target))).await;
            tokio::time::sleep(Duration::from_secs(1)).await;
            json!({"sessions": clients.len()})
        }
        other => panic!("unknown scenario {other}"),
    }
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    assert!(
        args.len() >= 4,
        "usage: <scenario> <n> <calls> (-- argv… | --url URL)"
    );
    let scenario = args[0].clone();
    let n: usize = args[1].parse().expect("n");
    let calls: usize = args[2].parse().expect("calls");
    let target = match args[3].as_str() {
        "--" => Target::Command(args[4..].to_vec()),
        "--url" => Target::Url(args[4].clone()),
        other => panic!("expected -- or --url, got {other}"),
    };
    let multi = std::env::var("BENCH_RUNTIME").as_deref() == Ok("multi");
    let runtime = if multi {
        tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()
    } else {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
    }
    .expect("tokio runtime");
    let mut result = runtime.block_on(run(&scenario, n, calls, target));
    result["vm_hwm_kb"] = json!(vm_hwm_kb());
    result["client"] = json!("rmcp");
    result["runtime"] = json!(if multi { "multi" } else { "current" });
    println!("{result}");
    // Children see stdin close when this process exits.
    std::process::exit(0);
}
