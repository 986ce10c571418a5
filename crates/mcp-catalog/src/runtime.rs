//! Session runtimes (REFERENCE §3.1): the live connections behind one
//! host session and the catalog built from them.
//!
//! Nothing connects until an attempt asks for the catalog. Then every
//! enabled server connects at once (bounded by a limit), each within its
//! connect timeout, and lists its tools. Callers that ask while a build
//! runs share it. A generation counter, bumped by every invalidation, keeps
//! a build that was overtaken from being cached. A server that failed is
//! reported in the catalog's diagnostics and tried again on a later
//! attempt, unless its failure backoff pauses it.
//!
//! The connection step sits behind [`Connector`], so the same runtime runs
//! over real transports and over scripted servers in tests; time comes from
//! a [`Clock`].

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::future::{BoxFuture, FutureExt, Shared};
use mcp_config::{DEFAULT_SESSION_IDLE_TTL, Level, ServerConfig};
use mcp_transport::protocol::{CallToolResult, Tool};
use mcp_transport::session::ProgressCallback;
use serde_json::{Map, Value, json};
use tokio::sync::Semaphore;

use crate::backoff::{Backoff, BackoffPolicy, Paused};
use crate::catalog::{
    Catalog, CatalogDiagnostic, CatalogTool, MaterializeOptions, SchemaCache, ServerFeatures,
    ServerTools, ToolTarget, UtilityTool, defuse_listing, materialize_cached,
};
use crate::clock::{Clock, SystemClock, rfc3339};
use crate::deep;
use crate::error::{CatalogError, CatalogErrorKind, Cause};
use crate::result::{DEFAULT_MAX_RESULT_BYTES, ModelResult, convert_result, dispose_result};
use crate::schema::MAX_JSON_DEPTH;
use crate::servers::ServerSet;

/// Default number of servers one build connects at the same time.
pub const DEFAULT_MAX_CONCURRENT_CONNECTS: usize = 32;

/// A connected server, as the runtime uses it. Implementations enforce
/// the timeouts they are given (a progress notification may extend a tool
/// call's).
#[async_trait]
pub trait Connection: Send + Sync {
    /// What the server announced in `initialize`.
    fn features(&self) -> ServerFeatures;

    /// Every tool, all pages.
    async fn list_tools(&self) -> Result<Vec<Tool>, CatalogError>;

    /// `tools/call` with the raw tool name. With `progress`, the server's
    /// progress notifications are delivered there (and each one restarts
    /// the timeout).
    async fn call_tool(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<CallToolResult, CatalogError>;

    /// `resources/list` (one page); the raw result.
    async fn list_resources(&self, cursor: Option<String>) -> Result<Value, CatalogError>;

    /// `resources/read`; the raw result.
    async fn read_resource(&self, uri: &str) -> Result<Value, CatalogError>;

    /// `prompts/list` (one page); the raw result.
    async fn list_prompts(&self, cursor: Option<String>) -> Result<Value, CatalogError>;

    /// `prompts/get`; the raw result.
    async fn get_prompt(
        &self,
        name: &str,
        arguments: Map<String, Value>,
    ) -> Result<Value, CatalogError>;

    /// Closes the connection (for stdio: the whole shutdown sequence).
    async fn close(&self);

    /// [`Connection::call_tool`], answering with the server's result as
    /// it came, for hosts that show it. The default writes the parsed
    /// result back as JSON.
    async fn call_tool_raw(
        &self,
        name: &str,
        arguments: Value,
        timeout: Duration,
        progress: Option<ProgressCallback>,
    ) -> Result<Value, CatalogError> {
        let result = self.call_tool(name, arguments, timeout, progress).await?;
        // Serialising a `CallToolResult` cannot fail: it holds JSON only.
        let raw = serde_json::to_value(&result).unwrap_or_default();
        dispose_result(result);
        Ok(raw)
    }

    /// What the server said about itself in `initialize`, when known.
    fn identity(&self) -> Option<ServerIdentity> {
        None
    }

    /// How many resources the server lists, over every page.
    async fn count_resources(&self) -> Result<usize, CatalogError> {
        count_pages(|cursor| self.list_resources(cursor), "resources").await
    }

    /// How many prompts the server lists, over every page.
    async fn count_prompts(&self) -> Result<usize, CatalogError> {
        count_pages(|cursor| self.list_prompts(cursor), "prompts").await
    }
}

/// The pages a default count follows at most (a server that keeps
/// answering with new cursors is not followed for ever).
const MAX_COUNTED_PAGES: usize = 1000;

/// Counts the items of a paged list, following `nextCursor` until it is
/// absent or repeats.
async fn count_pages<'a, F>(mut page: F, field: &str) -> Result<usize, CatalogError>
where
    F: FnMut(Option<String>) -> BoxFuture<'a, Result<Value, CatalogError>>,
{
    let mut count = 0;
    let mut cursor = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_COUNTED_PAGES {
        let listed = page(cursor.take()).await?;
        count += listed
            .get(field)
            .and_then(Value::as_array)
            .map_or(0, Vec::len);
        match listed.get("nextCursor").and_then(Value::as_str) {
            Some(next) if seen.insert(next.to_owned()) => cursor = Some(next.to_owned()),
            _ => break,
        }
        deep::dispose(listed);
    }
    Ok(count)
}

/// A server's own account of itself, from its `initialize` answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServerIdentity {
    /// The protocol version both sides agreed on.
    pub protocol_version: String,
    pub name: String,
    pub version: String,
}

/// What connecting to one server found (see [`SessionRuntime::probe`]).
#[derive(Debug, Clone)]
pub struct ConnectReport {
    pub server: String,
    /// From the start of the attempt until the connection was open (or
    /// the attempt failed).
    pub connect_time: Duration,
    /// Set once the server is connected.
    pub identity: Option<ServerIdentity>,
    /// Set once every list was counted.
    pub counts: Option<ServerCounts>,
    /// Why connecting or counting failed.
    pub error: Option<CatalogError>,
}

/// How many tools, resources and prompts a server lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ServerCounts {
    pub tools: usize,
    pub resources: usize,
    pub prompts: usize,
}

