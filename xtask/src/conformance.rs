//! `cargo xtask conformance [--suite NAME] [--scenario NAME]`: runs the
//! official MCP conformance suite (client side) against our conformance
//! client, `mcp-conformance-client` (crate `mcp-integration-tests`).
//!
//! The suite starts a test server per scenario and runs the client with the
//! server url as its last argument. Every `checks.json` it writes is read
//! back; SUCCESS and INFO count as passed, FAILURE and WARNING as failed
//! (warnings are listed separately). The last line printed is
//! `conformance: N passed, M failed`, counting checks, not scenarios.
//!
//! `--suite core` (the default) is the non-auth client scenarios; any other
//! suite name (`all`, `auth`, ...) is handed to the suite as is.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use std::process::ExitCode;

use anyhow::{Context, Result, bail};

use crate::peers::{install, workspace_root};

/// The non-auth client scenarios.
pub(crate) const CORE_SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Suite: `core` (the non-auth scenarios, default) or a suite name the
    /// conformance tool knows (`all`, `auth`, ...).
    #[arg(long, conflicts_with = "scenario")]
    suite: Option<String>,
    /// One scenario by name (see `list --client`).
    #[arg(long)]
    scenario: Option<String>,
}

#[derive(Debug, Default)]
struct Tally {
    passed: usize,
    failed: usize,
    warnings: usize,
    problems: Vec<String>,
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let root = workspace_root();
    let peers = install(false)?;
    let client = build_client(&root)?;

    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    let out = root.join(".conformance").join(stamp.to_string());
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let runs: Vec<Vec<String>> = match (&args.scenario, args.suite.as_deref().unwrap_or("core")) {
        (Some(scenario), _) => vec![vec!["--scenario".into(), scenario.clone()]],
        (None, "core") => CORE_SCENARIOS
            .iter()
            .map(|s| vec!["--scenario".into(), (*s).to_owned()])
            .collect(),
        (None, suite) => vec![vec!["--suite".into(), suite.to_owned()]],
    };
    for (index, selection) in runs.iter().enumerate() {
        println!("running {}", selection.join(" "));
        let log = out.join(format!("run-{index}.log"));
        let log_file = fs::File::create(&log)?;
        let status = Command::new(&peers.node22)
            .arg(&peers.conformance)
            .arg("client")
            .arg("--command")
            .arg(&client)
            .args(selection)
            .arg("-o")
            .arg(&out)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .status()
            .context("running the conformance suite")?;
        // The suite exits 1 whenever a check fails; the checks tell.
        if !status.success() {
            println!("  (suite exited with {status}; log: {})", log.display());
        }
    }

    let mut per_scenario: BTreeMap<String, Tally> = BTreeMap::new();
    let mut files = Vec::new();
    find_checks(&out, &mut files)?;
    if files.is_empty() {
        bail!("the suite wrote no checks.json under {}", out.display());
    }
    for file in files {
        let scenario = scenario_name(&out, &file);
        let text =
            fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
        let checks: serde_json::Value =
            serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
        let tally = per_scenario.entry(scenario).or_default();
        for check in checks.as_array().map(Vec::as_slice).unwrap_or_default() {
            let id = check["id"].as_str().unwrap_or("?");
            let message = check["errorMessage"].as_str().unwrap_or("");
            match check["status"].as_str().unwrap_or("") {
                "SUCCESS" | "INFO" => tally.passed += 1,
                "WARNING" => {
                    tally.warnings += 1;
                    tally.problems.push(format!("WARNING {id}: {message}"));
                }
                other => {
                    tally.failed += 1;
                    tally.problems.push(format!("{other} {id}: {message}"));
                }
            }
        }
    }

    let (mut passed, mut failed, mut warnings) = (0, 0, 0);
    println!();
    for (scenario, tally) in &per_scenario {
        println!(
            "{scenario}: {} passed, {} failed, {} warnings",
            tally.passed, tally.failed, tally.warnings
        );
        for problem in &tally.problems {
            println!("    {problem}");
        }
        passed += tally.passed;
        failed += tally.failed;
        warnings += tally.warnings;
    }
    println!("results: {}", out.display());
    println!("warnings: {warnings} (counted as failed below)");
    println!("conformance: {passed} passed, {} failed", failed + warnings);
    Ok(if failed + warnings > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Builds the conformance client and returns its path.
fn build_client(root: &Path) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args([
            "build",
            "--quiet",
            "-p",
            "mcp-integration-tests",
            "--bin",
            "mcp-conformance-client",
        ])
        .current_dir(root)
        .status()
        .context("building mcp-conformance-client")?;
    if !status.success() {
        bail!("building mcp-conformance-client failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        root.join(target)
    };
    let client = target.join("debug").join("mcp-conformance-client");
    if !client.exists() {
        bail!("{} is missing after the build", client.display());
    }
    Ok(client)
}

fn find_checks(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
    for entry in fs::read_dir(dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.is_dir() {
            find_checks(&path, found)?;
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            found.push(path);
        }
    }
    found.sort();
    Ok(())
}

/// The scenario a `checks.json` belongs to: its folder below the output
/// directory, without the timestamp suffix the suite adds.
fn scenario_name(out: &Path, file: &Path) -> String {
    let folder = file
        .parent()
        .and_then(|p| p.strip_prefix(out).ok())
        .map(|p| p.to_string_lossy().into_owned());
    let folder = folder.unwrap_or_else(|| "?".to_owned());
    strip_timestamp(&folder).to_owned()
}

fn strip_timestamp(folder: &str) -> &str {
    // `<scenario>-2026-11-30T04-51-00-123Z` → `<scenario>`
    match folder.find("-20") {
        Some(at) if folder[at + 1..].chars().take(4).all(|c| c.is_ascii_digit()) => &folder[..at],
        _ => folder,
    }
}
