//! What one run measures: the sizes of the run ([`Plan`]) and every
//! measurement in table order, each a client, a scenario, a target server,
//! the wire generation it is measured at and the metric it reports.
//!
//! The run has two generations of rows. At 2025-11-25 every server speaks
//! only the `initialize` era (the minimal server by default, and
//! server-everything 2026.8.31, which is built on the TypeScript SDK 1.x and
//! answers `server/discover` with "method not found"), so a client that
//! probes first falls back, as it would against any such server. At
//! 2026-07-28 the minimal server runs with `--revision 2026-07-28` and the
//! clients that speak that revision (ours, the TypeScript SDK 2.x in its
//! `auto` negotiation, rmcp in `ClientLifecycleMode::Auto`, and the raw
//! drivers' modern request bytes) are measured against it.

use super::servers::Servers;

/// What one measurement reports.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) enum Metric {
    /// p50 and p99 latency.
    Latency,
    /// Calls per second.
    Rate,
    /// Wall time of the whole scenario.
    Wall,
    /// Peak RSS of the client process.
    Rss,
}

#[derive(Debug, Clone)]
pub(super) struct Measurement {
    pub(super) section: &'static str,
    /// What is measured, without the client (`minimal server`, `64 in
    /// flight, server-everything`, ...).
    pub(super) what: String,
    pub(super) client: &'static str,
    pub(super) scenario: &'static str,
    pub(super) n: usize,
    pub(super) calls: usize,
    pub(super) target: Vec<String>,
    pub(super) metric: Metric,
    /// `BENCH_RUNTIME` for the Rust clients.
    pub(super) runtime: &'static str,
    /// The wire generation of the row (`BENCH_WIRE` for the clients that
    /// pick how they connect).
    pub(super) wire: &'static str,
}

/// The generation of the `initialize` handshake.
pub(super) const WIRE_2025: &str = "2025-11-25";

/// The stateless generation (`server/discover`, per-request `_meta`).
pub(super) const WIRE_2026: &str = "2026-07-28";

/// The servers that are slow to start, as the rows of `wire` name them: at
/// 2026-07-28 there is no `initialize`, so the minimal server waits before
/// its first modern answer instead.
pub(super) fn slow_servers(wire: &str) -> &'static str {
    if wire == WIRE_2026 {
        "servers waiting 300 ms before their first answer"
    } else {
        "servers waiting 300 ms in initialize"
    }
}

impl Measurement {
    /// The table section of the row: its kind and, after the first
    /// generation, the wire it is measured at.
    pub(super) fn heading(&self) -> String {
        format!("{} (wire {})", self.section, self.wire)
    }
}

/// Sizes of one run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    pub(super) reps: usize,
    /// Sequential calls per run for fast clients; slow ones get a fifth.
    pub(super) seq_calls: usize,
    /// Calls per throughput run for fast clients; slow ones get a tenth,
    /// and the runs against the minimal server more (see
    /// `generation_rows`).
    pub(super) tput_calls: usize,
}

pub(super) fn stdio_target(argv: &[String]) -> Vec<String> {
    let mut target = vec!["--".to_owned()];
    target.extend(argv.iter().cloned());
    target
}

fn url_target(url: &str) -> Vec<String> {
    vec!["--url".to_owned(), url.to_owned()]
}

/// The clients of one generation's rows.
struct Generation<'a> {
    wire: &'static str,
    /// The MCP clients measured (ours first).
    clients: &'a [&'static str],
    minimal: &'a [String],
    slow: &'a [String],
    http_minimal: &'a str,
    /// server-everything, measured at the first generation only (it does
    /// not speak 2026-07-28).
    everything: Option<(&'a [String], &'a str)>,
}

/// Every measurement of the run, in table order.
pub(super) fn plan_measurements(
    plan: &Plan,
    servers: &Servers,
    available: impl Fn(&str) -> bool,
) -> Vec<Measurement> {
    let mut out = Vec::new();
    let legacy = Generation {
        wire: WIRE_2025,
        clients: &["ours", "ts", "ts2", "py", "rmcp"],
        minimal: &servers.minimal,
        slow: &servers.slow,
        http_minimal: &servers.http_minimal,
        everything: Some((&servers.everything, &servers.http_everything)),
    };
    let modern = Generation {
        wire: WIRE_2026,
        clients: &["ours", "ts2", "rmcp"],
        minimal: &servers.minimal_modern,
        slow: &servers.slow_modern,
        http_minimal: &servers.http_minimal_modern,
        everything: None,
    };
    for generation in [legacy, modern] {
        generation_rows(plan, servers, &generation, &mut |m: Measurement| {
            if available(m.client) {
                out.push(m);
            }
        });
    }
    out
}

