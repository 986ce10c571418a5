//! [`ClientSession`]: the MCP client protocol over any [`Transport`].
//!
//! One session type serves every transport kind, so initialize, version
//! negotiation, correlation, timeouts, cancellation, progress, pagination and
//! server→client requests behave the same whether the server is a child
//! process, a URL or an in-process object.
//!
//! # How it runs
//!
//! [`ClientSession::initialize`] moves the transport into a **driver task**.
//! The driver is the only code that touches the transport: it forwards
//! outgoing messages from an unbounded command channel (callers skip this
//! hop when the transport offers a [`Transport::sender`], as stdio does,
//! and enqueue straight onto its writer) and dispatches
//! incoming ones (responses to the waiting caller, progress to the caller's
//! callback, `ping` answered at once, server requests to the host's
//! [`ClientHandler`], list-changed and other notifications to a broadcast
//! channel). Because callers only talk to channels, any number of requests
//! can be in flight, and a caller's future can be dropped at any point: a
//! guard removes its entry and tells the server with
//! `notifications/cancelled`.
//!
//! When the connection ends (the server exits, an I/O error, a message past
//! the size cap), every request in flight fails at once with that error (for
//! stdio it names the server and carries the stderr tail) and later requests
//! fail with it too. Dropping the session aborts the driver, which drops the
//! transport (stdio kills the child's process group); [`ClientSession::close`]
//! shuts down gracefully instead.

use std::collections::{HashMap, HashSet};
use std::fmt;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::AbortHandle;
use tokio::time::Instant;

use crate::message::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId, Response};
use crate::protocol::{
    CallToolResult, GetPromptResult, Implementation, InitializeResult, KNOWN_PROTOCOL_VERSIONS,
    LATEST_PROTOCOL_VERSION, Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use crate::transport::{MessageSender, StderrTail, Transport, TransportError, TransportErrorKind};

/// Caps on one paginated listing (REFERENCE §2: stop past a cap).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimits {
    /// Most pages fetched for one listing.
    pub max_pages: usize,
    /// Most items collected for one listing.
    pub max_items: usize,
    /// Most bytes of page results (as compact JSON) for one listing.
    pub max_bytes: usize,
}

impl Default for ListLimits {
    fn default() -> Self {
        ListLimits {
            max_pages: 100,
            max_items: 10_000,
            max_bytes: 32 * 1024 * 1024,
        }
    }
}

/// How a session behaves; built by the host or from a server's config with
/// [`SessionOptions::from_timeouts`].
#[derive(Clone)]
pub struct SessionOptions {
    /// Sent as `clientInfo`.
    pub client_info: Implementation,
    /// The version proposed in `initialize` (the newest we know by default).
    pub protocol_version: String,
    /// Bound on the `initialize` exchange.
    pub connect_timeout: Duration,
    /// Default timeout of a request other than `tools/call`.
    pub request_timeout: Duration,
    /// Default timeout of `tools/call`.
    pub tool_call_timeout: Duration,
    /// Caps on paginated listings.
    pub list_limits: ListLimits,
    /// Answers server→client requests (roots, sampling, elicitation); without
    /// one they get `-32601 method not found`.
    pub handler: Option<Arc<dyn ClientHandler>>,
    /// When true, `list_*` return an empty list for a kind the server did not
    /// advertise in its capabilities instead of asking.
    pub respect_capabilities: bool,
    /// How many unread [`ServerEvent`]s a subscriber may lag before the
    /// oldest are dropped (keeps a notification flood bounded).
    pub event_capacity: usize,
}

impl fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionOptions")
            .field("client_info", &self.client_info)
            .field("protocol_version", &self.protocol_version)
            .field("connect_timeout", &self.connect_timeout)
            .field("request_timeout", &self.request_timeout)
            .field("tool_call_timeout", &self.tool_call_timeout)
            .field("list_limits", &self.list_limits)
            .field("handler", &self.handler.is_some())
            .field("respect_capabilities", &self.respect_capabilities)
            .field("event_capacity", &self.event_capacity)
            .finish()
    }
}

impl Default for SessionOptions {
    fn default() -> Self {
        SessionOptions::from_timeouts(&mcp_config::Timeouts::default())
    }
}

