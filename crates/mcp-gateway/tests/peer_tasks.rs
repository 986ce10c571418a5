//! Tasks through the gateway, in front of rmcp 3.11's task manager
//! (`rmcp-peer-server task-suite`, the conformance suite's task tools),
//! beside a server with the same tool names' neighbours:
//!
//! - A 2026-07-28 client that states the tasks extension gets the
//!   server's task handle under a wrapped id, and reaches the task with
//!   `tasks/get`, `tasks/update` and `tasks/cancel` through the gateway:
//!   a question answered, a cancel observed, an inlined result.
//! - A client that does not take tasks (a 2026-07-28 request without the
//!   extension, or a 2025-11-25 session) gets every call's result in
//!   place: the gateway's own session follows the task the server started
//!   on its announcement; `tasks/*` without the extension is refused
//!   (-32021), an id no server gave is unknown (-32602).

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::sync::Arc;
use std::time::Duration;

use mcp_catalog::{NamingStyle, SessionRuntime};
use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_gateway::{Gateway, Naming};
use mcp_test_peers as peers;
use serde_json::{Value, json};
use support::{Client, gateway_over, modern_meta};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn task_gateway(naming: Naming) -> (Arc<Gateway>, Arc<SessionRuntime>) {
    let server = ServerConfig::new(
        "task suite",
        TransportConfig::Stdio(
            StdioConfig::new(peers::rmcp_server().to_string_lossy().into_owned())
                .with_args(["task-suite"]),
        ),
    );
    gateway_over(vec![server], naming)
}

/// `params` with a 2026-07-28 `_meta` that states the tasks extension.
fn taking_tasks(mut params: Value) -> Value {
    let mut meta = modern_meta();
    meta["io.modelcontextprotocol/clientCapabilities"] =
        json!({"elicitation": {}, "extensions": {TASKS: {}}});
    params["_meta"] = meta;
    params
}

/// `params` with a 2026-07-28 `_meta` that states no extension.
fn without_tasks(mut params: Value) -> Value {
    params["_meta"] = modern_meta();
    params
}

