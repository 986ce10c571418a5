//! `cargo xtask conformance-server`: the official conformance suite in
//! server mode against the gateway's HTTP side.
//!
//! `mcp-cli serve --listen 127.0.0.1:0 --passthrough` runs with a home
//! folder of its own whose `.claude.json` names two servers no one here
//! wrote the protocol side of: `peers/ts_everything.mjs` (the TypeScript
//! SDK 2.x with the suite's "everything" names) and `rmcp-peer-server
//! task-suite` (rmcp 3.11's task manager behind the suite's task tools),
//! both over stdio. The suite runs `server --url … --requirements REV` (or
//! `--suite all`) against it. The table has one row per scenario, and the
//! last line is `conformance: N passed, M failed` (checks; warnings count
//! as failed).
//!
//! Scenarios the gateway does not pass, if any, are listed in [`EXPECTED`]
//! with the reason. Their failures are shown and counted but do not fail
//! the run; one of them passing fails it, so the list never claims more
//! than is true. Any other failed or warned check, or a scenario that
//! recorded none, fails the run.

use std::collections::BTreeMap;
use std::fs;
use std::io::{BufRead as _, BufReader};
use std::path::Path;
use std::process::{Child, Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};

use crate::conformance::{Tally, build_binary, find_checks, print_table, scenario_name};
use crate::peers::{install, workspace_root};

/// Scenarios not passed yet, by name or name prefix, and why.
const EXPECTED: &[(&str, &str)] = &[];

