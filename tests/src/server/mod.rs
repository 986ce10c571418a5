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
//!
//! It is dual-era by default: an `initialize` selects the legacy revisions
//! (2025-11-25 and earlier) for the connection, a request carrying
//! `_meta["io.modelcontextprotocol/protocolVersion"]` is served statelessly
//! at 2026-07-28 (see [`modern`]). `--era` and `--modern-versions` narrow
//! it to one generation or revision, `--lie-about-versions` makes it a
//! server that lists a revision and refuses it.

pub mod modern;

use std::collections::HashMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use mcp_transport::error_codes;
use mcp_transport::kinds::{SdkServer, SdkServerConnection};
use mcp_transport::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId, Response};
use serde_json::{Value, json};
use tokio::sync::{mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use modern::Wire;

/// Which protocol generations a server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Era {
    /// Both: `initialize` for legacy clients, per-request `_meta` for
    /// modern ones.
    #[default]
    Dual,
    /// Only the `initialize`-based revisions; `server/discover` is an
    /// unknown method.
    Legacy,
    /// Only the revisions of `--modern-versions`; `initialize` is refused.
    Modern,
}

impl Era {
    fn as_str(self) -> &'static str {
        match self {
            Era::Dual => "dual",
            Era::Legacy => "legacy",
            Era::Modern => "modern",
        }
    }
}

/// `cacheScope` of the server's modern cacheable results.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Scope {
    /// Shareable between clients.
    #[default]
    Public,
    /// Only for the credentials that asked.
    Private,
}

impl Scope {
    fn as_str(self) -> &'static str {
        match self {
            Scope::Public => "public",
            Scope::Private => "private",
        }
    }
}

/// The modern revision the server speaks unless told otherwise.
pub const DEFAULT_MODERN_VERSION: &str = "2026-07-28";

/// `ttlMs` of cacheable modern results unless told otherwise.
pub const DEFAULT_TTL_MS: u64 = 60_000;

const INSTRUCTIONS: &str = "A small example server: try the echo and add tools.";

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
    /// Which protocol generations to speak.
    #[arg(long, value_enum, default_value_t = Era::Dual)]
    pub era: Era,
    /// The modern revisions accepted in a request's `_meta` (comma-separated).
    #[arg(long, value_delimiter = ',', default_values_t = [DEFAULT_MODERN_VERSION.to_string()])]
    pub modern_versions: Vec<String>,
    /// List the modern revisions but refuse every modern request with
    /// -32022 (a server lying about its versions).
    #[arg(long)]
    pub lie_about_versions: bool,
    /// `ttlMs` of modern listings, reads and `server/discover`.
    #[arg(long, default_value_t = DEFAULT_TTL_MS)]
    pub ttl_ms: u64,
    /// `cacheScope` of modern listings, reads and `server/discover`.
    #[arg(long, value_enum, default_value_t = Scope::Public)]
    pub cache_scope: Scope,
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
    /// Announce resources and prompts but list none (a server whose
    /// capabilities promise more than it has).
    #[arg(long)]
    pub empty_lists: bool,
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
            era: Era::Dual,
            modern_versions: vec![DEFAULT_MODERN_VERSION.to_string()],
            lie_about_versions: false,
            ttl_ms: DEFAULT_TTL_MS,
            cache_scope: Scope::Public,
            garbage_lines: false,
            ignore_stdin_close: false,
            ignore_sigterm: false,
            spawn_grandchild: false,
            empty_lists: false,
        }
    }
}

impl ServerOptions {
    /// A server that speaks exactly `version`: modern-only for a modern
    /// revision, legacy-only answering `initialize` with it otherwise.
    pub fn only_version(version: &str) -> Self {
        if mcp_transport::types::is_modern(version) {
            ServerOptions {
                era: Era::Modern,
                modern_versions: vec![version.to_owned()],
                ..ServerOptions::default()
            }
        } else {
            ServerOptions {
                era: Era::Legacy,
                protocol_version: Some(version.to_owned()),
                ..ServerOptions::default()
            }
        }
    }

