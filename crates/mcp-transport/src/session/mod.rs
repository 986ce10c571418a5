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
//! hop when the transport offers a [`TransportInfo::sender`](crate::TransportInfo::sender), as stdio does,
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
//!
//! The options and [`ClientSession`]'s methods live here; the request
//! table and the request path in `pending`, the driver task in `driver`,
//! pagination in `list`.

mod deadlines;
mod driver;
mod list;
mod listen;
mod negotiate;
mod observe;
mod pending;
mod rounds;
mod tasks;
mod typed;

pub use list::{CacheScope, INVALID_ENTRIES_SHOWN, InvalidEntry, Listing, ListingNote};
pub use typed::{
    CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
    ElicitValue, ElicitationHandler, IncludeContext, ListRootsResult, RequestContext, Role, Root,
    RootsProvider, SamplingContent, SamplingHandler, SamplingMessage, Typed, TypedClientHandler,
};

use std::collections::HashMap;
use std::fmt;
use std::sync::atomic::AtomicI64;
use std::sync::{Arc, Mutex, OnceLock};

use crate::lock;
use std::time::Duration;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use tokio::sync::{broadcast, mpsc, oneshot, watch};
use tokio::task::AbortHandle;

use crate::error::TransportError;
use crate::message::{ErrorObject, JsonRpcMessage, Notification, RequestId};
use crate::params::Params;
use crate::protocol::{
    CallToolResult, GetPromptResult, Implementation, InitializeResult, LATEST_PROTOCOL_VERSION,
    Prompt, ReadResourceResult, Resource, ResourceTemplate, Tool,
};
use crate::stderr_tail::StderrTail;
use crate::transport::{AnswerRoute, MessageSender, ModernSender, Transport, TransportInfo};

use driver::drive;
use pending::PendingTable;

/// Caps on one paginated listing (REFERENCE §2: stop past a cap).
#[non_exhaustive]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ListLimits {
    /// Most pages fetched for one listing.
    pub max_pages: usize,
    /// Most items collected for one listing.
    pub max_items: usize,
    /// Most bytes of page results (as compact JSON) for one listing.
    pub max_bytes: usize,
}

impl ListLimits {
    /// The default caps (100 pages, 10,000 items, 32 MiB): the same as `ListLimits::default()`.
    pub fn new() -> Self {
        ListLimits::default()
    }

    /// Sets the most pages fetched for one listing.
    #[must_use]
    pub fn with_max_pages(mut self, max_pages: usize) -> Self {
        self.max_pages = max_pages;
        self
    }

    /// Sets the most items collected for one listing.
    #[must_use]
    pub fn with_max_items(mut self, max_items: usize) -> Self {
        self.max_items = max_items;
        self
    }

    /// Sets the most bytes of page results for one listing.
    #[must_use]
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }
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
#[non_exhaustive]
#[derive(Clone)]
pub struct SessionOptions {
    /// Sent as `clientInfo`.
    pub client_info: Implementation,
    /// The newest revision the session may speak (the newest known by
    /// default); negotiation picks the newest the server also supports.
    pub protocol_version: String,
    /// Speak exactly `protocol_version` or fail with
    /// [`TransportErrorKind::NoCommonVersion`](crate::TransportErrorKind::NoCommonVersion).
    pub pin_protocol: bool,
    /// How long the `server/discover` probe waits before the server is
    /// taken for one that predates it (some never answer a request sent
    /// before `initialize`).
    pub discover_timeout: Duration,
    /// The server answered `initialize` before (an [`crate::EraMemory`]
    /// finding): start with `initialize` instead of the `server/discover`
    /// probe. Any refusal of that `initialize` runs the probe as if this
    /// were unset, so a server that has since moved on is still reached.
    pub assume_legacy: bool,
    /// The log level asked of the server (`debug`, `info`, ... ): sent in
    /// every request's `_meta` at 2026-07-28, with `logging/setLevel`
    /// before. `None` asks for no log messages.
    pub log_level: Option<String>,
    /// Extensions announced in `capabilities.extensions` at 2026-07-28
    /// (name → settings).
    pub extensions: Map<String, Value>,
    /// Most `input_required` rounds one request may take.
    pub max_input_rounds: usize,
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
    /// What the session reports to OpenTelemetry beyond the defaults.
    #[cfg(feature = "otel")]
    pub telemetry: crate::telemetry::TelemetryOptions,
}

