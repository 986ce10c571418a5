//! What the benches share: the server they measure against, and the
//! in-process echo server (`echo`).

#[allow(dead_code)]
pub(crate) mod echo;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::{ClientSession, ConnectOptions};

/// `$MCP_EXAMPLE_SERVER`, else `target/release/mcp-example-server`, built on
/// demand.
#[allow(dead_code)]
pub(crate) fn server_binary() -> PathBuf {
    if let Ok(path) = std::env::var("MCP_EXAMPLE_SERVER") {
        return PathBuf::from(path);
    }
    // Benches run from target/<profile>/deps/.
    let exe = std::env::current_exe().unwrap();
    let target = exe.parent().and_then(|deps| deps.parent()).unwrap();
    let status = std::process::Command::new(env!("CARGO"))
        .args([
            "build",
            "--release",
            "--quiet",
            "-p",
            "mcp-integration-tests",
            "--bin",
            "mcp-example-server",
        ])
        .env("CARGO_TARGET_DIR", target.parent().unwrap())
        .status()
        .expect("cargo build of mcp-example-server");
    assert!(status.success(), "building mcp-example-server failed");
    target
        .parent()
        .unwrap()
        .join("release")
        .join("mcp-example-server")
}

/// The arguments the server is started with: `$MCP_EXAMPLE_SERVER_ARGS`,
/// split on white space (for the minimal server, `--revision 2026-07-28`
/// measures the 2026-07-28 wire), else none.
pub(crate) fn server_args() -> Vec<String> {
    std::env::var("MCP_EXAMPLE_SERVER_ARGS")
        .map(|args| args.split_whitespace().map(str::to_owned).collect())
        .unwrap_or_default()
}

/// One stdio session to `binary` (with [`server_args`]), with no host
/// environment.
// Not every bench that shares this module opens a single session.
#[allow(dead_code)]
pub(crate) async fn connect(binary: &Path) -> ClientSession {
    let config = ServerConfig::new(
        "bench",
        TransportConfig::Stdio(
            StdioConfig::new(binary.to_string_lossy().into_owned()).with_args(server_args()),
        ),
    );
    let options = ConnectOptions::default().with_env(BTreeMap::new());
    mcp_transport::connect(&config, &options).await.unwrap()
}