/// A tool call's model output and the server's result it came from.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolCallOutput {
    /// The server's answer as it came: the `tools/call` result, or for a
    /// utility tool the answer of the request it stands for.
    pub raw: Value,
    /// What a model is given, exactly as [`SessionRuntime::call_tool`]
    /// returns it.
    pub model: ModelResult,
}

/// Turns a server entry into a connected, initialised [`Connection`].
#[async_trait]
pub trait Connector: Send + Sync {
    /// Connects to `server`. The connection reports `tools/list_changed`
    /// and its own end through `events`.
    async fn connect(
        &self,
        server: &ServerConfig,
        events: ServerEvents,
    ) -> Result<Arc<dyn Connection>, CatalogError>;
}

/// How a connection tells its runtime about server-side changes. Events
/// from a connection the runtime already replaced are ignored.
#[derive(Clone)]
pub struct ServerEvents {
    runtime: Weak<RuntimeShared>,
    server: String,
    epoch: u64,
}

impl fmt::Debug for ServerEvents {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerEvents")
            .field("server", &self.server)
            .field("epoch", &self.epoch)
            .finish()
    }
}

impl ServerEvents {
    /// Events that go nowhere, for a connection used outside a runtime.
    pub fn detached(server: impl Into<String>) -> Self {
        ServerEvents {
            runtime: Weak::new(),
            server: server.into(),
            epoch: 0,
        }
    }

    /// The server sent `notifications/tools/list_changed`: its tools are
    /// listed again and the catalog rebuilt on the next attempt.
    pub fn tools_changed(&self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.on_tools_changed(&self.server, self.epoch);
        }
    }

    /// The connection ended: the next attempt reconnects.
    pub fn closed(&self) {
        if let Some(runtime) = self.runtime.upgrade() {
            runtime.on_closed(&self.server, self.epoch);
        }
    }

    /// The server these events belong to.
    pub fn server(&self) -> &str {
        &self.server
    }
}

/// Settings of a runtime.
#[derive(Debug, Clone)]
pub struct RuntimeOptions {
    pub materialize: MaterializeOptions,
    /// Servers one build connects at the same time.
    pub max_concurrent_connects: usize,
    /// A runtime unused this long is evicted; zero never evicts.
    pub idle_ttl: Duration,
    pub backoff: BackoffPolicy,
    /// Cap on one converted tool result.
    pub max_result_bytes: usize,
}

impl Default for RuntimeOptions {
    fn default() -> Self {
        RuntimeOptions {
            materialize: MaterializeOptions::default(),
            max_concurrent_connects: DEFAULT_MAX_CONCURRENT_CONNECTS,
            idle_ttl: DEFAULT_SESSION_IDLE_TTL,
            backoff: BackoffPolicy::default(),
            max_result_bytes: DEFAULT_MAX_RESULT_BYTES,
        }
    }
}

type SharedBuild = Shared<BoxFuture<'static, Result<Arc<Catalog>, CatalogError>>>;

/// One connect attempt, shared by every caller that needs the server
/// while it runs, so a server is never opened twice at once.
type SharedConnect = Shared<BoxFuture<'static, Result<Arc<dyn Connection>, CatalogError>>>;

struct Slot {
    config: ServerConfig,
    /// `config_hash` of the entry: a changed hash reconnects the server.
    config_hash: String,
    /// Changes whenever the slot gets a new config or connection.
    epoch: u64,
    connection: Option<Arc<dyn Connection>>,
    /// The connect attempt under way for this epoch, if any.
    connecting: Option<SharedConnect>,
    tools: Option<Arc<[Tool]>>,
    /// Bumped by `list_changed`; a listing that started before is stale.
    tools_epoch: u64,
    backoff: Backoff,
}

struct CachedCatalog {
    catalog: Arc<Catalog>,
    /// When a server that failed may be tried again; `None` when none
    /// failed.
    retry_at: Option<Instant>,
}

struct State {
    slots: BTreeMap<String, Slot>,
    generation: u64,
    next_epoch: u64,
    cached: Option<CachedCatalog>,
    inflight: Option<(u64, SharedBuild)>,
    last_used: Instant,
    in_use: usize,
    shut_down: bool,
    /// Connections taken out of slots, waiting to be closed.
    retired: Vec<Arc<dyn Connection>>,
    /// Servers held back (awaiting approval, denied), reported in every
    /// catalog.
    withheld: Vec<CatalogDiagnostic>,
}

struct RuntimeShared {
    session_id: String,
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    options: RuntimeOptions,
    /// Shared with connect attempts, which hold no strong reference to the
    /// runtime (a slot keeps its attempt).
    connect_limit: Arc<Semaphore>,
    state: Mutex<State>,
    /// Prepared schemas of the last build, reused for unchanged servers.
    schemas: Mutex<SchemaCache>,
}

/// The runtime of one host session.
pub struct SessionRuntime {
    shared: Arc<RuntimeShared>,
}

impl fmt::Debug for SessionRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRuntime")
            .field("session_id", &self.shared.session_id)
            .finish_non_exhaustive()
    }
}

/// What one build learned about one server.
enum ServerOutcome {
    Ready(ServerTools),
    Failed {
        error: CatalogError,
        /// The pause this failure started, if it did.
        pause: Option<CatalogError>,
        /// Set when the server is paused; otherwise it may be retried on
        /// the next attempt.
        paused_until: Option<Instant>,
    },
}

impl SessionRuntime {
    /// A runtime over `servers` (disabled ones are ignored). Connects
    /// nothing yet. Every server given may start: a host holding a
    /// loaded configuration uses [`SessionRuntime::for_servers`] with
    /// [`ServerSet::from_loaded`], which keeps unapproved project servers
    /// out.
    pub fn new(
        session_id: impl Into<String>,
        servers: impl IntoIterator<Item = ServerConfig>,
        connector: Arc<dyn Connector>,
        clock: Arc<dyn Clock>,
        options: RuntimeOptions,
    ) -> Self {
        SessionRuntime::for_servers(
            session_id,
            ServerSet::all(servers),
            connector,
            clock,
            options,
        )
    }

