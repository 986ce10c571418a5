//! The stdio transport and the session against a real peer no one on this
//! project wrote: `@modelcontextprotocol/server-everything` over stdio.
//!
//! The peer comes from `cargo xtask peers` (into `.peers/`). The test is
//! ignored by a plain `cargo test`; run with `-- --include-ignored`, a
//! missing peer fails it with the command that installs the peers.

#![allow(clippy::unwrap_used, clippy::print_stderr)]

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_config::{ServerConfig, StdioConfig, Timeouts, TransportConfig};
use mcp_transport::KNOWN_PROTOCOL_VERSIONS;
use mcp_transport::{
    CallOptions, ClientHandler, ConnectOptions, ErrorObject, ListKind, ServerEvent, SessionOptions,
};
use serde_json::{Value, json};

use mcp_test_peers as peers;
use peers::{everything_script, node22};

#[derive(Debug, Default)]
struct Roots {
    asked: AtomicUsize,
}

#[async_trait]
impl ClientHandler for Roots {
    fn capabilities(&self) -> Value {
        json!({"roots": {"listChanged": true}})
    }

    async fn list_roots(&self, _params: Option<Value>) -> Result<Value, ErrorObject> {
        self.asked.fetch_add(1, Ordering::SeqCst);
        Ok(json!({"roots": [{"uri": "file:///tmp/project", "name": "project"}]}))
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs cargo xtask peers"]
async fn server_everything_over_stdio() {
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
    .with_timeouts(
        Timeouts::default()
            .with_connect(Duration::from_secs(30))
            .with_request(Duration::from_secs(30))
            .with_tool_call(Duration::from_secs(30)),
    );
    let roots = Arc::new(Roots::default());
    let env: BTreeMap<String, String> = std::env::vars()
        .filter(|(k, _)| k == "PATH" || k == "HOME")
        .collect();
    let options = ConnectOptions::default()
        .with_env(env)
        .with_session(SessionOptions::default().with_handler(roots.clone()));
    let session = mcp_transport::connect(&config, &options).await.unwrap();
    let mut events = session.events();
    assert!(KNOWN_PROTOCOL_VERSIONS.contains(&session.protocol_version()));
    assert!(
        session
            .initialize_result()
            .server_info
            .name
            .contains("everything"),
        "{:?}",
        session.initialize_result().server_info
    );

    // Tools, including the roots tool offered because we advertised roots.
    let tools = session.list_tools().await.unwrap();
    let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
    for expected in [
        "echo",
        "get-sum",
        "trigger-long-running-operation",
        "get-roots-list",
    ] {
        assert!(
            names.contains(&expected),
            "{expected} missing from {names:?}"
        );
    }

    let echo = session
        .call_tool("echo", Some(json!({"message": "hello peer"})))
        .await
        .unwrap();
    assert!(echo.content[0].as_text().unwrap().contains("hello peer"));
    let sum = session
        .call_tool("get-sum", Some(json!({"a": 2, "b": 3})))
        .await
        .unwrap();
    assert!(sum.content[0].as_text().unwrap().contains('5'), "{sum:?}");

    // Progress with `_meta.progressToken`.
    let progress: Arc<Mutex<Vec<f64>>> = Arc::default();
    let sink = Arc::clone(&progress);
    let options =
        CallOptions::default().with_progress(move |p| sink.lock().unwrap().push(p.progress));
    let long = session
        .call_tool_with(
            "trigger-long-running-operation",
            Some(json!({"duration": 1, "steps": 3})),
            &options,
        )
        .await
        .unwrap();
    assert!(!long.is_error, "{long:?}");
    assert_eq!(progress.lock().unwrap().len(), 3);

    // The server asked for our roots (right after initialize or via the tool).
    let listed = session.call_tool("get-roots-list", None).await.unwrap();
    assert!(
        listed.content[0]
            .as_text()
            .unwrap()
            .contains("file:///tmp/project"),
        "{listed:?}"
    );
    assert!(roots.asked.load(Ordering::SeqCst) >= 1);

    // It announced tool list changes after initialize.
    let changed = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            if let ServerEvent::ListChanged(ListKind::Tools) = events.recv().await.unwrap() {
                return;
            }
        }
    })
    .await;
    assert!(changed.is_ok(), "no tools/list_changed seen");

    // Resources and prompts.
    let resources = session.list_resources().await.unwrap();
    assert!(!resources.is_empty());
    let read = session.read_resource(&resources[0].uri).await.unwrap();
    assert!(!read.contents.is_empty());
    let prompts = session.list_prompts().await.unwrap();
    assert!(prompts.iter().any(|p| p.name == "simple-prompt"));
    let prompt = session.get_prompt("simple-prompt", None).await.unwrap();
    assert!(!prompt.messages.is_empty());
    session.ping().await.unwrap();

    session.close().await.unwrap();
    assert!(session.is_closed());
}
