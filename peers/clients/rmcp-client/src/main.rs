//! A scenario driver on the rmcp 3.11 client, for testing a server (the
//! gateway) with a client no one here wrote.
//!
//!     rmcp-peer-client [--legacy] [--steps a,b,...] stdio <command> [args...]
//!     rmcp-peer-client [--legacy] [--steps a,b,...] http http://127.0.0.1:PORT/mcp
//!
//! Without `--legacy` the client connects with
//! `ClientLifecycleMode::Discover { preferred_versions: [2026-07-28] }`
//! (`server/discover`, then per-request `_meta`; no fallback). `--legacy` is
//! `ClientLifecycleMode::Initialize` offering 2025-11-25 (rmcp's own
//! `serve()` would offer its newest revision in `initialize`).
//!
//! One JSON object per step on stdout, `{"step", "ok", "detail"}`:
//! `connect`, then the fixed scenario (`list`, `call`, `read`, `prompt`,
//! `elicit`, `list_changed`, `cancel`; `--steps` runs a subset). Exit 0 only
//! if every step passed. The server's stderr (stdio) is passed through.
//!
//! The names the steps use are in [`NAMES`]; `MCP_DRIVER_NAMES` (a JSON
//! object with some of its keys) overrides them.

use std::sync::Arc;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use rmcp::model::{
    CallToolRequest, CallToolRequestParams, ClientCapabilities, ClientConfig, ClientRequest,
    ElicitRequestParams, ElicitResult, ElicitationAction, GetPromptRequestParams, Implementation,
    ProtocolVersion, ReadResourceRequestParams, ResourceContents, ServerNotification, ServerResult,
    SubscriptionFilter,
};
use rmcp::service::{
    ClientLifecycleMode, ClientServiceExt, NotificationContext, PeerRequestOptions, RequestContext,
    RoleClient, RunningService,
};
use rmcp::transport::{StreamableHttpClientTransport, TokioChildProcess};
use rmcp::{ClientHandler, ErrorData};
use serde_json::{Map, Value, json};
use tokio::sync::Notify;

/// The names and arguments the steps use (see the TypeScript driver for the
/// meaning of each key). `elicitAccepted` is matched here as `|`-separated
/// substrings (the other drivers read it as a regular expression).
const NAMES: &str = r#"{
    "listedTool": "test_simple_text",
    "textTool": "test_simple_text",
    "textArgs": {},
    "resource": "test://static-text",
    "prompt": "test_simple_prompt",
    "promptArgs": {},
    "elicitTool": "test_elicitation",
    "elicitArgs": {"message": "Please answer the driver"},
    "elicitAccepted": "action=accept|confirmed: true",
    "toggleTool": "toggle",
    "toggledTool": "extra",
    "slowTool": "slow",
    "slowArgs": {"ms": 10000}
}"#;

const STEPS: [&str; 7] = [
    "list",
    "call",
    "read",
    "prompt",
    "elicit",
    "list_changed",
    "cancel",
];
const STEP_TIMEOUT: Duration = Duration::from_secs(20);
const NOTIFY_WINDOW: Duration = Duration::from_secs(5);
const CANCEL_AFTER: Duration = Duration::from_millis(300);
const CANCEL_DEADLINE: Duration = Duration::from_secs(2);

type Client = RunningService<RoleClient, Driver>;

/// The client side: accepts every elicitation with content that fits the
/// schema, counts `tools/list_changed` notifications that reach it (2025-11-25;
/// at 2026-07-28 they come on the listen stream instead).
#[derive(Clone)]
struct Driver {
    config: ClientConfig,
    elicitations: Arc<Mutex<Vec<Value>>>,
    tools_changed: Arc<Mutex<usize>>,
    changed: Arc<Notify>,
}

impl Driver {
    fn saw_tools_changed(&self) {
        *self.tools_changed.lock().unwrap() += 1;
        self.changed.notify_waiters();
    }