    /// A runtime over the runnable servers of `servers`; the servers it
    /// holds back appear in every catalog's diagnostics. Connects nothing
    /// yet.
    pub fn for_servers(
        session_id: impl Into<String>,
        servers: ServerSet,
        connector: Arc<dyn Connector>,
        clock: Arc<dyn Clock>,
        options: RuntimeOptions,
    ) -> Self {
        let (servers, withheld) = servers.into_parts();
        let mut state = State {
            slots: BTreeMap::new(),
            generation: 0,
            next_epoch: 0,
            cached: None,
            inflight: None,
            last_used: clock.now(),
            in_use: 0,
            shut_down: false,
            retired: Vec::new(),
            withheld,
        };
        for server in servers.into_iter().filter(|s| s.enabled) {
            let epoch = state.take_epoch();
            state
                .slots
                .insert(server.name.clone(), Slot::new(server, epoch));
        }
        let connect_limit = Arc::new(Semaphore::new(options.max_concurrent_connects.max(1)));
        SessionRuntime {
            shared: Arc::new(RuntimeShared {
                session_id: session_id.into(),
                connector,
                clock,
                options,
                connect_limit,
                state: Mutex::new(state),
                schemas: Mutex::new(SchemaCache::default()),
            }),
        }
    }

    /// A runtime on the system clock with default options.
    pub fn with_defaults(
        session_id: impl Into<String>,
        servers: impl IntoIterator<Item = ServerConfig>,
        connector: Arc<dyn Connector>,
    ) -> Self {
        SessionRuntime::new(
            session_id,
            servers,
            connector,
            Arc::new(SystemClock),
            RuntimeOptions::default(),
        )
    }

    /// The session this runtime belongs to.
    pub fn session_id(&self) -> &str {
        &self.shared.session_id
    }

    /// The catalog: cached when still valid, else built (or joined, when a
    /// build is already running).
    pub async fn catalog(&self) -> Result<Arc<Catalog>, CatalogError> {
        let build = {
            let now = self.shared.clock.now();
            let mut state = self.shared.lock();
            if state.shut_down {
                return Err(CatalogError::shut_down(self.shared.session_id.clone()));
            }
            state.last_used = now;
            if let Some(cached) = &state.cached
                && cached.retry_at.is_none_or(|at| now < at)
            {
                return Ok(Arc::clone(&cached.catalog));
            }
            match &state.inflight {
                Some((_, build)) => build.clone(),
                None => {
                    let generation = state.generation;
                    let shared = Arc::clone(&self.shared);
                    let task = tokio::spawn(async move { shared.build(generation).await });
                    let build: SharedBuild = async move {
                        task.await.unwrap_or_else(|error| {
                            Err(CatalogError::new(
                                None,
                                CatalogErrorKind::Request {
                                    operation: "catalog build".into(),
                                    cause: Cause::other(error),
                                },
                            ))
                        })
                    }
                    .boxed()
                    .shared();
                    state.inflight = Some((generation, build.clone()));
                    build
                }
            }
        };
        let result = build.await;
        self.shared.close_retired().await;
        result
    }

    /// Calls a tool of the current catalog by the name the model used.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ModelResult, CatalogError> {
        let catalog = self.catalog().await?;
        let tool = catalog
            .get(name)
            .ok_or_else(|| CatalogError::unknown_tool(name))?;
        self.call_tool(tool, arguments).await
    }

    /// Calls a materialised tool over its server's open session: arguments
    /// are checked against the tool's schema, then the call goes out with
    /// the server's tool-call timeout, subject to its backoff.
    pub async fn call_tool(
        &self,
        tool: &CatalogTool,
        arguments: Value,
    ) -> Result<ModelResult, CatalogError> {
        self.call_tool_with_progress(tool, arguments, None).await
    }

    /// [`SessionRuntime::call_tool`], delivering the server's progress
    /// notifications to `progress`.
    pub async fn call_tool_with_progress(
        &self,
        tool: &CatalogTool,
        arguments: Value,
        progress: Option<ProgressCallback>,
    ) -> Result<ModelResult, CatalogError> {
        let (model, _) = self.invoke(tool, arguments, progress, false).await?;
        Ok(model)
    }

    /// [`SessionRuntime::call_tool_with_progress`], answering with the
    /// server's own result next to the model output (which is the same as
    /// the other calls give).
    pub async fn call_tool_raw(
        &self,
        tool: &CatalogTool,
        arguments: Value,
        progress: Option<ProgressCallback>,
    ) -> Result<ToolCallOutput, CatalogError> {
        let (model, raw) = self.invoke(tool, arguments, progress, true).await?;
        Ok(ToolCallOutput {
            raw: raw.unwrap_or_default(),
            model,
        })
    }

    /// The one call path: check, call (keeping the server's answer when
    /// `keep_raw`), record the outcome, convert.
    async fn invoke(
        &self,
        tool: &CatalogTool,
        arguments: Value,
        progress: Option<ProgressCallback>,
        keep_raw: bool,
    ) -> Result<(ModelResult, Option<Value>), CatalogError> {
        let arguments = tool.prepare_arguments(arguments)?;
        let server = tool.origin().server.as_str();
        let (connection, epoch, timeout) = self.shared.connection_for_call(server).await?;
        let max_bytes = self.shared.options.max_result_bytes;
        let outcome = match &tool.origin().target {
            ToolTarget::Tool { name } if keep_raw => connection
                .call_tool_raw(name, arguments, timeout, progress)
                .await
                .and_then(|raw| Ok((parse_call_result(server, &raw)?, Some(raw)))),
            ToolTarget::Tool { name } => connection
                .call_tool(name, arguments, timeout, progress)
                .await
                .map(|result| (result, None)),
            ToolTarget::Utility { utility } => {
                let call = UtilityCall {
                    connection: connection.as_ref(),
                    server,
                    timeout,
                    max_bytes,
                };
                call.run(*utility, arguments, keep_raw).await
            }
        };
        self.shared.record(server, epoch, outcome.is_ok());
        let (result, raw) = outcome?;
        let converted = convert_result(&result, max_bytes);
        // The server's values may nest any depth; never drop them by
        // recursion.
        dispose_result(result);
        Ok((converted, raw))
    }

    /// Connects `server` (or joins the attempt under way), then counts its
    /// tools, resources and prompts, each list within the entry's request
    /// timeout. Failures are reported, not returned.
    pub async fn probe(&self, server: &str) -> ConnectReport {
        let started = self.shared.clock.now();
        let connected = self.shared.connection_for_call(server).await;
        let mut report = ConnectReport {
            server: server.to_owned(),
            connect_time: self.shared.clock.now().saturating_duration_since(started),
            identity: None,
            counts: None,
            error: None,
        };
        let connection = match connected {
            Ok((connection, _, _)) => connection,
            Err(error) => {
                report.error = Some(error);
                return report;
            }
        };
        report.identity = connection.identity();
        let request = {
            let state = self.shared.lock();
            state
                .slots
                .get(server)
                .map(|slot| slot.config.timeouts.request)
        }
        .unwrap_or(mcp_config::Timeouts::default().request);
        let features = connection.features();
        let counted = async {
            let tools = within(server, "tools/list", request, connection.list_tools())
                .await?
                .len();
            let resources = match features.resources {
                true => {
                    within(
                        server,
                        "resources/list",
                        request,
                        connection.count_resources(),
                    )
                    .await?
                }
                false => 0,
            };
            let prompts = match features.prompts {
                true => within(server, "prompts/list", request, connection.count_prompts()).await?,
                false => 0,
            };
            Ok::<_, CatalogError>(ServerCounts {
                tools,
                resources,
                prompts,
            })
        }
        .await;
        match counted {
            Ok(counts) => report.counts = Some(counts),
            Err(error) => report.error = Some(error),
        }
        report
    }

    /// Drops the cached catalog; the next attempt rebuilds it (reusing
    /// open connections and listings).
    pub fn invalidate(&self) {
        let mut state = self.shared.lock();
        state.invalidate();
    }

    /// Applies a new server list: a server whose entry changed is
    /// reconnected (on the next attempt), a removed one is closed, an
    /// added one is connected on the next attempt, and every other keeps
    /// its session. Returns the names of the servers that changed.
    pub async fn update_servers(
        &self,
        servers: impl IntoIterator<Item = ServerConfig>,
    ) -> Vec<String> {
        self.update_server_set(ServerSet::all(servers)).await
    }

    /// [`SessionRuntime::update_servers`] with servers held back: a server
    /// that lost its approval is closed, one that gained it connects on
    /// the next attempt, and the notes on held-back servers are replaced.
    pub async fn update_server_set(&self, servers: ServerSet) -> Vec<String> {
        let changed = self.shared.update_servers(servers);
        self.shared.close_retired().await;
        changed
    }

    /// Whether a server currently has an open connection.
    pub fn is_connected(&self, server: &str) -> bool {
        let state = self.shared.lock();
        state
            .slots
            .get(server)
            .is_some_and(|slot| slot.connection.is_some())
    }

    /// Closes every connection; later calls fail.
    pub async fn shutdown(&self) {
        self.shared.shutdown().await;
    }
}

