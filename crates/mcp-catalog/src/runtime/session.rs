//! [`SessionRuntime`], the runtime of one host session: catalogs, calls
//! over the open connections, probes, updates and shutdown.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures::future::FutureExt;
use mcp_transport::ProgressCallback;
use serde_json::Value;
use tokio::sync::Semaphore;

use crate::catalog::{
    Catalog, CatalogTool, PreparedArguments, SchemaCache, ServerTools, ToolTarget,
};
use crate::clock::{Clock, SystemClock};
use crate::error::{CatalogError, CatalogErrorKind, Cause};
use crate::result::{ModelBlock, ModelResult, ResultStatus, convert_result_owned, dispose_result};
use crate::search::{self, SEARCH_TOOLS_NAME, ToolBudget};
use crate::servers::ServerSet;

use super::connection::{ConnectReport, Connector, InputRounds, ServerCounts, ToolCallOutput};
use super::listings::SharedListings;
use super::subscribe::UpdateSender;
use super::utility::{UtilityCall, parse_call_result, within};

use super::options::{RuntimeOptions, SessionRuntimeBuilder};
use super::reconcile::Reconciled;
use super::state::{RuntimeShared, SharedBuild, Slot, State};

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
            draining: Vec::new(),
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

    /// The catalog a call by name looks its tool up in: the one last
    /// offered, kept past its listings' TTL (the tool was offered to the
    /// model from it; a stale listing is refreshed when the next
    /// [`SessionRuntime::catalog`] is asked for), else built. A host that
    /// relays calls (a gateway) resolves each call's tool here, so a
    /// server's short `ttlMs` costs no listing per call.
    pub async fn offered_catalog(&self) -> Result<Arc<Catalog>, CatalogError> {
        self.catalog_within(false).await
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

    /// [`SessionRuntime::call_tool_raw`] for a host that relays its own
    /// client's call (a gateway): `members` are passed on as given (a
    /// retry's `inputResponses` and `requestState`, the `_meta` entries its
    /// client stated), `rounds` says who answers the server's input rounds,
    /// and the server's answer comes back as it came (see
    /// [`Connection::call_tool_relayed`](super::Connection::call_tool_relayed)).
    /// Arguments are checked as for any call.
    pub async fn call_tool_relayed(
        &self,
        tool: &CatalogTool,
        arguments: Value,
        members: serde_json::Map<String, Value>,
        rounds: InputRounds,
        progress: Option<ProgressCallback>,
    ) -> Result<Value, CatalogError> {
        let PreparedArguments { arguments, .. } = tool.prepare_call(arguments)?;
        let server = tool.origin().server.as_str();
        let ToolTarget::Tool { name } = &tool.origin().target else {
            return Err(CatalogError::unknown_tool(tool.name()));
        };
        let mut params = members;
        params.insert("name".into(), Value::String(name.clone()));
        params.insert("arguments".into(), arguments);
        let call = self.shared.connection_for_call(server).await?;
        let outcome = call
            .connection
            .call_tool_relayed(
                Value::Object(params),
                rounds,
                call.timeouts.tool_call,
                progress,
            )
            .await;
        self.shared.record(server, call.epoch, outcome.is_ok());
        outcome
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
        let call = self.shared.connection_for_call(server).await?;
        let (connection, epoch) = (&call.connection, call.epoch);
        let timeout = call.timeouts.tool_call;
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
            Ok(call) => call.connection,
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

    /// Applies a new server set, matching servers by name and comparing
    /// them by `config_hash`: an unchanged entry keeps its session and
    /// listing, a changed one is replaced and an added one connects on
    /// the next attempt, a removed one (or one that lost its approval)
    /// is closed. A replaced or removed server's session closes once the
    /// calls under way on it end, or after [`RuntimeOptions::retire_grace`]
    /// (the calls still running then fail). The notes on held-back
    /// servers are replaced. Subscribers ([`SessionRuntime::subscribe`])
    /// hear of any change. Returns what changed.
    pub async fn reconcile(&self, servers: ServerSet) -> Reconciled {
        let reconciled = self.shared.reconcile(servers);
        self.shared.close_retired().await;
        reconciled
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