    fn changes(&self) -> usize {
        *self.tools_changed.lock().unwrap()
    }
}

impl ClientHandler for Driver {
    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        _context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } = request
        else {
            return Ok(ElicitResult::new(ElicitationAction::Decline));
        };
        let schema = serde_json::to_value(&requested_schema).unwrap_or(Value::Null);
        let content = fill(&schema);
        self.elicitations
            .lock()
            .unwrap()
            .push(json!({"message": message, "content": content}));
        Ok(ElicitResult::new(ElicitationAction::Accept).with_content(content))
    }

    async fn on_tool_list_changed(&self, _context: NotificationContext<RoleClient>) {
        self.saw_tools_changed();
    }

    fn get_info(&self) -> ClientConfig {
        self.config.clone()
    }
}

/// Content that fits a requested elicitation schema: each property gets its
/// default, else a value of its type.
fn fill(schema: &Value) -> Value {
    let mut content = Map::new();
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        for (key, prop) in properties {
            let value = if let Some(default) = prop.get("default") {
                default.clone()
            } else if let Some(first) = prop.get("enum").and_then(|e| e.get(0)) {
                first.clone()
            } else if let Some(first) = prop.pointer("/oneOf/0/const") {
                first.clone()
            } else {
                match prop.get("type").and_then(Value::as_str) {
                    Some("boolean") => json!(true),
                    Some("integer") | Some("number") => {
                        prop.get("minimum").cloned().unwrap_or(json!(1))
                    }
                    Some("array") => {
                        let first = prop
                            .pointer("/items/enum/0")
                            .or_else(|| prop.pointer("/items/anyOf/0/const"))
                            .cloned()
                            .unwrap_or(json!("driver"));
                        json!([first])
                    }
                    _ => json!("driver answer"),
                }
            };
            content.insert(key.clone(), value);
        }
    }
    Value::Object(content)
}

fn describe(error: impl std::fmt::Display) -> Value {
    Value::String(error.to_string())
}

fn args(value: &Value) -> Map<String, Value> {
    value.as_object().cloned().unwrap_or_default()
}

fn call_params(names: &Value, tool: &str, arguments: &str) -> CallToolRequestParams {
    CallToolRequestParams::new(names[tool].as_str().unwrap_or_default().to_owned())
        .with_arguments(args(&names[arguments]))
}

fn texts(result: &rmcp::model::CallToolResult) -> Vec<String> {
    result
        .content
        .iter()
        .filter_map(|block| block.as_text().map(|text| text.text.clone()))
        .collect()
}

struct Run {
    client: Client,
    driver: Driver,
    names: Value,
    legacy: bool,
}

type Outcome = Result<(bool, Value), Value>;

impl Run {
    fn name(&self, key: &str) -> String {
        self.names[key].as_str().unwrap_or_default().to_owned()
    }

    async fn tool_names(&self) -> Result<Vec<String>, Value> {
        let tools = self.client.list_all_tools().await.map_err(describe)?;
        Ok(tools
            .into_iter()
            .map(|tool| tool.name.to_string())
            .collect())
    }

    async fn list(&self) -> Outcome {
        let names = self.tool_names().await?;
        Ok((
            names.contains(&self.name("listedTool")),
            json!({"tools": names}),
        ))
    }

    async fn call(&self) -> Outcome {
        let result = self
            .client
            .call_tool(call_params(&self.names, "textTool", "textArgs"))
            .await
            .map_err(describe)?;
        let text = texts(&result);
        let is_error = result.is_error == Some(true);
        Ok((
            !is_error && !text.is_empty(),
            json!({"text": text, "isError": is_error}),
        ))
    }

    async fn read(&self) -> Outcome {
        let result = self
            .client
            .read_resource(ReadResourceRequestParams::new(self.name("resource")))
            .await
            .map_err(describe)?;
        let text: Vec<String> = result
            .contents
            .iter()
            .filter_map(|contents| match contents {
                ResourceContents::TextResourceContents { text, .. } => Some(text.clone()),
                _ => None,
            })
            .collect();
        Ok((!text.is_empty(), json!({"text": text})))
    }