impl SessionOptions {
    /// Default behaviour with the default timeouts of `mcp-config`: the same as `SessionOptions::default()`.
    pub fn new() -> Self {
        SessionOptions::default()
    }

    /// Sets the `clientInfo` sent to servers (name the host, not this crate).
    #[must_use]
    pub fn with_client_info(mut self, client_info: Implementation) -> Self {
        self.client_info = client_info;
        self
    }

    /// Sets the newest revision the session may speak.
    #[must_use]
    pub fn with_protocol_version(mut self, protocol_version: impl Into<String>) -> Self {
        self.protocol_version = protocol_version.into();
        self
    }

    /// Sets whether the session speaks exactly `protocol_version` or fails.
    #[must_use]
    pub fn with_pin_protocol(mut self, pin_protocol: bool) -> Self {
        self.pin_protocol = pin_protocol;
        self
    }

    /// Sets how long the `server/discover` probe waits.
    #[must_use]
    pub fn with_discover_timeout(mut self, discover_timeout: Duration) -> Self {
        self.discover_timeout = discover_timeout;
        self
    }

    /// Sets [`SessionOptions::assume_legacy`].
    #[must_use]
    pub fn with_assume_legacy(mut self, assume_legacy: bool) -> Self {
        self.assume_legacy = assume_legacy;
        self
    }

    /// Sets the log level asked of the server (`debug`, `info`, ...).
    #[must_use]
    pub fn with_log_level(mut self, log_level: impl Into<String>) -> Self {
        self.log_level = Some(log_level.into());
        self
    }

    /// Sets the extensions announced at 2026-07-28 (name → settings), replacing the default (tasks).
    #[must_use]
    pub fn with_extensions(mut self, extensions: Map<String, Value>) -> Self {
        self.extensions = extensions;
        self
    }

    /// Sets the most `input_required` rounds one request may take.
    #[must_use]
    pub fn with_max_input_rounds(mut self, max_input_rounds: usize) -> Self {
        self.max_input_rounds = max_input_rounds;
        self
    }

    /// Sets the bound on the `initialize` exchange.
    #[must_use]
    pub fn with_connect_timeout(mut self, connect_timeout: Duration) -> Self {
        self.connect_timeout = connect_timeout;
        self
    }

    /// Sets the default timeout of a request other than `tools/call`.
    #[must_use]
    pub fn with_request_timeout(mut self, request_timeout: Duration) -> Self {
        self.request_timeout = request_timeout;
        self
    }

    /// Sets the default timeout of `tools/call`.
    #[must_use]
    pub fn with_tool_call_timeout(mut self, tool_call_timeout: Duration) -> Self {
        self.tool_call_timeout = tool_call_timeout;
        self
    }

    /// Sets the caps on paginated listings.
    #[must_use]
    pub fn with_list_limits(mut self, list_limits: ListLimits) -> Self {
        self.list_limits = list_limits;
        self
    }

    /// Sets who answers server→client requests (wrap a [`TypedClientHandler`] with [`Typed::shared`]).
    #[must_use]
    pub fn with_handler(mut self, handler: Arc<dyn ClientHandler>) -> Self {
        self.handler = Some(handler);
        self
    }

    /// Sets whether `list_*` skip a kind the server did not advertise.
    #[must_use]
    pub fn with_respect_capabilities(mut self, respect_capabilities: bool) -> Self {
        self.respect_capabilities = respect_capabilities;
        self
    }

    /// Sets how many unread [`ServerEvent`]s a subscriber may lag.
    #[must_use]
    pub fn with_event_capacity(mut self, event_capacity: usize) -> Self {
        self.event_capacity = event_capacity;
        self
    }
}

