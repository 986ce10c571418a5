//! The servers the clients are measured against: the argv of each stdio
//! server, the streamable HTTP servers on loopback ports, and the build of
//! the minimal C server.

use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use anyhow::{Context, Result, bail};

#[derive(Debug)]
pub(super) struct Servers {
    pub(super) cat: Vec<String>,
    pub(super) minimal: Vec<String>,
    pub(super) slow: Vec<String>,
    pub(super) everything: Vec<String>,
    pub(super) http_minimal: String,
    pub(super) http_everything: String,
    /// The minimal server in its 2026-07-28 mode (`--revision 2026-07-28`).
    pub(super) minimal_modern: Vec<String>,
    pub(super) slow_modern: Vec<String>,
    pub(super) http_minimal_modern: String,
}

/// A streamable HTTP server on a free loopback port, stopped when
/// dropped.
#[derive(Debug)]
pub(super) struct HttpPeer {
    pub(super) child: Child,
    pub(super) url: String,
}

impl HttpPeer {
    /// Starts `argv` (with `PORT` set, and `port_flag <port>` appended when
    /// given) and waits until it listens.
    pub(super) fn start(name: &str, argv: &[String], port_flag: Option<&str>) -> Result<HttpPeer> {
        let port = TcpListener::bind("127.0.0.1:0")?.local_addr()?.port();
        let (program, rest) = argv.split_first().context("empty server command")?;
        let mut command = Command::new(program);
        command.args(rest);
        if let Some(flag) = port_flag {
            command.arg(flag).arg(port.to_string());
        }
        let child = command
            .env("PORT", port.to_string())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .with_context(|| format!("starting {name}"))?;
        let mut peer = HttpPeer {
            child,
            url: format!("http://127.0.0.1:{port}/mcp"),
        };
        let deadline = Instant::now() + Duration::from_secs(20);
        while TcpStream::connect(("127.0.0.1", port)).is_err() {
            if let Some(status) = peer.child.try_wait()? {
                bail!("{name} exited ({status}) before it listened on port {port}");
            }
            if Instant::now() > deadline {
                bail!("{name} did not listen on port {port}");
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        Ok(peer)
    }
}

impl Drop for HttpPeer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

pub(super) fn build_minimal_server(root: &Path, out: &Path) -> Result<PathBuf> {
    let source = root.join("bench/minimal-server/minimal_server.c");
    let binary = out.join("minimal-server");
    let status = Command::new("gcc")
        .args(["-O2", "-Wall", "-Wextra", "-o"])
        .arg(&binary)
        .arg(&source)
        .status()
        .context("running gcc (is a C compiler installed?)")?;
    if !status.success() {
        bail!("compiling {} failed ({status})", source.display());
    }
    Ok(binary)
}