/// Polls `tasks/get` until the task is in `status` (or ends), 10 s at most.
async fn poll_until(client: &mut Client, id: &mut u64, task: &str, status: &str) -> Value {
    for _ in 0..100 {
        *id += 1;
        let got = client
            .request(*id, "tasks/get", taking_tasks(json!({"taskId": task})))
            .await;
        assert_eq!(got["taskId"], task, "{got}");
        let now = got["status"].as_str().unwrap_or_default();
        if now == status || ["completed", "failed", "cancelled"].contains(&now) {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("task {task} never reached {status}");
}

fn text(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_client_that_takes_tasks_reaches_them_through_the_gateway() {
    for naming in [
        Naming::prefixed(NamingStyle::Claw),
        Naming::passthrough(NamingStyle::Claw),
    ] {
        let (gateway, runtime) = task_gateway(naming);
        let tool = |name: &str| match naming.is_passthrough() {
            true => name.to_owned(),
            false => format!("mcp__task_suite__{name}"),
        };
        let mut client = Client::of(&gateway);
        let mut id = 0;

        let discovered = client
            .request(1, "server/discover", without_tasks(json!({})))
            .await;
        assert_eq!(discovered["capabilities"]["extensions"][TASKS], json!({}));

        // A slow task, cancelled while it runs.
        let call =
            json!({"name": tool("slow_compute"), "arguments": {"seconds": 30, "label": "c"}});
        let created = client.request(2, "tools/call", taking_tasks(call)).await;
        assert_eq!(created["resultType"], "task", "{created}");
        assert_eq!(created["ttlMs"], 60_000, "{created}");
        let task = created["taskId"].as_str().unwrap().to_owned();
        assert!(task.starts_with("task%20suite/"), "{task}");
        id += 10;
        let working = poll_until(&mut client, &mut id, &task, "working").await;
        assert_eq!(working["status"], "working", "{working}");
        let ack = client
            .request(20, "tasks/cancel", taking_tasks(json!({"taskId": task})))
            .await;
        assert_eq!(ack, json!({"resultType": "complete"}));
        id = 20;
        let cancelled = poll_until(&mut client, &mut id, &task, "cancelled").await;
        assert_eq!(cancelled["status"], "cancelled", "{cancelled}");

        // A task that asks a question, answered with tasks/update.
        let call = json!({"name": tool("confirm_delete"), "arguments": {"filename": "a.txt"}});
        let created = client.request(200, "tools/call", taking_tasks(call)).await;
        let task = created["taskId"].as_str().unwrap().to_owned();
        id = 200;
        let asking = poll_until(&mut client, &mut id, &task, "input_required").await;
        let key = asking["inputRequests"]
            .as_object()
            .and_then(|requests| requests.keys().next())
            .unwrap_or_else(|| panic!("{asking}"))
            .clone();
        let answer = json!({"taskId": task, "inputResponses": {
            key: {"action": "accept", "content": {"confirm": true}}}});
        let ack = client
            .request(400, "tasks/update", taking_tasks(answer))
            .await;
        assert_eq!(ack, json!({"resultType": "complete"}));
        id = 400;
        let done = poll_until(&mut client, &mut id, &task, "completed").await;
        assert_eq!(text(&done["result"]), "deleted a.txt", "{done}");

        // A task that fails with a protocol error keeps it inlined.
        let call = json!({"name": tool("protocol_error_job"), "arguments": {}});
        let created = client.request(600, "tools/call", taking_tasks(call)).await;
        let task = created["taskId"].as_str().unwrap().to_owned();
        id = 600;
        let failed = poll_until(&mut client, &mut id, &task, "failed").await;
        assert_eq!(failed["status"], "failed", "{failed}");
        assert!(failed["error"]["code"].is_i64(), "{failed}");

        // Without the extension stated, tasks/* is refused before its id
        // is read; an id no server gave is unknown.
        let refused = client
            .request_error(800, "tasks/get", without_tasks(json!({"taskId": task})))
            .await;
        assert_eq!(refused["code"], -32021, "{refused}");
        assert_eq!(
            refused["data"]["requiredCapabilities"]["extensions"][TASKS],
            json!({})
        );
        for forged in [
            "nonexistent-12345",
            "elsewhere/1",
            "task%20suite/no-such-task",
        ] {
            let unknown = client
                .request_error(801, "tasks/get", taking_tasks(json!({"taskId": forged})))
                .await;
            assert_eq!(unknown["code"], -32602, "{forged}: {unknown}");
        }
        for removed in ["tasks/result", "tasks/list"] {
            let gone = client
                .request_error(802, removed, taking_tasks(json!({"taskId": task})))
                .await;
            assert_eq!(gone["code"], -32601, "{removed}: {gone}");
        }
        runtime.shutdown().await;
    }
}

#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn a_client_that_takes_no_tasks_gets_every_result_in_place() {
    let (gateway, runtime) = task_gateway(Naming::passthrough(NamingStyle::Claw));
    let call = json!({"name": "slow_compute", "arguments": {"seconds": 0.2, "label": "in place"}});

    // A 2026-07-28 request without the extension: the server answers in place.
    let mut modern = Client::of(&gateway);
    let result = modern
        .request(1, "tools/call", without_tasks(call.clone()))
        .await;
    assert_eq!(result["resultType"], "complete", "{result}");
    assert_eq!(text(&result), "computed in place in 0.2s", "{result}");
    // A tool that needs tasks is refused as the server refuses it.
    let refused = modern
        .request_error(
            2,
            "tools/call",
            without_tasks(json!({"name": "failing_job", "arguments": {}})),
        )
        .await;
    assert_eq!(refused["code"], -32021, "{refused}");

    // A 2025-11-25 session: the upstream session announced tasks, so the
    // server starts one; the gateway follows it and answers in place.
    let mut session = Client::session_of(&gateway).await;
    let initialized = session.request(2, "tools/call", call).await;
    assert!(initialized.get("taskId").is_none(), "{initialized}");
    assert!(initialized.get("resultType").is_none(), "{initialized}");
    assert_eq!(
        text(&initialized),
        "computed in place in 0.2s",
        "{initialized}"
    );
    let failed = session
        .request(
            3,
            "tools/call",
            json!({"name": "failing_job", "arguments": {}}),
        )
        .await;
    assert_eq!(failed["isError"], true, "{failed}");
    assert_eq!(text(&failed), "the job failed", "{failed}");
    let not_offered = session
        .request_error(4, "tasks/get", json!({"taskId": "task%20suite/x"}))
        .await;
    assert_eq!(not_offered["code"], -32601, "{not_offered}");
    runtime.shutdown().await;
}