impl SessionOptions {
    /// Defaults with a server's resolved timeouts.
    pub fn from_timeouts(timeouts: &mcp_config::Timeouts) -> Self {
        SessionOptions {
            client_info: Implementation {
                name: "mcp-client-toolkit".to_string(),
                version: env!("CARGO_PKG_VERSION").to_string(),
                title: None,
            },
            protocol_version: LATEST_PROTOCOL_VERSION.to_string(),
            connect_timeout: timeouts.connect,
            request_timeout: timeouts.request,
            tool_call_timeout: timeouts.tool_call,
            list_limits: ListLimits::default(),
            handler: None,
            respect_capabilities: true,
            event_capacity: 1024,
        }
    }
}

/// One `notifications/progress` for a request.
#[derive(Debug, Clone, PartialEq)]
pub struct Progress {
    /// Progress so far (increases with each notification).
    pub progress: f64,
    /// The total, when the server knows it.
    pub total: Option<f64>,
    /// A human-readable status.
    pub message: Option<String>,
}

/// Receives a request's progress; called on the caller's task.
pub type ProgressCallback = Arc<dyn Fn(Progress) + Send + Sync>;

/// Per-call options.
#[derive(Clone, Default)]
pub struct CallOptions {
    /// Overrides the session's default timeout for this call. Each progress
    /// notification restarts it.
    pub timeout: Option<Duration>,
    /// An upper bound that progress does not extend.
    pub max_total_timeout: Option<Duration>,
    /// When set, `_meta.progressToken` is sent and progress is delivered here.
    pub progress: Option<ProgressCallback>,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("max_total_timeout", &self.max_total_timeout)
            .field("progress", &self.progress.is_some())
            .finish()
    }
}

impl CallOptions {
    /// Options with a progress callback.
    pub fn with_progress(progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        CallOptions {
            progress: Some(Arc::new(progress)),
            ..CallOptions::default()
        }
    }

    /// Sets the timeout.
    pub fn timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }
}

/// Which list a `list_changed` notification concerns.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ListKind {
    /// `notifications/tools/list_changed`
    Tools,
    /// `notifications/resources/list_changed`
    Resources,
    /// `notifications/prompts/list_changed`
    Prompts,
}

/// Something the server said on its own.
#[derive(Debug, Clone, PartialEq)]
pub enum ServerEvent {
    /// A `*/list_changed` notification.
    ListChanged(ListKind),
    /// Any other notification (logging `notifications/message`,
    /// `notifications/resources/updated`, ...).
    Notification(Notification),
}

/// The host's answers to server→client requests. Every method has a default
/// that answers `-32601 method not found`, so a host implements only what it
/// supports and advertises it in [`ClientHandler::capabilities`].
#[async_trait]
pub trait ClientHandler: Send + Sync {
    /// The client `capabilities` sent in `initialize` (e.g.
    /// `{"roots": {"listChanged": true}, "sampling": {}}`).
    fn capabilities(&self) -> Value {
        json!({})
    }

    /// `roots/list`.
    async fn list_roots(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let _ = params;
        Err(ErrorObject::method_not_found("roots/list"))
    }

    /// `sampling/createMessage`.
    async fn create_message(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let _ = params;
        Err(ErrorObject::method_not_found("sampling/createMessage"))
    }

    /// `elicitation/create`.
    async fn elicit(&self, params: Option<Value>) -> Result<Value, ErrorObject> {
        let _ = params;
        Err(ErrorObject::method_not_found("elicitation/create"))
    }

    /// Any other request; dispatches the three above by default.
    async fn handle_request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, ErrorObject> {
        match method {
            "roots/list" => self.list_roots(params).await,
            "sampling/createMessage" => self.create_message(params).await,
            "elicitation/create" => self.elicit(params).await,
            other => Err(ErrorObject::method_not_found(other)),
        }
    }
}

/// What the driver hands back to a waiting caller.
type Reply = Result<Result<Value, ErrorObject>, TransportError>;

struct Pending {
    reply: oneshot::Sender<Reply>,
    progress: Option<mpsc::UnboundedSender<Progress>>,
}

/// Requests in flight, and why the connection ended once it has.
#[derive(Default)]
struct PendingTable {
    entries: HashMap<i64, Pending>,
    ended: Option<TransportError>,
}