    /// These options with only the legacy generation.
    pub fn legacy(self) -> Self {
        ServerOptions {
            era: Era::Legacy,
            ..self
        }
    }

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
        if self.ttl_ms != DEFAULT_TTL_MS {
            args.push("--ttl-ms".to_string());
            args.push(self.ttl_ms.to_string());
        }
        if let Some(version) = &self.protocol_version {
            args.push("--protocol-version".to_string());
            args.push(version.clone());
        }
        if self.era != Era::Dual {
            args.push("--era".to_string());
            args.push(self.era.as_str().to_string());
        }
        if self.modern_versions != [DEFAULT_MODERN_VERSION] {
            args.push("--modern-versions".to_string());
            args.push(self.modern_versions.join(","));
        }
        if self.cache_scope != Scope::Public {
            args.push("--cache-scope".to_string());
            args.push(self.cache_scope.as_str().to_string());
        }
        for (set, flag) in [
            (self.repeat_cursor, "--repeat-cursor"),
            (self.lie_about_versions, "--lie-about-versions"),
            (self.never_answer_initialize, "--never-answer-initialize"),
            (self.exit_during_initialize, "--exit-during-initialize"),
            (self.garbage_lines, "--garbage-lines"),
            (self.ignore_stdin_close, "--ignore-stdin-close"),
            (self.ignore_sigterm, "--ignore-sigterm"),
            (self.spawn_grandchild, "--spawn-grandchild"),
            (self.empty_lists, "--empty-lists"),
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
    /// The open `subscriptions/listen` streams, whichever connection
    /// carries them.
    subscriptions: Mutex<Vec<modern::Subscription>>,
    next_subscription: AtomicU64,
}

/// The example server core. One value can serve many connections.
#[derive(Debug, Default)]
pub struct ExampleServer {
    options: ServerOptions,
    process: ProcessInfo,
    state: SharedState,
}

/// A request being answered, and whether it is a subscription (whose
/// cancellation is the normal end of a stream, not a cancelled call).
struct InFlight {
    abort: AbortHandle,
    listen: bool,
}

/// One connection's state.
struct Connection {
    server: Arc<ExampleServer>,
    outgoing: mpsc::Sender<JsonRpcMessage>,
    in_flight: Mutex<HashMap<RequestId, InFlight>>,
    asks: Mutex<HashMap<RequestId, oneshot::Sender<Result<Value, ErrorObject>>>>,
    next_ask: AtomicU64,
    exit: Mutex<Option<Exit>>,
    stop: tokio::sync::Notify,
    /// Set by `initialize`: requests without modern `_meta` are legacy.
    initialized: AtomicBool,
    /// Set once the client left: open subscriptions end at once instead
    /// of holding the connection up.
    closing: watch::Sender<bool>,
}

/// One request as a handler sees it.
struct Call {
    id: RequestId,
    params: Value,
    wire: Wire,
}

impl Call {
    fn modern(&self) -> bool {
        self.wire == Wire::Modern
    }
}

type ToolResult = Result<Value, ErrorObject>;

fn text(value: impl Into<String>) -> Value {
    json!({ "content": [{ "type": "text", "text": value.into() }] })
}

fn tool_error(value: impl Into<String>) -> Value {
    json!({"content": [{"type": "text", "text": value.into()}], "isError": true})
}

fn invalid_params(message: impl Into<String>) -> ErrorObject {
    ErrorObject::new(error_codes::INVALID_PARAMS, message)
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|e| e.into_inner())
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
            initialized: AtomicBool::new(false),
            closing: watch::channel(false).0,
        });
        let mut tasks = tokio::task::JoinSet::new();
        loop {
            tokio::select! {
                message = incoming.recv() => match message {
                    Some(message) => connection.handle(message, &mut tasks).await,
                    None => {
                        // The client is leaving: answer what it already asked,
                        // briefly, like a well-behaved server; subscriptions
                        // end now.
                        connection.closing.send_replace(true);
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
            json!({"name": "elicit", "description": "Asks the client for a name (a form elicitation) rounds times and greets the last one",
                   "inputSchema": {"type": "object", "properties": {"rounds": {"type": "integer"}}}}),
            json!({"name": "ping_client", "description": "Pings the client and returns its answer",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "huge", "description": "Returns a text of the given size",
                   "inputSchema": {"type": "object", "properties": {"bytes": {"type": "integer"}}}}),
            json!({"name": "flood", "description": "Sends count log notifications, then answers",
                   "inputSchema": {"type": "object", "properties": {"count": {"type": "integer"}}}}),
            json!({"name": "cancelled", "description": "How many requests the client cancelled",
                   "inputSchema": {"type": "object"}}),
            json!({"name": "listeners", "description": "How many subscriptions/listen streams are open",
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
        *lock(&self.exit)
    }

    fn set_exit(&self, exit: Exit) {
        *lock(&self.exit) = Some(exit);
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
                // Both ways of opening: the legacy handshake and the
                // modern probe.
                if matches!(request.method.as_str(), "initialize" | "server/discover") {
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
                let listen = request.method == "subscriptions/listen";
                let abort = tasks.spawn(async move {
                    let id = request.id.clone();
                    let outcome = connection.answer(request).await;
                    lock(&connection.in_flight).remove(&id);
                    if let Some(outcome) = outcome {
                        connection
                            .send(JsonRpcMessage::Response(Response {
                                id: Some(id),
                                outcome,
                            }))
                            .await;
                    }
                });
                lock(&self.in_flight).insert(id, InFlight { abort, listen });
            }
            JsonRpcMessage::Notification(notification) => self.on_notification(notification),
            JsonRpcMessage::Response(response) => {
                let Some(id) = response.id else { return };
                let waiter = lock(&self.asks).remove(&id);
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
        let task = lock(&self.in_flight).remove(&id);
        if let Some(task) = task {
            task.abort.abort();
            if !task.listen {
                self.server.state.cancelled.fetch_add(1, Ordering::SeqCst);
            }
        }
    }

    /// The answer to a request; `None` when no answer must be sent.
    async fn answer(self: &Arc<Self>, request: Request) -> Option<Result<Value, ErrorObject>> {
        let params = request.params.unwrap_or(Value::Null);
        let initialized = self.initialized.load(Ordering::SeqCst);
        let wire = match self.server.classify(&request.method, &params, initialized) {
            Ok(wire) => wire,
            Err(refusal) => return Some(Err(refusal)),
        };
        let call = Call {
            id: request.id,
            params,
            wire,
        };
        let outcome = self.dispatch(&request.method, &call).await?;
        Some(match wire {
            Wire::Modern => outcome.map(|result| self.server.modern_result(result)),
            Wire::Legacy => outcome,
        })
    }

    async fn dispatch(
        self: &Arc<Self>,
        method: &str,
        call: &Call,
    ) -> Option<Result<Value, ErrorObject>> {
        let server = &self.server;
        let params = &call.params;
        let modern = call.modern();
        let cacheable = |mut result: Value| {
            if modern {
                server.cacheable(&mut result);
            }
            Ok(result)
        };
        Some(match method {
            "initialize" => {
                if server.options.era == Era::Modern {
                    return Some(Err(server.refuse_initialize()));
                }
                tokio::time::sleep(Duration::from_millis(server.options.init_delay_ms)).await;
                self.initialized.store(true, Ordering::SeqCst);
                let version = server.options.protocol_version.clone().unwrap_or_else(|| {
                    params
                        .get("protocolVersion")
                        .and_then(Value::as_str)
                        .unwrap_or(mcp_transport::LATEST_PROTOCOL_VERSION)
                        .to_string()
                });
                Ok(json!({
                    "protocolVersion": version,
                    "capabilities": server.capabilities(),
                    "serverInfo": {"name": server.options.name, "version": env!("CARGO_PKG_VERSION")},
                    "instructions": INSTRUCTIONS,
                }))
            }
            "server/discover" if modern => {
                tokio::time::sleep(Duration::from_millis(server.options.init_delay_ms)).await;
                Ok(server.discover())
            }
            "subscriptions/listen" if modern => return self.listen(call).await,
            "ping" => Ok(json!({})),
            "tools/list" => self.list_tools(params).and_then(cacheable),
            "tools/call" => self.call_tool(call).await,
            "resources/list" if server.options.empty_lists => cacheable(json!({"resources": []})),
            "resources/templates/list" if server.options.empty_lists => {
                cacheable(json!({"resourceTemplates": []}))
            }
            "prompts/list" if server.options.empty_lists => cacheable(json!({"prompts": []})),
            "resources/list" => cacheable(json!({"resources": [
                {"uri": "example://greeting", "name": "greeting", "mimeType": "text/plain",
                 "description": "A friendly greeting"}
            ]})),
            "resources/templates/list" => cacheable(json!({"resourceTemplates": [
                {"uriTemplate": "example://items/{id}", "name": "item", "mimeType": "text/plain"}
            ]})),
            "resources/read" => {
                let uri = params
                    .get("uri")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                if uri == "example://greeting" {
                    cacheable(
                        json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": "hello from the example server"}]}),
                    )
                } else if let Some(id) = uri.strip_prefix("example://items/") {
                    cacheable(
                        json!({"contents": [{"uri": uri, "mimeType": "text/plain", "text": format!("item {id}")}]}),
                    )
                } else {
                    // A missing resource is invalid params from 2026-07-28 on.
                    let code = if modern {
                        error_codes::INVALID_PARAMS
                    } else {
                        -32002
                    };
                    Err(ErrorObject::new(code, format!("resource not found: {uri}")))
                }
            }
            "prompts/list" => cacheable(json!({"prompts": [
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
            "logging/setLevel" if !modern => Ok(json!({})),
            other => Err(ErrorObject::method_not_found(other)),
        })
    }

    /// `subscriptions/listen`: the acknowledgement first, then the
    /// notifications of every `touch` until the client cancels or leaves
    /// (then a graceful end, which may reach no one).
    async fn listen(self: &Arc<Self>, call: &Call) -> Option<Result<Value, ErrorObject>> {
        let accepted = modern::accepted_filter(&call.params);
        self.send(modern::acknowledgement(&call.id, &accepted))
            .await;
        let _registered = modern::register(
            &self.server,
            call.id.clone(),
            accepted,
            self.outgoing.clone(),
        );
        let mut closing = self.closing.subscribe();
        let _ = closing.wait_for(|closing| *closing).await;
        Some(Ok(modern::subscription_closed(&call.id)))
    }

    /// Sends a request to the client and returns its answer.
    async fn ask_client_raw(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Result<Value, ErrorObject>, ErrorObject> {
        let id = RequestId::String(format!(
            "ask-{}",
            self.next_ask.fetch_add(1, Ordering::SeqCst)
        ));
        let (tx, rx) = oneshot::channel();
        lock(&self.asks).insert(id.clone(), tx);
        self.send(JsonRpcMessage::request(id, method, params)).await;
        rx.await.map_err(|_| {
            ErrorObject::new(
                error_codes::INTERNAL_ERROR,
                format!("no answer to {method}"),
            )
        })
    }

    /// Sends a request to the client and returns its answer as a tool result.
    async fn ask_client(&self, method: &str) -> ToolResult {
        match self.ask_client_raw(method, None).await? {
            Ok(answer) => Ok(text(answer.to_string())),
            Err(error) => Ok(tool_error(format!(
                "{method} failed: {} ({})",
                error.message, error.code
            ))),
        }
    }

    /// `ask_roots`: a `roots/list` request to the client (legacy), an
    /// `input_required` round (modern).
    async fn ask_roots(&self, call: &Call) -> ToolResult {
        if !call.modern() {
            return self.ask_client("roots/list").await;
        }
        const STATE: &str = "ask_roots";
        match modern::input_response(&call.params, "roots", STATE) {
            Some(answer) => Ok(text(answer.to_string())),
            None => Ok(modern::input_required(
                json!({"roots": {"method": "roots/list", "params": {}}}),
                STATE.to_owned(),
            )),
        }
    }

    /// `elicit`: asks for a name `rounds` times, as `elicitation/create`
    /// requests (legacy) or `input_required` rounds whose `requestState`
    /// counts the answers (modern), and greets the last name.
    async fn elicit(&self, call: &Call, rounds: u64) -> ToolResult {
        let rounds = rounds.max(1);
        if !call.modern() {
            let mut last = Value::Null;
            for round in 1..=rounds {
                let request = modern::elicitation_request(round, rounds);
                match self
                    .ask_client_raw("elicitation/create", Some(request))
                    .await?
                {
                    Ok(answer) => last = answer,
                    Err(error) => {
                        return Ok(tool_error(format!(
                            "elicitation/create failed: {} ({})",
                            error.message, error.code
                        )));
                    }
                }
            }
            return Ok(modern::elicitation_outcome(&last));
        }
        let answered = match call.params.get("requestState").and_then(Value::as_str) {
            None => 0,
            Some(state) => state
                .strip_prefix("elicit:")
                .and_then(|n| n.parse::<u64>().ok())
                .ok_or_else(|| invalid_params(format!("invalid requestState {state:?}")))?,
        };
        let state = format!("elicit:{answered}");
        let (answered, last) = match modern::input_response(&call.params, "name", &state) {
            Some(answer) => (answered + 1, Some(answer)),
            None => (answered, None),
        };
        match last {
            Some(answer) if answered >= rounds => Ok(modern::elicitation_outcome(answer)),
            _ => Ok(modern::input_required(
                json!({"name": {
                    "method": "elicitation/create",
                    "params": modern::elicitation_request(answered + 1, rounds),
                }}),
                format!("elicit:{answered}"),
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

    async fn call_tool(self: &Arc<Self>, call: &Call) -> ToolResult {
        let params = &call.params;
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
            "fail" => Ok(tool_error("this tool always fails")),
            "crash" => {
                self.set_exit(Exit::Crash);
                // Never answered: the connection ends first.
                std::future::pending::<()>().await;
                Ok(json!({}))
            }
            "touch" => {
                self.server.state.touches.fetch_add(1, Ordering::SeqCst);
                // Modern clients hear it on their subscriptions (whichever
                // connection carries them), legacy ones on this connection.
                self.server
                    .notify_subscribers("toolsListChanged", "notifications/tools/list_changed")
                    .await;
                if !call.modern() {
                    self.send(JsonRpcMessage::notification(
                        "notifications/tools/list_changed",
                        None,
                    ))
                    .await;
                }
                Ok(text("tool list changed"))
            }
            "ask_roots" => self.ask_roots(call).await,
            "elicit" => self.elicit(call, count("rounds", 1)).await,
            "ping_client" if call.modern() => Ok(tool_error(
                "a server sends no requests to the client at 2026-07-28",
            )),
            "ping_client" => self.ask_client("ping").await,
            "huge" => {
                let bytes = usize::try_from(count("bytes", 1024)).unwrap_or(usize::MAX);
                Ok(text("x".repeat(bytes)))
            }
            "flood" => {
                let total = count("count", 1000);
                // At 2026-07-28 log messages go only to a request that asked
                // for them with a log level.
                let logs = !call.modern() || modern::log_level(params).is_some();
                if logs {
                    for n in 0..total {
                        self.send(JsonRpcMessage::notification(
                            "notifications/message",
                            Some(json!({"level": "info", "logger": "flood", "data": format!("message {n}")})),
                        ))
                        .await;
                    }
                }
                let sent = if logs { total } else { 0 };
                Ok(text(format!("sent {sent} notifications")))
            }
            "cancelled" => Ok(text(self.server.cancelled_count().to_string())),
            "listeners" => Ok(text(self.server.listener_count().to_string())),
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
                None => Ok(tool_error("no grandchild")),
            },
            other if self.server.tools().iter().any(|t| t["name"] == other) => {
                Ok(text(format!("{other} called")))
            }
            other => Err(invalid_params(format!("unknown tool: {other}"))),
        }
    }
}
