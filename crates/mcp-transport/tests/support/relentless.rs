//! An in-process MCP server that keeps a request from ending, for the
//! deadline and input-round tables: progress that advances, repeats or
//! stalls on a call it never answers; a task whose status or status
//! message changes (or not) on every poll; `input_required` rounds; and
//! `input_required` on any method, asking any number of inputs. It
//! records every request it sees, so a test counts what was sent again.

#![allow(dead_code, clippy::unwrap_used)]

use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_transport::kinds::{SdkOptions, SdkServer, SdkServerConnection, SdkTransport};
use mcp_transport::types::{TASKS_EXTENSION, is_modern};
use mcp_transport::{ClientSession, ErrorObject, JsonRpcMessage, SessionOptions};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

/// Time between two progress notifications, and the first one's delay.
pub(crate) const PROGRESS_EVERY: Duration = Duration::from_millis(300);
/// The task's `pollIntervalMs`.
pub(crate) const POLL_EVERY_MS: u64 = 250;
/// The value a stalling progress stays at.
pub(crate) const STALLS_AT: u64 = 5;

/// The progress a call the server never answers gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Progress {
    /// None at all.
    None,
    /// 1, 2, 3, ... every [`PROGRESS_EVERY`].
    Advancing,
    /// 1, 1, 1, ...
    Repeated,
    /// 1, 2, ... up to [`STALLS_AT`], then that value for ever.
    ThenStalled,
}

/// What each `tasks/get` of the task answers.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Status {
    /// `working`, the same message every time.
    Same,
    /// `input_required` (asking nothing) and `working` in turn.
    Changing,
    /// `working`, with a new `statusMessage` every time.
    MessageOnly,
    /// Changing up to the fourth answer (the creation's included), then
    /// `working` for good.
    ThenStalled,
}

/// What the server does.
#[derive(Debug, Clone)]
pub(crate) struct Script {
    /// The revision it speaks: modern ones answer `server/discover`, older
    /// ones `initialize`.
    pub(crate) revision: &'static str,
    /// The progress of the `plain` tool, and of a `rounds` call's retry.
    pub(crate) progress: Progress,
    /// The task of the `task` tool.
    pub(crate) status: Status,
    /// How long the first round of the `rounds` tool takes to come back
    /// as `input_required`.
    pub(crate) round_ms: u64,
    /// Whether every round of the `rounds` tool comes back as
    /// `input_required` (else the retry is never answered).
    pub(crate) endless_rounds: bool,
    /// The method answered with `input_required` every time, if any.
    pub(crate) input_on: Option<&'static str>,
    /// How many `roots/list` inputs each such answer asks for.
    pub(crate) inputs: usize,
}

impl Default for Script {
    fn default() -> Self {
        Script {
            revision: "2026-07-28",
            progress: Progress::None,
            status: Status::Same,
            round_ms: 0,
            endless_rounds: false,
            input_on: None,
            inputs: 0,
        }
    }
}

/// The server: its script, and every request it saw.
pub(crate) struct Relentless {
    script: Script,
    seen: Mutex<Vec<(String, Value)>>,
    polls: Mutex<u64>,
}

impl Relentless {
    pub(crate) fn new(script: Script) -> Arc<Relentless> {
        Arc::new(Relentless {
            script,
            seen: Mutex::new(Vec::new()),
            polls: Mutex::new(0),
        })
    }

    /// How many requests of `method` it saw.
    pub(crate) fn count(&self, method: &str) -> usize {
        self.seen
            .lock()
            .unwrap()
            .iter()
            .filter(|(m, _)| m == method)
            .count()
    }

    fn modern(&self) -> bool {
        is_modern(self.script.revision)
    }

    fn capabilities(&self) -> Value {
        let mut capabilities = json!({"tools": {}, "prompts": {}, "resources": {}});
        if self.modern() {
            capabilities["extensions"] = json!({TASKS_EXTENSION: {}});
        }
        capabilities
    }

    fn input_required(&self, state: &str) -> Value {
        let mut result = json!({"resultType": "input_required", "requestState": state});
        if self.script.inputs > 0 {
            let requests: Map<String, Value> = (0..self.script.inputs)
                .map(|i| (format!("r{i}"), json!({"method": "roots/list"})))
                .collect();
            result["inputRequests"] = Value::Object(requests);
        }
        result
    }

    fn task(&self) -> Value {
        let poll = {
            let mut polls = self.polls.lock().unwrap();
            *polls += 1;
            *polls
        };
        let changing = |n: u64| {
            if n % 2 == 1 {
                "input_required"
            } else {
                "working"
            }
        };
        let (status, message) = match self.script.status {
            Status::Same => ("working", "busy".to_owned()),
            Status::Changing => (changing(poll), "busy".to_owned()),
            Status::MessageOnly => ("working", format!("busy (poll {poll})")),
            Status::ThenStalled if poll <= 4 => (changing(poll), "busy".to_owned()),
            Status::ThenStalled => ("working", "busy".to_owned()),
        };
        json!({
            "resultType": "complete",
            "taskId": "t1", "status": status, "statusMessage": message,
            "createdAt": "2026-01-01T00:00:00Z", "lastUpdatedAt": "2026-01-01T00:00:00Z",
            "ttlMs": 600_000, "pollIntervalMs": POLL_EVERY_MS
        })
    }