impl RuntimeShared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half
        // written in a way later readers would misread, so go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn paused_error(&self, server: &str, paused: Paused) -> CatalogError {
        let now = self.clock.now();
        let retry_in = paused.until.saturating_duration_since(now);
        CatalogError::paused(
            server,
            paused.failures,
            rfc3339(self.clock.wall_now() + retry_in),
            retry_in,
        )
    }

    async fn build(self: Arc<Self>, generation: u64) -> Result<Arc<Catalog>, CatalogError> {
        let servers: Vec<String> = self.lock().slots.keys().cloned().collect();
        let outcomes = futures::future::join_all(
            servers
                .iter()
                .map(|server| Arc::clone(&self).prepare(server)),
        )
        .await;

        let mut listings = Vec::new();
        let mut diagnostics = Vec::new();
        let mut retry_at: Option<Instant> = None;
        let mut required_failure = None;
        let now = self.clock.now();
        for (server, outcome) in servers.iter().zip(outcomes) {
            match outcome {
                Some(ServerOutcome::Ready(listing)) => listings.push(listing),
                Some(ServerOutcome::Failed {
                    error,
                    pause,
                    paused_until,
                }) => {
                    let required = self
                        .lock()
                        .slots
                        .get(server)
                        .is_some_and(|slot| slot.config.required);
                    if required && required_failure.is_none() {
                        required_failure =
                            Some(CatalogError::required_server_failed(error.clone()));
                    }
                    let at = paused_until.unwrap_or(now);
                    retry_at = Some(retry_at.map_or(at, |r| r.min(at)));
                    diagnostics.push(CatalogDiagnostic::server(
                        Level::Error,
                        server,
                        match pause {
                            Some(pause) => {
                                format!("server {server:?} is unavailable: {error}; {pause}")
                            }
                            None => format!("server {server:?} is unavailable: {error}"),
                        },
                    ));
                }
                // removed while the build ran
                None => {}
            }
        }

        let result = match required_failure {
            Some(error) => Err(error),
            None => {
                let mut catalog = {
                    let mut cache = self.schemas.lock().unwrap_or_else(|e| e.into_inner());
                    materialize_cached(&listings, &self.options.materialize, &mut cache)
                };
                diagnostics.extend(self.lock().withheld.iter().cloned());
                catalog.push_diagnostics(diagnostics);
                Ok(Arc::new(catalog))
            }
        };

        let mut state = self.lock();
        if state
            .inflight
            .as_ref()
            .is_some_and(|(g, _)| *g == generation)
        {
            state.inflight = None;
        }
        if let Ok(catalog) = &result
            && state.generation == generation
            && !state.shut_down
        {
            state.cached = Some(CachedCatalog {
                catalog: Arc::clone(catalog),
                retry_at,
            });
        }
        result
    }

    /// Connects a server if needed and lists its tools if needed. `None`
    /// when the server was removed meanwhile.
    async fn prepare(self: Arc<Self>, server: &str) -> Option<ServerOutcome> {
        let (config, epoch, connection, tools, tools_epoch) = {
            let now = self.clock.now();
            let mut state = self.lock();
            let slot = state.slots.get_mut(server)?;
            if let (Some(connection), Some(tools)) = (&slot.connection, &slot.tools) {
                return Some(ServerOutcome::Ready(
                    slot.listing(connection.features(), tools),
                ));
            }
            if let Err(paused) = slot.backoff.admit(now, self.options.backoff) {
                let until = slot.backoff.paused_until(now).unwrap_or(paused.until);
                return Some(ServerOutcome::Failed {
                    error: self.paused_error(server, paused),
                    pause: None,
                    paused_until: Some(until),
                });
            }
            (
                slot.config.clone(),
                slot.epoch,
                slot.connection.clone(),
                slot.tools.clone(),
                slot.tools_epoch,
            )
        };

        let connection = match connection {
            Some(connection) => connection,
            None => match self.connect(&config, epoch).await {
                Ok(connection) => connection,
                Err(error) => return Some(self.failed(server, error)),
            },
        };

        let tools = match tools {
            Some(tools) => tools,
            None => {
                let listed =
                    match tokio::time::timeout(config.timeouts.request, connection.list_tools())
                        .await
                    {
                        Ok(result) => result,
                        Err(_) => Err(CatalogError::request(
                            server,
                            "tools/list",
                            Cause::TimedOut(config.timeouts.request),
                        )),
                    };
                match listed {
                    Ok(mut tools) => {
                        let max_depth = self
                            .options
                            .materialize
                            .schema_limits
                            .max_depth
                            .min(MAX_JSON_DEPTH);
                        defuse_listing(&mut tools, max_depth);
                        let tools: Arc<[Tool]> = Arc::from(tools);
                        let mut state = self.lock();
                        if let Some(slot) = state.slots.get_mut(server)
                            && slot.epoch == epoch
                            && slot.tools_epoch == tools_epoch
                        {
                            slot.tools = Some(Arc::clone(&tools));
                        }
                        tools
                    }
                    Err(error) => {
                        // A failed listing often means a dead session:
                        // start over with a fresh connection next time.
                        let mut state = self.lock();
                        if let Some(slot) = state.slots.get_mut(server)
                            && slot.epoch == epoch
                        {
                            if let Some(old) = slot.connection.take() {
                                state.retired.push(old);
                            }
                            state.bump_epoch(server);
                        }
                        drop(state);
                        self.record_failure_any_epoch(server);
                        return Some(self.failed(server, error));
                    }
                }
            }
        };
        self.record(server, epoch, true);
        let state = self.lock();
        let slot = state.slots.get(server)?;
        Some(ServerOutcome::Ready(ServerTools {
            server: server.to_owned(),
            tools,
            filter: slot.config.tool_filter.clone(),
            features: connection.features(),
        }))
    }

    fn failed(&self, server: &str, error: CatalogError) -> ServerOutcome {
        let now = self.clock.now();
        let state = self.lock();
        let slot = state.slots.get(server);
        let paused_until = slot.and_then(|slot| slot.backoff.paused_until(now));
        let pause = match (paused_until, slot) {
            (Some(until), Some(slot)) => Some(self.paused_error(
                server,
                Paused {
                    until,
                    failures: slot.backoff.failures(),
                },
            )),
            _ => None,
        };
        ServerOutcome::Failed {
            error,
            pause,
            paused_until,
        }
    }

    /// The slot's connection: the open one, the attempt under way (joined),
    /// or a new attempt, which then stores its connection in the slot.
    /// A failed attempt counts once in the server's backoff, however many
    /// callers shared it.
    async fn connect(
        self: &Arc<Self>,
        config: &ServerConfig,
        epoch: u64,
    ) -> Result<Arc<dyn Connection>, CatalogError> {
        let server = config.name.as_str();
        let attempt = {
            let mut guard = self.lock();
            let state = &mut *guard;
            if state.shut_down {
                return Err(CatalogError::shut_down(self.session_id.clone()));
            }
            let Some(slot) = state.current_slot(server, epoch) else {
                return Err(entry_changed(server));
            };
            if let Some(existing) = &slot.connection {
                return Ok(Arc::clone(existing));
            }
            match &slot.connecting {
                Some(attempt) => attempt.clone(),
                None => {
                    let attempt = ConnectAttempt {
                        runtime: Arc::downgrade(self),
                        session_id: self.session_id.clone(),
                        connector: Arc::clone(&self.connector),
                        limit: Arc::clone(&self.connect_limit),
                        config: config.clone(),
                        epoch,
                    }
                    .run()
                    .boxed()
                    .shared();
                    slot.connecting = Some(attempt.clone());
                    attempt
                }
            }
        };
        attempt.await
    }

    /// Stores the outcome of a connect attempt in the slot of `epoch`.
    fn connected(
        &self,
        server: &str,
        epoch: u64,
        outcome: Result<Arc<dyn Connection>, CatalogError>,
    ) -> Result<Arc<dyn Connection>, CatalogError> {
        let mut guard = self.lock();
        let state = &mut *guard;
        let shut_down = state.shut_down;
        let current = state
            .slots
            .get_mut(server)
            .filter(|slot| slot.epoch == epoch && !shut_down);
        match (current, outcome) {
            (Some(slot), Ok(connection)) => {
                slot.connecting = None;
                match &slot.connection {
                    // Stored meanwhile (the attempt was replaced); keep it.
                    Some(existing) => {
                        let existing = Arc::clone(existing);
                        state.retired.push(connection);
                        Ok(existing)
                    }
                    None => {
                        slot.connection = Some(Arc::clone(&connection));
                        Ok(connection)
                    }
                }
            }
            (Some(slot), Err(error)) => {
                slot.connecting = None;
                slot.backoff.fail(self.clock.now(), self.options.backoff);
                Err(error)
            }
            (None, Ok(connection)) => {
                state.retired.push(connection);
                Err(entry_changed(server))
            }
            (None, Err(error)) => Err(error),
        }
    }

    /// The open connection for a call, connecting first if needed.
    async fn connection_for_call(
        self: &Arc<Self>,
        server: &str,
    ) -> Result<(Arc<dyn Connection>, u64, Duration), CatalogError> {
        let (config, epoch, connection) = {
            let now = self.clock.now();
            let mut state = self.lock();
            if state.shut_down {
                return Err(CatalogError::shut_down(self.session_id.clone()));
            }
            state.last_used = now;
            let slot = state
                .slots
                .get_mut(server)
                .ok_or_else(|| CatalogError::unknown_server(server))?;
            if let Err(paused) = slot.backoff.admit(now, self.options.backoff) {
                return Err(self.paused_error(server, paused));
            }
            (slot.config.clone(), slot.epoch, slot.connection.clone())
        };
        let connection = match connection {
            Some(connection) => connection,
            None => self.connect(&config, epoch).await?,
        };
        Ok((connection, epoch, config.timeouts.tool_call))
    }

    /// Records the outcome of an attempt in the server's backoff, if the
    /// slot is still the one the attempt used.
    fn record(&self, server: &str, epoch: u64, ok: bool) {
        let now = self.clock.now();
        let mut state = self.lock();
        if let Some(slot) = state.slots.get_mut(server)
            && slot.epoch == epoch
        {
            if ok {
                slot.backoff.succeed();
            } else {
                slot.backoff.fail(now, self.options.backoff);
            }
        }
    }

    fn record_failure_any_epoch(&self, server: &str) {
        let now = self.clock.now();
        let mut state = self.lock();
        if let Some(slot) = state.slots.get_mut(server) {
            slot.backoff.fail(now, self.options.backoff);
        }
    }

    fn on_tools_changed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        slot.tools = None;
        slot.tools_epoch += 1;
        state.invalidate();
    }

    fn on_closed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        slot.connection = None;
        slot.tools = None;
        state.bump_epoch(server);
        state.invalidate();
    }

    fn update_servers(&self, servers: ServerSet) -> Vec<String> {
        let (servers, withheld) = servers.into_parts();
        let wanted: BTreeMap<String, ServerConfig> = servers
            .into_iter()
            .filter(|s| s.enabled)
            .map(|s| (s.name.clone(), s))
            .collect();
        let mut state = self.lock();
        let mut changed = Vec::new();
        if state.withheld != withheld {
            state.withheld = withheld;
            state.invalidate();
        }
        let removed: Vec<String> = state
            .slots
            .keys()
            .filter(|name| !wanted.contains_key(*name))
            .cloned()
            .collect();
        for name in removed {
            if let Some(slot) = state.slots.remove(&name) {
                state.retired.extend(slot.connection);
            }
            changed.push(name);
        }
        for (name, config) in wanted {
            let hash = mcp_config::config_hash(&config);
            let same = state
                .slots
                .get(&name)
                .is_some_and(|slot| slot.config_hash == hash);
            if same {
                continue;
            }
            let epoch = state.take_epoch();
            if let Some(old) = state.slots.insert(name.clone(), Slot::new(config, epoch)) {
                state.retired.extend(old.connection);
            }
            changed.push(name);
        }
        if !changed.is_empty() {
            state.invalidate();
        }
        changed.sort();
        changed
    }

    async fn close_retired(&self) {
        let retired = std::mem::take(&mut self.lock().retired);
        futures::future::join_all(retired.iter().map(|c| c.close())).await;
    }

    async fn shutdown(&self) {
        let connections: Vec<Arc<dyn Connection>> = {
            let mut state = self.lock();
            state.shut_down = true;
            state.cached = None;
            state.inflight = None;
            state.invalidate();
            let mut all = std::mem::take(&mut state.retired);
            for slot in state.slots.values_mut() {
                slot.tools = None;
                // Dropping an attempt under way cancels it.
                slot.connecting = None;
                all.extend(slot.connection.take());
            }
            all
        };
        self.connect_limit.close();
        futures::future::join_all(connections.iter().map(|c| c.close())).await;
    }

    fn is_idle(&self, now: Instant) -> bool {
        let ttl = self.options.idle_ttl;
        if ttl.is_zero() {
            return false;
        }
        let state = self.lock();
        state.in_use == 0
            && state.inflight.is_none()
            && now.saturating_duration_since(state.last_used) >= ttl
    }
}

