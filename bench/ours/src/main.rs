//! The toolkit's side of `cargo xtask bench-compare`, and the raw lower
//! bounds it is compared with. Same command line and output as every client
//! of the benchmark (see `bench/README.md`):
//!
//! `mcp-bench-client <client> <scenario> <n> <calls> (-- <server argv…> | --url <url>)`
//!
//! - `ours`: the toolkit's public API as a host uses it: `mcp_transport::connect`
//!   and `ClientSession` for calls, `mcp_catalog::SessionRuntime` (all
//!   servers at once) for the cold catalog.
//! - `raw`: a driver that writes pre-built request lines to a stdio MCP
//!   server and reads one line per answer, after a pre-built handshake; no
//!   JSON is parsed. The floor for any client against that server.
//!   With `BENCH_WIRE=2026-07-28` the lines carry the modern `_meta` and
//!   there is no handshake.
//! - `raw-pipe`: the same without a handshake, for `cat`: the cost of the
//!   pipes and the process switches alone.
//! - `raw-http`: pre-built POSTs over keep-alive connections to a
//!   streamable HTTP server ([`raw_http`]).
//!
//! Scenarios: `seq` (`calls` sequential calls after a warm-up; p50/p99),
//! `tput` (`n` calls in flight, `calls` in total; calls/s), `catalog`
//! (connect `n` servers and list their tools; wall time), `idle` (`n`
//! connected sessions held for a second). It prints one JSON line that
//! also carries the process's own peak RSS (`VmHWM`, children excluded).
//!
//! `ours` keeps the eras it finds in `BENCH_ERA_FILE` when it is set
//! ([`EraMemory`]), as a host keeps them between launches.
//!
//! Runtime: a current-thread tokio runtime unless `BENCH_RUNTIME=multi`
//! (the harness picks per scenario and documents it).

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, ExitCode, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use mcp_catalog::{McpConnector, ServerSet, SessionRuntime};
use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::{ClientSession, ConnectOptions, EraMemory};
use serde_json::{Value, json};

mod raw_http;

/// The echo argument every client of the benchmark sends.
const MESSAGE: &str = "hello";

/// The request line the raw drivers write: the bytes a client sends for one
/// echo call (104 bytes with the newline).
const REQUEST_LINE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"message\":\"hello\"}}}\n";

const HANDSHAKE: &[u8] = b"{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"raw\",\"version\":\"1\"}}}\n{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n";

#[derive(Debug, Clone)]
enum Target {
    Command(Vec<String>),
    Url(String),
}

#[derive(Debug)]
struct Invocation {
    client: String,
    scenario: String,
    n: usize,
    calls: usize,
    target: Target,
}

fn parse_args() -> Result<Invocation> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let usage = "usage: mcp-bench-client <ours|raw|raw-pipe|raw-http> <seq|tput|catalog|idle> <n> <calls> (-- <server argv…> | --url <url>)";
    if args.len() < 6 {
        bail!("{usage}");
    }
    let target = match args[4].as_str() {
        "--" => Target::Command(args[5..].to_vec()),
        "--url" => Target::Url(args[5].clone()),
        other => bail!("expected `--` or `--url`, got `{other}`; {usage}"),
    };
    Ok(Invocation {
        client: args[0].clone(),
        scenario: args[1].clone(),
        n: args[2].parse().context("<n> is not a number")?,
        calls: args[3].parse().context("<calls> is not a number")?,
        target,
    })
}

fn server_config(name: String, target: &Target) -> ServerConfig {
    let transport = match target {
        Target::Command(argv) => {
            TransportConfig::Stdio(StdioConfig::new(argv[0].clone()).with_args(argv[1..].to_vec()))
        }
        Target::Url(url) => TransportConfig::Http(RemoteConfig::new(url.clone())),
    };
    ServerConfig::new(name, transport)
}

/// What a host passes: its own environment, from which children get the
/// allow-listed variables (the other clients' children inherit theirs).
/// Made once, as a host makes it, and lent to every connect.
fn connect_options() -> &'static ConnectOptions {
    static OPTIONS: std::sync::OnceLock<ConnectOptions> = std::sync::OnceLock::new();
    OPTIONS.get_or_init(|| {
        let options = ConnectOptions::default().with_env(std::env::vars().collect());
        match std::env::var_os("BENCH_ERA_FILE") {
            Some(file) => options.with_eras(Arc::new(EraMemory::open(file))),
            None => options,
        }
    })
}

