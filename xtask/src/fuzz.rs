//! `cargo xtask fuzz [--seconds N] [--target NAME]...`: builds the
//! cargo-fuzz targets under `fuzz/` and runs each one for N seconds, then
//! prints one summary table and fails when any target found a crash, an
//! out-of-memory or a timeout, naming the saved input.
//!
//! **Stable toolchain only.** cargo-fuzz's coverage flags
//! (`-Cpasses=sancov-module`, `-Cllvm-args=-sanitizer-coverage-…`,
//! `--cfg fuzzing`) are stable; the one unstable flag is
//! `-Zsanitizer=address`, which a stable `rustc` accepts when
//! `RUSTC_BOOTSTRAP=1` is set, and the stable toolchain already ships the
//! sanitizer runtimes for `x86_64-unknown-linux-gnu`. So the build runs the
//! toolchain rustup picks (no `+nightly`) with `RUSTC_BOOTSTRAP=1` set for
//! the fuzz build only, and `--build-std` is never used (it needs the
//! `rust-src` component and a nightly cargo). `--no-sanitizer` builds
//! without AddressSanitizer where its runtime is missing.
//!
//! Inputs: the committed seeds `fuzz/seeds/<target>/` are read, never
//! written; what a run learns goes to `fuzz/corpus/<target>/` and a failing
//! input to `fuzz/artifacts/<target>/` (both ignored), with the full
//! libFuzzer output in `fuzz/logs/<target>.log`. Every run is bounded:
//! `-rss_limit_mb`, `-malloc_limit_mb` (one allocation; needs the
//! sanitizer's allocator) and a per-input `-timeout`.
//!
//! Nothing here uses the network, except `cargo install cargo-fuzz
//! --locked` when cargo-fuzz is missing (said before it starts).

use std::ffi::OsString;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode, Stdio};

use anyhow::{Context, Result, bail};

use crate::peers::workspace_root;

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Seconds to run each target (after its build).
    #[arg(long, default_value_t = 60)]
    seconds: u64,
    /// Run only this target (repeatable); default: every file in
    /// `fuzz/fuzz_targets/`.
    #[arg(long = "target", value_name = "NAME")]
    targets: Vec<String>,
    /// Build without AddressSanitizer (faster, but a single huge
    /// allocation is then caught by the RSS limit only).
    #[arg(long)]
    no_sanitizer: bool,
    /// Memory limit of the fuzzing process, in MB.
    #[arg(long, default_value_t = 2048)]
    rss_limit_mb: u64,
    /// Largest single allocation, in MB.
    #[arg(long, default_value_t = 512)]
    malloc_limit_mb: u64,
    /// Seconds one input may take before it counts as a hang, for every
    /// target; default: the target's own limit (see [`TIMEOUTS`]), else 10.
    #[arg(long)]
    timeout: Option<u64>,
}

/// Per-input time limits of the targets that promise work linear in
/// their input: an input of theirs that takes longer is a finding (a
/// quadratic reader), reported as a timeout and saved like a crash.
const TIMEOUTS: &[(&str, u64)] = &[("import_readers", 5)];

/// The per-input time limit of `target`, in seconds.
fn timeout_of(target: &str, given: Option<u64>) -> u64 {
    given.unwrap_or_else(|| {
        TIMEOUTS
            .iter()
            .find(|(name, _)| *name == target)
            .map_or(10, |(_, seconds)| *seconds)
    })
}

/// How one target's run ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Verdict {
    Ok,
    Crash,
    OutOfMemory,
    Timeout,
    /// libFuzzer did not run to its end for another reason (a build or
    /// start-up failure); the log says why.
    Failed,
}

impl Verdict {
    fn as_str(self) -> &'static str {
        match self {
            Verdict::Ok => "ok",
            Verdict::Crash => "CRASH",
            Verdict::OutOfMemory => "OOM",
            Verdict::Timeout => "TIMEOUT",
            Verdict::Failed => "FAILED",
        }
    }
}

/// What one run reported.
#[derive(Debug)]
struct Outcome {
    target: String,
    verdict: Verdict,
    runs: Option<u64>,
    execs_per_sec: Option<u64>,
    seconds: f64,
    /// Inputs in the in-memory corpus at the end, and their total size.
    corpus: Option<(u64, String)>,
    /// Edge coverage at the end.
    coverage: Option<u64>,
    peak_rss_mb: Option<u64>,
    artifact: Option<String>,
    log: PathBuf,
}

