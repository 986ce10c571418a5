//! `cargo xtask demo`: the README's first command. Builds `mcp-cli` and
//! the example stdio server, then runs `probe`, `tools` and `call` against
//! the bundled project `examples/cli-demo`, with no network.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use anyhow::{Context, bail};

#[derive(Debug, clap::Args)]
pub(crate) struct Args {
    /// Build in release mode.
    #[arg(long)]
    release: bool,
}

pub(crate) fn run(args: Args) -> anyhow::Result<ExitCode> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .context("xtask has no parent folder")?
        .to_path_buf();
    let bin_dir = build_bins(
        &["mcp-cli", "mcp-integration-tests"],
        &["mcp-cli", "mcp-example-server"],
        args.release,
    )?;
    let cli = bin_dir.join(exe("mcp-cli"));
    let server = bin_dir.join(exe("mcp-example-server"));
    let demo = root.join("examples").join("cli-demo");

    let steps: [&[&str]; 3] = [
        &["probe"],
        &["tools"],
        &[
            "call",
            "mcp__example__echo",
            "--arg",
            "text=hello from mcp-cli",
        ],
    ];
    for step in steps {
        writeln!(
            std::io::stdout(),
            "$ mcp-cli --home examples/cli-demo/home --project examples/cli-demo {}",
            shown(step)
        )?;
        let status = Command::new(&cli)
            .current_dir(&root)
            .env("MCP_EXAMPLE_SERVER", &server)
            .arg("--home")
            .arg(demo.join("home"))
            .arg("--project")
            .arg(&demo)
            .args(step)
            .status()
            .with_context(|| format!("cannot run {}", cli.display()))?;
        writeln!(std::io::stdout())?;
        if !status.success() {
            bail!("mcp-cli {} failed ({status})", step[0]);
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Builds `bins` of `packages` (debug, or release) and returns the folder
/// they are in.
pub(crate) fn build_bins(
    packages: &[&str],
    bins: &[&str],
    release: bool,
) -> anyhow::Result<PathBuf> {
    let root = crate::peers::workspace_root();
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut build = Command::new(&cargo);
    build.current_dir(&root).args(["build", "--quiet"]);
    for package in packages {
        build.args(["--package", package]);
    }
    for bin in bins {
        build.args(["--bin", bin]);
    }
    if release {
        build.arg("--release");
    }
    let status = build.status().context("cannot run cargo build")?;
    if !status.success() {
        bail!("cargo build failed ({status})");
    }
    let profile = if release { "release" } else { "debug" };
    Ok(target_dir(&cargo, &root)?.join(profile))
}

/// Cargo's target directory (honours `CARGO_TARGET_DIR` and config files).
fn target_dir(cargo: &std::ffi::OsStr, root: &Path) -> anyhow::Result<PathBuf> {
    let output = Command::new(cargo)
        .current_dir(root)
        .args(["metadata", "--format-version", "1", "--no-deps"])
        .output()
        .context("cannot run cargo metadata")?;
    if !output.status.success() {
        bail!(
            "cargo metadata failed: {}",
            String::from_utf8_lossy(&output.stderr).trim()
        );
    }
    let metadata: serde_json::Value =
        serde_json::from_slice(&output.stdout).context("cargo metadata printed invalid JSON")?;
    metadata["target_directory"]
        .as_str()
        .map(PathBuf::from)
        .context("cargo metadata has no target_directory")
}

pub(crate) fn exe(name: &str) -> String {
    format!("{name}{}", std::env::consts::EXE_SUFFIX)
}

fn shown(args: &[&str]) -> String {
    args.iter()
        .map(|arg| {
            if arg.contains(' ') {
                format!("'{arg}'")
            } else {
                (*arg).to_owned()
            }
        })
        .collect::<Vec<_>>()
        .join(" ")
}
