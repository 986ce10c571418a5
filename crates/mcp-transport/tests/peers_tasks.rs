//! Tool calls run as tasks against a real peer no one on this project
//! wrote: `@modelcontextprotocol/server-everything`, whose
//! `simulate-research-query` tool requires task augmentation (the
//! experimental tasks of 2025-11-25), over stdio and streamable HTTP. One
//! body runs on both: the task polled to its end with its status messages
//! as progress, an ambiguous query whose elicitation the test handler
//! answers while the task waits for input, and a caller that gives up
//! cancelling the task on the server.
//!
//! The peers come from `cargo xtask peers` (into `.peers/`); each test is
//! ignored by a plain `cargo test` and fails, naming that command, when
//! run without them.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_transport::types::{TaskGeneration, TaskSupport};
use mcp_transport::{
    CallOptions, ClientHandler, ClientSession, ConnectOptions, ErrorObject, SessionOptions,
    TransportErrorKind,
};
use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use serde_json::{Value, json};

use mcp_test_peers as peers;
use peers::{everything_script, free_port, node22, wait_until_listening};

const TOOL: &str = "simulate-research-query";

/// Answers elicitation, recording what it was asked.
#[derive(Debug, Default)]
struct Clarifier {
    asked: Mutex<Vec<Value>>,
}

#[async_trait]
impl ClientHandler for Clarifier {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}}})
    }

    async fn elicit(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        self.asked.lock().unwrap().push(params.unwrap_or_default());
        Ok(json!({"action": "accept", "content": {"interpretation": "historical"}}))
    }
}

/// A peer process, killed with its process group on drop.
struct Peer(Child);

impl Drop for Peer {
    fn drop(&mut self) {
        if let Ok(pid) = i32::try_from(self.0.id()) {
            let _ = killpg(Pid::from_raw(pid), Signal::SIGKILL);
        }
        let _ = self.0.wait();
    }
}

fn timeouts() -> Timeouts {
    Timeouts::default()
        .with_connect(Duration::from_secs(30))
        .with_request(Duration::from_secs(30))
        .with_tool_call(Duration::from_secs(30))
}

fn options(handler: Arc<Clarifier>) -> ConnectOptions {
    let env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k == "PATH" || k == "HOME")
        .collect();
    ConnectOptions::default()
        .with_env(env)
        .with_session(SessionOptions::default().with_handler(handler))
}

fn text_of(result: &mcp_transport::CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text())
        .collect()
}

/// The body both transports run.
async fn research(session: &ClientSession, handler: &Clarifier, label: &str) {
    assert_eq!(
        session.task_generation(),
        Some(TaskGeneration::Experimental),
        "{label}"
    );
    let tools = session.list_tools().await.unwrap();
    let tool = tools.iter().find(|t| t.name == TOOL).expect(TOOL);
    assert_eq!(tool.task_support(), TaskSupport::Required, "{label}");
    let echo = tools.iter().find(|t| t.name == "echo").unwrap();
    assert_eq!(echo.task_support(), TaskSupport::Forbidden, "{label}");

    // Called plainly, the server refuses it: that is why the support is read.
    let plain = session
        .call_tool(TOOL, Some(json!({"topic": "tides"})))
        .await
        .unwrap();
    assert!(
        plain.is_error && text_of(&plain).contains("requires task augmentation"),
        "{label}: a plain call of a required task tool: {plain:?}"
    );

    // The task polled to its end; each stage's status message is progress.
    let messages = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&messages);
    let call = CallOptions::default().with_progress(move |progress| {
        seen.lock()
            .unwrap()
            .push(progress.message.unwrap_or_default());
    });
    let result = session
        .call_tool_by_support(
            TOOL,
            Some(json!({"topic": "tides"})),
            tool.task_support(),
            &call,
        )
        .await
        .unwrap();
    assert!(!result.is_error, "{label}: {result:?}");
    let report = text_of(&result);
    assert!(
        report.contains("# Research Report: tides"),
        "{label}: {report}"
    );
    let messages = messages.lock().unwrap().clone();
    assert!(
        messages.iter().any(|m| m.contains("Gathering sources")),
        "{label}: progress {messages:?}"
    );
    assert!(handler.asked.lock().unwrap().is_empty(), "{label}");

    // Ambiguous: the task waits for input, the server's elicitation reaches
    // the handler while tasks/result waits, and the answer shapes the report.
    let result = session
        .call_tool_as_task(
            TOOL,
            Some(json!({"topic": "python", "ambiguous": true})),
            &CallOptions::default(),
        )
        .await
        .unwrap();
    let report = text_of(&result);
    assert!(
        report.contains("python (historical)"),
        "{label}: the clarification is not in the report: {report}"
    );
    let asked = handler.asked.lock().unwrap().clone();
    assert_eq!(asked.len(), 1, "{label}: {asked:?}");
    assert!(
        asked[0]["message"].as_str().unwrap().contains("python"),
        "{label}: {asked:?}"
    );

    // A caller that gives up: the task is cancelled on the server.
    let gave_up = tokio::time::timeout(
        Duration::from_millis(1500),
        session.call_tool_as_task(
            TOOL,
            Some(json!({"topic": "abandoned"})),
            &CallOptions::default(),
        ),
    )
    .await;
    assert!(gave_up.is_err(), "{label}: the call finished too early");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let listed = session.request("tasks/list", None).await.unwrap();
        let statuses: Vec<&str> = listed["tasks"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|task| task["status"].as_str())
            .collect();
        if statuses.contains(&"cancelled") {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{label}: no task was cancelled: {listed}"
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    // A timeout shorter than the task: a named timeout, not a hang.
    let timed_out = session
        .call_tool_as_task(
            TOOL,
            Some(json!({"topic": "slow"})),
            &CallOptions::default().with_timeout(Duration::from_millis(600)),
        )
        .await
        .unwrap_err();
    assert!(
        matches!(timed_out.kind(), TransportErrorKind::Timeout { .. }),
        "{label}: {timed_out}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs cargo xtask peers"]
async fn tasks_against_server_everything_over_stdio() {
    let script = everything_script();
    let config = ServerConfig::new(
        "everything",
        TransportConfig::Stdio(
            StdioConfig::new(node22().to_string_lossy().into_owned()).with_args(vec![
                script.to_string_lossy().into_owned(),
                "stdio".to_string(),
            ]),
        ),
    )
    .with_timeouts(timeouts());
    research_over(&config, "stdio").await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs cargo xtask peers"]
async fn tasks_against_server_everything_over_streamable_http() {
    let port = free_port();
    let mut command = Command::new(node22());
    command
        .args([everything_script().to_str().unwrap(), "streamableHttp"])
        .env("PORT", port.to_string())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null());
    std::os::unix::process::CommandExt::process_group(&mut command, 0);
    let mut peer = Peer(command.spawn().unwrap());
    wait_until_listening(
        &mut peer.0,
        "server-everything",
        port,
        Duration::from_secs(30),
    );
    let config = ServerConfig::new(
        "everything-http",
        TransportConfig::Http(RemoteConfig::new(format!("http://127.0.0.1:{port}/mcp"))),
    )
    .with_timeouts(timeouts());
    research_over(&config, "streamable HTTP").await;
}

/// Connects to `config` with a clarifying handler and runs [`research`].
async fn research_over(config: &ServerConfig, label: &str) {
    let handler = Arc::new(Clarifier::default());
    let session = mcp_transport::connect(config, &options(Arc::clone(&handler)))
        .await
        .unwrap();
    research(&session, &handler, label).await;
    session.close().await.unwrap();
}
