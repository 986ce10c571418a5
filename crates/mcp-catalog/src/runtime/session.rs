//! The runtime of one host session: a slot per server (its config, its
//! connection or the connect attempt under way, its listing, its backoff),
//! the shared in-flight build, the cached catalog, and calls over the open
//! connections.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};

use futures::future::{BoxFuture, FutureExt, Shared};
use mcp_config::{DEFAULT_SESSION_IDLE_TTL, ServerConfig};
use mcp_transport::Tool;
use mcp_transport::{ProgressCallback, RejectedTool};
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::backoff::{Backoff, BackoffPolicy, Paused};
use crate::catalog::{
    Catalog, CatalogDiagnostic, CatalogTool, MaterializeOptions, PreparedArguments, SchemaCache,
    ServerFeatures, ServerTools, ToolTarget,
};
use crate::clock::{Clock, SystemClock, rfc3339};
use crate::error::{CatalogError, CatalogErrorKind, Cause};
use crate::result::{
    DEFAULT_MAX_RESULT_BYTES, ModelBlock, ModelResult, ResultStatus, convert_result_owned,
    dispose_result,
};
use crate::search::{self, SEARCH_TOOLS_NAME, ToolBudget};
use crate::servers::ServerSet;

use super::connection::{ConnectReport, Connection, Connector, ServerCounts, ToolCallOutput};
use super::listings::SharedListings;
use super::subscribe::UpdateSender;
use super::utility::{UtilityCall, parse_call_result, within};

