//! The workspace's task runner: `cargo xtask check-config`, peer set-up,
//! conformance runs, fuzzing, benchmarks and the build footprint of a
//! feature subset.
//!
//! Each subcommand lives in its own module (`src/<name>.rs`) with a clap
//! `Args` struct and a `run` function returning the process exit status;
//! adding one is a new variant in [`Command`] and a match arm in [`main`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod bench_compare;
mod check_config;
mod cli_calls;
mod conformance;
mod conformance_server;
mod demo;
mod footprint;
mod fuzz;
mod peers;

#[derive(Debug, Parser)]
#[command(
    name = "cargo xtask",
    bin_name = "cargo xtask",
    about = "Workspace tasks",
    version
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Load every MCP config source, list the merged servers and report
    /// every problem with its position.
    CheckConfig(check_config::Args),
    /// Build mcp-cli and the example server, then probe, list the tools of
    /// and call the bundled example project (no network needed).
    Demo(demo::Args),
    /// Install the real MCP peers (Node 22, the official conformance suite,
    /// server-everything, supergateway, Python `mcp` venvs) into `.peers/`
    /// from the files under `peers/`.
    Peers,
    /// Run the official MCP conformance suite against our client; the last
    /// line is `conformance: N passed, M failed` (checks).
    Conformance(conformance::Args),
    /// Run the official MCP conformance suite in server mode against the
    /// gateway (`mcp-cli serve`) in front of a TypeScript SDK server.
    ConformanceServer(conformance_server::Args),
    /// Compare our client with the TypeScript SDK, Python `mcp` and rmcp
    /// clients on the same servers in one run (see BENCHMARKS.md).
    BenchCompare(bench_compare::Args),
    /// Time one `mcp-cli` invocation run many times in a row (cold, then
    /// warm: mean, median, p90, slowest).
    CliCalls(cli_calls::Args),
    /// Build the cargo-fuzz targets under `fuzz/` with the stable toolchain
    /// and run each for `--seconds` (default 60); fails naming the input
    /// on any crash, out-of-memory or timeout.
    Fuzz(fuzz::Args),
    /// Count the crates a build with only some features pulls in (by
    /// default mcp-catalog with `stdio`) and fail if any of the HTTP, TLS,
    /// WebSocket or JWT crates is among them.
    Footprint(footprint::Args),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::CheckConfig(args) => check_config::run(args),
        Command::Demo(args) => demo::run(args),
        Command::Peers => peers::run(),
        Command::Conformance(args) => conformance::run(args),
        Command::ConformanceServer(args) => conformance_server::run(args),
        Command::BenchCompare(args) => bench_compare::run(args),
        Command::Fuzz(args) => fuzz::run(args),
        Command::CliCalls(args) => cli_calls::run(args),
        Command::Footprint(args) => footprint::run(args),
    };
    match result {
        Ok(code) => code,
        Err(err) => {
            report_error(&err);
            ExitCode::from(1)
        }
    }
}

/// Prints an error (with its causes) on stderr.
fn report_error(err: &anyhow::Error) {
    use std::io::Write;
    let _ = writeln!(std::io::stderr(), "error: {err:#}");
}