impl fmt::Debug for SessionOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionOptions")
            .field("client_info", &self.client_info)
            .field("protocol_version", &self.protocol_version)
            .field("pin_protocol", &self.pin_protocol)
            .field("discover_timeout", &self.discover_timeout)
            .field("assume_legacy", &self.assume_legacy)
            .field("log_level", &self.log_level)
            .field("extensions", &self.extensions.keys().collect::<Vec<_>>())
            .field("max_input_rounds", &self.max_input_rounds)
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
            pin_protocol: false,
            discover_timeout: Duration::from_secs(5),
            assume_legacy: false,
            log_level: None,
            extensions: default_extensions(),
            max_input_rounds: 8,
            connect_timeout: timeouts.connect,
            request_timeout: timeouts.request,
            tool_call_timeout: timeouts.tool_call,
            list_limits: ListLimits::default(),
            handler: None,
            respect_capabilities: true,
            event_capacity: 1024,
            #[cfg(feature = "otel")]
            telemetry: crate::telemetry::TelemetryOptions::default(),
        }
    }
}

/// The extensions a session announces unless the host says otherwise:
/// tasks, which the session runs itself (`call_tool_as_task`).
fn default_extensions() -> Map<String, Value> {
    let mut extensions = Map::new();
    extensions.insert(crate::protocol::TASKS_EXTENSION.to_owned(), json!({}));
    extensions
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
///
/// A call has two limits (see the `deadlines` module): a total that
/// nothing extends, and an inactivity limit that only real progress
/// restarts: a `progress` value above every one before, a new task
/// status, an answered input round. A progress notification that repeats
/// its value, or a task status message that changes while the status
/// stays, restarts neither.
#[non_exhaustive]
#[derive(Clone, Default)]
pub struct CallOptions {
    /// The total limit of the call, input rounds and task polling
    /// included; nothing extends it. `None`: the session's default for
    /// the method (the tool-call timeout for `tools/call`).
    pub timeout: Option<Duration>,
    /// How long the call may go without real progress; `None` (or a
    /// value past the total): only the total applies.
    pub idle_timeout: Option<Duration>,
    /// When set, `_meta.progressToken` is sent and progress is delivered here.
    pub progress: Option<ProgressCallback>,
    /// An `input_required` result comes back to the caller as the result
    /// instead of being answered through the session's handler: for a
    /// server that passes the round on to its own client (a gateway),
    /// which then sends the retry itself.
    pub hand_back_input_rounds: bool,
}

impl fmt::Debug for CallOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("CallOptions")
            .field("timeout", &self.timeout)
            .field("idle_timeout", &self.idle_timeout)
            .field("progress", &self.progress.is_some())
            .field("hand_back_input_rounds", &self.hand_back_input_rounds)
            .finish()
    }
}

impl CallOptions {
    /// Options with the session's default timeout and no progress: the
    /// same as `CallOptions::default()`.
    pub fn new() -> Self {
        CallOptions::default()
    }

    /// Sets a progress callback: `_meta.progressToken` is sent and each
    /// `notifications/progress` for the call reaches `progress`.
    #[must_use]
    pub fn with_progress(mut self, progress: impl Fn(Progress) + Send + Sync + 'static) -> Self {
        self.progress = Some(Arc::new(progress));
        self
    }

    /// Sets the total limit of this call, which nothing extends. Any
    /// value is accepted: one past the clock's range waits a century.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout);
        self
    }

    /// Sets how long this call may go without real progress (within its
    /// total limit).
    #[must_use]
    pub fn with_idle_timeout(mut self, idle_timeout: Duration) -> Self {
        self.idle_timeout = Some(idle_timeout);
        self
    }

    /// Hands an `input_required` result back as the result (see
    /// [`CallOptions::hand_back_input_rounds`]).
    #[must_use]
    pub fn with_input_rounds_handed_back(mut self) -> Self {
        self.hand_back_input_rounds = true;
        self
    }
}