    async fn prompt(&self) -> Outcome {
        let result = self
            .client
            .get_prompt(
                GetPromptRequestParams::new(self.name("prompt"))
                    .with_arguments(args(&self.names["promptArgs"])),
            )
            .await
            .map_err(describe)?;
        let first = result
            .messages
            .first()
            .map(|message| serde_json::to_value(&message.content).unwrap_or(Value::Null));
        Ok((
            !result.messages.is_empty(),
            json!({"messages": result.messages.len(), "first": first}),
        ))
    }

    async fn elicit(&self) -> Outcome {
        let before = self.driver.elicitations.lock().unwrap().len();
        let result = self
            .client
            .call_tool(call_params(&self.names, "elicitTool", "elicitArgs"))
            .await
            .map_err(describe)?;
        let text = texts(&result);
        let asked: Vec<Value> = self.driver.elicitations.lock().unwrap()[before..].to_vec();
        let accepted_pattern = self.name("elicitAccepted");
        let accepted = result.is_error != Some(true)
            && text.iter().any(|t| {
                accepted_pattern
                    .split('|')
                    .any(|alternative| t.contains(alternative))
            });
        Ok((
            !asked.is_empty() && accepted,
            json!({"asked": asked, "text": text}),
        ))
    }

    async fn wait_changed(&self, seen: usize) -> bool {
        let deadline = tokio::time::Instant::now() + NOTIFY_WINDOW;
        loop {
            let notified = self.driver.changed.notified();
            if self.driver.changes() > seen {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return self.driver.changes() > seen;
            }
        }
    }

    async fn toggle_twice(&self, honored: Value) -> Outcome {
        let toggled = self.name("toggledTool");
        let before = self.tool_names().await?;
        let seen = self.driver.changes();
        let started = Instant::now();
        let toggle = || {
            self.client
                .call_tool(CallToolRequestParams::new(self.name("toggleTool")))
        };
        let answer = texts(&toggle().await.map_err(describe)?);
        let notified = self.wait_changed(seen).await;
        let latency = notified.then(|| started.elapsed().as_millis() as u64);
        let after = self.tool_names().await?;
        let flipped = before.contains(&toggled) != after.contains(&toggled);
        // Put the server back as it was.
        let seen = self.driver.changes();
        toggle().await.map_err(describe)?;
        let restored = self.wait_changed(seen).await;
        Ok((
            notified && flipped,
            json!({
                "honoredFilter": honored,
                "toggle": answer,
                "notified": notified,
                "latency_ms": latency,
                "had": before.contains(&toggled),
                "has": after.contains(&toggled),
                "restore_notified": restored,
            }),
        ))
    }

    async fn list_changed(&self) -> Outcome {
        if self.legacy {
            return self.toggle_twice(Value::Null).await;
        }
        // 2026-07-28: list changes come only on a `subscriptions/listen`
        // stream, read from the subscription handle.
        let mut subscription = self
            .client
            .peer()
            .listen(SubscriptionFilter::builder().tools_list_changed().build())
            .await
            .map_err(describe)?;
        let honored = serde_json::to_value(subscription.acknowledged()).unwrap_or(Value::Null);
        let driver = self.driver.clone();
        let reader = async move {
            while let Ok(Some(notification)) = subscription.next().await {
                if matches!(
                    notification,
                    ServerNotification::ToolListChangedNotification(_)
                ) {
                    driver.saw_tools_changed();
                }
            }
            subscription
        };
        let mut reader = Box::pin(reader);
        let outcome = tokio::select! {
            outcome = self.toggle_twice(honored) => outcome,
            _ = &mut reader => Err(json!("the subscription ended during the step")),
        };
        drop(reader); // cancels the subscription (`notifications/cancelled` for the listen request)
        outcome
    }