/// Default number of servers one build connects at the same time.
pub const DEFAULT_MAX_CONCURRENT_CONNECTS: usize = 32;
/// Settings of a runtime, chosen by the host: how the catalog is
/// materialised, how many servers connect at once, when an unused runtime
/// is evicted, how failing servers back off and how large a converted
/// result may be.
///
/// Built from [`RuntimeOptions::default`] (or [`RuntimeOptions::new`],
/// the same) and the `with_*` methods, so new settings can be added
/// without breaking hosts:
///
/// ```
/// use std::time::Duration;
/// use mcp_catalog::{MaterializeOptions, NamingStyle, RuntimeOptions};
///
/// let options = RuntimeOptions::new()
///     .with_materialize(MaterializeOptions::new().with_style(NamingStyle::OpenClaw))
///     .with_idle_ttl(Duration::from_secs(300));
/// assert_eq!(options.materialize.style, NamingStyle::OpenClaw);
/// ```
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct RuntimeOptions {
    /// How every catalog of this runtime is materialised (naming,
    /// provider profile, reserved names, budget).
    pub materialize: MaterializeOptions,
    /// Servers one build connects at the same time.
    pub max_concurrent_connects: usize,
    /// A runtime unused this long is evicted; zero never evicts.
    pub idle_ttl: Duration,
    /// When a failing server is paused, and for how long.
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

impl RuntimeOptions {
    /// The defaults: default materialisation, up to
    /// [`DEFAULT_MAX_CONCURRENT_CONNECTS`] connects at once, the
    /// configuration's default idle TTL, the default backoff and
    /// [`DEFAULT_MAX_RESULT_BYTES`](crate::DEFAULT_MAX_RESULT_BYTES).
    pub fn new() -> Self {
        RuntimeOptions::default()
    }

    /// The same options, materialising with `materialize`.
    pub fn with_materialize(mut self, materialize: MaterializeOptions) -> Self {
        self.materialize = materialize;
        self
    }

    /// The same options, connecting at most `limit` servers at once
    /// (zero counts as one).
    pub fn with_max_concurrent_connects(mut self, limit: usize) -> Self {
        self.max_concurrent_connects = limit;
        self
    }

    /// The same options, evicting a runtime unused for `ttl` (zero never
    /// evicts).
    pub fn with_idle_ttl(mut self, ttl: Duration) -> Self {
        self.idle_ttl = ttl;
        self
    }

    /// The same options, pausing failing servers by `backoff`.
    pub fn with_backoff(mut self, backoff: BackoffPolicy) -> Self {
        self.backoff = backoff;
        self
    }

    /// The same options, cutting one converted result at `max_bytes`.
    pub fn with_max_result_bytes(mut self, max_bytes: usize) -> Self {
        self.max_result_bytes = max_bytes;
        self
    }
}

/// How a [`SessionRuntime`] is made: the session id, the servers and the
/// connector are required ([`SessionRuntime::builder`]); the clock
/// (default [`SystemClock`]) and the options (default
/// [`RuntimeOptions::default`]) are optional. Building connects nothing.
#[must_use = "a builder does nothing until `build` is called"]
pub struct SessionRuntimeBuilder {
    session_id: String,
    servers: ServerSet,
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    options: RuntimeOptions,
}

impl fmt::Debug for SessionRuntimeBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRuntimeBuilder")
            .field("session_id", &self.session_id)
            .field("servers", &self.servers)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl SessionRuntimeBuilder {
    /// Keeps time through `clock` (a [`crate::ManualClock`] in tests, so
    /// eviction and backoff run without waiting).
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Uses `options` instead of the defaults.
    pub fn with_options(mut self, options: RuntimeOptions) -> Self {
        self.options = options;
        self
    }

    /// The runtime. Connects nothing yet: the first
    /// [`SessionRuntime::catalog`] does.
    pub fn build(self) -> SessionRuntime {
        SessionRuntime::sharing(
            self.session_id,
            self.servers,
            self.connector,
            self.clock,
            self.options,
            Arc::default(),
        )
    }
}

pub(super) type SharedBuild = Shared<BoxFuture<'static, Result<Arc<Catalog>, CatalogError>>>;

/// One connect attempt, shared by every caller that needs the server
/// while it runs, so a server is never opened twice at once.
pub(super) type SharedConnect =
    Shared<BoxFuture<'static, Result<Arc<dyn Connection>, CatalogError>>>;

pub(super) struct Slot {
    pub(super) config: ServerConfig,
    /// `config_hash` of the entry: a changed hash reconnects the server.
    pub(super) config_hash: String,
    /// Changes whenever the slot gets a new config or connection.
    pub(super) epoch: u64,
    pub(super) connection: Option<Arc<dyn Connection>>,
    /// The connect attempt under way for this epoch, if any.
    pub(super) connecting: Option<SharedConnect>,
    pub(super) tools: Option<Arc<[Tool]>>,
    /// When `tools` stops being fresh (the server's `ttlMs`); `None`
    /// keeps it until `list_changed`.
    pub(super) tools_fresh_until: Option<Instant>,
    /// Tools that listing left out, and why (reported in every catalog
    /// built from it).
    pub(super) rejected: Vec<RejectedTool>,
    /// Bumped by `list_changed`; a listing that started before is stale.
    pub(super) tools_epoch: u64,
    /// Whether the server lists any resources or prompts (so it gets
    /// their utility tools); `None` until checked, and again after a
    /// resources or prompts `list_changed`.
    pub(super) offered: Option<Offered>,
    /// Bumped by a resources or prompts `list_changed`; a check that
    /// started before is stale.
    pub(super) offered_epoch: u64,
    pub(super) backoff: Backoff,
    /// Since when a build has been connecting or listing this server.
    pub(super) waiting_since: Option<Instant>,
}

/// What a server offers besides tools, as its first pages showed.
#[derive(Debug, Clone, Default)]
pub(super) struct Offered {
    /// An announced capability with at least one item listed.
    pub(super) features: ServerFeatures,
    /// What the check found worth saying (an empty or failed list).
    pub(super) notes: Vec<CatalogDiagnostic>,
}

pub(super) struct CachedCatalog {
    pub(super) catalog: Arc<Catalog>,
    /// When a server that failed may be tried again; `None` when none
    /// failed.
    pub(super) retry_at: Option<Instant>,
    /// When the first of its listings stops being fresh; `None` when
    /// none has a TTL.
    pub(super) fresh_until: Option<Instant>,
}

pub(super) struct State {
    pub(super) slots: BTreeMap<String, Slot>,
    pub(super) generation: u64,
    pub(super) next_epoch: u64,
    pub(super) cached: Option<CachedCatalog>,
    pub(super) inflight: Option<(u64, SharedBuild)>,
    pub(super) last_used: Instant,
    pub(super) in_use: usize,
    pub(super) shut_down: bool,
    /// Connections taken out of slots, waiting to be closed.
    pub(super) retired: Vec<Arc<dyn Connection>>,
    /// Servers held back (awaiting approval, denied), reported in every
    /// catalog.
    pub(super) withheld: Vec<CatalogDiagnostic>,
    /// The host's budget for tool definitions (starting as the options').
    pub(super) budget: Option<ToolBudget>,
    /// Tools loaded on request (`search_tools`, [`SessionRuntime::load_tools`]),
    /// kept loaded past the budget like pinned ones.
    pub(super) requested: BTreeSet<String>,
    /// Where every invalidation announces the new generation.
    pub(super) updates: UpdateSender,
}

pub(super) struct RuntimeShared {
    pub(super) session_id: String,
    pub(super) connector: Arc<dyn Connector>,
    pub(super) clock: Arc<dyn Clock>,
    pub(super) options: RuntimeOptions,
    /// Shared with connect attempts, which hold no strong reference to the
    /// runtime (a slot keeps its attempt).
    pub(super) connect_limit: Arc<Semaphore>,
    pub(super) state: Mutex<State>,
    /// Prepared schemas of the last build, reused for unchanged servers.
    pub(super) schemas: Mutex<SchemaCache>,
    /// Public listings, shared with the other runtimes of a manager (a
    /// runtime made alone shares with no one).
    pub(super) listings: Arc<SharedListings>,
}

/// The runtime of one host session.
pub struct SessionRuntime {
    pub(super) shared: Arc<RuntimeShared>,
}

impl fmt::Debug for SessionRuntime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SessionRuntime")
            .field("session_id", &self.shared.session_id)
            .finish_non_exhaustive()
    }
}

