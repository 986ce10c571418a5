//! `cargo xtask check-config`: argument parsing and printing around
//! [`mcp_config::CheckReport`], which holds the check itself.
//!
//! The report quotes config files, so every line passes the CLI's terminal
//! rule (the same source file, compiled here): human lines through
//! `shown`, JSON through `json_pretty`.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::Context;
use mcp_config::{CheckReport, LoadOptions};

// The rule for outside text on a terminal, shared with `mcp-cli`; this
// binary uses only part of it.
#[allow(dead_code)]
#[path = "../../crates/mcp-cli/src/output/escape.rs"]
mod escape;

/// Exit status for usage errors (clap uses the same for bad flags).
const USAGE_ERROR: u8 = 2;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// The user's home folder (`.claude.json`, `.claude/settings.json`,
    /// installed plugins). Defaults to `$HOME`.
    #[arg(long, value_name = "DIR")]
    home: Option<PathBuf>,
    /// The project folder (`.mcp.json`, `.claude/settings*.json`).
    /// Defaults to the current folder.
    #[arg(long, value_name = "DIR")]
    project: Option<PathBuf>,
    /// The folder holding OpenClaw's `openclaw.json`.
    #[arg(long, value_name = "DIR")]
    openclaw_home: Option<PathBuf>,
    /// The organisation's managed policy folder (`managed-mcp.json`,
    /// `managed-settings.json`, `requirements.toml`): check a policy before
    /// deploying it. Defaults to the platform's (`/etc/claude-code` on Linux).
    #[arg(long, value_name = "DIR")]
    managed_dir: Option<PathBuf>,
    /// An enabled plugin root (repeatable, in registry order).
    #[arg(long = "plugin", value_name = "DIR")]
    plugins: Vec<PathBuf>,
    /// Treat warnings as errors.
    #[arg(long)]
    strict: bool,
    /// Print one JSON object instead of text.
    #[arg(long)]
    json: bool,
    /// Approve every project server (hosts without a person to ask).
    #[arg(long)]
    trust_project_servers: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let options = match options(&args) {
        Ok(options) => options,
        Err(message) => {
            let _ = writeln!(std::io::stderr(), "error: {}", escape::shown(&message));
            return Ok(ExitCode::from(USAGE_ERROR));
        }
    };
    let report = CheckReport::run(&options);
    let mut out = std::io::stdout().lock();
    if args.json {
        let text = escape::json_pretty(&report.to_json()).context("rendering the report")?;
        writeln!(out, "{text}").context("writing the report")?;
    } else {
        for line in report.human_lines() {
            writeln!(out, "{}", escape::shown(&line)).context("writing the report")?;
        }
    }
    let code = u8::try_from(report.exit_code(args.strict)).unwrap_or(1);
    Ok(ExitCode::from(code))
}

/// Builds the loader inputs; the only place the process environment, the
/// home directory and the current directory are read.
fn options(args: &Args) -> Result<LoadOptions, String> {
    let env: BTreeMap<String, String> = std::env::vars().collect();
    let home = match &args.home {
        Some(dir) => Some(existing_dir("--home", dir)?),
        None => env.get("HOME").map(PathBuf::from),
    };
    let project = match &args.project {
        Some(dir) => existing_dir("--project", dir)?,
        None => {
            std::env::current_dir().map_err(|e| format!("cannot read the current folder: {e}"))?
        }
    };
    let openclaw_home = args
        .openclaw_home
        .as_deref()
        .map(|d| existing_dir("--openclaw-home", d))
        .transpose()?;
    let plugin_roots = args
        .plugins
        .iter()
        .map(|d| existing_dir("--plugin", d))
        .collect::<Result<Vec<_>, _>>()?;
    let managed_dir = match &args.managed_dir {
        Some(dir) => existing_dir("--managed-dir", dir)?,
        None => mcp_config::policy::default_managed_dir(),
    };
    let mut options = LoadOptions::default()
        .with_project(project)
        .with_managed_dir(managed_dir)
        .with_plugin_roots(plugin_roots)
        .with_env(env)
        .with_trust_project_servers(args.trust_project_servers);
    options.home = home;
    options.openclaw_home = openclaw_home;
    Ok(options)
}

/// `dir` made absolute (the project path keys `projects[...]` in
/// `.claude.json`), or a usage error when it is not a folder.
fn existing_dir(flag: &str, dir: &Path) -> Result<PathBuf, String> {
    if !dir.is_dir() {
        return Err(format!("{flag} {}: not a folder", dir.display()));
    }
    std::path::absolute(dir).map_err(|e| format!("{flag} {}: {e}", dir.display()))
}
