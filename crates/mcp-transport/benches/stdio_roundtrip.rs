//! Tool-call round trips over stdio against one `mcp-example-server`
//! process, next to the lower bound measured in the same run: a raw pipe
//! echo (`cat`) of a request line of the same size.
//!
//! - `sequential/*`: one call at a time (latency).
//! - `in_flight_64/*`: 64 calls in flight at once (throughput).
//! - `session_only/sdk_echo`: the same call to an in-process echo server
//!   through the `sdk` transport: the session's own share of the cost.
//!
//! Before the criterion groups, a quick pass prints p50/p99 latencies,
//! throughput with 1, 16 and 64 calls in flight and the MCP/raw ratios, on a
//! multi-thread and a current-thread runtime (criterion reports means and
//! medians only). Run with a filter that matches no benchmark (e.g.
//! `-- summary-only`) for the quick pass alone.
//!
//! The server binary is `$MCP_EXAMPLE_SERVER` (any server with an `echo`
//! tool; a minimal one makes the client's own cost show), else
//! `target/release/mcp-example-server`, built on demand.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::expect_used)]

mod support;
use support::echo::EchoServer;
use support::{connect, server_binary};

use std::process::Stdio;
use std::sync::Arc;
use std::time::{Duration, Instant};

use criterion::{Criterion, Throughput};
use mcp_transport::SessionOptions;
use mcp_transport::kinds::{SdkOptions, SdkTransport};
use mcp_transport::wire::Codec;
use mcp_transport::{ClientSession, JsonRpcMessage, RequestId};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::process::{Child, ChildStdin, ChildStdout};
use tokio::runtime::Runtime;

const IN_FLIGHT: usize = 64;

async fn call(session: &ClientSession) {
    let result = session
        .call_tool("echo", Some(json!({"text": "hello"})))
        .await
        .unwrap();
    assert!(!result.is_error);
}

/// `cat` as the lower bound: a line in, the same line out.
struct RawPipe {
    _child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    line: Vec<u8>,
    buffer: Vec<u8>,
}

impl RawPipe {
    fn spawn() -> RawPipe {
        let mut child = tokio::process::Command::new("cat")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        // The same bytes the session writes for one echo call.
        let request = JsonRpcMessage::request(
            RequestId::Number(12345),
            "tools/call",
            Some(json!({"name": "echo", "arguments": {"text": "hello"}})),
        );
        let mut line = Codec::default().encode(&request);
        line.push(b'\n');
        RawPipe {
            stdin: child.stdin.take().unwrap(),
            stdout: BufReader::new(child.stdout.take().unwrap()),
            _child: child,
            line,
            buffer: Vec::with_capacity(256),
        }
    }

