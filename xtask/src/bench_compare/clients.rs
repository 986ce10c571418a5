//! The clients measured: each a program speaking the common command line,
//! how to build ours and rmcp's, and running one of them once with a
//! timeout.

use std::io::Read as _;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};
use serde_json::Value;

use super::target_dir;

/// How long one client run may take before it counts as failed.
pub(super) const RUN_TIMEOUT: Duration = Duration::from_secs(180);

/// How long the stdio servers of one client run may take to exit once it
/// has.
const SERVERS_EXIT_TIMEOUT: Duration = Duration::from_secs(15);

/// A program of the benchmark that speaks the common command line.
#[derive(Debug, Clone)]
pub(super) struct Client {
    pub(super) key: &'static str,
    pub(super) label: &'static str,
    pub(super) argv: Vec<String>,
    pub(super) env: Vec<(String, String)>,
    /// Set when the client cannot run here; the table says why.
    pub(super) skipped: Option<String>,
}

/// Runs one client once and returns its JSON line.
pub(super) fn run_client(
    client: &Client,
    scenario: &str,
    n: usize,
    calls: usize,
    target: &[String],
    runtime: &str,
    wire: &str,
) -> Result<Value> {
    let (program, rest) = client
        .argv
        .split_first()
        .context("the client has no command")?;
    if scenario == "idle" {
        evict_from_page_cache(Path::new(program));
    }
    let mut command = Command::new(program);
    command
        .args(rest)
        .arg(scenario)
        .arg(n.to_string())
        .arg(calls.to_string())
        .args(target)
        .env("BENCH_RUNTIME", runtime)
        .env("BENCH_WIRE", wire)
        .envs(client.env.iter().map(|(k, v)| (k, v)))
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command
        .spawn()
        .with_context(|| format!("starting {program}"))?;
    let output = wait_with_timeout(&mut child, RUN_TIMEOUT);
    // A client may exit without waiting for its servers (rmcp's child
    // processes are left to end on their own): the next client would pay
    // for twenty Node servers shutting down, so every run starts once the
    // previous one's servers are gone.
    if let Some(("--", server)) = target
        .split_first()
        .map(|(first, rest)| (first.as_str(), rest))
    {
        wait_for_servers_to_exit(server, SERVERS_EXIT_TIMEOUT);
    }
    let output = output?;
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

/// Drops the page cache's copy of `program` before a memory run. Peak RSS
/// counts the file pages a process maps, and how many the kernel maps
/// around each page it reads depends on how the file came into the cache:
/// a binary just written by its build maps some 0.3–0.6 MB more than the
/// same binary read back from disk. Every client's program starts each
/// memory run from the disk, so the row does not depend on which client
/// was built or run last. Pages not yet written back cannot be dropped, so
/// the file is synced first (at once, but for a binary just built). Best
/// effort: a file that cannot be opened is left as it is.
fn evict_from_page_cache(program: &Path) {
    use std::os::fd::AsRawFd as _;
    if let Ok(file) = std::fs::File::open(program) {
        let _ = file.sync_data();
        let _ = nix::fcntl::posix_fadvise(
            file.as_raw_fd(),
            0,
            0,
            nix::fcntl::PosixFadviseAdvice::POSIX_FADV_DONTNEED,
        );
    }
}

/// Waits, up to `timeout`, until no process runs exactly `server` (its
/// command line read from `/proc`); returns how many still do.
pub(super) fn wait_for_servers_to_exit(server: &[String], timeout: Duration) -> usize {
    let wanted: Vec<&[u8]> = server.iter().map(|arg| arg.as_bytes()).collect();
    let running = || {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return 0;
        };
        entries
            .flatten()
            .filter(|entry| {
                entry
                    .file_name()
                    .to_string_lossy()
                    .bytes()
                    .all(|b| b.is_ascii_digit())
            })
            .filter_map(|entry| std::fs::read(entry.path().join("cmdline")).ok())
            .filter(|cmdline| {
                let args: Vec<&[u8]> = cmdline
                    .strip_suffix(b"\0")
                    .unwrap_or(cmdline)
                    .split(|b| *b == 0)
                    .collect();
                args == wanted
            })
            .count()
    };
    let deadline = Instant::now() + timeout;
    loop {
        let left = running();
        if left == 0 || Instant::now() > deadline {
            return left;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Waits for `child`, reading its output; kills it after `timeout`.
/// Returns stdout, stderr and whether it exited successfully.
pub(super) fn wait_with_timeout(
    child: &mut Child,
    timeout: Duration,
) -> Result<(Vec<u8>, Vec<u8>, bool)> {
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

pub(super) fn build_ours(root: &Path) -> Result<PathBuf> {
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
pub(super) fn build_rmcp(root: &Path, target: &Path) -> Result<PathBuf> {
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The wait sees a running server by its exact command line and ends
    /// once it has exited.
    #[test]
    fn the_wait_ends_when_the_servers_are_gone() -> Result<()> {
        let server = ["sleep".to_owned(), "0.417".to_owned()];
        let mut child = Command::new(&server[0]).arg(&server[1]).spawn()?;
        let seen = Instant::now() + Duration::from_secs(5);
        while wait_for_servers_to_exit(&server, Duration::ZERO) == 0 {
            assert!(Instant::now() < seen, "the running server was never seen");
            std::thread::sleep(Duration::from_millis(5));
        }
        assert_eq!(
            wait_for_servers_to_exit(&server, Duration::from_secs(10)),
            0
        );
        child.wait()?;
        Ok(())
    }
}