/// Why `scenario` is on `listed`, if it is.
fn expected(listed: &[(&str, &'static str)], scenario: &str) -> Option<&'static str> {
    listed
        .iter()
        .find(|(prefix, _)| scenario.starts_with(prefix))
        .map(|(_, why)| *why)
}

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Run the server scenarios a revision requires (`2026-07-28`,
    /// `2025-11-25`), at that revision's wire version.
    #[arg(long, value_name = "REV", conflicts_with = "suite")]
    requirements: Option<String>,
    /// `all`: every server scenario the suite knows.
    #[arg(long)]
    suite: Option<String>,
}

/// The gateway under test; killed when dropped.
struct Gateway(Child);

impl Drop for Gateway {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let root = workspace_root();
    let peers = install(false)?;
    let fixture = peers.dir.join("ts_everything.mjs");
    if !fixture.exists() {
        bail!("{} is missing; run `cargo xtask peers`", fixture.display());
    }
    let cli = build_binary(&root, "mcp-cli", "mcp-cli")?;
    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis())
        .unwrap_or(0);
    let out = root.join(".conformance").join(format!("server-{stamp}"));
    let home = out.join("home");
    fs::create_dir_all(&home).with_context(|| format!("creating {}", home.display()))?;
    let (gateway, url) = start_gateway(&cli, &home, &peers, &fixture)?;
    println!("gateway at {url}");

    let selection: Vec<String> = match (&args.requirements, args.suite.as_deref()) {
        (Some(revision), _) => vec!["--requirements".into(), revision.clone()],
        (None, Some(suite)) => vec!["--suite".into(), suite.to_owned()],
        (None, None) => bail!("give --requirements REV or --suite all"),
    };
    let results = out.join("results");
    fs::create_dir_all(&results)?;
    let log = out.join("suite.log");
    let log_file = fs::File::create(&log)?;
    println!("running server {}", selection.join(" "));
    let status = Command::new(&peers.node22)
        .arg(&peers.conformance)
        .args(["server", "--url", &url])
        .args(&selection)
        .arg("-o")
        .arg(&results)
        .stdin(Stdio::null())
        .stdout(log_file.try_clone()?)
        .stderr(log_file)
        .status()
        .context("running the conformance suite")?;
    drop(gateway);
    if !status.success() {
        println!("  (suite exited with {status}; log: {})", log.display());
    }
    let mut files = Vec::new();
    find_checks(&results, &mut files)?;
    if files.is_empty() {
        bail!("the suite wrote no checks (log: {})", log.display());
    }
    let mut per_scenario: BTreeMap<String, Tally> = BTreeMap::new();
    for file in &files {
        let name = scenario_name(&results, file);
        let name = name.strip_prefix("server-").unwrap_or(&name).to_owned();
        crate::conformance::tally_file(file, per_scenario.entry(name).or_default())?;
    }
    Ok(judge(&per_scenario, &out, EXPECTED))
}

/// Prints the table and what was expected; the exit code.
#[allow(clippy::print_stdout)]
fn judge(
    per_scenario: &BTreeMap<String, Tally>,
    out: &Path,
    listed: &[(&str, &'static str)],
) -> ExitCode {
    let (passed, failed) = print_table(per_scenario, out);
    let mut unexpected = Vec::new();
    let mut now_passing = Vec::new();
    println!();
    for (scenario, tally) in per_scenario {
        match (expected(listed, scenario), tally.fails()) {
            (Some(why), true) => println!("expected failure: {scenario}: {why}"),
            (Some(_), false) if tally.passed > 0 => now_passing.push(scenario.as_str()),
            (None, true) => unexpected.push(scenario.as_str()),
            _ => {}
        }
    }
    if !now_passing.is_empty() {
        println!(
            "passing but listed as expected failures (take them off the list): {}",
            now_passing.join(", ")
        );
    }
    if !unexpected.is_empty() {
        println!("unexpected failures: {}", unexpected.join(", "));
    }
    println!("conformance: {passed} passed, {failed} failed");
    if unexpected.is_empty() && now_passing.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Starts the gateway in front of both fixtures, named in its home's
/// `.claude.json`; its URL once it listens.
fn start_gateway(
    cli: &Path,
    home: &Path,
    peers: &crate::peers::Peers,
    fixture: &Path,
) -> Result<(Gateway, String)> {
    let config = serde_json::json!({"mcpServers": {
        "everything": {"command": peers.node22, "args": [fixture, "stdio"]},
        "tasks": {"command": peers.rmcp_server, "args": ["task-suite"]},
    }});
    let path = home.join(".claude.json");
    fs::write(&path, serde_json::to_vec_pretty(&config)?)
        .with_context(|| format!("writing {}", path.display()))?;
    let (child, url) = spawn_gateway(cli, home, &[])?;
    Ok((Gateway(child), url))
}

/// `mcp-cli serve --listen 127.0.0.1:0 --passthrough -- SERVER…` with
/// `home` as its home (so no user configuration is read): the process,
/// and the URL once it listens.
pub(crate) fn start_passthrough_gateway(
    cli: &Path,
    home: &Path,
    server: &[&std::ffi::OsStr],
) -> Result<(Child, String)> {
    let mut tail = vec![std::ffi::OsStr::new("--")];
    tail.extend_from_slice(server);
    spawn_gateway(cli, home, &tail)
}

/// `mcp-cli serve --listen 127.0.0.1:0 --passthrough TAIL…` with `home`
/// as its home and an empty folder inside it as its project and working
/// folder: the process, and the URL once it listens.
fn spawn_gateway(cli: &Path, home: &Path, tail: &[&std::ffi::OsStr]) -> Result<(Child, String)> {
    let project = home.join("project");
    fs::create_dir_all(&project).with_context(|| format!("creating {}", project.display()))?;
    let mut child = Command::new(cli)
        .env("HOME", home)
        .arg("--home")
        .arg(home)
        .arg("--project")
        .arg(&project)
        .args(["serve", "--listen", "127.0.0.1:0", "--passthrough"])
        .args(tail)
        .current_dir(&project)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("starting {}", cli.display()))?;
    let stderr = child.stderr.take().context("the gateway's stderr");
    let url = stderr.and_then(served_url);
    match url {
        Ok(url) => Ok((child, url)),
        Err(error) => {
            let _ = child.kill();
            let _ = child.wait();
            Err(error)
        }
    }
}

/// The URL `mcp-cli serve --listen` says it serves at, read from its
/// standard error; the rest of that stream is drained so the gateway
/// never blocks on a full pipe.
fn served_url(stderr: std::process::ChildStderr) -> Result<String> {
    let mut lines = BufReader::new(stderr).lines();
    let url = loop {
        let Some(line) = lines.next() else {
            bail!("the gateway exited before it listened");
        };
        let line = line?;
        if let Some(url) = line.strip_prefix("serving MCP at ") {
            break url.trim().to_owned();
        }
    };
    std::thread::spawn(move || lines.for_each(drop));
    Ok(url)
}

#[cfg(test)]
mod tests {
    use super::*;

    const LISTED: &[(&str, &str)] = &[("tasks-", "a reason")];

    #[test]
    fn expected_failures_are_found_by_name_prefix() {
        assert_eq!(expected(LISTED, "tasks-lifecycle"), Some("a reason"));
        assert_eq!(expected(LISTED, "tasks-"), Some("a reason"));
        assert_eq!(
            expected(LISTED, "input-required-result-capability-check"),
            None
        );
        assert_eq!(expected(LISTED, "my-tasks-lifecycle"), None);
        assert_eq!(expected(EXPECTED, "tasks-lifecycle"), None);
    }

    #[test]
    fn a_listed_scenario_that_passes_fails_the_run() {
        let judged =
            |per_scenario: &BTreeMap<String, Tally>| judge(per_scenario, Path::new("out"), LISTED);
        let mut per_scenario = BTreeMap::new();
        per_scenario.insert(
            "tasks-lifecycle".to_owned(),
            Tally {
                passed: 2,
                ..Tally::default()
            },
        );
        assert_eq!(judged(&per_scenario), ExitCode::from(1));
        per_scenario.insert(
            "tasks-lifecycle".to_owned(),
            Tally {
                passed: 1,
                failed: 1,
                ..Tally::default()
            },
        );
        assert_eq!(judged(&per_scenario), ExitCode::SUCCESS);
        per_scenario.insert(
            "tools-list".to_owned(),
            Tally {
                passed: 1,
                failed: 1,
                ..Tally::default()
            },
        );
        assert_eq!(judged(&per_scenario), ExitCode::from(1));
        // an unlisted scenario that recorded nothing fails the run too
        let mut empty = BTreeMap::new();
        empty.insert("tools-list".to_owned(), Tally::default());
        assert_eq!(judged(&empty), ExitCode::from(1));
    }
}