enum Command {
    Send(JsonRpcMessage),
    Close(oneshot::Sender<Result<(), TransportError>>),
}

/// State shared by the session handle, its callers' guards and the driver.
struct Shared {
    server: String,
    commands: mpsc::UnboundedSender<Command>,
    /// The transport's own outgoing queue, when it has one: messages skip
    /// the driver task.
    direct: Option<MessageSender>,
    pending: Mutex<PendingTable>,
    next_id: AtomicI64,
    /// Created by the first [`ClientSession::events`] call: its ring of
    /// `event_capacity` slots is allocated up front, and a session nobody
    /// subscribes to never needs it (events sent before any subscription
    /// reach no one either way).
    events: Mutex<Option<broadcast::Sender<ServerEvent>>>,
    ended: watch::Sender<Option<TransportError>>,
    server_requests: Mutex<HashMap<RequestId, AbortHandle>>,
    stderr: Option<StderrTail>,
    options: SessionOptions,
}

fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

impl Shared {
    fn closed_error(&self) -> TransportError {
        TransportError::closed(&*self.server)
    }

    fn send(&self, message: JsonRpcMessage) -> Result<(), TransportError> {
        self.send_hinted(message, true)
    }

    /// Sends a message; `alone` says no other request is in flight (so the
    /// transport need not wait to batch it with others).
    fn send_hinted(&self, message: JsonRpcMessage, alone: bool) -> Result<(), TransportError> {
        if let Some(direct) = &self.direct {
            return direct
                .send_hinted(message, alone)
                .map_err(|_| self.ended_error());
        }
        self.commands
            .send(Command::Send(message))
            .map_err(|_| self.ended_error())
    }

    fn ended_error(&self) -> TransportError {
        lock(&self.pending)
            .ended
            .clone()
            .unwrap_or_else(|| self.closed_error())
    }

    /// Marks the connection ended and fails every request in flight.
    fn end(&self, reason: TransportError) {
        let drained: Vec<Pending> = {
            let mut table = lock(&self.pending);
            if table.ended.is_none() {
                table.ended = Some(reason.clone());
            }
            table.entries.drain().map(|(_, pending)| pending).collect()
        };
        let reason = self.ended_error();
        for pending in drained {
            let _ = pending.reply.send(Err(reason.clone()));
        }
        self.ended.send_replace(Some(reason));
    }

    fn default_timeout(&self, method: &str) -> Duration {
        match method {
            "initialize" => self.options.connect_timeout,
            "tools/call" => self.options.tool_call_timeout,
            _ => self.options.request_timeout,
        }
    }

