//! `cargo xtask conformance`: runs the official MCP conformance suite
//! (client side, the version pinned in `peers/package.json`) against our
//! conformance client, `mcp-conformance-client` (crate
//! `mcp-integration-tests`).
//!
//! The suite starts a test server per scenario and runs the client with the
//! server url as its last argument. What runs:
//!
//! - `--requirements REV` (2026-07-28, 2025-11-25): exactly the frozen list
//!   of client scenarios the suite's `requirements/REV.yaml` names, scored
//!   and not scored alike, each at REV's wire version;
//! - `--suite all`: every client scenario the suite knows (`list --client`),
//!   extension scenarios forced to run;
//! - `--suite core` (the default): the non-auth scenarios of 2025-11-25;
//! - `--suite NAME` (`auth`, ...): handed to the suite as is;
//! - `--scenario NAME` (with `--spec-version`, `--force` when asked).
//!
//! `--no-auth` drops the `auth/*` scenarios: authorization is measured on
//! its own. Each scenario of a list runs on its own with its own output
//! folder, so its `checks.json` is read back under the name it was run as.
//! SUCCESS and INFO count as passed, FAILURE and WARNING as failed, SKIPPED
//! (or a scenario the suite declined to run) as skipped and listed. A
//! scenario that ran and recorded no check at all verified nothing and
//! fails. The table has one row per scenario; the last line is
//! `conformance: N passed, M failed` (checks), and the exit code is 1 when
//! any check of the selected scenarios failed or warned, or a scenario
//! recorded none.

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};

use crate::peers::{Peers, install, workspace_root};

/// The non-auth client scenarios of 2025-11-25.
pub(crate) const CORE_SCENARIOS: &[&str] = &[
    "initialize",
    "tools_call",
    "elicitation-sep1034-client-defaults",
    "sse-retry",
];

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Suite: `core` (the non-auth scenarios of 2025-11-25, default), `all`
    /// (every client scenario, extensions included) or a suite name the
    /// conformance tool knows (`auth`, ...).
    #[arg(long, conflicts_with_all = ["scenario", "requirements"])]
    suite: Option<String>,
    /// One scenario by name (see `list --client`).
    #[arg(long, conflicts_with = "requirements")]
    scenario: Option<String>,
    /// Run exactly the client scenarios a revision requires, frozen at its
    /// release (`2026-07-28`, `2025-11-25`), at that revision's wire version.
    #[arg(long, value_name = "REV")]
    requirements: Option<String>,
    /// Leave out the `auth/*` scenarios.
    #[arg(long)]
    no_auth: bool,
    /// Run `--scenario` even where the suite says it does not apply at the
    /// chosen revision (extension scenarios).
    #[arg(long, requires = "scenario")]
    force: bool,
    /// The revision `--scenario` runs at.
    #[arg(long, value_name = "REV", requires = "scenario")]
    spec_version: Option<String>,
}

/// One invocation of the suite.
#[derive(Debug)]
struct Run {
    /// The scenario's name, when the run is one scenario.
    scenario: Option<String>,
    args: Vec<String>,
}