/// The fuzz workspace's paths.
struct Layout {
    root: PathBuf,
    fuzz: PathBuf,
    target_dir: PathBuf,
}

#[allow(clippy::print_stdout)]
pub(crate) fn run(args: Args) -> Result<ExitCode> {
    let root = workspace_root();
    let fuzz = root.join("fuzz");
    // The fuzz build is for an explicit `--target` triple, so its
    // instrumented artifacts sit apart from the workspace's own builds even
    // in a shared target folder.
    let target_dir =
        std::env::var_os("CARGO_TARGET_DIR").map_or_else(|| fuzz.join("target"), PathBuf::from);
    let layout = Layout {
        root,
        fuzz,
        target_dir,
    };
    let all = list_targets(&layout.fuzz)?;
    let selected = if args.targets.is_empty() {
        all.clone()
    } else {
        for name in &args.targets {
            if !all.contains(name) {
                bail!("no fuzz target `{name}` (targets: {})", all.join(", "));
            }
        }
        args.targets.clone()
    };

    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    ensure_cargo_fuzz(&cargo)?;
    println!("toolchain: {}", rustc_version());
    let sanitizer = if args.no_sanitizer { "none" } else { "address" };
    println!(
        "building {} target(s) (release, debug assertions, sanitizer {sanitizer}) in {}",
        selected.len(),
        layout.target_dir.display()
    );
    for target in &selected {
        let status = fuzz_command(&cargo, &layout, "build", sanitizer)
            .arg(target)
            .status()
            .context("cannot run cargo fuzz build")?;
        if !status.success() {
            bail!("cargo fuzz build {target} failed ({status})");
        }
    }

    let mut outcomes = Vec::new();
    for target in &selected {
        println!("fuzzing {target} for {} s", args.seconds);
        let outcome = run_target(&cargo, &layout, target, sanitizer, &args)?;
        if outcome.verdict != Verdict::Ok {
            print_failure(&outcome.log);
        }
        outcomes.push(outcome);
    }

    print_table(&outcomes);
    let failed: Vec<&Outcome> = outcomes
        .iter()
        .filter(|o| o.verdict != Verdict::Ok)
        .collect();
    if failed.is_empty() {
        println!("fuzz: {} target(s), nothing found", outcomes.len());
        return Ok(ExitCode::SUCCESS);
    }
    for o in &failed {
        match &o.artifact {
            Some(artifact) => println!(
                "{}: {} on input {artifact}; reproduce with\n  \
                 RUSTC_BOOTSTRAP=1 cargo fuzz run --fuzz-dir fuzz -O -a -s {sanitizer} {} {artifact}",
                o.target,
                o.verdict.as_str(),
                o.target
            ),
            None => println!(
                "{}: {} (see {})",
                o.target,
                o.verdict.as_str(),
                o.log.display()
            ),
        }
    }
    println!(
        "fuzz: {} of {} target(s) failed",
        failed.len(),
        outcomes.len()
    );
    Ok(ExitCode::from(1))
}

/// The targets: one file each in `fuzz/fuzz_targets/`, sorted.
fn list_targets(fuzz: &Path) -> Result<Vec<String>> {
    let dir = fuzz.join("fuzz_targets");
    let mut targets = Vec::new();
    for entry in fs::read_dir(&dir).with_context(|| format!("reading {}", dir.display()))? {
        let path = entry?.path();
        if path.extension().is_some_and(|e| e == "rs")
            && let Some(stem) = path.file_stem()
        {
            targets.push(stem.to_string_lossy().into_owned());
        }
    }
    targets.sort();
    if targets.is_empty() {
        bail!("no fuzz targets in {}", dir.display());
    }
    Ok(targets)
}

/// Installs cargo-fuzz when `cargo fuzz` is not a command.
#[allow(clippy::print_stdout)]
fn ensure_cargo_fuzz(cargo: &OsString) -> Result<()> {
    let found = Command::new(cargo)
        .args(["fuzz", "--version"])
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if found {
        return Ok(());
    }
    println!("cargo-fuzz is not installed; installing it: cargo install cargo-fuzz --locked");
    let status = Command::new(cargo)
        .args(["install", "cargo-fuzz", "--locked"])
        .status()
        .context("cannot run cargo install")?;
    if !status.success() {
        bail!("cargo install cargo-fuzz --locked failed ({status})");
    }
    Ok(())
}