    async fn request(
        self: &Arc<Self>,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Value, TransportError> {
        let id = self.next_id.fetch_add(1, Ordering::Relaxed);
        let (reply_tx, mut reply_rx) = oneshot::channel();
        let (progress_tx, mut progress_rx) = match options.progress {
            Some(_) => {
                let (tx, rx) = mpsc::unbounded_channel();
                (Some(tx), Some(rx))
            }
            None => (None, None),
        };
        let params = if progress_tx.is_some() {
            Some(with_progress_token(params, id))
        } else {
            params
        };
        let alone = {
            let mut table = lock(&self.pending);
            if let Some(reason) = &table.ended {
                return Err(reason.clone());
            }
            table.entries.insert(
                id,
                Pending {
                    reply: reply_tx,
                    progress: progress_tx,
                },
            );
            table.entries.len() == 1
        };
        let mut guard = InFlight {
            shared: self,
            id,
            cancel_reason: Some("the client stopped waiting"),
            cancellable: method != "initialize",
        };
        self.send_hinted(
            JsonRpcMessage::Request(Request {
                id: RequestId::Number(id),
                method: method.to_string(),
                params,
            }),
            alone,
        )?;

        let timeout = options
            .timeout
            .unwrap_or_else(|| self.default_timeout(method));
        let started = Instant::now();
        let hard_deadline = options.max_total_timeout.map(|max| started + max);
        let mut deadline = started + timeout;
        loop {
            let wake = hard_deadline.map_or(deadline, |hard| hard.min(deadline));
            tokio::select! {
                reply = &mut reply_rx => {
                    guard.cancel_reason = None;
                    // Progress sent before the answer is delivered before it.
                    if let (Some(rx), Some(callback)) = (&mut progress_rx, &options.progress) {
                        while let Ok(progress) = rx.try_recv() {
                            callback(progress);
                        }
                    }
                    let reply = reply.unwrap_or_else(|_| Err(self.ended_error()))?;
                    return reply.map_err(|error| {
                        TransportError::new(
                            &*self.server,
                            TransportErrorKind::Rpc {
                                method: method.to_string(),
                                code: error.code,
                                message: error.message,
                                data: error.data.map(Box::new),
                            },
                        )
                    });
                }
                Some(progress) = recv_progress(&mut progress_rx) => {
                    deadline = Instant::now() + timeout;
                    if let Some(callback) = &options.progress {
                        callback(progress);
                    }
                }
                () = tokio::time::sleep_until(wake) => {
                    guard.cancel_reason = Some("timed out");
                    return Err(TransportError::new(
                        &*self.server,
                        TransportErrorKind::Timeout {
                            method: method.to_string(),
                            after: Instant::now().duration_since(started),
                        },
                    ));
                }
            }
        }
    }
}

async fn recv_progress(rx: &mut Option<mpsc::UnboundedReceiver<Progress>>) -> Option<Progress> {
    match rx {
        Some(rx) => rx.recv().await,
        None => std::future::pending().await,
    }
}

fn with_progress_token(params: Option<Value>, id: i64) -> Value {
    let mut params = match params {
        Some(Value::Object(map)) => map,
        _ => Map::new(),
    };
    let meta = params
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(meta) = meta {
        meta.insert("progressToken".to_string(), Value::from(id));
    }
    Value::Object(params)
}

/// Removes a request from the table when its caller stops waiting, and
/// tells the server with `notifications/cancelled` unless it was answered.
struct InFlight<'a> {
    shared: &'a Arc<Shared>,
    id: i64,
    cancel_reason: Option<&'static str>,
    cancellable: bool,
}

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        let removed = lock(&self.shared.pending).entries.remove(&self.id);
        if let (Some(_), Some(reason), true) = (removed, self.cancel_reason, self.cancellable) {
            let _ = self.shared.send(JsonRpcMessage::notification(
                "notifications/cancelled",
                Some(json!({ "requestId": self.id, "reason": reason })),
            ));
        }
    }
}

/// Aborts the driver task when the session is dropped.
struct DriverHandle(tokio::task::JoinHandle<()>);

impl Drop for DriverHandle {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// An initialized MCP client session with one server.
///
/// Cheap to share behind an `Arc`: every method takes `&self`, and many
/// requests may run at once.
pub struct ClientSession {
    shared: Arc<Shared>,
    init: InitializeResult,
    kind: &'static str,
    _driver: DriverHandle,
}

impl fmt::Debug for ClientSession {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientSession")
            .field("server", &self.shared.server)
            .field("kind", &self.kind)
            .field("protocol_version", &self.init.protocol_version)
            .finish()
    }
}

impl ClientSession {
    /// Starts the driver, runs `initialize` with version negotiation and
    /// sends `notifications/initialized`. `server` names the server in
    /// every error.
    pub async fn initialize(
        transport: Box<dyn Transport>,
        server: impl Into<String>,
        options: SessionOptions,
    ) -> Result<ClientSession, TransportError> {
        let server = server.into();
        let kind = transport.kind();
        let stderr = transport.stderr_tail();
        let direct = transport.sender();
        let (commands_tx, commands_rx) = mpsc::unbounded_channel();
        let connect_timeout = options.connect_timeout;
        let capabilities = options
            .handler
            .as_ref()
            .map_or_else(|| json!({}), |handler| handler.capabilities());
        let params = json!({
            "protocolVersion": options.protocol_version,
            "capabilities": capabilities,
            "clientInfo": options.client_info,
        });
        let shared = Arc::new(Shared {
            server: server.clone(),
            commands: commands_tx,
            direct,
            pending: Mutex::new(PendingTable::default()),
            next_id: AtomicI64::new(0),
            events: Mutex::new(None),
            ended: watch::channel(None).0,
            server_requests: Mutex::new(HashMap::new()),
            stderr,
            options,
        });
        let driver = DriverHandle(tokio::spawn(drive(
            transport,
            Arc::clone(&shared),
            commands_rx,
        )));

        let call = CallOptions {
            timeout: Some(connect_timeout),
            ..CallOptions::default()
        };
        let result = match shared.request("initialize", Some(params), &call).await {
            Ok(result) => result,
            Err(e) => {
                let TransportErrorKind::Timeout { after, .. } = e.kind() else {
                    return Err(e);
                };
                return Err(TransportError::new(
                    server,
                    TransportErrorKind::ConnectTimeout {
                        after: *after,
                        stderr_tail: shared
                            .stderr
                            .as_ref()
                            .map(StderrTail::snapshot)
                            .unwrap_or_default(),
                    },
                ));
            }
        };
        let init: InitializeResult = crate::codec::from_value(result).map_err(|e| {
            TransportError::protocol(&*server, format!("invalid initialize result: {e}"))
                .with_source(e)
        })?;
        if !KNOWN_PROTOCOL_VERSIONS.contains(&init.protocol_version.as_str()) {
            return Err(TransportError::new(
                server,
                TransportErrorKind::UnsupportedVersion {
                    version: init.protocol_version,
                },
            ));
        }
        shared.send(JsonRpcMessage::notification(
            "notifications/initialized",
            None,
        ))?;
        Ok(ClientSession {
            shared,
            init,
            kind,
            _driver: driver,
        })
    }