async fn connect(target: &Target) -> Result<ClientSession> {
    let config = server_config("bench".to_owned(), target);
    mcp_transport::connect(&config, connect_options())
        .await
        .context("connecting")
}

async fn call(session: &ClientSession) -> Result<()> {
    let result = session
        .call_tool("echo", Some(json!({ "message": MESSAGE })))
        .await
        .context("tools/call echo")?;
    if result.is_error {
        bail!("echo reported an error");
    }
    Ok(())
}

fn warmup_calls(calls: usize) -> usize {
    calls / 10 + 10
}

fn percentile(sorted: &[u64], p: f64) -> u64 {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted.get(index).copied().unwrap_or(0)
}

fn nanos(elapsed: Duration) -> u64 {
    u64::try_from(elapsed.as_nanos()).unwrap_or(u64::MAX)
}

fn latency_summary(mut samples: Vec<u64>) -> Value {
    samples.sort_unstable();
    json!({"p50_ns": percentile(&samples, 0.5), "p99_ns": percentile(&samples, 0.99)})
}

async fn ours(invocation: &Invocation) -> Result<Value> {
    let Invocation {
        scenario,
        n,
        calls,
        target,
        ..
    } = invocation;
    let (n, calls) = (*n, *calls);
    match scenario.as_str() {
        "seq" => {
            let session = connect(target).await?;
            for _ in 0..warmup_calls(calls) {
                call(&session).await?;
            }
            let mut samples = Vec::with_capacity(calls);
            for _ in 0..calls {
                let started = Instant::now();
                call(&session).await?;
                samples.push(nanos(started.elapsed()));
            }
            let summary = latency_summary(samples);
            session.close().await.ok();
            Ok(summary)
        }
        "tput" => {
            let session = Arc::new(connect(target).await?);
            let burst = |total: usize| {
                let per_task = total / n.max(1);
                futures::future::join_all((0..n).map(|_| {
                    let session = Arc::clone(&session);
                    tokio::spawn(async move {
                        for _ in 0..per_task {
                            call(&session).await?;
                        }
                        anyhow::Ok(())
                    })
                }))
            };
            for outcome in burst(warmup_calls(calls).max(n)).await {
                outcome??;
            }
            let started = Instant::now();
            for outcome in burst(calls).await {
                outcome??;
            }
            let elapsed = started.elapsed();
            let done = calls / n.max(1) * n;
            session.close().await.ok();
            Ok(json!({"calls_per_s": done as f64 / elapsed.as_secs_f64()}))
        }
        "catalog" => {
            let servers: Vec<ServerConfig> = (0..n)
                .map(|index| server_config(format!("s{index:02}"), target))
                .collect();
            let runtime = SessionRuntime::builder(
                "bench",
                ServerSet::all(servers),
                Arc::new(McpConnector::new(connect_options().clone())),
            )
            .build();
            let started = Instant::now();
            let catalog = runtime.catalog().await.context("building the catalog")?;
            let wall = started.elapsed();
            if let Some(problem) = catalog.diagnostics().first() {
                bail!("catalog diagnostic: {problem:?}");
            }
            let tools = catalog.tools().len();
            runtime.shutdown().await;
            Ok(json!({"wall_ns": nanos(wall), "tools": tools}))
        }
        "idle" => {
            let sessions = futures::future::try_join_all((0..n).map(|_| connect(target))).await?;
            tokio::time::sleep(Duration::from_secs(1)).await;
            let count = sessions.len();
            // Peak RSS is read before closing, which allocates nothing new.
            let hwm = vm_hwm_kb();
            for session in &sessions {
                session.close().await.ok();
            }
            Ok(json!({"sessions": count, "vm_hwm_kb": hwm}))
        }
        other => bail!("unknown scenario `{other}`"),
    }
}

/// A stdio child driven with pre-built lines.
struct RawPipe {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
}

impl RawPipe {
    fn spawn(argv: &[String], handshake: bool) -> Result<RawPipe> {
        let mut child = Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting `{}`", argv[0]))?;
        let stdin = child.stdin.take().context("no stdin")?;
        let stdout = BufReader::new(child.stdout.take().context("no stdout")?);
        let mut pipe = RawPipe {
            child,
            stdin,
            stdout,
            line: Vec::with_capacity(4096),
        };
        if handshake {
            pipe.stdin.write_all(HANDSHAKE)?;
            pipe.read_line()?;
        }
        Ok(pipe)
    }