/// Which list a `list_changed` notification concerns.
#[non_exhaustive]
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
#[non_exhaustive]
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

    /// The handler for the session of the server named `server`, which
    /// [`ClientSession::initialize`] asks for once, so a host that shares
    /// one handler between servers can still tell its user which server is
    /// asking. `None` (the default) keeps this handler.
    fn for_server(&self, server: &str) -> Option<Arc<dyn ClientHandler>> {
        let _ = server;
        None
    }

    /// A notification the session does not act on itself (a log message,
    /// a resource's update), called on the session's reading task in the
    /// order the server sent it, before any answer that came after it is
    /// handed on: keep it quick (a channel send). The notification also
    /// reaches [`ClientSession::events`]. The default ignores it.
    fn notification(&self, notification: &Notification) {
        let _ = notification;
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

enum Command {
    /// A message for the transport, sent in the trace it was sent from.
    Send(JsonRpcMessage, observe::Carried),
    Close(oneshot::Sender<Result<(), TransportError>>),
}

/// State shared by the session handle, its callers' guards and the driver.
struct Shared {
    server: String,
    commands: mpsc::UnboundedSender<Command>,
    /// The transport's own outgoing queue, when it has one: messages skip
    /// the driver task.
    direct: Option<MessageSender>,
    /// Where a modern request goes from the caller's task when `direct`
    /// does not take every message (streamable HTTP).
    modern_direct: Option<ModernSender>,
    pending: Mutex<PendingTable>,
    /// Wakes the deadline task for a deadline earlier than its target.
    deadlines: tokio::sync::Notify,
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
    /// Set once a modern revision is chosen: the `_meta` of every request.
    modern: OnceLock<crate::request_meta::RequestMeta>,
    /// The negotiated revision, once negotiation is done.
    revision: OnceLock<String>,
    /// The `subscriptions/listen` in progress (modern sessions only).
    listener: Mutex<Option<listen::Listener>>,
    /// Resources the host subscribed to.
    subscribed: Mutex<Vec<String>>,
    /// Tools the last listing left out, and why.
    rejected: Mutex<Vec<RejectedTool>>,
    /// The transport's table of `x-mcp-header` mirrors (streamable HTTP).
    tool_headers: Option<crate::param_headers::ToolHeaderTable>,
    /// [`TransportInfo::marks_own_failures`](crate::TransportInfo::marks_own_failures): error answers may carry the
    /// transport's mark.
    marks_own_failures: bool,
    /// The server's identity from a result's `_meta`, for a modern server
    /// whose `server/discover` answer did not carry it.
    server_info: Mutex<Option<Implementation>>,
    /// Reads the session id the server gave the connection, where the
    /// transport has one.
    session_id: Option<crate::transport::SessionIdReader>,
    #[cfg(feature = "otel")]
    telemetry: crate::telemetry::SessionTelemetry,
}

/// A tool a listing left out because its definition cannot be used (an
/// invalid `x-mcp-header` annotation, for one).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RejectedTool {
    /// The tool's name, as the server sent it.
    pub name: String,
    /// Why it was left out.
    pub reason: String,
}

/// Aborts the driver and deadline tasks when the session is dropped.
struct DriverHandle {
    driver: tokio::task::JoinHandle<()>,
    deadlines: tokio::task::JoinHandle<()>,
}