    /// The server's name, as used in errors.
    pub fn server_name(&self) -> &str {
        &self.shared.server
    }

    /// The transport kind (`stdio`, `sdk`, ...).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The server's `initialize` answer.
    pub fn initialize_result(&self) -> &InitializeResult {
        &self.init
    }

    /// The negotiated protocol version.
    pub fn protocol_version(&self) -> &str {
        &self.init.protocol_version
    }

    /// The server's capabilities object.
    pub fn server_capabilities(&self) -> &Value {
        &self.init.capabilities
    }

    /// Whether the server advertised a capability (`tools`, `resources`, ...).
    pub fn has_capability(&self, name: &str) -> bool {
        self.init
            .capabilities
            .get(name)
            .is_some_and(|value| !value.is_null())
    }

    /// Subscribes to list-changed and other notifications from now on.
    pub fn events(&self) -> broadcast::Receiver<ServerEvent> {
        lock(&self.shared.events)
            .get_or_insert_with(|| broadcast::channel(self.shared.options.event_capacity.max(1)).0)
            .subscribe()
    }

    /// Whether the connection has ended.
    pub fn is_closed(&self) -> bool {
        lock(&self.shared.pending).ended.is_some()
    }

    /// Resolves when the connection ends, with the reason.
    pub async fn closed(&self) -> TransportError {
        let mut ended = self.shared.ended.subscribe();
        loop {
            if let Some(reason) = ended.borrow_and_update().clone() {
                return reason;
            }
            if ended.changed().await.is_err() {
                return self.shared.closed_error();
            }
        }
    }

    /// Sends a request with the default timeout and returns its raw result.
    pub async fn request(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<Value, TransportError> {
        self.shared
            .request(method, params, &CallOptions::default())
            .await
    }

    /// Sends a request with per-call options.
    pub async fn request_with(
        &self,
        method: &str,
        params: Option<Value>,
        options: &CallOptions,
    ) -> Result<Value, TransportError> {
        self.shared.request(method, params, options).await
    }

    /// Sends a notification.
    pub fn notify(&self, method: &str, params: Option<Value>) -> Result<(), TransportError> {
        self.shared
            .send(JsonRpcMessage::notification(method, params))
    }

    /// Sends `ping` and waits for the answer.
    pub async fn ping(&self) -> Result<(), TransportError> {
        self.request("ping", None).await.map(|_| ())
    }

    /// `tools/call` with the tool-call timeout.
    pub async fn call_tool(
        &self,
        name: &str,
        arguments: Option<Value>,
    ) -> Result<CallToolResult, TransportError> {
        self.call_tool_with(name, arguments, &CallOptions::default())
            .await
    }

    /// `tools/call` with per-call options (timeout, progress).
    pub async fn call_tool_with(
        &self,
        name: &str,
        arguments: Option<Value>,
        options: &CallOptions,
    ) -> Result<CallToolResult, TransportError> {
        let mut params = json!({ "name": name });
        if let Some(arguments) = arguments {
            params["arguments"] = arguments;
        }
        let result = self
            .request_with("tools/call", Some(params), options)
            .await?;
        self.parse("tools/call", result)
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, TransportError> {
        self.list_all("tools/list", "tools", "tools").await
    }

    /// Every resource, following `nextCursor`.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, TransportError> {
        self.list_all("resources/list", "resources", "resources")
            .await
    }

    /// Every resource template, following `nextCursor`.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, TransportError> {
        self.list_all("resources/templates/list", "resourceTemplates", "resources")
            .await
    }

