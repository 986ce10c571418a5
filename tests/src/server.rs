//! A small, scriptable MCP server: the example server of the README and the
//! peer of the cross-transport behaviour suite.
//!
//! [`ExampleServer`] speaks MCP over a pair of [`JsonRpcMessage`] channels, so
//! the same core runs in-process (it implements [`SdkServer`]), over stdio
//! (`mcp-example-server`) and over the network transports. Its default mode
//! is a friendly demo (`echo`, `add`, a resource, a prompt); the other tools
//! and the [`ServerOptions`] flags script the situations a client must
//! survive: progress, cancellation, errors, crashes, list changes,
//! server→client requests, pagination, slow or broken handshakes, huge
//! messages and notification floods.

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;
use mcp_transport::message::error_codes;
use mcp_transport::sdk::{SdkServer, SdkServerConnection};
use mcp_transport::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId, Response};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot};
use tokio::task::AbortHandle;

/// How the server behaves; also the command-line flags of
/// `mcp-example-server`.
#[derive(Debug, Clone, PartialEq, Eq, clap::Args)]
pub struct ServerOptions {
    /// The name in `serverInfo`.
    #[arg(long, default_value = "example")]
    pub name: String,
    /// Tools per `tools/list` page (0: one page).
    #[arg(long, default_value_t = 0)]
    pub page_size: usize,
    /// Extra numbered tools (`extra-0`, ...), to make pagination visible.
    #[arg(long, default_value_t = 0)]
    pub extra_tools: usize,
    /// Answer every `tools/list` page with the same cursor (a broken server).
    #[arg(long)]
    pub repeat_cursor: bool,
    /// Wait this long before answering `initialize`.
    #[arg(long, default_value_t = 0)]
    pub init_delay_ms: u64,
    /// Never answer `initialize`.
    #[arg(long)]
    pub never_answer_initialize: bool,
    /// Exit (with a message on stderr) when `initialize` arrives.
    #[arg(long)]
    pub exit_during_initialize: bool,
    /// Answer `initialize` with this protocol version instead of the client's.
    #[arg(long)]
    pub protocol_version: Option<String>,
    /// Print lines that are not JSON around every message (stdio only).
    #[arg(long)]
    pub garbage_lines: bool,
    /// Keep running after stdin closes (stdio only).
    #[arg(long)]
    pub ignore_stdin_close: bool,
    /// Ignore SIGTERM (stdio only).
    #[arg(long)]
    pub ignore_sigterm: bool,
    /// Start a grandchild process (`sleep`) in the same process group and
    /// report its pid through the `grandchild_pid` tool (stdio only).
    #[arg(long)]
    pub spawn_grandchild: bool,
}

impl Default for ServerOptions {
    fn default() -> Self {
        ServerOptions {
            name: "example".to_string(),
            page_size: 0,
            extra_tools: 0,
            repeat_cursor: false,
            init_delay_ms: 0,
            never_answer_initialize: false,
            exit_during_initialize: false,
            protocol_version: None,
            garbage_lines: false,
            ignore_stdin_close: false,
            ignore_sigterm: false,
            spawn_grandchild: false,
        }
    }
}

impl ServerOptions {
    /// The command-line arguments that reproduce these options.
    pub fn to_args(&self) -> Vec<String> {
        let mut args = vec!["--name".to_string(), self.name.clone()];
        let mut number = |flag: &str, value: u64| {
            if value != 0 {
                args.push(flag.to_string());
                args.push(value.to_string());
            }
        };
        number("--page-size", self.page_size as u64);
        number("--extra-tools", self.extra_tools as u64);
        number("--init-delay-ms", self.init_delay_ms);
        if let Some(version) = &self.protocol_version {
            args.push("--protocol-version".to_string());
            args.push(version.clone());
        }
        for (set, flag) in [
            (self.repeat_cursor, "--repeat-cursor"),
            (self.never_answer_initialize, "--never-answer-initialize"),
            (self.exit_during_initialize, "--exit-during-initialize"),
            (self.garbage_lines, "--garbage-lines"),
            (self.ignore_stdin_close, "--ignore-stdin-close"),
            (self.ignore_sigterm, "--ignore-sigterm"),
            (self.spawn_grandchild, "--spawn-grandchild"),
        ] {
            if set {
                args.push(flag.to_string());
            }
        }
        args
    }
}