/// The compiler the fuzz build will use (rustup's choice, like cargo's).
fn rustc_version() -> String {
    Command::new("rustc")
        .arg("-V")
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
        .unwrap_or_else(|| "unknown rustc".to_owned())
}

/// `cargo fuzz <verb>` with the flags every build and run shares.
fn fuzz_command(cargo: &OsString, layout: &Layout, verb: &str, sanitizer: &str) -> Command {
    let mut command = Command::new(cargo);
    command
        .current_dir(&layout.root)
        // Lets the stable compiler accept the `-Z` flags cargo-fuzz passes.
        .env("RUSTC_BOOTSTRAP", "1")
        .arg("fuzz")
        .arg(verb)
        .arg("--fuzz-dir")
        .arg(&layout.fuzz)
        .args(["--release", "--debug-assertions", "--sanitizer", sanitizer])
        .arg("--target-dir")
        .arg(&layout.target_dir);
    command
}

fn run_target(
    cargo: &OsString,
    layout: &Layout,
    target: &str,
    sanitizer: &str,
    args: &Args,
) -> Result<Outcome> {
    let corpus = layout.fuzz.join("corpus").join(target);
    let seeds = layout.fuzz.join("seeds").join(target);
    let logs = layout.fuzz.join("logs");
    fs::create_dir_all(&corpus).with_context(|| format!("creating {}", corpus.display()))?;
    fs::create_dir_all(&logs).with_context(|| format!("creating {}", logs.display()))?;
    let log = logs.join(format!("{target}.log"));
    let file = fs::File::create(&log).with_context(|| format!("creating {}", log.display()))?;
    let err = file.try_clone()?;

    let mut command = fuzz_command(cargo, layout, "run", sanitizer);
    command.arg(target).arg(&corpus);
    if seeds.is_dir() {
        command.arg(&seeds);
    }
    command
        .arg("--")
        .arg(format!("-max_total_time={}", args.seconds))
        .arg(format!("-rss_limit_mb={}", args.rss_limit_mb))
        .arg(format!("-malloc_limit_mb={}", args.malloc_limit_mb))
        .arg(format!("-timeout={}", timeout_of(target, args.timeout)))
        .arg("-print_final_stats=1")
        .stdout(file)
        .stderr(err);
    let started = std::time::Instant::now();
    let status = command
        .status()
        .with_context(|| format!("cannot run cargo fuzz run {target}"))?;
    let text = fs::read_to_string(&log).unwrap_or_default();
    let mut outcome = parse_log(target, &text, status.success());
    if outcome.verdict != Verdict::Ok {
        // libFuzzer prints no `Done` line when it stops early.
        outcome.seconds = started.elapsed().as_secs_f64();
    }
    outcome.log = log;
    Ok(outcome)
}

/// Reads libFuzzer's output: final statistics, the last status line, and
/// on failure what kind it was and where the input went.
fn parse_log(target: &str, text: &str, success: bool) -> Outcome {
    let stat = |name: &str| {
        text.lines().rev().find_map(|line| {
            line.strip_prefix(&format!("stat::{name}:"))
                .and_then(|v| v.trim().parse::<u64>().ok())
        })
    };
    let verdict = if text.contains("ERROR: libFuzzer: out-of-memory")
        || text.contains("ERROR: libFuzzer: malloc(")
    {
        Verdict::OutOfMemory
    } else if text.contains("ERROR: libFuzzer: timeout") {
        Verdict::Timeout
    } else if text.contains("ERROR: libFuzzer: deadly signal")
        || text.contains("ERROR: AddressSanitizer")
        || text.contains("ERROR: LeakSanitizer")
        || text.contains("ERROR: libFuzzer: fuzz target exited")
        || text.contains("panicked at")
    {
        Verdict::Crash
    } else if success {
        Verdict::Ok
    } else {
        Verdict::Failed
    };
    // `Done 123 runs in 60 second(s)`
    let done = text.lines().rev().find_map(|line| {
        let rest = line.strip_prefix("Done ")?;
        let (runs, rest) = rest.split_once(" runs in ")?;
        let seconds = rest.split_whitespace().next()?.parse::<f64>().ok()?;
        Some((runs.parse::<u64>().ok()?, seconds))
    });
    // `#123	DONE   cov: 456 ft: 789 corp: 12/3456b lim: ...`
    let status_line = text
        .lines()
        .rev()
        .find(|line| line.starts_with('#') && line.contains(" corp: "));
    let field = |name: &str| {
        status_line.and_then(|line| {
            let mut words = line.split_whitespace();
            words.find(|w| *w == name)?;
            words.next().map(str::to_owned)
        })
    };
    let corpus = field("corp:").and_then(|c| {
        let (count, size) = c.split_once('/')?;
        Some((count.parse().ok()?, size.to_owned()))
    });
    let artifact = text.lines().rev().find_map(|line| {
        let (_, path) = line.split_once("Test unit written to ")?;
        Some(path.trim().to_owned())
    });
    let runs = stat("number_of_executed_units").or(done.map(|d| d.0));
    let execs_per_sec = stat("average_exec_per_sec");
    Outcome {
        target: target.to_owned(),
        verdict,
        runs,
        execs_per_sec,
        seconds: done.map_or(0.0, |d| d.1),
        corpus,
        coverage: field("cov:").and_then(|c| c.parse().ok()),
        peak_rss_mb: stat("peak_rss_mb"),
        artifact,
        log: PathBuf::new(),
    }
}