    /// The answer to a request, or `None` to leave it unanswered; a call
    /// left unanswered may get progress from `spawn_progress`.
    fn answer(&self, method: &str, params: &Value) -> Result<Option<Value>, (i64, String)> {
        if self.script.input_on == Some(method) {
            return Ok(Some(self.input_required("again")));
        }
        let modern = self.modern();
        let complete = |mut result: Value| {
            if modern {
                result["resultType"] = json!("complete");
            }
            Ok(Some(result))
        };
        match method {
            "server/discover" if modern => complete(json!({
                "supportedVersions": [self.script.revision],
                "capabilities": self.capabilities(),
            })),
            "initialize" if !modern => Ok(Some(json!({
                "protocolVersion": self.script.revision,
                "capabilities": self.capabilities(),
                "serverInfo": {"name": "relentless", "version": "1"},
            }))),
            "ping" | "tasks/cancel" | "completion/complete" => complete(json!({})),
            "tools/list" => complete(json!({"tools": []})),
            "prompts/list" => complete(json!({"prompts": []})),
            "resources/list" => complete(json!({"resources": []})),
            "resources/templates/list" => complete(json!({"resourceTemplates": []})),
            "prompts/get" => complete(json!({"messages": []})),
            "resources/read" => complete(json!({"contents": []})),
            "tasks/get" => Ok(Some(self.task())),
            "tools/call" => match params["name"].as_str() {
                Some("task") => {
                    let mut task = self.task();
                    task["resultType"] = json!("task");
                    Ok(Some(task))
                }
                Some("rounds")
                    if params.get("requestState").is_none() || self.script.endless_rounds =>
                {
                    Ok(Some(self.input_required("r")))
                }
                Some("done") => complete(json!({"content": []})),
                _ => Ok(None),
            },
            other => Err((-32601, format!("method not found: {other}"))),
        }
    }
}

/// Sends `pattern`'s progress for `token` until the connection ends.
fn spawn_progress(outgoing: mpsc::Sender<JsonRpcMessage>, token: Value, pattern: Progress) {
    if pattern == Progress::None || token.is_null() {
        return;
    }
    tokio::spawn(async move {
        for step in 1u64.. {
            tokio::time::sleep(PROGRESS_EVERY).await;
            let value = match pattern {
                Progress::Advancing => step,
                Progress::ThenStalled => step.min(STALLS_AT),
                Progress::Repeated | Progress::None => 1,
            };
            let note = JsonRpcMessage::notification(
                "notifications/progress",
                Some(json!({"progressToken": token, "progress": value})),
            );
            if outgoing.send(note).await.is_err() {
                return;
            }
        }
    });
}

#[async_trait]
impl SdkServer for Relentless {
    async fn serve(self: Arc<Self>, mut connection: SdkServerConnection) {
        while let Some(message) = connection.incoming.recv().await {
            let JsonRpcMessage::Request(request) = message else {
                continue;
            };
            let params = request.params.clone().unwrap_or_default();
            self.seen
                .lock()
                .unwrap()
                .push((request.method.clone(), params.clone()));
            let reply = match self.answer(&request.method, &params) {
                Ok(Some(result)) => JsonRpcMessage::result(request.id, result),
                Ok(None) => {
                    let token = params
                        .pointer("/_meta/progressToken")
                        .cloned()
                        .unwrap_or_default();
                    spawn_progress(connection.outgoing.clone(), token, self.script.progress);
                    continue;
                }
                Err((code, text)) => {
                    JsonRpcMessage::error(Some(request.id), ErrorObject::new(code, text))
                }
            };
            // The first round of `rounds` comes back late.
            let delay = match (request.method.as_str(), params["name"].as_str()) {
                ("tools/call", Some("rounds")) => Duration::from_millis(self.script.round_ms),
                _ => Duration::ZERO,
            };
            let outgoing = connection.outgoing.clone();
            tokio::spawn(async move {
                tokio::time::sleep(delay).await;
                let _ = outgoing.send(reply).await;
            });
        }
    }
}

/// A session to `server`, with `options`.
pub(crate) async fn connect(server: &Arc<Relentless>, options: SessionOptions) -> ClientSession {
    let transport = SdkTransport::connect(
        "relentless",
        Arc::clone(server) as Arc<dyn SdkServer>,
        SdkOptions::default(),
    );
    ClientSession::initialize(Box::new(transport), "relentless", options)
        .await
        .unwrap()
}