/// What a connect attempt needs, without a strong reference to its
/// runtime: the slot that keeps the attempt must not keep the runtime.
struct ConnectAttempt {
    runtime: Weak<RuntimeShared>,
    session_id: String,
    connector: Arc<dyn Connector>,
    limit: Arc<Semaphore>,
    config: ServerConfig,
    epoch: u64,
}

impl ConnectAttempt {
    async fn run(self) -> Result<Arc<dyn Connection>, CatalogError> {
        let outcome = self.open().await;
        match self.runtime.upgrade() {
            Some(runtime) => runtime.connected(&self.config.name, self.epoch, outcome),
            None => {
                if let Ok(connection) = outcome {
                    connection.close().await;
                }
                Err(CatalogError::shut_down(self.session_id))
            }
        }
    }

    /// Connects within the entry's connect timeout, under the runtime's
    /// connect limit.
    async fn open(&self) -> Result<Arc<dyn Connection>, CatalogError> {
        let server = self.config.name.as_str();
        let _permit = self
            .limit
            .acquire()
            .await
            .map_err(|_| CatalogError::shut_down(self.session_id.clone()))?;
        let events = ServerEvents {
            runtime: self.runtime.clone(),
            server: server.to_owned(),
            epoch: self.epoch,
        };
        let timeout = self.config.timeouts.connect;
        match tokio::time::timeout(timeout, self.connector.connect(&self.config, events)).await {
            Ok(result) => result,
            Err(_) => Err(CatalogError::connect(server, Cause::TimedOut(timeout))),
        }
    }
}

