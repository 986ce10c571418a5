//! Heap allocations per tool call over stdio, counted by a global
//! allocator that wraps the system one: every allocation of the process
//! (session, transport, runtime) between the first and the last call of a
//! run, divided by the number of calls.
//!
//! - `sequential`: one `tools/call` at a time.
//! - `in_flight_64`: 64 concurrent loops of calls.
//!
//! Each on a current-thread and on a multi-thread runtime. The server is
//! `$MCP_EXAMPLE_SERVER` (the minimal C server of `bench/minimal-server`
//! makes the client's own allocations show; its `echo` takes `message`;
//! `MCP_EXAMPLE_SERVER_ARGS="--revision 2026-07-28"` makes it speak the
//! 2026-07-28 wire), else `target/release/mcp-example-server` (which
//! speaks 2026-07-28 and whose `echo` takes `text`), built on demand.
//! Prints one
//! line per case; no criterion groups (a count needs no statistics).

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::expect_used)]

mod support;
use support::{connect, server_binary};

use std::sync::Arc;

use mcp_test_peers::counting::{Counting, allocated};
use mcp_transport::ClientSession;
use serde_json::json;

#[global_allocator]
static GLOBAL: Counting = Counting;

const CALLS: u64 = 20_000;
const IN_FLIGHT: u64 = 64;

async fn call(session: &ClientSession, argument: &str) {
    session
        .call_tool("echo", Some(json!({ argument: "hello" })))
        .await
        .unwrap();
}

/// The name of `echo`'s argument: `message` for a server given in
/// `$MCP_EXAMPLE_SERVER` (the minimal server), `text` for the example
/// server.
fn echo_argument() -> &'static str {
    if std::env::var_os("MCP_EXAMPLE_SERVER").is_some() {
        "message"
    } else {
        "text"
    }
}

/// Allocations and bytes per call of `run`, which makes `CALLS` calls.
async fn per_call<F: std::future::Future<Output = ()>>(run: F) -> (f64, f64) {
    let (allocations, bytes) = allocated();
    run.await;
    let (allocations_after, bytes_after) = allocated();
    (
        (allocations_after - allocations) as f64 / CALLS as f64,
        (bytes_after - bytes) as f64 / CALLS as f64,
    )
}

async fn measure(binary: &std::path::Path, runtime: &str) {
    let session = Arc::new(connect(binary).await);
    let argument = echo_argument();
    let wire = session.protocol_version().to_owned();
    for _ in 0..1_000 {
        call(&session, argument).await;
    }
    let (allocations, bytes) = per_call(async {
        for _ in 0..CALLS {
            call(&session, argument).await;
        }
    })
    .await;
    println!(
        "alloc_per_call/{runtime}/{wire}/sequential: {allocations:.1} allocations, {bytes:.0} bytes per call"
    );
    let (allocations, bytes) = per_call(async {
        let loops: Vec<_> = (0..IN_FLIGHT)
            .map(|_| {
                let session = Arc::clone(&session);
                tokio::spawn(async move {
                    for _ in 0..CALLS / IN_FLIGHT {
                        call(&session, argument).await;
                    }
                })
            })
            .collect();
        for handle in loops {
            handle.await.unwrap();
        }
    })
    .await;
    println!(
        "alloc_per_call/{runtime}/{wire}/in_flight_64: {allocations:.1} allocations, {bytes:.0} bytes per call"
    );
    session.close().await.unwrap();
}

fn main() {
    let binary = server_binary();
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(measure(&binary, "current"));
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(measure(&binary, "multi"));
}
