//! The network transports against real peers no one on this project wrote:
//! `@modelcontextprotocol/server-everything` (streamable HTTP and legacy
//! SSE), `supergateway` (WebSocket), a Python `mcp` 2.x streamable-HTTP
//! server and a Python `mcp` 1.x native WebSocket server.
//!
//! The peers come from `cargo xtask peers` (into `.peers/`). Each test is
//! ignored by a plain `cargo test`; run with `-- --include-ignored`, a
//! missing peer fails it with the command that installs the peers.
//! Every peer is a child process on a free loopback port, killed when its
//! guard drops.

#![allow(clippy::unwrap_used, clippy::print_stderr, clippy::expect_used)]

use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use mcp_transport::HttpOptions;
use mcp_transport::kinds::SseTransport;
use mcp_transport::kinds::StreamableHttpTransport;
use mcp_transport::kinds::WsTransport;
use mcp_transport::{JsonRpcMessage, Notification, Request, RequestId, Response, Transport};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

use mcp_test_peers as peers;
use peers::{
    everything_script, free_port, node22, python, scripts_dir, supergateway_script,
    wait_until_listening,
};

/// A peer process, killed (with its children) on drop.
struct Peer {
    child: Child,
    name: &'static str,
    /// A token on the command lines of processes the peer starts outside
    /// its own process group.
    marker: Option<String>,
}

impl Peer {
    fn start(
        name: &'static str,
        command: &Path,
        args: &[&str],
        env: &[(&str, String)],
        port: u16,
    ) -> Peer {
        let mut cmd = Command::new(command);
        cmd.args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null());
        // Its own process group, killed whole on drop.
        std::os::unix::process::CommandExt::process_group(&mut cmd, 0);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let child = cmd
            .spawn()
            .unwrap_or_else(|e| panic!("starting {name}: {e}"));
        let mut peer = Peer {
            child,
            name,
            marker: None,
        };
        wait_until_listening(&mut peer.child, name, port, Duration::from_secs(30));
        peer
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.child.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
        // Processes the peer started in groups of their own (supergateway's
        // stdio server) carry the marker on their command line.
        if let Some(marker) = &self.marker {
            for pid in pids_with_marker(marker) {
                let _ = nix::sys::signal::kill(pid, Signal::SIGKILL);
            }
        }
        eprintln!("stopped {}", self.name);
    }
}

/// Processes whose command line contains `marker`.
fn pids_with_marker(marker: &str) -> Vec<Pid> {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    entries
        .filter_map(|entry| {
            let entry = entry.ok()?;
            let pid: i32 = entry.file_name().to_str()?.parse().ok()?;
            let cmdline = std::fs::read(entry.path().join("cmdline")).ok()?;
            String::from_utf8_lossy(&cmdline)
                .contains(marker)
                .then(|| Pid::from_raw(pid))
        })
        .collect()
}

fn everything(mode: &str, port: u16) -> Peer {
    let node = node22();
    let script = everything_script();
    Peer::start(
        "server-everything",
        &node,
        &[script.to_str().unwrap(), mode],
        &[("PORT", port.to_string())],
        port,
    )
}

fn python_peer(venv: &str, script: &str, port: u16) -> Peer {
    python_peer_with(venv, script, port, &[])
}

fn python_peer_with(venv: &str, script: &str, port: u16, extra: &[&str]) -> Peer {
    let python = python(venv);
    let script = scripts_dir().join(script);
    let port_arg = port.to_string();
    let mut args = vec![script.to_str().unwrap(), port_arg.as_str()];
    args.extend_from_slice(extra);
    Peer::start("python peer", &python, &args, &[], port)
}

/// A raw JSON-RPC client over one transport: numeric ids, answers the
/// server's `ping` and `roots/list`, and keeps notifications it saw.
struct Raw<T: Transport> {
    transport: T,
    /// The messages of a batch past the one being handled.
    queued: std::collections::VecDeque<JsonRpcMessage>,
    next_id: i64,
    notifications: Vec<Notification>,
    server_requests: Vec<String>,
}

const TIMEOUT: Duration = Duration::from_secs(20);

impl<T: Transport> Raw<T> {
    fn new(transport: T) -> Self {
        Raw {
            transport,
            queued: std::collections::VecDeque::new(),
            next_id: 1,
            notifications: Vec::new(),
            server_requests: Vec::new(),
        }
    }