fn entry_changed(server: &str) -> CatalogError {
    CatalogError::connect(server, Cause::EntryChanged)
}

impl State {
    fn take_epoch(&mut self) -> u64 {
        self.next_epoch += 1;
        self.next_epoch
    }

    /// The server's slot, if `epoch` is still its connection's epoch: an
    /// event from a replaced connection changes nothing.
    fn current_slot(&mut self, server: &str, epoch: u64) -> Option<&mut Slot> {
        self.slots
            .get_mut(server)
            .filter(|slot| slot.epoch == epoch)
    }

    fn bump_epoch(&mut self, server: &str) {
        let epoch = self.take_epoch();
        if let Some(slot) = self.slots.get_mut(server) {
            slot.epoch = epoch;
            slot.connecting = None;
        }
    }

    fn invalidate(&mut self) {
        self.generation += 1;
        self.cached = None;
        // A running build stays shared until it ends, but is not cached.
        self.inflight = None;
    }
}

impl Slot {
    fn new(config: ServerConfig, epoch: u64) -> Self {
        Slot {
            config_hash: mcp_config::config_hash(&config),
            config,
            epoch,
            connection: None,
            connecting: None,
            tools: None,
            tools_epoch: 0,
            backoff: Backoff::default(),
        }
    }

    fn listing(&self, features: ServerFeatures, tools: &Arc<[Tool]>) -> ServerTools {
        ServerTools {
            server: self.config.name.clone(),
            tools: Arc::clone(tools),
            filter: self.config.tool_filter.clone(),
            features,
        }
    }
}