/// Prints what explains a failure: the panic message or sanitizer and
/// libFuzzer error lines, else the end of the log.
#[allow(clippy::print_stdout)]
fn print_failure(log: &Path) {
    let text = fs::read_to_string(log).unwrap_or_default();
    println!("--- from {} ---", log.display());
    for line in failure_lines(&text) {
        println!("{line}");
    }
    println!("---");
}

fn failure_lines(text: &str) -> Vec<&str> {
    let mut picked = Vec::new();
    let mut in_panic = false;
    for line in text.lines() {
        if line.contains("panicked at") {
            in_panic = true;
        } else if in_panic && (line.starts_with("stack backtrace") || line.starts_with("note:")) {
            in_panic = false;
        }
        if in_panic
            || line.contains("ERROR: ")
            || line.starts_with("SUMMARY: ")
            || line.contains("Test unit written to ")
        {
            picked.push(line);
        }
    }
    if picked.is_empty() {
        let all: Vec<&str> = text.lines().collect();
        picked = all[all.len().saturating_sub(30)..].to_vec();
    }
    picked
}

fn print_table(outcomes: &[Outcome]) {
    let show = |v: Option<u64>| v.map_or_else(|| "-".to_owned(), |v| v.to_string());
    let header = [
        "target", "runs", "exec/s", "seconds", "corpus", "cov", "rss MB", "result",
    ];
    let rows: Vec<[String; 8]> = outcomes
        .iter()
        .map(|o| {
            [
                o.target.clone(),
                show(o.runs),
                show(o.execs_per_sec),
                format!("{:.0}", o.seconds),
                o.corpus
                    .as_ref()
                    .map_or_else(|| "-".to_owned(), |(n, size)| format!("{n} ({size})")),
                show(o.coverage),
                show(o.peak_rss_mb),
                o.verdict.as_str().to_owned(),
            ]
        })
        .collect();
    let mut widths = header.map(str::len);
    for row in &rows {
        for (width, cell) in widths.iter_mut().zip(row) {
            *width = (*width).max(cell.len());
        }
    }
    let mut out = std::io::stdout().lock();
    let line = |out: &mut std::io::StdoutLock<'_>, cells: &[&str]| {
        let text: Vec<String> = cells
            .iter()
            .zip(widths)
            .enumerate()
            .map(|(i, (cell, width))| {
                if i == 0 || i == cells.len() - 1 {
                    format!("{cell:<width$}")
                } else {
                    format!("{cell:>width$}")
                }
            })
            .collect();
        let _ = writeln!(out, "{}", text.join("  ").trim_end());
    };
    let _ = writeln!(out);
    line(&mut out, &header);
    for row in &rows {
        let cells: Vec<&str> = row.iter().map(String::as_str).collect();
        line(&mut out, &cells);
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_target_has_its_time_limit_unless_one_is_given() {
        for (target, given, want) in [
            ("import_readers", None, 5),
            ("config_load", None, 10),
            ("import_readers", Some(30), 30),
            ("config_load", Some(2), 2),
        ] {
            assert_eq!(timeout_of(target, given), want, "{target} {given:?}");
        }
    }

    use super::*;

    /// A file in `fuzz_targets/` is a target `cargo xtask fuzz` runs: it
    /// needs its `[[bin]]` in `fuzz/Cargo.toml` (else `cargo fuzz build`
    /// fails) and committed seeds (else a run starts from nothing).
    #[test]
    fn every_target_is_declared_and_seeded() {
        let fuzz = workspace_root().join("fuzz");
        let manifest = fs::read_to_string(fuzz.join("Cargo.toml")).expect("fuzz/Cargo.toml");
        let targets = list_targets(&fuzz).expect("targets");
        for required in ["config_hostile", "message_hostile", "schema_hostile"] {
            assert!(targets.iter().any(|t| t == required), "{required} missing");
        }
        for target in &targets {
            let bin = format!("[[bin]]\nname = \"{target}\"\npath = \"fuzz_targets/{target}.rs\"");
            assert!(
                manifest.contains(&bin),
                "fuzz/Cargo.toml declares no [[bin]] for {target}"
            );
            let seeds = fuzz.join("seeds").join(target);
            let count = fs::read_dir(&seeds).map_or(0, |entries| entries.count());
            assert!(count > 0, "no seeds in {}", seeds.display());
        }
    }

    #[test]
    fn a_clean_run_reports_its_statistics() {
        let log = "INFO: Seed: 1\n\
            #2\tINITED cov: 10 ft: 11 corp: 3/120b exec/s: 0 rss: 40Mb\n\
            #9000\tDONE   cov: 812 ft: 2301 corp: 245/18Kb lim: 4096 exec/s: 150 rss: 312Mb\n\
            Done 9000 runs in 61 second(s)\n\
            stat::number_of_executed_units: 9000\n\
            stat::average_exec_per_sec:     147\n\
            stat::new_units_added:          242\n\
            stat::slowest_unit_time_sec:    0\n\
            stat::peak_rss_mb:              312\n";
        let o = parse_log("t", log, true);
        assert_eq!(o.verdict, Verdict::Ok);
        assert_eq!(o.runs, Some(9000));
        assert_eq!(o.execs_per_sec, Some(147));
        assert_eq!(o.seconds, 61.0);
        assert_eq!(o.corpus, Some((245, "18Kb".to_owned())));
        assert_eq!(o.coverage, Some(812));
        assert_eq!(o.peak_rss_mb, Some(312));
        assert_eq!(o.artifact, None);
    }

    #[test]
    fn failures_are_told_apart_and_name_their_input() {
        let check = |log: &str, verdict: Verdict, artifact: Option<&str>| {
            let o = parse_log("t", log, false);
            assert_eq!(o.verdict, verdict, "{log}");
            assert_eq!(o.artifact.as_deref(), artifact, "{log}");
        };
        check(
            "thread '<unnamed>' panicked at src/x.rs:1:1:\nboom\n\
             ==1== ERROR: libFuzzer: deadly signal\n\
             artifact_prefix='/w/fuzz/artifacts/t/'; Test unit written to /w/fuzz/artifacts/t/crash-ab12\n",
            Verdict::Crash,
            Some("/w/fuzz/artifacts/t/crash-ab12"),
        );
        check(
            "==2== ERROR: libFuzzer: out-of-memory (malloc(600000000))\n\
             Test unit written to fuzz/artifacts/t/oom-cd34\n",
            Verdict::OutOfMemory,
            Some("fuzz/artifacts/t/oom-cd34"),
        );
        check(
            "ALARM: working on the last Unit for 11 seconds\n\
             ==3== ERROR: libFuzzer: timeout after 11 seconds\n\
             Test unit written to fuzz/artifacts/t/timeout-ef56\n",
            Verdict::Timeout,
            Some("fuzz/artifacts/t/timeout-ef56"),
        );
        check(
            "error: could not compile `mcp-fuzz`\n",
            Verdict::Failed,
            None,
        );
    }

    #[test]
    fn a_failure_shows_the_panic_message_not_the_backtrace() {
        let log = "INFO: seed corpus: files: 3\n\
            thread '<unnamed>' panicked at fuzz_targets/t.rs:9:5:\n\
            names differ\n\
            left: 1\n\
            stack backtrace:\n   0: x\n\
            ==7== ERROR: libFuzzer: deadly signal\n    #0 0x1 in y\n\
            Test unit written to fuzz/artifacts/t/crash-1\n";
        assert_eq!(
            failure_lines(log),
            [
                "thread '<unnamed>' panicked at fuzz_targets/t.rs:9:5:",
                "names differ",
                "left: 1",
                "==7== ERROR: libFuzzer: deadly signal",
                "Test unit written to fuzz/artifacts/t/crash-1",
            ]
        );
    }
}