    async fn request(
        &mut self,
        method: &str,
        params: Value,
    ) -> Result<Value, mcp_transport::ErrorObject> {
        let id = RequestId::Number(self.next_id);
        self.next_id += 1;
        self.transport
            .send(JsonRpcMessage::Request(Request {
                id: id.clone(),
                method: method.into(),
                params: Some(params),
            }))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
        let deadline = tokio::time::Instant::now() + TIMEOUT;
        loop {
            if self.queued.is_empty() {
                let mut batch = Vec::new();
                let open = tokio::time::timeout_at(deadline, self.transport.receive(&mut batch))
                    .await
                    .unwrap_or_else(|_| panic!("no answer to {method}"))
                    .unwrap_or_else(|e| panic!("{method}: {e}"));
                assert!(open, "closed while waiting for {method}");
                self.queued
                    .extend(batch.into_iter().map(mcp_transport::Incoming::into_message));
            }
            let Some(message) = self.queued.pop_front() else {
                continue;
            };
            match message {
                JsonRpcMessage::Response(r) if r.id.as_ref() == Some(&id) => return r.outcome,
                JsonRpcMessage::Response(r) => panic!("unexpected response {r:?}"),
                JsonRpcMessage::Notification(n) => self.notifications.push(n),
                JsonRpcMessage::Request(r) => {
                    self.server_requests.push(r.method.clone());
                    let outcome = match r.method.as_str() {
                        "ping" => Ok(json!({})),
                        "roots/list" => {
                            Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
                        }
                        _ => Err(mcp_transport::ErrorObject {
                            code: -32601,
                            message: "method not found".into(),
                            data: None,
                        }),
                    };
                    let answer = JsonRpcMessage::Response(Response {
                        id: Some(r.id),
                        outcome,
                    });
                    self.transport.send(answer).await.unwrap();
                }
            }
        }
    }

    async fn notify(&mut self, method: &str) {
        self.transport
            .send(JsonRpcMessage::Notification(Notification {
                method: method.into(),
                params: None,
            }))
            .await
            .unwrap_or_else(|e| panic!("{method}: {e}"));
    }

    async fn initialize(&mut self, version: &str) -> Value {
        let result = self
            .request(
                "initialize",
                json!({
                    "protocolVersion": version,
                    "capabilities": {"roots": {"listChanged": false}},
                    "clientInfo": {"name": "mcp-transport-tests", "version": "0"}
                }),
            )
            .await
            .expect("initialize");
        self.notify("notifications/initialized").await;
        result
    }

