//! The workspace's task runner: `cargo xtask check-config`, peer set-up,
//! conformance runs and benchmarks.
//!
//! Each subcommand lives in its own module (`src/<name>.rs`) with a clap
//! `Args` struct and a `run` function returning the process exit status;
//! adding one is a new variant in [`Command`] and a match arm in [`main`].

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod check_config;
mod demo;

#[derive(Debug, Parser)]
#[command(name = "cargo xtask", about = "Workspace tasks", version)]
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
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    if let Some(result) = run_network_task(&args) {
        return match result {
            Ok(()) => ExitCode::SUCCESS,
            Err(err) => {
                report_error(&err);
                ExitCode::from(1)
            }
        };
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::CheckConfig(args) => check_config::run(args),
        Command::Demo(args) => demo::run(args),
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

// --- network peers and the conformance suite (peers.rs, conformance.rs) ---
mod conformance;
mod peers;

/// Runs `peers` or `conformance` if `args` names one; `None` otherwise.
fn run_network_task(args: &[String]) -> Option<anyhow::Result<()>> {
    match args.first().map(String::as_str) {
        Some("peers") => Some(peers::run(&args[1..])),
        Some("conformance") => Some(conformance::run(&args[1..])),
        _ => None,
    }
}
// --- end of network tasks ---
