//! `cargo xtask cli-calls`: how long one `mcp-cli` invocation takes, run
//! many times in a row against a given home and project, the way a person
//! or a script calls one tool. Builds `mcp-cli` first, runs the command
//! once cold (first start of every server it connects, caches empty) and
//! then `--calls` times, and prints the cold time and the mean, median,
//! 90th percentile and slowest of the warm runs. Any run that fails stops
//! the measurement with its stderr.
//!
//! ```sh
//! cargo xtask cli-calls --release --home ~/six/home --project ~/six/project \
//!     -- call mcp__fs__list_allowed_directories
//! ```

use std::path::PathBuf;
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use anyhow::{Context, bail};

use crate::demo::{build_bins, exe};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The home directory `mcp-cli` reads (`--home`).
    #[arg(long)]
    home: PathBuf,
    /// The project directory `mcp-cli` reads (`--project`).
    #[arg(long)]
    project: PathBuf,
    /// How many warm runs to time after the cold one.
    #[arg(long, default_value_t = 100)]
    calls: usize,
    /// Build and run the release binary.
    #[arg(long)]
    release: bool,
    /// Time this `mcp-cli` binary instead of building one (to compare
    /// builds of two commits in one run).
    #[arg(long, value_name = "PATH")]
    cli: Option<PathBuf>,
    /// The verb and its arguments, after `--`.
    #[arg(last = true, required = true)]
    command: Vec<String>,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let cli = match &args.cli {
        Some(cli) => cli.clone(),
        None => build_bins(&["mcp-cli"], &["mcp-cli"], args.release)?.join(exe("mcp-cli")),
    };
    let once = || -> anyhow::Result<Duration> {
        let started = Instant::now();
        let output = Command::new(&cli)
            .arg("--home")
            .arg(&args.home)
            .arg("--project")
            .arg(&args.project)
            .args(&args.command)
            .output()
            .with_context(|| format!("cannot run {}", cli.display()))?;
        let elapsed = started.elapsed();
        if !output.status.success() {
            bail!(
                "mcp-cli {} failed ({}):\n{}",
                args.command.join(" "),
                output.status,
                String::from_utf8_lossy(&output.stderr)
            );
        }
        Ok(elapsed)
    };
    let cold = once()?;
    let mut warm = Vec::with_capacity(args.calls);
    for _ in 0..args.calls {
        warm.push(once()?);
    }
    warm.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    let at = |q: f64| {
        let index = ((warm.len() as f64 - 1.0) * q).round() as usize;
        warm.get(index).copied().unwrap_or_default()
    };
    let total: Duration = warm.iter().sum();
    #[allow(clippy::print_stdout)]
    {
        println!("mcp-cli {}", args.command.join(" "));
        println!("cold: {:.1} ms", ms(cold));
        if !warm.is_empty() {
            println!(
                "warm ({} runs): mean {:.1} ms, p50 {:.1} ms, p90 {:.1} ms, max {:.1} ms, total {:.2} s",
                warm.len(),
                ms(total / warm.len() as u32),
                ms(at(0.5)),
                ms(at(0.9)),
                ms(at(1.0)),
                total.as_secs_f64()
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}