    async fn tool_names(&mut self) -> Vec<String> {
        let tools = self
            .request("tools/list", json!({}))
            .await
            .expect("tools/list");
        tools["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    async fn call(&mut self, name: &str, arguments: Value) -> Value {
        self.request("tools/call", json!({"name": name, "arguments": arguments}))
            .await
            .expect("tools/call")
    }

    fn progress_count(&self, token: &Value) -> usize {
        self.notifications
            .iter()
            .filter(|n| n.method == "notifications/progress")
            .filter(|n| n.params.as_ref().map(|p| &p["progressToken"]) == Some(token))
            .count()
    }
}

fn text_of(result: &Value) -> String {
    result["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

/// The behaviour every peer is checked for: initialize, list tools, call
/// echo, progress on a long call.
async fn exercise<T: Transport>(
    raw: &mut Raw<T>,
    version: &str,
    echo: &str,
    progress: (&str, Value),
) {
    let init = raw.initialize(version).await;
    assert!(init["protocolVersion"].is_string(), "{init}");
    let names = raw.tool_names().await;
    assert!(names.iter().any(|n| n == echo), "{names:?}");
    let result = raw.call(echo, json!({"message": "hi there"})).await;
    assert!(text_of(&result).contains("hi there"), "{result}");
    let (tool, arguments) = progress;
    let token = json!("p-1");
    let result = raw
        .request(
            "tools/call",
            json!({"name": tool, "arguments": arguments, "_meta": {"progressToken": token}}),
        )
        .await
        .expect("long call");
    assert_ne!(result["isError"], json!(true), "{result}");
    assert!(
        raw.progress_count(&token) >= 2,
        "progress seen: {:?}",
        raw.notifications
    );
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn streamable_http_against_server_everything() {
    let port = free_port();
    let _peer = everything("streamableHttp", port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let transport = StreamableHttpTransport::connect(HttpOptions::new("everything", &url))
        .await
        .unwrap();
    let mut raw = Raw::new(transport);
    exercise(
        &mut raw,
        "2025-06-18",
        "echo",
        (
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
        ),
    )
    .await;
    assert_eq!(
        raw.transport.protocol_version().as_deref(),
        Some("2025-06-18")
    );
    assert!(raw.transport.session_id().is_some());
    // The server asks for roots after initialized (on the GET stream or a
    // POST stream); either way the request reached us and was answered.
    let result = raw.call("get-sum", json!({"a": 2, "b": 40})).await;
    assert!(text_of(&result).contains("42"), "{result}");
    assert!(
        raw.server_requests.iter().any(|m| m == "roots/list"),
        "{:?}",
        raw.server_requests
    );
    raw.transport.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn streamable_http_reinitializes_once_when_the_session_expires() {
    // The Python server answers an unknown session with 404, as the spec
    // says (server-everything answers 400, which is not a session expiry).
    let port = free_port();
    let peer = python_peer("venv", "py_http_server.py", port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let transport = StreamableHttpTransport::connect(HttpOptions::new("py", &url))
        .await
        .unwrap();
    let mut raw = Raw::new(transport);
    raw.initialize("2025-11-25").await;
    let first = raw.transport.session_id().unwrap();
    // A restarted server knows no session.
    drop(peer);
    let _peer = python_peer("venv", "py_http_server.py", port);
    let result = raw.call("echo", json!({"message": "after restart"})).await;
    assert!(text_of(&result).contains("after restart"), "{result}");
    let second = raw.transport.session_id().unwrap();
    assert_ne!(first, second);
    raw.transport.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn legacy_sse_against_server_everything() {
    let port = free_port();
    let _peer = everything("sse", port);
    let url = format!("http://127.0.0.1:{port}/sse");
    let transport = SseTransport::connect(HttpOptions::new("everything", &url))
        .await
        .unwrap();
    assert!(
        transport
            .endpoint()
            .starts_with(&format!("http://127.0.0.1:{port}/message?sessionId="))
    );
    let mut raw = Raw::new(transport);
    exercise(
        &mut raw,
        "2024-11-05",
        "echo",
        (
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
        ),
    )
    .await;
    raw.transport.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn streamable_http_against_python_mcp_2() {
    let port = free_port();
    let _peer = python_peer("venv", "py_http_server.py", port);
    let url = format!("http://127.0.0.1:{port}/mcp");
    let transport = StreamableHttpTransport::connect(HttpOptions::new("py", &url))
        .await
        .unwrap();
    let mut raw = Raw::new(transport);
    exercise(
        &mut raw,
        "2025-11-25",
        "echo",
        ("count", json!({"steps": 3})),
    )
    .await;
    let result = raw.call("add", json!({"a": 2, "b": 3})).await;
    assert_eq!(text_of(&result), "5", "{result}");
    raw.transport.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn legacy_sse_against_python_mcp_2() {
    let port = free_port();
    let _peer = python_peer_with("venv", "py_http_server.py", port, &["sse"]);
    let url = format!("http://127.0.0.1:{port}/sse");
    let transport = SseTransport::connect(HttpOptions::new("py-sse", &url))
        .await
        .unwrap();
    assert!(
        transport
            .endpoint()
            .starts_with(&format!("http://127.0.0.1:{port}/")),
        "{}",
        transport.endpoint()
    );
    let mut raw = Raw::new(transport);
    exercise(
        &mut raw,
        "2024-11-05",
        "echo",
        ("count", json!({"steps": 3})),
    )
    .await;
    raw.transport.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn websocket_against_python_mcp_1() {
    let port = free_port();
    let _peer = python_peer("venv-ws", "py_ws_server.py", port);
    let url = format!("ws://127.0.0.1:{port}/ws");
    let transport = WsTransport::connect(HttpOptions::new("py-ws", &url))
        .await
        .unwrap();
    let mut raw = Raw::new(transport);
    exercise(
        &mut raw,
        "2025-06-18",
        "echo",
        ("count", json!({"steps": 3})),
    )
    .await;
    // A server-to-client request in the middle of a call.
    let result = raw.call("roots", json!({})).await;
    assert_eq!(text_of(&result), "file:///work", "{result}");
    raw.transport.close().await.unwrap();
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn websocket_against_supergateway() {
    let port = free_port();
    let node = node22();
    let gateway = supergateway_script();
    let everything = everything_script();
    // server-everything ignores the extra argument; it marks the process.
    let marker = format!("peer-test-marker-{port}");
    let stdio = format!("{} {} stdio {marker}", node.display(), everything.display());
    let mut peer = Peer::start(
        "supergateway",
        &node,
        &[
            gateway.to_str().unwrap(),
            "--stdio",
            &stdio,
            "--outputTransport",
            "ws",
            "--port",
            &port.to_string(),
            "--messagePath",
            "/message",
        ],
        &[],
        port,
    );
    peer.marker = Some(marker);
    let url = format!("ws://127.0.0.1:{port}/message");
    let transport = WsTransport::connect(HttpOptions::new("gateway", &url))
        .await
        .unwrap();
    let mut raw = Raw::new(transport);
    // supergateway breaks server-to-client requests, so no roots capability
    // is needed here; the echo and progress paths are what it offers.
    exercise(
        &mut raw,
        "2025-06-18",
        "echo",
        (
            "trigger-long-running-operation",
            json!({"duration": 1, "steps": 3}),
        ),
    )
    .await;
    raw.transport.close().await.unwrap();
}

/// The whole stack a host uses: a config entry through `connect`, the
/// session, progress callbacks, and server requests answered by a handler.
#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn session_over_http_and_sse_against_server_everything() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicUsize, Ordering};

    use mcp_config::{RemoteConfig, ServerConfig, TransportConfig};
    use mcp_transport::{CallOptions, ClientHandler, ConnectOptions, ErrorObject, SessionOptions};

    #[derive(Debug)]
    struct Roots(AtomicUsize);

    #[async_trait::async_trait]
    impl ClientHandler for Roots {
        fn capabilities(&self) -> Value {
            json!({"roots": {"listChanged": false}})
        }

        async fn list_roots(&self, _: Option<Value>) -> Result<Value, ErrorObject> {
            self.0.fetch_add(1, Ordering::SeqCst);
            Ok(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
        }
    }

    for (mode, path) in [("streamableHttp", "mcp"), ("sse", "sse")] {
        let port = free_port();
        let _peer = everything(mode, port);
        let remote = RemoteConfig::new(format!("http://127.0.0.1:{port}/{path}"));
        let transport = if mode == "sse" {
            TransportConfig::Sse(remote)
        } else {
            TransportConfig::Http(remote)
        };
        let config = ServerConfig::new(format!("everything-{mode}"), transport);
        let roots = Arc::new(Roots(AtomicUsize::new(0)));
        let options = ConnectOptions::default()
            .with_session(SessionOptions::default().with_handler(roots.clone()));
        let session = mcp_transport::connect(&config, &options).await.unwrap();
        let tools = session.list_tools().await.unwrap();
        assert!(
            tools
                .iter()
                .any(|t| t.name == "trigger-long-running-operation"),
            "{mode}: {tools:?}"
        );
        let steps = Arc::new(AtomicUsize::new(0));
        let seen = Arc::clone(&steps);
        let call = CallOptions::default().with_progress(move |_| {
            seen.fetch_add(1, Ordering::SeqCst);
        });
        let result = session
            .call_tool_with(
                "trigger-long-running-operation",
                Some(json!({"duration": 1, "steps": 4})),
                &call,
            )
            .await
            .unwrap();
        assert!(!result.is_error, "{mode}: {result:?}");
        assert_eq!(steps.load(Ordering::SeqCst), 4, "{mode}");
        let echo = session
            .call_tool("echo", Some(json!({"message": "via connect"})))
            .await
            .unwrap();
        assert_eq!(
            echo.content[0].as_text(),
            Some("Echo: via connect"),
            "{mode}"
        );
        assert!(
            roots.0.load(Ordering::SeqCst) >= 1,
            "{mode}: the server's roots/list was not answered"
        );
        session.close().await.unwrap();
    }
}