    fn read_line(&mut self) -> Result<()> {
        self.line.clear();
        if self.stdout.read_until(b'\n', &mut self.line)? == 0 {
            bail!("the server closed its stdout");
        }
        Ok(())
    }

    fn round_trips(&mut self, count: usize, batch: &[u8]) -> Result<()> {
        self.stdin.write_all(batch)?;
        for _ in 0..count {
            self.read_line()?;
        }
        Ok(())
    }
}

impl Drop for RawPipe {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn raw(invocation: &Invocation, handshake: bool) -> Result<Value> {
    let Target::Command(argv) = &invocation.target else {
        bail!("the raw drivers speak stdio only");
    };
    let (n, calls) = (invocation.n.max(1), invocation.calls);
    let modern = handshake && std::env::var("BENCH_WIRE").as_deref() == Ok("2026-07-28");
    let line = if modern {
        raw_http::STDIO_LINE_2026
    } else {
        REQUEST_LINE
    };
    let mut pipe = RawPipe::spawn(argv, handshake && !modern)?;
    let batch = line.repeat(n);
    let one = &batch[..line.len()];
    match invocation.scenario.as_str() {
        "seq" => {
            for _ in 0..warmup_calls(calls) {
                pipe.round_trips(1, one)?;
            }
            let mut samples = Vec::with_capacity(calls);
            for _ in 0..calls {
                let started = Instant::now();
                pipe.round_trips(1, one)?;
                samples.push(nanos(started.elapsed()));
            }
            Ok(latency_summary(samples))
        }
        "tput" => {
            // `n` requests written at once, then their `n` answers read.
            for _ in 0..warmup_calls(calls) / n + 1 {
                pipe.round_trips(n, &batch)?;
            }
            let rounds = (calls / n).max(1);
            let started = Instant::now();
            for _ in 0..rounds {
                pipe.round_trips(n, &batch)?;
            }
            let elapsed = started.elapsed();
            Ok(json!({"calls_per_s": (rounds * n) as f64 / elapsed.as_secs_f64()}))
        }
        other => bail!("the raw drivers have no scenario `{other}`"),
    }
}

fn vm_hwm_kb() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").unwrap_or_default();
    status
        .lines()
        .find_map(|line| line.strip_prefix("VmHWM:"))
        .and_then(|rest| rest.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or(0)
}

fn run() -> Result<Value> {
    let invocation = parse_args()?;
    let multi = std::env::var("BENCH_RUNTIME").as_deref() == Ok("multi");
    let mut result = match invocation.client.as_str() {
        "ours" => {
            let runtime = if multi {
                tokio::runtime::Builder::new_multi_thread()
                    .enable_all()
                    .build()
            } else {
                tokio::runtime::Builder::new_current_thread()
                    .enable_all()
                    .build()
            }
            .context("starting the tokio runtime")?;
            runtime.block_on(ours(&invocation))?
        }
        "raw" => raw(&invocation, true)?,
        "raw-pipe" => raw(&invocation, false)?,
        "raw-http" => match &invocation.target {
            Target::Url(url) => {
                raw_http::raw_http(&invocation.scenario, invocation.n, invocation.calls, url)?
            }
            Target::Command(_) => bail!("the raw HTTP driver needs --url"),
        },
        other => bail!("unknown client `{other}` (ours, raw, raw-pipe, raw-http)"),
    };
    if result.get("vm_hwm_kb").is_none() {
        result["vm_hwm_kb"] = json!(vm_hwm_kb());
    }
    result["client"] = json!(invocation.client);
    result["runtime"] = json!(if multi { "multi" } else { "current" });
    Ok(result)
}

fn main() -> ExitCode {
    let mut out = std::io::stdout().lock();
    let mut err = std::io::stderr().lock();
    match run() {
        Ok(result) => {
            let _ = writeln!(out, "{result}");
            ExitCode::SUCCESS
        }
        Err(error) => {
            let _ = writeln!(err, "mcp-bench-client: {error:#}");
            ExitCode::from(1)
        }
    }
}