    async fn cancel(&self) -> Outcome {
        let request = ClientRequest::CallToolRequest(CallToolRequest::new(call_params(
            &self.names,
            "slowTool",
            "slowArgs",
        )));
        let started = Instant::now();
        let mut handle = self
            .client
            .peer()
            .send_cancellable_request(request, PeerRequestOptions::no_options())
            .await
            .map_err(describe)?;
        tokio::select! {
            early = &mut handle.rx => {
                let early = match early {
                    Ok(Ok(ServerResult::CallToolResult(result))) => json!(texts(&result)),
                    other => json!(format!("{other:?}")),
                };
                return Ok((false, json!({
                    "ended_before_cancel": early,
                    "after_ms": started.elapsed().as_millis() as u64,
                })));
            }
            _ = tokio::time::sleep(CANCEL_AFTER) => {}
        }
        let cancelled_at = Instant::now();
        let sent = handle
            .cancel(Some("cancelled by the driver".to_owned()))
            .await;
        let ended = cancelled_at.elapsed();
        // The connection must still work after the cancel.
        let after = match tokio::time::timeout(
            Duration::from_secs(5),
            self.client
                .call_tool(call_params(&self.names, "textTool", "textArgs")),
        )
        .await
        {
            Ok(Ok(result)) => json!(texts(&result)),
            Ok(Err(error)) => describe(error),
            Err(_) => json!("call after cancel: no answer within 5 s"),
        };
        let after_ok = after.as_array().is_some_and(|texts| !texts.is_empty());
        Ok((
            sent.is_ok() && ended <= CANCEL_DEADLINE && after_ok,
            json!({
                "outcome": match &sent {
                    Ok(()) => "cancelled".to_owned(),
                    Err(error) => format!("cancel failed: {error}"),
                },
                "ended_ms_after_cancel": ended.as_millis() as u64,
                "call_after_cancel": after,
            }),
        ))
    }

    async fn step(&self, step: &str) -> Outcome {
        match step {
            "list" => self.list().await,
            "call" => self.call().await,
            "read" => self.read().await,
            "prompt" => self.prompt().await,
            "elicit" => self.elicit().await,
            "list_changed" => self.list_changed().await,
            "cancel" => self.cancel().await,
            _ => unreachable!("steps are checked when parsed"),
        }
    }
}

struct Emitter {
    failed: bool,
}