fn generation_rows(
    plan: &Plan,
    servers: &Servers,
    generation: &Generation<'_>,
    push: &mut dyn FnMut(Measurement),
) {
    // The Python client makes a fifth of the sequential calls and a tenth
    // of the throughput calls; the Node clients over HTTP (near 1 ms per
    // call at any concurrency, so the row measures the SDK) a fifth of the
    // HTTP throughput calls.
    let slow_client = |client: &str| client == "py";
    let wire = generation.wire;
    let clients = generation.clients;
    let measurement = |section: &'static str,
                       what: String,
                       client: &'static str,
                       scenario: &'static str,
                       n: usize,
                       calls: usize,
                       target: Vec<String>,
                       metric: Metric| Measurement {
        section,
        what,
        client,
        scenario,
        n,
        calls,
        target,
        metric,
        runtime: "current",
        wire,
    };
    let with_raw = |raw: &'static str| {
        let mut all = vec![raw];
        all.extend_from_slice(clients);
        all
    };

    // 1. Sequential latency over stdio.
    let seq_calls = |client: &str, divisor: usize| {
        let calls = plan.seq_calls / divisor;
        if slow_client(client) {
            calls / 5
        } else {
            calls
        }
    };
    let section = "stdio tool-call latency, sequential";
    if wire == WIRE_2025 {
        push(measurement(
            section,
            "104-byte line through `cat`".into(),
            "raw-pipe",
            "seq",
            1,
            plan.seq_calls,
            stdio_target(&servers.cat),
            Metric::Latency,
        ));
    }
    for &client in &with_raw("raw") {
        push(measurement(
            section,
            "minimal server".into(),
            client,
            "seq",
            1,
            seq_calls(client, 1),
            stdio_target(generation.minimal),
            Metric::Latency,
        ));
    }
    if let Some((everything, _)) = generation.everything {
        for &client in clients {
            push(measurement(
                section,
                "server-everything".into(),
                client,
                "seq",
                1,
                seq_calls(client, 3),
                stdio_target(everything),
                Metric::Latency,
            ));
        }
    }

    // 2. Throughput with 1, 16 and 64 calls in flight. Against
    // server-everything (the peer's own cost, ~10 k calls/s) the TypeScript
    // SDK 2.x and the Python client are left out, so the run stays short:
    // the SDK's 1.x rows already show it there, and the Python client's
    // rows against the minimal server show its own cost.
    let section = "stdio throughput";
    // Against the minimal server a run must last long enough to outweigh
    // the scheduler's slices (a few ms on two shared cores): the fast
    // clients make five times the plan's calls (ours a quarter second at
    // 64 in flight), the raw driver, some five times faster still, twenty.
    let minimal_tput_calls = |client: &str| match client {
        "raw" => plan.tput_calls * 20,
        slow if slow_client(slow) => plan.tput_calls / 10,
        _ => plan.tput_calls * 5,
    };
    for in_flight in [1, 16, 64] {
        for &client in &with_raw("raw") {
            let calls = minimal_tput_calls(client);
            push(measurement(
                section,
                format!("{in_flight} in flight, minimal server"),
                client,
                "tput",
                in_flight,
                calls,
                stdio_target(generation.minimal),
                Metric::Rate,
            ));
        }
    }
    if let Some((everything, _)) = generation.everything {
        for in_flight in [1, 16, 64] {
            for &client in clients.iter().filter(|c| !matches!(**c, "ts2" | "py")) {
                let calls = plan.tput_calls / 4;
                push(measurement(
                    section,
                    format!("{in_flight} in flight, server-everything"),
                    client,
                    "tput",
                    in_flight,
                    calls,
                    stdio_target(everything),
                    Metric::Rate,
                ));
            }
        }
    }

    // 3. Cold catalog: connect + tools/list of N servers.
    let section = "cold catalog over stdio (connect + tools/list, all at once)";
    let mut catalogs: Vec<(&str, &[String])> = vec![(slow_servers(wire), generation.slow)];
    if let Some((everything, _)) = generation.everything {
        catalogs.push(("server-everything", everything));
    }
    for (what, server) in catalogs {
        for count in [1, 10, 20] {
            for &client in clients {
                push(measurement(
                    section,
                    format!("{count} × {what}"),
                    client,
                    "catalog",
                    count,
                    0,
                    stdio_target(server),
                    Metric::Wall,
                ));
            }
        }
    }

    // 4. Streamable HTTP: the minimal server's HTTP mode (the client's own
    // cost) and server-everything (a real server that spends milliseconds
    // per call itself, so it gets few calls and latency only).
    let section = "streamable HTTP tool calls";
    for &client in &with_raw("raw-http") {
        push(measurement(
            section,
            "sequential, minimal server".into(),
            client,
            "seq",
            1,
            seq_calls(client, 5),
            url_target(generation.http_minimal),
            Metric::Latency,
        ));
    }
    if let Some((_, http_everything)) = generation.everything {
        for &client in clients {
            push(measurement(
                section,
                "sequential, server-everything".into(),
                client,
                "seq",
                1,
                if slow_client(client) { 50 } else { 100 },
                url_target(http_everything),
                Metric::Latency,
            ));
        }
    }
    let section = "streamable HTTP throughput (minimal server)";
    for in_flight in [1, 16, 64] {
        for &client in &with_raw("raw-http") {
            let slow = slow_client(client) || client.starts_with("ts");
            let calls = plan.tput_calls / 10 / if slow { 5 } else { 1 };
            push(measurement(
                section,
                format!("{in_flight} in flight"),
                client,
                "tput",
                in_flight,
                calls,
                url_target(generation.http_minimal),
                Metric::Rate,
            ));
        }
    }

    // 5. Peak RSS with 20 and 100 idle sessions.
    for sessions in [20, 100] {
        for &client in clients {
            push(measurement(
                "client memory",
                format!("peak RSS, {sessions} idle sessions (minimal server)"),
                client,
                "idle",
                sessions,
                0,
                stdio_target(generation.minimal),
                Metric::Rss,
            ));
        }
    }
}