    /// Every prompt, following `nextCursor`.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, TransportError> {
        self.list_all("prompts/list", "prompts", "prompts").await
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, TransportError> {
        let result = self
            .request("resources/read", Some(json!({ "uri": uri })))
            .await?;
        self.parse("resources/read", result)
    }

    /// `prompts/get`.
    pub async fn get_prompt(
        &self,
        name: &str,
        arguments: Option<Value>,
    ) -> Result<GetPromptResult, TransportError> {
        let mut params = json!({ "name": name });
        if let Some(arguments) = arguments {
            params["arguments"] = arguments;
        }
        let result = self.request("prompts/get", Some(params)).await?;
        self.parse("prompts/get", result)
    }

    fn parse<T: DeserializeOwned>(&self, method: &str, result: Value) -> Result<T, TransportError> {
        crate::codec::from_value(result).map_err(|e| {
            TransportError::protocol(
                &*self.shared.server,
                format!("invalid {method} result: {e}"),
            )
            .with_source(e)
        })
    }

    fn limit_error(&self, method: &str, what: String) -> TransportError {
        TransportError::protocol(&*self.shared.server, format!("{method}: {what}"))
    }

    /// Follows `nextCursor` until the last page, refusing a repeated cursor
    /// and stopping with an error past any [`ListLimits`] cap.
    async fn list_all<T: DeserializeOwned>(
        &self,
        method: &str,
        field: &str,
        capability: &str,
    ) -> Result<Vec<T>, TransportError> {
        if self.shared.options.respect_capabilities && !self.has_capability(capability) {
            return Ok(Vec::new());
        }
        let limits = self.shared.options.list_limits;
        let mut items = Vec::new();
        let mut seen = HashSet::new();
        let mut cursor: Option<String> = None;
        let mut bytes = 0usize;
        for page in 1.. {
            if page > limits.max_pages {
                return Err(
                    self.limit_error(method, format!("more than {} pages", limits.max_pages))
                );
            }
            let params = cursor.take().map(|cursor| json!({ "cursor": cursor }));
            let mut result = self.request(method, params).await?;
            bytes += json_size(&result);
            if bytes > limits.max_bytes {
                return Err(self.limit_error(
                    method,
                    format!("more than {} bytes of results", limits.max_bytes),
                ));
            }
            let Some(Value::Array(entries)) = result.get_mut(field).map(Value::take) else {
                return Err(self.limit_error(method, format!("result has no {field:?} array")));
            };
            for entry in entries {
                match crate::codec::from_value::<T>(entry) {
                    Ok(item) => items.push(item),
                    Err(e) => tracing::warn!(
                        server = %self.shared.server,
                        method,
                        error = %e,
                        "skipping an invalid list entry"
                    ),
                }
            }
            if items.len() > limits.max_items {
                return Err(
                    self.limit_error(method, format!("more than {} items", limits.max_items))
                );
            }
            match result.get("nextCursor") {
                Some(Value::String(next)) if !next.is_empty() => {
                    if !seen.insert(next.clone()) {
                        return Err(self
                            .limit_error(method, format!("server repeated the cursor {next:?}")));
                    }
                    cursor = Some(next.clone());
                }
                _ => break,
            }
        }
        Ok(items)
    }

    /// Closes the connection gracefully (for stdio: close stdin, then
    /// SIGTERM, then SIGKILL). Requests still in flight fail with
    /// [`TransportErrorKind::Closed`]. Closing twice is fine.
    pub async fn close(&self) -> Result<(), TransportError> {
        let (reply_tx, reply_rx) = oneshot::channel();
        if self.shared.commands.send(Command::Close(reply_tx)).is_err() {
            return Ok(());
        }
        reply_rx.await.unwrap_or(Ok(()))
    }
}