    async fn round_trips(&mut self, count: usize) {
        let mut batch = Vec::with_capacity(self.line.len() * count);
        for _ in 0..count {
            batch.extend_from_slice(&self.line);
        }
        self.stdin.write_all(&batch).await.unwrap();
        for _ in 0..count {
            self.buffer.clear();
            self.stdout
                .read_until(b'\n', &mut self.buffer)
                .await
                .unwrap();
            assert_eq!(self.buffer.len(), self.line.len());
        }
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let index = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[index]
}

fn micros(d: Duration) -> f64 {
    d.as_secs_f64() * 1e6
}

/// A quick pass printing p50/p99 and the ratios.
fn summary(runtime: &Runtime, session: &Arc<ClientSession>, raw: &mut RawPipe) {
    const SAMPLES: usize = 5000;
    runtime.block_on(async {
        for _ in 0..500 {
            call(session).await;
            raw.round_trips(1).await;
        }
        let mut mcp = Vec::with_capacity(SAMPLES);
        let mut pipe = Vec::with_capacity(SAMPLES);
        // Interleaved so both see the same machine load.
        for _ in 0..SAMPLES {
            let started = Instant::now();
            call(session).await;
            mcp.push(started.elapsed());
            let started = Instant::now();
            raw.round_trips(1).await;
            pipe.push(started.elapsed());
        }
        mcp.sort();
        pipe.sort();
        let (m50, m99) = (percentile(&mcp, 0.5), percentile(&mcp, 0.99));
        let (r50, r99) = (percentile(&pipe, 0.5), percentile(&pipe, 0.99));
        println!("  sequential latency over {SAMPLES} round trips:");
        println!(
            "    mcp tools/call  p50 {:8.1} us   p99 {:8.1} us",
            micros(m50),
            micros(m99)
        );
        println!(
            "    raw pipe (cat)  p50 {:8.1} us   p99 {:8.1} us",
            micros(r50),
            micros(r99)
        );
        println!(
            "    ratio mcp/raw   p50 {:8.2}x     p99 {:8.2}x",
            micros(m50) / micros(r50),
            micros(m99) / micros(r99)
        );

        for in_flight in [1, 16, IN_FLIGHT] {
            let batches = 12_800 / in_flight;
            let started = Instant::now();
            for _ in 0..batches {
                futures::future::join_all((0..in_flight).map(|_| call(session))).await;
            }
            let mcp_rate = (batches * in_flight) as f64 / started.elapsed().as_secs_f64();
            let started = Instant::now();
            for _ in 0..batches {
                raw.round_trips(in_flight).await;
            }
            let raw_rate = (batches * in_flight) as f64 / started.elapsed().as_secs_f64();
            println!(
                "  {in_flight:2} in flight: mcp {mcp_rate:9.0} calls/s   cat {raw_rate:9.0} lines/s   ratio {:5.2}x",
                raw_rate / mcp_rate
            );
        }
    });
}

/// The summary on a runtime of the given flavour, with its own session.
fn summary_on(name: &str, runtime: &Runtime, binary: &std::path::Path) {
    println!("{name} runtime:");
    let session = Arc::new(runtime.block_on(connect(binary)));
    let mut raw = runtime.block_on(async { RawPipe::spawn() });
    summary(runtime, &session, &mut raw);
    runtime.block_on(session.close()).unwrap();
}

fn main() {
    let binary = server_binary();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    summary_on("multi-thread (2 workers)", &runtime, &binary);
    let current_thread = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    summary_on("current-thread", &current_thread, &binary);
    drop(current_thread);

    let session = Arc::new(runtime.block_on(connect(&binary)));
    let raw = runtime.block_on(async { RawPipe::spawn() });
    let in_process = runtime.block_on(async {
        let transport = SdkTransport::connect("echo", Arc::new(EchoServer), SdkOptions::default());
        ClientSession::initialize(Box::new(transport), "echo", SessionOptions::default())
            .await
            .unwrap()
    });
    let raw = Arc::new(tokio::sync::Mutex::new(raw));

    let mut criterion = Criterion::default()
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();

    let mut sequential = criterion.benchmark_group("sequential");
    sequential.throughput(Throughput::Elements(1));
    sequential.bench_function("mcp_tools_call_echo", |b| {
        b.to_async(&runtime).iter(|| call(&session));
    });
    sequential.bench_function("raw_pipe_echo", |b| {
        b.to_async(&runtime)
            .iter(|| async { raw.lock().await.round_trips(1).await });
    });
    sequential.finish();

    let mut in_flight = criterion.benchmark_group("in_flight_64");
    in_flight.throughput(Throughput::Elements(IN_FLIGHT as u64));
    in_flight.bench_function("mcp_tools_call_echo", |b| {
        b.to_async(&runtime)
            .iter(|| futures::future::join_all((0..IN_FLIGHT).map(|_| call(&session))));
    });
    in_flight.bench_function("raw_pipe_echo", |b| {
        b.to_async(&runtime)
            .iter(|| async { raw.lock().await.round_trips(IN_FLIGHT).await });
    });
    in_flight.finish();

    let mut session_only = criterion.benchmark_group("session_only");
    session_only.throughput(Throughput::Elements(1));
    session_only.bench_function("sdk_echo", |b| {
        b.to_async(&runtime).iter(|| call(&in_process));
    });
    session_only.finish();

    criterion.final_summary();
    runtime.block_on(session.close()).unwrap();
}