impl Emitter {
    fn emit(&mut self, step: &str, ok: bool, detail: Value) {
        self.failed |= !ok;
        // Written by hand to keep the key order of the other drivers.
        println!(r#"{{"step":{},"ok":{ok},"detail":{detail}}}"#, json!(step));
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: rmcp-peer-client [--legacy] [--steps a,b,...] (stdio <command> [args...] | http <url>)"
    );
    std::process::exit(2);
}

/// Leading flags, then the transport; `http <url>` may also take the flags
/// after the URL.
fn parse() -> (bool, Vec<String>, String, Vec<String>) {
    let mut legacy = false;
    let mut steps: Vec<String> = STEPS.iter().map(|s| s.to_string()).collect();
    let mut flags = |args: &mut Vec<String>| {
        loop {
            match args.first().map(String::as_str) {
                Some("--legacy") => {
                    legacy = true;
                    args.remove(0);
                }
                Some("--steps") if args.len() > 1 => {
                    steps = args[1]
                        .split(',')
                        .filter(|s| !s.is_empty())
                        .map(str::to_owned)
                        .collect();
                    if steps.iter().any(|s| !STEPS.contains(&s.as_str())) {
                        usage();
                    }
                    args.drain(..2);
                }
                _ => return,
            }
        }
    };
    let mut args: Vec<String> = std::env::args().skip(1).collect();
    flags(&mut args);
    if args.len() < 2 || !(args[0] == "stdio" || args[0] == "http") {
        usage();
    }
    let mode = args.remove(0);
    if mode == "http" {
        let mut rest = args.split_off(1);
        flags(&mut rest);
        if !rest.is_empty() {
            usage();
        }
    }
    (legacy, steps, mode, args)
}

#[tokio::main]
async fn main() {
    let (legacy, steps, mode, target) = parse();
    let mut names: Value = serde_json::from_str(NAMES).expect("NAMES is JSON");
    if let Ok(overrides) = std::env::var("MCP_DRIVER_NAMES") {
        let overrides: Value = serde_json::from_str(&overrides).expect("MCP_DRIVER_NAMES is JSON");
        for (key, value) in overrides.as_object().cloned().unwrap_or_default() {
            names[key] = value;
        }
    }
    let capabilities: ClientCapabilities =
        serde_json::from_value(json!({"elicitation": {"form": {}}})).expect("capabilities");
    let mut config = ClientConfig::new(capabilities, Implementation::new("rmcp-driver", "3.11.0"));
    let (wanted, lifecycle) = if legacy {
        config = config.with_protocol_version(ProtocolVersion::V_2025_11_25);
        (
            ProtocolVersion::V_2025_11_25,
            ClientLifecycleMode::Initialize,
        )
    } else {
        (
            ProtocolVersion::V_2026_07_28,
            ClientLifecycleMode::Discover {
                preferred_versions: vec![ProtocolVersion::V_2026_07_28],
            },
        )
    };
    let driver = Driver {
        config,
        elicitations: Arc::default(),
        tools_changed: Arc::default(),
        changed: Arc::new(Notify::new()),
    };
    let mut out = Emitter { failed: false };

    let connect = async {
        if mode == "stdio" {
            let mut command = tokio::process::Command::new(&target[0]);
            command.args(&target[1..]);
            let (transport, _) = TokioChildProcess::builder(command)
                .stderr(std::process::Stdio::inherit())
                .spawn()
                .map_err(describe)?;
            driver
                .clone()
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(describe)
        } else {
            let transport = StreamableHttpClientTransport::from_uri(target[0].as_str());
            driver
                .clone()
                .serve_with_lifecycle(transport, lifecycle)
                .await
                .map_err(describe)
        }
    };
    let client = match tokio::time::timeout(STEP_TIMEOUT, connect).await {
        Ok(Ok(client)) => client,
        outcome => {
            let error = match outcome {
                Ok(Err(error)) => error,
                _ => json!(format!("no connection within {} s", STEP_TIMEOUT.as_secs())),
            };
            out.emit("connect", false, error);
            for step in &steps {
                out.emit(step, false, json!("not run: no connection"));
            }
            // Dropping the transport spawned the child's kill; let it run.
            tokio::time::sleep(Duration::from_millis(200)).await;
            std::process::exit(1);
        }
    };
    let info = client.peer_info();
    let version = info.as_ref().map(|info| info.protocol_version.clone());
    out.emit(
        "connect",
        version.as_ref() == Some(&wanted),
        json!({
            "protocolVersion": version.map(|v| v.to_string()),
            "wanted": wanted.to_string(),
            "server": info.as_ref().and_then(|info| info.server_info.clone()),
        }),
    );

    let run = Run {
        client,
        driver,
        names,
        legacy,
    };
    for step in &steps {
        match tokio::time::timeout(STEP_TIMEOUT, run.step(step)).await {
            Ok(Ok((ok, detail))) => out.emit(step, ok, detail),
            Ok(Err(error)) => out.emit(step, false, error),
            Err(_) => out.emit(
                step,
                false,
                json!(format!(
                    "{step}: no answer within {} s",
                    STEP_TIMEOUT.as_secs()
                )),
            ),
        }
    }
    let mut client = run.client;
    let _ = client.close_with_timeout(Duration::from_secs(5)).await;
    std::process::exit(if out.failed { 1 } else { 0 });
}