/// Turns a utility's answer into content blocks, cut near a byte cap.
type Shape = fn(&Value, usize) -> Vec<Value>;

/// `future`, failing with a timeout error naming `operation` after
/// `timeout`.
async fn within<T>(
    server: &str,
    operation: &str,
    timeout: Duration,
    future: impl std::future::Future<Output = Result<T, CatalogError>>,
) -> Result<T, CatalogError> {
    match tokio::time::timeout(timeout, future).await {
        Ok(result) => result,
        Err(_) => Err(CatalogError::request(
            server,
            operation,
            Cause::TimedOut(timeout),
        )),
    }
}

/// A `tools/call` result as the server sent it, read without recursion
/// limits (it may nest as deep as the transport allows).
fn parse_call_result(server: &str, raw: &Value) -> Result<CallToolResult, CatalogError> {
    use serde::Deserialize as _;
    CallToolResult::deserialize(serde_stacker::Deserializer::new(raw)).map_err(|error| {
        CatalogError::request(server, "tools/call", Cause::InvalidResult(Arc::new(error)))
    })
}

/// One utility call: the request it stands for, within the tool-call
/// timeout, shaped into content blocks.
struct UtilityCall<'a> {
    connection: &'a dyn Connection,
    server: &'a str,
    timeout: Duration,
    max_bytes: usize,
}

impl UtilityCall<'_> {
    async fn run(
        &self,
        utility: UtilityTool,
        arguments: Value,
        keep_raw: bool,
    ) -> Result<(CallToolResult, Option<Value>), CatalogError> {
        let string_arg = |name: &str| {
            arguments
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let connection = self.connection;
        let (result, shape): (Value, Shape) = match utility {
            UtilityTool::ResourcesList => (
                self.within(
                    "resources/list",
                    connection.list_resources(string_arg("cursor")),
                )
                .await?,
                |result, max_bytes| vec![json_text(result, max_bytes)],
            ),
            UtilityTool::PromptsList => (
                self.within(
                    "prompts/list",
                    connection.list_prompts(string_arg("cursor")),
                )
                .await?,
                |result, max_bytes| vec![json_text(result, max_bytes)],
            ),
            UtilityTool::ResourcesRead => {
                let uri = string_arg("uri").unwrap_or_default();
                (
                    self.within("resources/read", connection.read_resource(&uri))
                        .await?,
                    resource_contents,
                )
            }
            UtilityTool::PromptsGet => {
                let name = string_arg("name").unwrap_or_default();
                let arguments = prompt_arguments(arguments.get("arguments"));
                (
                    self.within("prompts/get", connection.get_prompt(&name, arguments))
                        .await?,
                    prompt_messages,
                )
            }
        };
        // Shaping copies parts of the answer, which recurses: an answer too
        // deep for that is shown as JSON text, written without recursion.
        let content = if deep::exceeds_depth(&result, MAX_JSON_DEPTH) {
            vec![json_text(&result, self.max_bytes)]
        } else {
            shape(&result, self.max_bytes)
        };
        let raw = if keep_raw {
            Some(result)
        } else {
            deep::dispose(result);
            None
        };
        let result = CallToolResult {
            content,
            structured_content: None,
            is_error: false,
        };
        Ok((result, raw))
    }

    async fn within<T>(
        &self,
        operation: &str,
        future: impl std::future::Future<Output = Result<T, CatalogError>>,
    ) -> Result<T, CatalogError> {
        within(self.server, operation, self.timeout, future).await
    }
}

/// A value as pretty JSON text, cut soon after `max_bytes` (the result
/// is cut there with a note anyway).
fn json_text(value: &Value, max_bytes: usize) -> Value {
    json!({"type": "text", "text": deep::to_json_capped(value, true, max_bytes.saturating_add(1))})
}

/// `resources/read` contents as content blocks: text stays text, an image
/// blob becomes an image, any other blob its uri.
fn resource_contents(result: &Value, max_bytes: usize) -> Vec<Value> {
    let Some(contents) = result.get("contents").and_then(Value::as_array) else {
        return vec![json_text(result, max_bytes)];
    };
    contents
        .iter()
        .map(|item| {
            let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
            match (item.get("text"), item.get("blob")) {
                (Some(_), _) => json!({"type": "resource", "resource": item}),
                (None, Some(blob)) if mime.starts_with("image/") => {
                    json!({"type": "image", "data": blob, "mimeType": mime})
                }
                _ => json!({"type": "resource", "resource": item}),
            }
        })
        .collect()
}

/// `prompts/get` messages as content blocks, text prefixed by the role.
fn prompt_messages(result: &Value, max_bytes: usize) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(description) = result.get("description").and_then(Value::as_str) {
        blocks.push(json!({"type": "text", "text": description}));
    }
    let Some(messages) = result.get("messages").and_then(Value::as_array) else {
        return vec![json_text(result, max_bytes)];
    };
    for message in messages {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let mut content = message.get("content").cloned().unwrap_or(Value::Null);
        if let Some(Value::String(text)) = content.get_mut("text") {
            *text = format!("{role}: {text}");
        }
        blocks.push(content);
    }
    blocks
}

/// Prompt arguments from the `[{name, value}]` list the utility schema
/// asks for (an object is accepted too).
fn prompt_arguments(value: Option<&Value>) -> Map<String, Value> {
    match value {
        Some(Value::Object(map)) => map.clone(),
        Some(Value::Array(pairs)) => pairs
            .iter()
            .filter_map(|pair| {
                let name = pair.get("name")?.as_str()?;
                let value = pair.get("value")?.clone();
                Some((name.to_owned(), value))
            })
            .collect(),
        _ => Map::new(),
    }
}