/// Length of `value` as compact JSON, counted by walking it: a page is
/// never serialised again. The walk keeps its own stack, so a deep value
/// cannot overflow the thread's.
fn json_size(value: &Value) -> usize {
    let mut size = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        size += match value {
            Value::Null | Value::Bool(true) => 4,
            Value::Bool(false) => 5,
            Value::Number(number) => display_len(number),
            Value::String(text) => string_size(text),
            Value::Array(items) => {
                stack.extend(items);
                // Brackets and commas.
                2 + items.len().saturating_sub(1)
            }
            Value::Object(map) => {
                for (key, value) in map {
                    // The key, and its colon.
                    size += string_size(key) + 1;
                    stack.push(value);
                }
                2 + map.len().saturating_sub(1)
            }
        };
    }
    size
}

/// Length of a JSON string literal as serde_json writes it: quotes, and
/// two bytes for `"`, `\\` and the short control escapes, six for other
/// control characters (`\u00XX`).
fn string_size(text: &str) -> usize {
    let escapes: usize = text
        .bytes()
        .map(|byte| match byte {
            b'"' | b'\\' | b'\n' | b'\r' | b'\t' | 0x08 | 0x0c => 1,
            0..=0x1f => 5,
            _ => 0,
        })
        .sum();
    2 + text.len() + escapes
}

/// Length of a number's text (its `Display` is what serde_json writes),
/// without allocating it.
fn display_len(number: &serde_json::Number) -> usize {
    struct Count(usize);
    impl fmt::Write for Count {
        fn write_str(&mut self, text: &str) -> fmt::Result {
            self.0 += text.len();
            Ok(())
        }
    }
    let mut count = Count(0);
    let _ = fmt::Write::write_fmt(&mut count, format_args!("{number}"));
    count.0
}

/// The driver: owns the transport, forwards commands out and dispatches
/// messages in, until the connection ends or the session is closed.
async fn drive(
    mut transport: Box<dyn Transport>,
    shared: Arc<Shared>,
    mut commands: mpsc::UnboundedReceiver<Command>,
) {
    // Server→client request handlers; dropping the set (when the driver ends
    // or is aborted) aborts them.
    let mut handlers = tokio::task::JoinSet::new();
    let reason = loop {
        tokio::select! {
            command = commands.recv() => match command {
                Some(Command::Send(message)) => {
                    if let Err(e) = transport.send(message).await {
                        break e;
                    }
                }
                Some(Command::Close(reply)) => {
                    shared.end(shared.closed_error());
                    handlers.abort_all();
                    let result = transport.close().await;
                    let _ = reply.send(result);
                    return;
                }
                None => break shared.closed_error(),
            },
            incoming = transport.receive() => match incoming {
                Ok(Some(message)) => {
                    if let Err(e) = dispatch(&shared, &mut transport, &mut handlers, message).await {
                        break e;
                    }
                }
                Ok(None) => break shared.closed_error(),
                Err(e) => break e,
            },
            Some(_) = handlers.join_next(), if !handlers.is_empty() => {}
        }
    };
    tracing::debug!(server = %shared.server, reason = %reason, "connection ended");
    shared.end(reason);
    handlers.abort_all();
    // Reap the process / release the connection. Later `close()` calls find
    // the command channel gone and return at once.
    drop(commands);
    if let Err(e) = transport.close().await {
        tracing::debug!(server = %shared.server, error = %e, "close after the connection ended");
    }
}

async fn dispatch(
    shared: &Arc<Shared>,
    transport: &mut Box<dyn Transport>,
    handlers: &mut tokio::task::JoinSet<()>,
    message: JsonRpcMessage,
) -> Result<(), TransportError> {
    match message {
        JsonRpcMessage::Response(response) => deliver(shared, response),
        JsonRpcMessage::Notification(notification) => notify(shared, notification),
        JsonRpcMessage::Request(request) if request.method == "ping" => {
            transport
                .send(JsonRpcMessage::result(request.id, json!({})))
                .await?;
        }
        JsonRpcMessage::Request(request) => {
            let Some(handler) = shared.options.handler.clone() else {
                let error = ErrorObject::method_not_found(&request.method);
                transport
                    .send(JsonRpcMessage::error(Some(request.id), error))
                    .await?;
                return Ok(());
            };
            let task_shared = Arc::clone(shared);
            let id = request.id.clone();
            // Held across the spawn so the task cannot remove its entry
            // before it is inserted.
            let mut in_flight = lock(&shared.server_requests);
            let abort = handlers.spawn(async move {
                let outcome = handler
                    .handle_request(&request.method, request.params)
                    .await;
                lock(&task_shared.server_requests).remove(&request.id);
                let _ = task_shared.send(JsonRpcMessage::Response(Response {
                    id: Some(request.id),
                    outcome,
                }));
            });
            in_flight.insert(id, abort);
        }
    }
    Ok(())
}