/// What one build learned about one server.
pub(super) enum ServerOutcome {
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
    /// Starts making a runtime for the session `session_id` over the
    /// runnable servers of `servers` (disabled ones are ignored; the ones
    /// it holds back appear in every catalog's diagnostics), connecting
    /// through `connector`.
    ///
    /// A host holding a loaded configuration passes
    /// [`ServerSet::from_loaded`], which keeps project servers awaiting
    /// approval (or denied) from starting; [`ServerSet::all`] starts every
    /// server given.
    pub fn builder(
        session_id: impl Into<String>,
        servers: ServerSet,
        connector: Arc<dyn Connector>,
    ) -> SessionRuntimeBuilder {
        SessionRuntimeBuilder {
            session_id: session_id.into(),
            servers,
            connector,
            clock: Arc::new(SystemClock),
            options: RuntimeOptions::default(),
        }
    }

    /// A runtime over `servers`, sharing public listings through
    /// `listings`.
    pub(super) fn sharing(
        session_id: impl Into<String>,
        servers: ServerSet,
        connector: Arc<dyn Connector>,
        clock: Arc<dyn Clock>,
        options: RuntimeOptions,
        listings: Arc<SharedListings>,
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
            budget: options.materialize.budget.clone(),
            requested: BTreeSet::new(),
            updates: UpdateSender::new(0),
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
                listings,
            }),
        }
    }

    /// The session this runtime belongs to.
    pub fn session_id(&self) -> &str {
        &self.shared.session_id
    }

    /// The catalog: cached when still valid, else built (or joined, when a
    /// build is already running). A catalog one of whose listings is past
    /// its TTL is built again, listing only the servers whose TTL ran out.
    pub async fn catalog(&self) -> Result<Arc<Catalog>, CatalogError> {
        self.catalog_within(true).await
    }

    /// [`SessionRuntime::catalog`]; with `fresh` false a cached catalog is
    /// kept past its listings' TTL. A call by name takes that one: the
    /// tool it names was offered to the model from it, and a stale
    /// listing is refreshed when the next catalog is asked for.
    async fn catalog_within(&self, fresh: bool) -> Result<Arc<Catalog>, CatalogError> {
        let build = {
            let now = self.shared.clock.now();
            let mut state = self.shared.lock();
            if state.shut_down {
                return Err(CatalogError::shut_down(self.shared.session_id.clone()));
            }
            state.last_used = now;
            if let Some(cached) = &state.cached
                && cached.retry_at.is_none_or(|at| now < at)
                && (!fresh || cached.fresh_until.is_none_or(|at| now < at))
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

    /// The catalog of `servers` only: the servers named (the others are
    /// neither connected nor listed), their tools named exactly as in the
    /// full catalog, and the notes on any of them held back. Not cached:
    /// a host that knows which servers a turn needs (a call by name, see
    /// [`SessionRuntime::owners_of`]) asks for those, and the full catalog
    /// is still built on its first request. Names that are not servers of
    /// this runtime are ignored.
    pub async fn catalog_of(&self, servers: &[&str]) -> Result<Arc<Catalog>, CatalogError> {
        let names: Vec<String> = {
            let now = self.shared.clock.now();
            let mut state = self.shared.lock();
            if state.shut_down {
                return Err(CatalogError::shut_down(self.shared.session_id.clone()));
            }
            state.last_used = now;
            let mut names: Vec<String> = servers
                .iter()
                .filter(|name| {
                    state.slots.contains_key(**name)
                        || state.withheld.iter().any(|note| note.server == **name)
                })
                .map(|name| (*name).to_owned())
                .collect();
            names.sort_unstable();
            names.dedup();
            names
        };
        let result = Arc::clone(&self.shared).build_of(&names, false).await;
        self.shared.close_retired().await;
        result.map(|(catalog, _)| catalog)
    }

    /// The servers a catalog name may belong to under this runtime's
    /// naming (see [`crate::naming::tool_owners`]), held-back servers
    /// included: empty when no catalog of these servers can hold it.
    pub fn owners_of(&self, name: &str) -> Vec<String> {
        let state = self.shared.lock();
        let names = state
            .slots
            .keys()
            .map(String::as_str)
            .chain(state.withheld.iter().map(|note| note.server.as_str()));
        crate::naming::tool_owners(self.shared.options.materialize.style, names, name)
            .into_iter()
            .map(str::to_owned)
            .collect()
    }

    /// The servers a build is connecting or listing right now, and for
    /// how long, by name: what a host shows while it waits.
    pub fn waiting(&self) -> Vec<(String, Duration)> {
        let now = self.shared.clock.now();
        let state = self.shared.lock();
        state
            .slots
            .iter()
            .filter_map(|(name, slot)| {
                let since = slot.waiting_since?;
                Some((name.clone(), now.saturating_duration_since(since)))
            })
            .collect()
    }

    /// Calls a tool of the current catalog by the name the model used.
    /// `search_tools`, when the catalog offers it, is answered here: the
    /// matching deferred definitions, which are then loaded for the next
    /// catalog.
    pub async fn call(&self, name: &str, arguments: Value) -> Result<ModelResult, CatalogError> {
        let catalog = self.catalog_within(false).await?;
        if name == SEARCH_TOOLS_NAME && catalog.get(name).is_none() && catalog.offers_search_tools()
        {
            return Ok(self.answer_search(&catalog, &arguments));
        }
        let tool = catalog
            .get(name)
            .ok_or_else(|| CatalogError::unknown_tool(name))?;
        self.call_tool(tool, arguments).await
    }

    /// A `search_tools` call against `catalog`: the best matches' definitions
    /// as JSON text (an error result for bad arguments), each match loaded
    /// from the next catalog on.
    fn answer_search(&self, catalog: &Catalog, arguments: &Value) -> ModelResult {
        let (query, limit) = match search::search_arguments(arguments) {
            Ok(parsed) => parsed,
            Err(problem) => return ModelResult::failed(format!("{SEARCH_TOOLS_NAME}: {problem}")),
        };
        let mut matches = catalog.search(&query, limit);
        let mut text = search::search_answer(catalog.deferred_tools().count(), &query, &matches);
        // Cut whole definitions, never JSON text: the weakest matches go
        // until the answer fits the result cap (one always stays).
        let max_bytes = self.shared.options.max_result_bytes;
        while text.len() > max_bytes && matches.len() > 1 {
            matches.pop();
            text = search::search_answer(catalog.deferred_tools().count(), &query, &matches);
        }
        self.load_tools(matches.iter().map(|tool| tool.name()));
        ModelResult {
            status: ResultStatus::Ok,
            content: vec![ModelBlock::Text { text }],
            truncated: false,
            warnings: Vec::new(),
        }
    }

    /// Loads tools a budget deferred, by catalog name, from the next
    /// catalog on: they stay loaded past the budget, like pinned ones,
    /// until [`SessionRuntime::clear_loaded_tools`]. Returns the names
    /// that were not loaded on request before (names no catalog holds are
    /// kept too and change nothing).
    pub fn load_tools<S: AsRef<str>>(&self, names: impl IntoIterator<Item = S>) -> Vec<String> {
        let mut state = self.shared.lock();
        let added: Vec<String> = names
            .into_iter()
            .filter_map(|name| {
                let name = name.as_ref();
                state
                    .requested
                    .insert(name.to_owned())
                    .then(|| name.to_owned())
            })
            .collect();
        if !added.is_empty() && state.budget.is_some() {
            state.invalidate();
        }
        added
    }

    /// The tools loaded on request, in name order.
    pub fn loaded_tools(&self) -> Vec<String> {
        self.shared.lock().requested.iter().cloned().collect()
    }

    /// Forgets the tools loaded on request; the budget alone decides again.
    pub fn clear_loaded_tools(&self) {
        let mut state = self.shared.lock();
        if !state.requested.is_empty() {
            state.requested.clear();
            if state.budget.is_some() {
                state.invalidate();
            }
        }
    }

    /// Replaces the host's budget (pinned names, recently used order,
    /// tokens); `None` loads every tool. The next catalog follows it,
    /// rebuilt from the listings at hand when it changed.
    pub fn set_tool_budget(&self, budget: Option<ToolBudget>) {
        let mut state = self.shared.lock();
        if state.budget != budget {
            state.budget = budget;
            state.invalidate();
        }
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
        let PreparedArguments {
            arguments,
            warnings,
        } = tool.prepare_call(arguments)?;
        let server = tool.origin().server.as_str();
        let (connection, epoch, timeouts) = self.shared.connection_for_call(server).await?;
        let timeout = timeouts.tool_call;
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
        if let Some(problem) = tool.check_output(&result) {
            // The specification asks clients to check structured results;
            // one that breaks the schema never reaches the model.
            dispose_result(result);
            let mut model = ModelResult::failed(problem);
            model.warnings = warnings;
            return Ok((model, raw));
        }
        // Moves the text out instead of copying it, and drops the rest of
        // the server's values (which may nest any depth) without recursion.
        let mut model = convert_result_owned(result, max_bytes);
        model.warnings = warnings;
        Ok((model, raw))
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

    /// A lease on this runtime began: it is in use until released.
    pub(super) fn acquire(&self) {
        let now = self.shared.clock.now();
        let mut state = self.shared.lock();
        state.in_use += 1;
        state.last_used = now;
    }

    /// A lease ended; it counts as the runtime's last use.
    pub(super) fn release(&self) {
        let now = self.shared.clock.now();
        let mut state = self.shared.lock();
        state.in_use = state.in_use.saturating_sub(1);
        state.last_used = now;
    }

    /// Unused for the idle TTL and not in use (never, with a zero TTL).
    pub(super) fn is_idle(&self, now: Instant) -> bool {
        self.shared.is_idle(now)
    }
}

impl RuntimeShared {
    pub(super) fn lock(&self) -> MutexGuard<'_, State> {
        // A panic while holding the lock cannot leave the state half
        // written in a way later readers would misread, so go on.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// The materialisation options of the next build: the runtime's, with
    /// the session's budget and the tools loaded on request pinned.
    pub(super) fn materialize_options(&self) -> MaterializeOptions {
        let state = self.lock();
        let mut options = self.options.materialize.clone();
        options.budget = state.budget.clone().map(|mut budget| {
            budget.pinned.extend(state.requested.iter().cloned());
            budget
        });
        options
    }

    pub(super) fn paused_error(&self, server: &str, paused: Paused) -> CatalogError {
        let now = self.clock.now();
        let retry_in = paused.until.saturating_duration_since(now);
        let wall = self.clock.wall_now();
        CatalogError::paused(
            server,
            paused.failures,
            rfc3339(mcp_transport::time::later_wall(wall, retry_in)),
            retry_in,
        )
    }

    /// The open connection for a call, connecting first if needed; with
    /// the slot's epoch and the server's timeouts.
    pub(super) async fn connection_for_call(
        self: &Arc<Self>,
        server: &str,
    ) -> Result<(Arc<dyn Connection>, u64, mcp_config::Timeouts), CatalogError> {
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
        Ok((connection, epoch, config.timeouts))
    }

    /// Records the outcome of an attempt in the server's backoff, if the
    /// slot is still the one the attempt used.
    pub(super) fn record(&self, server: &str, epoch: u64, ok: bool) {
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

    pub(super) fn record_failure_any_epoch(&self, server: &str) {
        let now = self.clock.now();
        let mut state = self.lock();
        if let Some(slot) = state.slots.get_mut(server) {
            slot.backoff.fail(now, self.options.backoff);
        }
    }

    pub(super) fn on_tools_changed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        self.listings.forget(server, &slot.config_hash);
        slot.tools = None;
        slot.tools_epoch += 1;
        state.invalidate();
    }

    pub(super) fn on_offers_changed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        slot.offered_epoch += 1;
        if slot.offered.take().is_some() {
            state.invalidate();
        }
    }

    pub(super) fn on_closed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        slot.connection = None;
        slot.tools = None;
        slot.offered = None;
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
            // Subscribers learn of the end, not of a last version.
            state.updates.close();
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

impl State {
    pub(super) fn take_epoch(&mut self) -> u64 {
        self.next_epoch += 1;
        self.next_epoch
    }

    /// The server's slot, if `epoch` is still its connection's epoch: an
    /// event from a replaced connection changes nothing.
    pub(super) fn current_slot(&mut self, server: &str, epoch: u64) -> Option<&mut Slot> {
        self.slots
            .get_mut(server)
            .filter(|slot| slot.epoch == epoch)
    }

    pub(super) fn bump_epoch(&mut self, server: &str) {
        let epoch = self.take_epoch();
        if let Some(slot) = self.slots.get_mut(server) {
            slot.epoch = epoch;
            slot.connecting = None;
        }
    }

    pub(super) fn invalidate(&mut self) {
        self.generation += 1;
        self.updates.announce(self.generation);
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
            tools_fresh_until: None,
            rejected: Vec::new(),
            tools_epoch: 0,
            offered: None,
            offered_epoch: 0,
            backoff: Backoff::default(),
            waiting_since: None,
        }
    }

    pub(super) fn listing(&self, features: ServerFeatures, tools: &Arc<[Tool]>) -> ServerTools {
        ServerTools {
            server: self.config.name.clone(),
            tools: Arc::clone(tools),
            filter: self.config.tool_filter.clone(),
            features,
            description_limit: self.config.description_limit,
        }
    }
}