struct ManagerShared {
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    options: RuntimeOptions,
    servers: Mutex<ServerSet>,
    runtimes: Mutex<HashMap<String, Arc<SessionRuntime>>>,
}

/// The runtimes of every session, keyed by session id.
#[derive(Clone)]
pub struct RuntimeManager {
    shared: Arc<ManagerShared>,
}

impl fmt::Debug for RuntimeManager {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeManager").finish_non_exhaustive()
    }
}

/// A runtime in use. While a lease is alive its runtime is never evicted;
/// dropping it counts as the runtime's last use.
pub struct RuntimeLease {
    runtime: Arc<SessionRuntime>,
}

impl fmt::Debug for RuntimeLease {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("RuntimeLease").field(&self.runtime).finish()
    }
}

impl Deref for RuntimeLease {
    type Target = SessionRuntime;

    fn deref(&self) -> &SessionRuntime {
        &self.runtime
    }
}

impl Drop for RuntimeLease {
    fn drop(&mut self) {
        let shared = &self.runtime.shared;
        let now = shared.clock.now();
        let mut state = shared.lock();
        state.in_use = state.in_use.saturating_sub(1);
        state.last_used = now;
    }
}

impl RuntimeManager {
    /// A manager whose sessions all use `servers` (every one may start;
    /// see [`RuntimeManager::for_servers`]).
    pub fn new(
        servers: Vec<ServerConfig>,
        connector: Arc<dyn Connector>,
        clock: Arc<dyn Clock>,
        options: RuntimeOptions,
    ) -> Self {
        RuntimeManager::for_servers(ServerSet::all(servers), connector, clock, options)
    }

    /// A manager whose sessions all use the runnable servers of `servers`
    /// and report the held-back ones in their catalogs' diagnostics.
    pub fn for_servers(
        servers: ServerSet,
        connector: Arc<dyn Connector>,
        clock: Arc<dyn Clock>,
        options: RuntimeOptions,
    ) -> Self {
        RuntimeManager {
            shared: Arc::new(ManagerShared {
                connector,
                clock,
                options,
                servers: Mutex::new(servers),
                runtimes: Mutex::new(HashMap::new()),
            }),
        }
    }

    fn runtimes(&self) -> MutexGuard<'_, HashMap<String, Arc<SessionRuntime>>> {
        self.shared
            .runtimes
            .lock()
            .unwrap_or_else(|e| e.into_inner())
    }

    /// The runtime of `session_id`, made on first use. Making one connects
    /// nothing.
    pub fn lease(&self, session_id: &str) -> RuntimeLease {
        let runtime = {
            let mut runtimes = self.runtimes();
            let runtime = runtimes.entry(session_id.to_owned()).or_insert_with(|| {
                let servers = self
                    .shared
                    .servers
                    .lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .clone();
                Arc::new(SessionRuntime::for_servers(
                    session_id,
                    servers,
                    Arc::clone(&self.shared.connector),
                    Arc::clone(&self.shared.clock),
                    self.shared.options.clone(),
                ))
            });
            Arc::clone(runtime)
        };
        let now = self.shared.clock.now();
        {
            let mut state = runtime.shared.lock();
            state.in_use += 1;
            state.last_used = now;
        }
        RuntimeLease { runtime }
    }

    /// Ids of the live sessions, sorted.
    pub fn session_ids(&self) -> Vec<String> {
        let mut ids: Vec<String> = self.runtimes().keys().cloned().collect();
        ids.sort();
        ids
    }

    /// Evicts every runtime unused for the idle TTL and not in use, closing
    /// its connections. Returns the evicted session ids, sorted.
    pub async fn evict_idle(&self) -> Vec<String> {
        let now = self.shared.clock.now();
        let evicted: Vec<(String, Arc<SessionRuntime>)> = {
            let mut runtimes = self.runtimes();
            let idle: Vec<String> = runtimes
                .iter()
                .filter(|(_, runtime)| runtime.shared.is_idle(now))
                .map(|(id, _)| id.clone())
                .collect();
            idle.into_iter()
                .filter_map(|id| runtimes.remove(&id).map(|runtime| (id, runtime)))
                .collect()
        };
        futures::future::join_all(evicted.iter().map(|(_, runtime)| runtime.shutdown())).await;
        let mut ids: Vec<String> = evicted.into_iter().map(|(id, _)| id).collect();
        ids.sort();
        ids
    }

    /// Runs [`RuntimeManager::evict_idle`] every `every` until the manager
    /// is dropped.
    pub fn spawn_idle_sweeper(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.shared);
        tokio::spawn(async move {
            let mut interval = tokio::time::interval(every);
            interval.tick().await;
            loop {
                interval.tick().await;
                let Some(shared) = weak.upgrade() else {
                    return;
                };
                RuntimeManager { shared }.evict_idle().await;
            }
        })
    }

    /// Applies a new server list to every session: only servers whose
    /// entry changed reconnect. Returns the changed names per session.
    pub async fn update_servers(
        &self,
        servers: Vec<ServerConfig>,
    ) -> BTreeMap<String, Vec<String>> {
        self.update_server_set(ServerSet::all(servers)).await
    }

    /// [`RuntimeManager::update_servers`] with servers held back (see
    /// [`SessionRuntime::update_server_set`]).
    pub async fn update_server_set(&self, servers: ServerSet) -> BTreeMap<String, Vec<String>> {
        *self
            .shared
            .servers
            .lock()
            .unwrap_or_else(|e| e.into_inner()) = servers.clone();
        let runtimes: Vec<(String, Arc<SessionRuntime>)> = self
            .runtimes()
            .iter()
            .map(|(id, runtime)| (id.clone(), Arc::clone(runtime)))
            .collect();
        let mut changed = BTreeMap::new();
        for (id, runtime) in runtimes {
            changed.insert(id, runtime.update_server_set(servers.clone()).await);
        }
        changed
    }

    /// Closes every session.
    pub async fn shutdown(&self) {
        let runtimes: Vec<Arc<SessionRuntime>> = self.runtimes().drain().map(|(_, r)| r).collect();
        futures::future::join_all(runtimes.iter().map(|runtime| runtime.shutdown())).await;
    }
}