fn deliver(shared: &Shared, response: Response) {
    let key = match &response.id {
        Some(RequestId::Number(n)) => Some(*n),
        // Some bridges turn numeric ids into strings.
        Some(RequestId::String(s)) => s.parse::<i64>().ok(),
        None => None,
    };
    let Some(key) = key else {
        match response.outcome {
            Err(error) => tracing::warn!(
                server = %shared.server,
                code = error.code,
                message = %error.message,
                "server sent an error for no request"
            ),
            Ok(_) => tracing::debug!(server = %shared.server, "response with an unknown id"),
        }
        return;
    };
    let pending = lock(&shared.pending).entries.remove(&key);
    match pending {
        Some(pending) => {
            let _ = pending.reply.send(Ok(response.outcome));
        }
        None => {
            tracing::debug!(server = %shared.server, id = key, "response for no pending request")
        }
    }
}

fn notify(shared: &Shared, notification: Notification) {
    let event = match notification.method.as_str() {
        "notifications/progress" => {
            deliver_progress(shared, notification.params.as_ref());
            return;
        }
        "notifications/cancelled" => {
            let id = notification
                .params
                .as_ref()
                .and_then(|p| p.get("requestId"))
                .and_then(|id| serde_json::from_value::<RequestId>(id.clone()).ok());
            if let Some(abort) = id.and_then(|id| lock(&shared.server_requests).remove(&id)) {
                abort.abort();
            }
            return;
        }
        "notifications/tools/list_changed" => ServerEvent::ListChanged(ListKind::Tools),
        "notifications/resources/list_changed" => ServerEvent::ListChanged(ListKind::Resources),
        "notifications/prompts/list_changed" => ServerEvent::ListChanged(ListKind::Prompts),
        _ => ServerEvent::Notification(notification),
    };
    // No subscriber is fine: events are optional for the host.
    if let Some(events) = lock(&shared.events).as_ref() {
        let _ = events.send(event);
    }
}

fn deliver_progress(shared: &Shared, params: Option<&Value>) {
    let Some(params) = params else { return };
    let token = match params.get("progressToken") {
        Some(Value::Number(n)) => n.as_i64(),
        Some(Value::String(s)) => s.parse::<i64>().ok(),
        _ => None,
    };
    let Some(token) = token else { return };
    let progress = Progress {
        progress: params
            .get("progress")
            .and_then(Value::as_f64)
            .unwrap_or(0.0),
        total: params.get("total").and_then(Value::as_f64),
        message: params
            .get("message")
            .and_then(Value::as_str)
            .map(str::to_string),
    };
    let table = lock(&shared.pending);
    if let Some(sender) = table.entries.get(&token).and_then(|p| p.progress.as_ref()) {
        let _ = sender.send(progress);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(value: Value) {
        let expect = serde_json::to_vec(&value).map_or(0, |bytes| bytes.len());
        assert_eq!(json_size(&value), expect, "{value}");
    }

    #[test]
    fn sizes_match_the_compact_serialisation() {
        check(json!(null));
        check(json!(true));
        check(json!(false));
        check(json!(0));
        check(json!(-1234567890123_i64));
        check(json!(u64::MAX));
        check(json!(1.5));
        check(json!(-0.000_012_5));
        check(json!(1e300));
        check(json!(""));
        check(json!("plain text, é, 日本"));
        check(json!(
            "quote \" backslash \\ tab \t nl \n cr \r bs \u{8} ff \u{c} nul \u{0} us \u{1f} del \u{7f}"
        ));
        check(json!([]));
        check(json!({}));
        check(json!([1, [2, [3, []]], {"a": {}}]));
        check(
            json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "nextCursor": "c\"1"}),
        );
    }
}