impl Run {
    fn scenario(name: &str, spec_version: Option<&str>, force: bool) -> Self {
        let mut args = vec!["--scenario".to_owned(), name.to_owned()];
        if let Some(version) = spec_version {
            args.extend(["--spec-version".to_owned(), version.to_owned()]);
        }
        if force {
            args.push("--force".to_owned());
        }
        Run {
            scenario: Some(name.to_owned()),
            args,
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Tally {
    pub(crate) passed: usize,
    pub(crate) failed: usize,
    pub(crate) warnings: usize,
    pub(crate) skipped: usize,
    pub(crate) problems: Vec<String>,
}

impl Tally {
    fn verdict(&self) -> &'static str {
        if self.failed + self.warnings > 0 {
            "FAILED"
        } else if self.is_empty() {
            "NO CHECKS"
        } else if self.passed == 0 {
            "SKIPPED"
        } else {
            "ok"
        }
    }

    /// Ran, and recorded nothing at all.
    fn is_empty(&self) -> bool {
        self.passed + self.failed + self.warnings + self.skipped == 0
    }

    pub(crate) fn fails(&self) -> bool {
        self.failed + self.warnings > 0 || self.is_empty()
    }
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let root = workspace_root();
    let peers = install(false)?;
    let client = build_client(&root)?;

    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let out = root.join(".conformance").join(stamp.to_string());
    fs::create_dir_all(&out).with_context(|| format!("creating {}", out.display()))?;

    let runs = plan(&args, &peers)?;
    if runs.is_empty() {
        bail!("no scenario is selected");
    }
    let mut per_scenario: BTreeMap<String, Tally> = BTreeMap::new();
    for (index, run) in runs.iter().enumerate() {
        println!("running {}", run.args.join(" "));
        let dir = out.join(format!("{index:03}"));
        fs::create_dir_all(&dir)?;
        let log = dir.join("suite.log");
        let log_file = fs::File::create(&log)?;
        let status = Command::new(&peers.node22)
            .arg(&peers.conformance)
            .arg("client")
            .arg("--command")
            .arg(&client)
            .args(&run.args)
            .arg("-o")
            .arg(&dir)
            .stdin(Stdio::null())
            .stdout(log_file.try_clone()?)
            .stderr(log_file)
            .status()
            .context("running the conformance suite")?;
        // The suite exits 1 whenever a check fails; the checks tell.
        if !status.success() {
            println!("  (suite exited with {status}; log: {})", log.display());
        }
        let mut files = Vec::new();
        find_checks(&dir, &mut files)?;
        if files.is_empty() {
            // A scenario the suite declined to run (not applicable at the
            // revision) writes nothing.
            let name = run.scenario.clone().unwrap_or_else(|| run.args.join(" "));
            let tally = per_scenario.entry(name).or_default();
            tally.skipped += 1;
            tally.problems.push(format!(
                "SKIPPED: no checks written (log: {})",
                log.display()
            ));
            continue;
        }
        for file in &files {
            let name = run
                .scenario
                .clone()
                .unwrap_or_else(|| scenario_name(&dir, file));
            tally_file(file, per_scenario.entry(name).or_default())?;
        }
        // The suite's own verdict counts too: a client that exited with an
        // error fails its scenario even when every recorded check passed.
        if let Some(scenario) = &run.scenario {
            let text = fs::read_to_string(&log).unwrap_or_default();
            if judged_failed(&text) {
                let tally = per_scenario.entry(scenario.clone()).or_default();
                if tally.failed + tally.warnings == 0 {
                    tally.failed += 1;
                    tally.problems.push(format!(
                        "FAILURE: the suite judged the scenario failed (log: {})",
                        log.display()
                    ));
                }
            }
        }
    }

    Ok(report(&per_scenario, &out))
}

/// Whether the suite's log ends in its overall failure verdict.
fn judged_failed(log: &str) -> bool {
    log.lines()
        .rev()
        .find(|line| line.contains("OVERALL:"))
        .is_some_and(|line| line.contains("FAILED"))
}

/// The suite invocations `args` asks for.
fn plan(args: &Args, peers: &Peers) -> Result<Vec<Run>> {
    let keep = |name: &str| !(args.no_auth && name.starts_with("auth/"));
    if let Some(scenario) = &args.scenario {
        return Ok(vec![Run::scenario(
            scenario,
            args.spec_version.as_deref(),
            args.force,
        )]);
    }
    if let Some(revision) = &args.requirements {
        let listing = suite_output(peers, &["list", "--requirements", revision])?;
        let scenarios = required_client_scenarios(&listing);
        if scenarios.is_empty() {
            bail!("the suite lists no client scenario for {revision}:\n{listing}");
        }
        // As the suite's own `--requirements` does: every scenario at the
        // revision's wire, forced where it is not scored there.
        return Ok(scenarios
            .iter()
            .filter(|name| keep(name))
            .map(|name| Run::scenario(name, Some(revision), true))
            .collect());
    }
    match args.suite.as_deref().unwrap_or("core") {
        "core" => Ok(CORE_SCENARIOS
            .iter()
            .filter(|name| keep(name))
            .map(|name| Run::scenario(name, None, false))
            .collect()),
        "all" => {
            let listing = suite_output(peers, &["list", "--client"])?;
            let scenarios = client_scenarios(&listing);
            if scenarios.is_empty() {
                bail!("the suite lists no client scenario:\n{listing}");
            }
            Ok(scenarios
                .iter()
                .filter(|(name, _)| keep(name))
                .map(|(name, extension)| Run::scenario(name, None, *extension))
                .collect())
        }
        suite => {
            if args.no_auth {
                bail!("--no-auth works with --requirements, --suite core and --suite all");
            }
            Ok(vec![Run {
                scenario: None,
                args: vec!["--suite".into(), suite.to_owned()],
            }])
        }
    }
}

/// What the suite prints for `args` (its `list` subcommands).
fn suite_output(peers: &Peers, args: &[&str]) -> Result<String> {
    let output = Command::new(&peers.node22)
        .arg(&peers.conformance)
        .args(args)
        .stdin(Stdio::null())
        .output()
        .context("running the conformance suite")?;
    if !output.status.success() {
        bail!(
            "conformance {} failed ({}): {}",
            args.join(" "),
            output.status,
            String::from_utf8_lossy(&output.stderr)
        );
    }
    Ok(String::from_utf8_lossy(&output.stdout).into_owned())
}

/// The client scenarios of `list --requirements REV`: the scored ones under
/// "Client scenarios" and the not-scored ones marked `[client]`.
fn required_client_scenarios(listing: &str) -> Vec<String> {
    let mut found = Vec::new();
    let mut in_client = false;
    for line in listing.lines() {
        if !line.starts_with(' ') {
            in_client = line.starts_with("Client scenarios");
            continue;
        }
        let Some(item) = line.trim_start().strip_prefix("- ") else {
            continue;
        };
        if let Some(name) = item.strip_suffix(" [client]") {
            found.push(name.trim().to_owned());
        } else if in_client && !item.contains('[') {
            found.push(item.trim().to_owned());
        }
    }
    found
}

/// The scenarios of `list --client`, each with whether it is an extension
/// scenario (which runs only when forced).
fn client_scenarios(listing: &str) -> Vec<(String, bool)> {
    listing
        .lines()
        .filter_map(|line| line.trim_start().strip_prefix("- "))
        .map(|item| {
            let (name, versions) = item.split_once(" [").unwrap_or((item, ""));
            (name.trim().to_owned(), versions.contains("extension"))
        })
        .collect()
}

pub(crate) fn tally_file(file: &Path, tally: &mut Tally) -> Result<()> {
    let text = fs::read_to_string(file).with_context(|| format!("reading {}", file.display()))?;
    let checks: serde_json::Value =
        serde_json::from_str(&text).with_context(|| format!("parsing {}", file.display()))?;
    for check in checks.as_array().map(Vec::as_slice).unwrap_or_default() {
        let id = check["id"].as_str().unwrap_or("?");
        // Failures carry `errorMessage`, some checks only `details.message`,
        // the rest at least what they check.
        let message = check["errorMessage"]
            .as_str()
            .or_else(|| check["details"]["message"].as_str())
            .or_else(|| check["description"].as_str())
            .unwrap_or("");
        match check["status"].as_str().unwrap_or("") {
            "SUCCESS" | "INFO" => tally.passed += 1,
            "SKIPPED" => {
                tally.skipped += 1;
                tally.problems.push(format!("SKIPPED {id}: {message}"));
            }
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
    Ok(())
}

/// Prints the per-scenario table and the totals; the exit code.
#[allow(clippy::print_stdout)]
fn report(per_scenario: &BTreeMap<String, Tally>, out: &Path) -> ExitCode {
    let (passed, failed) = print_table(per_scenario, out);
    let empty: Vec<&str> = per_scenario
        .iter()
        .filter(|(_, tally)| tally.is_empty())
        .map(|(scenario, _)| scenario.as_str())
        .collect();
    if !empty.is_empty() {
        println!("no checks recorded (failed): {}", empty.join(", "));
    }
    println!("conformance: {passed} passed, {failed} failed");
    if failed > 0 || !empty.is_empty() {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}

/// Prints one row per scenario, each scenario's problems and the counts;
/// the checks passed and failed (warnings counted as failed).
#[allow(clippy::print_stdout)]
pub(crate) fn print_table(per_scenario: &BTreeMap<String, Tally>, out: &Path) -> (usize, usize) {
    let width = per_scenario
        .keys()
        .map(String::len)
        .max()
        .unwrap_or(8)
        .max("scenario".len());
    println!();
    println!(
        "{:<width$}  {:>6}  {:>6}  {:>8}  {:>7}  result",
        "scenario", "passed", "failed", "warnings", "skipped"
    );
    let (mut passed, mut failed, mut warnings) = (0, 0, 0);
    let mut skipped_scenarios = Vec::new();
    let mut failed_scenarios = 0;
    for (scenario, tally) in per_scenario {
        println!(
            "{scenario:<width$}  {:>6}  {:>6}  {:>8}  {:>7}  {}",
            tally.passed,
            tally.failed,
            tally.warnings,
            tally.skipped,
            tally.verdict()
        );
        passed += tally.passed;
        failed += tally.failed;
        warnings += tally.warnings;
        if tally.fails() {
            failed_scenarios += 1;
        }
        if tally.skipped > 0 {
            skipped_scenarios.push(scenario.as_str());
        }
    }
    println!();
    for (scenario, tally) in per_scenario {
        if !tally.problems.is_empty() {
            println!("{scenario}:");
            for problem in &tally.problems {
                println!("    {problem}");
            }
        }
    }
    println!("results: {}", out.display());
    println!(
        "scenarios: {} run, {failed_scenarios} failed",
        per_scenario.len()
    );
    if !skipped_scenarios.is_empty() {
        println!("skipped: {}", skipped_scenarios.join(", "));
    }
    println!("warnings: {warnings} (counted as failed below)");
    (passed, failed + warnings)
}

/// Builds the conformance client and returns its path.
fn build_client(root: &Path) -> Result<PathBuf> {
    build_binary(root, "mcp-integration-tests", "mcp-conformance-client")
}

/// Builds binary `bin` of `package` (debug) and returns its path.
pub(crate) fn build_binary(root: &Path, package: &str, bin: &str) -> Result<PathBuf> {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let status = Command::new(cargo)
        .args(["build", "--quiet", "-p", package, "--bin", bin])
        .current_dir(root)
        .status()
        .with_context(|| format!("building {bin}"))?;
    if !status.success() {
        bail!("building {bin} failed ({status})");
    }
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let target = if target.is_absolute() {
        target
    } else {
        root.join(target)
    };
    let path = target.join("debug").join(bin);
    if !path.exists() {
        bail!("{} is missing after the build", path.display());
    }
    Ok(path)
}

pub(crate) fn find_checks(dir: &Path, found: &mut Vec<PathBuf>) -> Result<()> {
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
pub(crate) fn scenario_name(out: &Path, file: &Path) -> String {
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_suites_overall_verdict_is_read_from_its_last_line() {
        assert!(judged_failed(
            "Passed: 1/1\n\u{26a0} CLIENT EXITED WITH ERROR\n\u{274c} OVERALL: FAILED\n"
        ));
        assert!(!judged_failed("Passed: 2/2\n\u{2705} OVERALL: PASSED\n"));
        assert!(!judged_failed("SKIPPED: not applicable\n"));
    }

    #[test]
    fn the_requirement_listing_yields_scored_and_not_scored_client_scenarios() {
        let listing = "Required for 2026-07-28 (3 scenarios, frozen):\n\n\
            Server scenarios (test against a server):\n  - server-stateless\n\n\
            Client scenarios (test against a client):\n  - tools_call\n  - auth/iss-supported\n\n\
            Run and reported, but never scored:\n  extension (2):\n    - auth/dpop [client]\n    - tasks-lifecycle [server]\n\
            \x20 added-after-release (1):\n    - json-schema-2020-12-preservation [client]\n";
        assert_eq!(
            required_client_scenarios(listing),
            [
                "tools_call",
                "auth/iss-supported",
                "auth/dpop",
                "json-schema-2020-12-preservation"
            ]
        );
    }

    #[test]
    fn the_client_listing_marks_extension_scenarios() {
        let listing = "Client scenarios (test against a client):\n  - initialize [2025-06-18,2025-11-25]\n  - sep-2640-client-no-prefetch [extension]\n";
        assert_eq!(
            client_scenarios(listing),
            [
                ("initialize".to_owned(), false),
                ("sep-2640-client-no-prefetch".to_owned(), true)
            ]
        );
    }

    #[test]
    fn a_scenario_without_checks_fails_and_one_with_only_skips_does_not() {
        let empty = Tally::default();
        assert_eq!(empty.verdict(), "NO CHECKS");
        assert!(empty.fails());
        let skipped = Tally {
            skipped: 1,
            ..Tally::default()
        };
        assert_eq!(skipped.verdict(), "SKIPPED");
        assert!(!skipped.fails());
        let warned = Tally {
            passed: 3,
            warnings: 1,
            ..Tally::default()
        };
        assert_eq!(warned.verdict(), "FAILED");
        assert!(warned.fails());
    }

    #[test]
    fn timestamps_are_stripped_from_folder_names() {
        assert_eq!(
            strip_timestamp("sse-retry-2026-11-30T04-51-00-123Z"),
            "sse-retry"
        );
        assert_eq!(strip_timestamp("tools_call"), "tools_call");
    }
}
