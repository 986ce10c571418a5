//! What one run measures: the sizes of the run ([`Plan`]) and every
//! measurement in table order, each a client, a scenario, a target server
//! and the metric it reports.

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
}

/// Sizes of one run.
#[derive(Debug, Clone, Copy)]
pub(super) struct Plan {
    pub(super) reps: usize,
    /// Sequential calls per run for fast clients; slow ones get a fifth.
    pub(super) seq_calls: usize,
    /// Calls per throughput run for fast clients; slow ones get a tenth.
    pub(super) tput_calls: usize,
}

pub(super) fn stdio_target(argv: &[String]) -> Vec<String> {
    let mut target = vec!["--".to_owned()];
    target.extend(argv.iter().cloned());
    target
}

/// Every measurement of the run, in table order.
pub(super) fn plan_measurements(
    plan: &Plan,
    servers: &Servers,
    available: impl Fn(&str) -> bool,
) -> Vec<Measurement> {
    const MCP_CLIENTS: [&str; 4] = ["ours", "ts", "py", "rmcp"];
    let slow_client = |client: &str| client == "py";
    let mut out = Vec::new();
    let mut push = |m: Measurement| {
        if available(m.client) {
            out.push(m);
        }
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
    push(Measurement {
        section: "stdio tool-call latency, sequential",
        what: "104-byte line through `cat`".into(),
        client: "raw-pipe",
        scenario: "seq",
        n: 1,
        calls: plan.seq_calls,
        target: stdio_target(&servers.cat),
        metric: Metric::Latency,
        runtime: "current",
    });
    for (what, server, divisor) in [
        ("minimal server", &servers.minimal, 1),
        ("server-everything", &servers.everything, 3),
    ] {
        let clients: &[&str] = if divisor == 1 {
            &["raw", "ours", "ts", "py", "rmcp"]
        } else {
            &MCP_CLIENTS
        };
        for &client in clients {
            push(Measurement {
                section: "stdio tool-call latency, sequential",
                what: what.into(),
                client,
                scenario: "seq",
                n: 1,
                calls: seq_calls(client, divisor),
                target: stdio_target(server),
                metric: Metric::Latency,
                runtime: "current",
            });
        }
    }

    // 2. Throughput with 1, 16 and 64 calls in flight.
    for (what, server, divisor) in [
        ("minimal server", &servers.minimal, 1),
        ("server-everything", &servers.everything, 4),
    ] {
        for in_flight in [1, 16, 64] {
            let clients: &[&str] = if divisor == 1 {
                &["raw", "ours", "ts", "py", "rmcp"]
            } else {
                &MCP_CLIENTS
            };
            for &client in clients {
                let calls = plan.tput_calls / divisor / if slow_client(client) { 10 } else { 1 };
                push(Measurement {
                    section: "stdio throughput",
                    what: format!("{in_flight} in flight, {what}"),
                    client,
                    scenario: "tput",
                    n: in_flight,
                    calls,
                    target: stdio_target(server),
                    metric: Metric::Rate,
                    runtime: "current",
                });
            }
        }
    }

    // 3. Cold catalog: connect + tools/list of N servers.
    for (what, server) in [
        ("servers waiting 300 ms in initialize", &servers.slow),
        ("server-everything", &servers.everything),
    ] {
        for count in [1, 10, 20] {
            for client in MCP_CLIENTS {
                push(Measurement {
                    section: "cold catalog over stdio (connect + tools/list, all at once)",
                    what: format!("{count} × {what}"),
                    client,
                    scenario: "catalog",
                    n: count,
                    calls: 0,
                    target: stdio_target(server),
                    metric: Metric::Wall,
                    runtime: "current",
                });
            }
        }
    }

    // 4. Streamable HTTP: the minimal server's HTTP mode (the client's own
    // cost) and server-everything (a real server that spends milliseconds
    // per call itself, so it gets few calls and latency only).
    let url = |url: &str| vec!["--url".to_owned(), url.to_owned()];
    let http_section = "streamable HTTP tool calls";
    for client in MCP_CLIENTS {
        push(Measurement {
            section: http_section,
            what: "sequential, minimal server".into(),
            client,
            scenario: "seq",
            n: 1,
            calls: seq_calls(client, 5),
            target: url(&servers.http_minimal),
            metric: Metric::Latency,
            runtime: "current",
        });
    }
    for client in MCP_CLIENTS {
        push(Measurement {
            section: http_section,
            what: "sequential, server-everything".into(),
            client,
            scenario: "seq",
            n: 1,
            calls: if slow_client(client) { 50 } else { 100 },
            target: url(&servers.http_everything),
            metric: Metric::Latency,
            runtime: "current",
        });
    }
    for in_flight in [1, 16, 64] {
        for client in MCP_CLIENTS {
            let calls = plan.tput_calls / 10 / if slow_client(client) { 5 } else { 1 };
            push(Measurement {
                section: "streamable HTTP throughput (minimal server)",
                what: format!("{in_flight} in flight"),
                client,
                scenario: "tput",
                n: in_flight,
                calls,
                target: url(&servers.http_minimal),
                metric: Metric::Rate,
                runtime: "current",
            });
        }
    }

    // 5. Peak RSS with 20 idle sessions.
    for client in MCP_CLIENTS {
        push(Measurement {
            section: "client memory",
            what: "peak RSS, 20 idle sessions (minimal server)".into(),
            client,
            scenario: "idle",
            n: 20,
            calls: 0,
            target: stdio_target(&servers.minimal),
            metric: Metric::Rss,
            runtime: "current",
        });
    }
    out
}