impl Drop for DriverHandle {
    fn drop(&mut self) {
        self.driver.abort();
        self.deadlines.abort();
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
    /// Starts the driver and chooses the revision: `server/discover` for
    /// 2026-07-28, else (or when the server predates it) the `initialize`
    /// handshake with `notifications/initialized`. `server` names the
    /// server in every error.
    pub async fn initialize(
        transport: Box<dyn Transport>,
        server: impl Into<String>,
        options: SessionOptions,
    ) -> Result<ClientSession, TransportError> {
        let server = server.into();
        let mut options = options;
        if let Some(handler) = options
            .handler
            .as_ref()
            .and_then(|handler| handler.for_server(&server))
        {
            options.handler = Some(handler);
        }
        let TransportInfo {
            kind,
            stderr_tail: stderr,
            sender: direct,
            modern_sender: modern_direct,
            tool_headers,
            marks_own_failures,
            session_id,
            ..
        } = transport.info();
        #[cfg(feature = "otel")]
        let telemetry = crate::telemetry::SessionTelemetry::new(kind, options.telemetry.clone());
        let (commands_tx, commands_rx) = mpsc::unbounded_channel();
        let shared = Arc::new(Shared {
            server,
            commands: commands_tx,
            direct,
            modern_direct,
            pending: Mutex::new(PendingTable::default()),
            deadlines: tokio::sync::Notify::new(),
            next_id: AtomicI64::new(0),
            events: Mutex::new(None),
            ended: watch::channel(None).0,
            server_requests: Mutex::new(HashMap::new()),
            stderr,
            options,
            modern: OnceLock::new(),
            revision: OnceLock::new(),
            listener: Mutex::new(None),
            subscribed: Mutex::new(Vec::new()),
            rejected: Mutex::new(Vec::new()),
            tool_headers,
            marks_own_failures,
            server_info: Mutex::new(None),
            session_id,
            #[cfg(feature = "otel")]
            telemetry,
        });
        if let Some(sender) = &shared.modern_direct {
            let route: std::sync::Weak<dyn AnswerRoute> = Arc::downgrade(&shared) as _;
            sender.route_answers(route);
        }
        let driver = DriverHandle {
            driver: tokio::spawn(drive(transport, Arc::clone(&shared), commands_rx)),
            deadlines: tokio::spawn(deadlines::watch(Arc::clone(&shared))),
        };
        let negotiated = shared.negotiate().await?;
        let _ = shared
            .revision
            .set(negotiated.identity.protocol_version.clone());
        #[cfg(feature = "otel")]
        shared
            .telemetry
            .negotiated(&negotiated.identity.protocol_version);
        let modern = negotiated.modern.is_some();
        if let Some(meta) = negotiated.modern {
            let _ = shared.modern.set(meta);
        }
        let session = ClientSession {
            shared,
            init: negotiated.identity,
            kind,
            _driver: driver,
        };
        if modern {
            session.listen();
        }
        Ok(session)
    }

    /// (Re)opens `subscriptions/listen` for what the server advertises and
    /// the subscribed resources, replacing the one running.
    fn listen(&self) {
        let resources = lock(&self.shared.subscribed).clone();
        let filter = listen::filter(&self.init.capabilities, &resources);
        let listener = filter.map(|params| listen::Listener::open(&self.shared, params));
        *lock(&self.shared.listener) = listener;
    }

    /// Whether the session speaks a modern (2026-07-28 or later,
    /// handshake-free) revision.
    pub fn is_modern(&self) -> bool {
        self.shared.modern.get().is_some()
    }

    /// Subscribes to `notifications/resources/updated` for `uri`:
    /// `resources/subscribe` before 2026-07-28, a renewed
    /// `subscriptions/listen` from then on.
    pub async fn subscribe_resource(&self, uri: &str) -> Result<(), TransportError> {
        if !self.is_modern() {
            return self
                .request("resources/subscribe", Some(json!({ "uri": uri })))
                .await
                .map(|_| ());
        }
        {
            let mut subscribed = lock(&self.shared.subscribed);
            if subscribed.iter().any(|u| u == uri) {
                return Ok(());
            }
            subscribed.push(uri.to_owned());
        }
        self.listen();
        Ok(())
    }

    /// Ends a [`ClientSession::subscribe_resource`].
    pub async fn unsubscribe_resource(&self, uri: &str) -> Result<(), TransportError> {
        if !self.is_modern() {
            return self
                .request("resources/unsubscribe", Some(json!({ "uri": uri })))
                .await
                .map(|_| ());
        }
        lock(&self.shared.subscribed).retain(|u| u != uri);
        self.listen();
        Ok(())
    }

    /// Tools the last listing left out, and why.
    pub fn rejected_tools(&self) -> Vec<RejectedTool> {
        lock(&self.shared.rejected).clone()
    }

    /// The server's name, as used in errors.
    pub fn server_name(&self) -> &str {
        &self.shared.server
    }

    /// The transport kind (`stdio`, `sdk`, ...).
    pub fn kind(&self) -> &'static str {
        self.kind
    }

    /// The session id the server gave the connection (streamable HTTP's
    /// `Mcp-Session-Id`, before 2026-07-28), as it is now; `None` for a
    /// transport without one or a server that gave none.
    pub fn session_id(&self) -> Option<String> {
        self.shared
            .session_id
            .as_ref()
            .and_then(|reader| reader.read())
    }