/// Why [`ExampleServer::run`] returned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Exit {
    /// The client closed the connection.
    ClientClosed,
    /// The `crash` tool was called: a process should exit with an error.
    Crash,
    /// `--exit-during-initialize`: a process should exit with an error.
    ExitDuringInitialize,
}

/// Hooks only a process can provide (the grandchild's pid).
#[derive(Debug, Default, Clone)]
pub struct ProcessInfo {
    /// Pid of the grandchild started by `--spawn-grandchild`.
    pub grandchild_pid: Option<u32>,
}

/// State shared by every connection to one server.
#[derive(Debug, Default)]
struct SharedState {
    /// How many times `touch` changed the tool list.
    touches: AtomicU64,
    /// How many requests the client cancelled.
    cancelled: AtomicU64,
}

/// The example server core. One value can serve many connections.
#[derive(Debug, Default)]
pub struct ExampleServer {
    options: ServerOptions,
    process: ProcessInfo,
    state: SharedState,
}

/// One connection's state.
struct Connection {
    server: Arc<ExampleServer>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
    in_flight: Mutex<HashMap<RequestId, AbortHandle>>,
    asks: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>>,
    next_ask: AtomicU64,
    exit: Mutex<Option<Exit>>,
    stop: tokio::sync::Notify,
}

type ToolResult = Result<Value, ErrorObject>;

fn text(value: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": value.into() }] })
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_codes::INVALID_PARAMS, message)
}

impl ExampleServer {
    /// A server with these options.
    pub fn new(options: ServerOptions) -> Self {
        ExampleServer {
            options,
            process: ProcessInfo::default(),
            state: SharedState::default(),
        }
    }

    /// A server that also knows facts about its process.
    pub fn with_process(options: ServerOptions, process: ProcessInfo) -> Self {
        ExampleServer {
            options,
            process,
            state: SharedState::default(),
        }
    }

    /// The options it runs with.
    pub fn options(&self) -> &ServerOptions {
        &self.options
    }

    /// How many requests clients have cancelled so far.
    pub fn cancelled_count(&self) -> u64 {
        self.state.cancelled.load(Ordering::SeqCst)
    }