    /// Who the server is and what it offers: its `initialize` answer, or
    /// at 2026-07-28 the same fields from `server/discover` (with
    /// `protocol_version` the chosen revision).
    pub fn initialize_result(&self) -> &InitializeResult {
        &self.init
    }

    /// Who the server says it is: from `initialize` or `server/discover`,
    /// else (2026-07-28) from the `_meta` of a later result.
    pub fn server_info(&self) -> Implementation {
        if !self.init.server_info.name.is_empty() {
            return self.init.server_info.clone();
        }
        lock(&self.shared.server_info)
            .clone()
            .unwrap_or_else(|| self.init.server_info.clone())
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

    /// Checks the server answers: `ping`, or `server/discover` at
    /// 2026-07-28, which has no ping.
    pub async fn ping(&self) -> Result<(), TransportError> {
        let method = if self.is_modern() {
            "server/discover"
        } else {
            "ping"
        };
        self.request(method, None).await.map(|_| ())
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
        let params = Params::ToolCall { name, arguments };
        let mut deadline = self.shared.deadline("tools/call", options);
        let body = self
            .shared
            .request_body("tools/call", params, options, &mut deadline)
            .await?;
        // Raw bytes come back only for a complete result (the request
        // path peeked at them already); a decoded one may be a task.
        let complete = match &body {
            pending::Body::Raw(_) => true,
            pending::Body::Value(_) => body.outcome() == pending::Outcome::Complete,
        };
        if complete {
            return self.shared.body_typed("tools/call", body);
        }
        let result = self.shared.body_value("tools/call", body)?;
        // A task the server starts on its own (2026-07-28) is followed.
        let result = self
            .settle_tool_result(name, result, options, deadline)
            .await?;
        self.parse("tools/call", result)
    }

    /// Every tool, following `nextCursor`.
    pub async fn list_tools(&self) -> Result<Vec<Tool>, TransportError> {
        Ok(self.list_tools_listing().await?.items)
    }

    /// Every resource, following `nextCursor`.
    pub async fn list_resources(&self) -> Result<Vec<Resource>, TransportError> {
        Ok(self.list_resources_listing().await?.items)
    }

    /// Every resource template, following `nextCursor`.
    pub async fn list_resource_templates(&self) -> Result<Vec<ResourceTemplate>, TransportError> {
        Ok(self.list_resource_templates_listing().await?.items)
    }

    /// Every prompt, following `nextCursor`.
    pub async fn list_prompts(&self) -> Result<Vec<Prompt>, TransportError> {
        Ok(self.list_prompts_listing().await?.items)
    }

    /// `resources/read`.
    pub async fn read_resource(&self, uri: &str) -> Result<ReadResourceResult, TransportError> {
        self.request_typed("resources/read", Some(json!({ "uri": uri })))
            .await
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
        self.request_typed("prompts/get", Some(params)).await
    }

    /// A request whose result is decoded straight into `T` (from the raw
    /// bytes, when the session did not need to look inside).
    async fn request_typed<T: DeserializeOwned>(
        &self,
        method: &str,
        params: Option<Value>,
    ) -> Result<T, TransportError> {
        let options = CallOptions::default();
        let mut deadline = self.shared.deadline(method, &options);
        let body = self
            .shared
            .request_body(method, params.into(), &options, &mut deadline)
            .await?;
        self.shared.body_typed(method, body)
    }

    fn parse<T: DeserializeOwned>(&self, method: &str, result: Value) -> Result<T, TransportError> {
        crate::depth::from_value(result).map_err(|e| {
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

    /// Closes the connection gracefully (for stdio: close stdin, then
    /// SIGTERM, then SIGKILL). Requests still in flight fail with
    /// [`TransportErrorKind::Closed`](crate::TransportErrorKind::Closed). Closing twice is fine.
    pub async fn close(&self) -> Result<(), TransportError> {
        lock(&self.shared.listener).take();
        let (reply_tx, reply_rx) = oneshot::channel();
        if self.shared.commands.send(Command::Close(reply_tx)).is_err() {
            return Ok(());
        }
        reply_rx.await.unwrap_or(Ok(()))
    }
}