    /// Serves one connection until the client closes `incoming` or a
    /// scripted exit happens.
    pub async fn run(
        self: Arc<Self>,
        mut incoming: mpsc::UnboundedReceiver<JsonRpcMessage>,
        outgoing: mpsc::Sender<JsonRpcMessage>,
    ) -> Exit {
        let connection = Arc::new(Connection {
            server: Arc::clone(&self),
            outgoing,
            in_flight: Mutex::new(HashMap::new()),
            asks: Mutex::new(HashMap::new()),
            next_ask: AtomicU64::new(1),
            exit: Mutex::new(None),
            stop: tokio::sync::Notify::new(),
        });
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                message = incoming.recv() => match message {
                    Some(message) => connection.handle(message, &mut tasks).await,
                    None => {
                        // The client is leaving: answer what it already asked,
                        // briefly, like a well-behaved server.
                        let drain = async { while tasks.join_next().await.is_some() {} };
                        let _ = tokio::time::timeout(Duration::from_secs(2), drain).await;
                        break;
                    }
                },
                () = connection.stop.notified() => break,
                Some(_) = tasks.join_next(), if !tasks.is_empty() => {}
            }
            if connection.exit().is_some() {
                break;
            }
        }
        tasks.abort_all();
        connection.exit().unwrap_or(Exit::ClientClosed)
    }

    fn tools(&self) -> Vec<Value> {
        let mut tools = vec![
            json!({"name": "echo", "description": "Echoes the text back",
                   "inputSchema": {"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}}),
            json!({"name": "add", "description": "Adds two numbers",
                   "inputSchema": {"type": "object", "properties": {"a": {"type": "number"}, "b": {"type": "number"}}, "required": ["a", "b"]},
                   "outputSchema": {"type": "object", "properties": {"sum": {"type": "number"}}, "required": ["sum"]}}),
            json!({"name": "slow", "description": "Works for steps x step_ms milliseconds, reporting progress",
                   "inputSchema": {"type": "object", "properties": {"steps": {"type": "integer"}, "step_ms": {"type": "integer"}}}}),
            json!({"name": "fail", "description": "Always reports a tool error",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "crash", "description": "Stops the server abruptly",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "touch", "description": "Adds a tool and announces the change",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "ask_roots", "description": "Asks the client for its roots and returns the answer",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "ping_client", "description": "Pings the client and returns its answer",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "huge", "description": "Returns a text of the given size",
                   "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}}}}),
            json!({"name": "flood", "description": "Sends count log notifications, then answers",
                   "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}}),
            json!({"name": "cancelled", "description": "How many requests the client cancelled",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "pid", "description": "The server's process id",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "environment", "description": "The server's working directory and environment variable names",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "grandchild_pid", "description": "Pid of the grandchild process, if any",
                   "inputSchema": {"type": "object"}}),
        ];
        for n in 0..self.state.touches.load(Ordering::SeqCst) {
            tools.push(json!({"name": format!("touched-{n}"), "inputSchema": {"type": "object"}}));
        }
        for n in 0..self.options.extra_tools {
            tools.push(json!({"name": format!("extra-{n}"), "inputSchema": {"type": "object"}}));
        }
        tools
    }
}

#[async_trait]
impl SdkServer for ExampleServer {
    async fn serve(self: Arc<Self>, connection: SdkServerConnection) {
        self.run(connection.incoming, connection.outgoing).await;
    }
}

impl Connection {
    fn exit(&self) -> Option<Exit> {
        *self.exit.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn set_exit(&self, exit: Exit) {
        *self.exit.lock().unwrap_or_else(|e| e.into_inner()) = Some(exit);
        self.stop.notify_one();
    }

    async fn send(&self, message: JsonRpcMessage) {
        let _ = self.outgoing.send(message).await;
    }

    async fn handle(
        self: &Arc<Self>,
        message: JsonRpcMessage,
        tasks: &mut tokio::task::JoinSet<()>,
    ) {
        match message {
            JsonRpcMessage::Request(request) => {
                if request.method == "initialize" {
                    let options = &self.server.options;
                    if options.exit_during_initialize {
                        self.set_exit(Exit::ExitDuringInitialize);
                        return;
                    }
                    if options.never_answer_initialize {
                        return;
                    }
                }
                let connection = Arc::clone(self);
                let id = request.id.clone();
                let abort = tasks.spawn(async move {
                    let id = request.id.clone();
                    let outcome = connection.answer(request).await;
                    connection
                        .in_flight
                        .lock()
                        .unwrap_or_else(|e| e.into_inner())
                        .remove(&id);
                    if let Some(outcome) = outcome {
                        connection
                            .send(JsonRpcMessage::Response(Response {
                                id: Some(id),
                                outcome,
                            }))
                            .await;
                    }
                });
                self.in_flight
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .insert(id, abort);
            }
            JsonRpcMessage::Notification(notification) => self.on_notification(notification),
            JsonRpcMessage::Response(response) => {
                let Some(id) = response.id else { return };
                let waiter = self
                    .asks
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .remove(&id);
                if let Some(waiter) = waiter {
                    let _ = waiter.send(response.outcome);
                }
            }
        }
    }

    fn on_notification(&self, notification: Notification) {
        if notification.method != "notifications/cancelled" {
            return;
        }
        let id = notification
            .params
            .as_ref()
            .and_then(|p| p.get("requestId"))
            .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
        let Some(id) = id else { return };
        let task = self
            .in_flight
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .remove(&id);
        if let Some(task) = task {
            task.abort();
            self.server.state.cancelled.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The answer to a request; `None` when no answer must be sent.
    async fn answer(self: &Arc<Self>, request: Request) -> Option<Result<Value, ErrorObject>> {
        let params = request.params.unwrap_or(Value::Null);
        let server = &self.server;
        Some(match request.method.as_str() {
            "initialize" => {
                tokio::time::sleep(Duration::from_millis(server.options.init_delay_ms)).await;
                let version = server.options.protocol_version.clone().unwrap_or_else(|| {
                    params
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .unwrap_or(mcp_transport::protocol::LATEST_PROTOCOL_VERSION)
                        .to_string()
                });
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": {
                        "tools": {"listChanged": true},
                        "resources": {},
                        "prompts": {},
                        "logging": {},
                    },
                    "serverInfo": {"name": server.options.name, "version": env!("CARGO_PKG_VERSION")},
                    "instructions": "A small example server: try the echo and add tools.",
                }))
            }
            "ping" => Ok(json!({})),
            "tools/list" => self.list_tools(&params),
            "tools/call" => self.call_tool(&params).await,
            "resources/list" => Ok(json!({"resources": [
                {"uri": "example://greeting", "name": "greeting", "mimeType": "text/plain",
                 "description": "A friendly greeting"}
            ]})),
            "resources/templates/list" => Ok(json!({"resourceTemplates": [
                {"uriTemplate": "example://items/{id}", "name": "item", "mimeType": "text/plain"}
            ]})),
            "resources/read" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if uri == "example://greeting" {
                    Ok(
                        json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello from the example server"}]}),
                    )
                } else if let Some(id) = uri.strip_prefix("example://items/") {
                    Ok(
                        json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": format!("item {id}")}]}),
                    )
                } else {
                    Err(ErrorObject::new(
                        -32002,
                        format!("resource not found: {uri}"),
                    ))
                }
            }
            "prompts/list" => Ok(json!({"prompts": [
                {"name": "greet", "description": "Greets someone",
                 "arguments": [{"name": "name", "required": true}]}
            ]})),
            "prompts/get" => {
                let name = params
                    .pointer("/arguments/name")
                    .and_then(Value::as_str)
                    .unwrap_or("there");
                Ok(json!({"description": "A greeting", "messages": [
                    {"role": "user", "content": {"type": "text", "text": format!("Say hello to {name}.")}}
                ]}))
            }
            "logging/setLevel" => Ok(json!({})),
            other => Err(ErrorObject::method_not_found(other)),
        })
    }

    /// Sends a request to the client and returns its answer as a tool result.
    async fn ask_client(&self, method: &str) -> ToolResult {
        let id = RequestId::String(format!(
            "ask-{}",
            self.next_ask.fetch_add(1, Ordering::SeqCst)
        ));
        let (tx, rx) = oneshot::channel();
        self.asks
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(id.clone(), tx);
        self.send(JsonRpcMessage::request(id, method, None)).await;
        match rx.await {
            Ok(Ok(answer)) => Ok(text(answer.to_string())),
            Ok(Err(error)) => Ok(json!({"content": [{"type": "text",
                "text": format!("{method} failed: {} ({})", error.message, error.code)}], "isError": true})),
            Err(_) => Err(ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                format!("no answer to {method}"),
            )),
        }
    }

    fn list_tools(&self, params: &Value) -> ToolResult {
        let tools = self.server.tools();
        let page_size = self.server.options.page_size;
        if page_size == 0 {
            return Ok(json!({ "tools": tools }));
        }
        let start = match params.get("cursor").and_then(Value::as_str) {
            None => 0,
            Some(cursor) => cursor
                .strip_prefix("page-")
                .and_then(|n| n.parse::<usize>().ok())
                .ok_or_else(|| invalid_params(format!("invalid cursor {cursor:?}")))?,
        };
        let end = (start + page_size).min(tools.len());
        let page: Vec<Value> = tools.get(start..end).unwrap_or_default().to_vec();
        let mut result = json!({ "tools": page });
        if end < tools.len() {
            let next = if self.server.options.repeat_cursor {
                "page-0".to_string()
            } else {
                format!("page-{end}")
            };
            result["nextCursor"] = Value::String(next);
        }
        Ok(result)
    }

    async fn call_tool(self: &Arc<Self>, params: &Value) -> ToolResult {
        let name = params
            .get("name")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let arguments = params.get("arguments").cloned().unwrap_or(json!({}));
        let number = |key: &str| arguments.get(key).and_then(Value::as_f64);
        let count = |key: &str, default: u64| {
            arguments
                .get(key)
                .and_then(Value::as_u64)
                .unwrap_or(default)
        };
        match name {
            "echo" => {
                let text_arg = arguments
                    .get("text")
                    .and_then(Value::as_str)
                    .ok_or_else(|| invalid_params("echo needs a text argument"))?;
                Ok(text(text_arg))
            }
            "add" => {
                let (Some(a), Some(b)) = (number("a"), number("b")) else {
                    return Err(invalid_params("add needs numbers a and b"));
                };
                let sum = a + b;
                let mut result = text(sum.to_string());
                result["structuredContent"] = json!({ "sum": sum });
                Ok(result)
            }
            "slow" => {
                let steps = count("steps", 5);
                let step = Duration::from_millis(count("step_ms", 100));
                let token = params.pointer("/_meta/progressToken").cloned();
                for done in 1..=steps {
                    tokio::time::sleep(step).await;
                    if let Some(token) = &token {
                        self.send(JsonRpcMessage::notification(
                            "notifications/progress",
                            Some(
                                json!({"progressToken": token, "progress": done, "total": steps,
                                        "message": format!("step {done} of {steps}")}),
                            ),
                        ))
                        .await;
                    }
                }
                Ok(text(format!("finished {steps} steps")))
            }
            "fail" => Ok(
                json!({"content": [{"type": "text", "text": "this tool always fails"}], "isError": true}),
            ),
            "crash" => {
                self.set_exit(Exit::Crash);
                // Never answered: the connection ends first.
                std::future::pending::<()>().await;
                Ok(json!({}))
            }
            "touch" => {
                self.server.state.touches.fetch_add(1, Ordering::SeqCst);
                self.send(JsonRpcMessage::notification(
                    "notifications/tools/list_changed",
                    None,
                ))
                .await;
                Ok(text("tool list changed"))
            }
            "ask_roots" => self.ask_client("roots/list").await,
            "ping_client" => self.ask_client("ping").await,
            "huge" => {
                let bytes = usize::try_from(count("bytes", 1024)).unwrap_or(usize::MAX);
                Ok(text("x".repeat(bytes)))
            }
            "flood" => {
                let total = count("count", 1000);
                for n in 0..total {
                    self.send(JsonRpcMessage::notification(
                        "notifications/message",
                        Some(json!({"level": "info", "logger": "flood", "data": format!("message {n}")})),
                    ))
                    .await;
                }
                Ok(text(format!("sent {total} notifications")))
            }
            "cancelled" => Ok(text(self.server.cancelled_count().to_string())),
            "pid" => Ok(text(std::process::id().to_string())),
            "environment" => {
                let mut names: Vec<String> = std::env::vars_os()
                    .map(|(name, _)| name.to_string_lossy().into_owned())
                    .collect();
                names.sort();
                let cwd = std::env::current_dir()
                    .map(|dir| dir.to_string_lossy().into_owned())
                    .unwrap_or_default();
                let mut result = text(names.join(","));
                result["structuredContent"] = json!({"cwd": cwd, "names": names});
                Ok(result)
            }
            "grandchild_pid" => match self.server.process.grandchild_pid {
                Some(pid) => Ok(text(pid.to_string())),
                None => Ok(
                    json!({"content": [{"type": "text", "text": "no grandchild"}], "isError": true}),
                ),
            },
            other if self.server.tools().iter().any(|t| t["name"] == other) => {
                Ok(text(format!("{other} called")))
            }
            other => Err(invalid_params(format!("unknown tool: {other}"))),
        }
    }
}
