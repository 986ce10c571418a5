//! The state a runtime's handles share: a slot per server (its config, its
//! connection or the connect attempt under way, its listing, its backoff),
//! the shared in-flight build and the cached catalog.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use futures::future::{BoxFuture, Shared};
use mcp_config::ServerConfig;
use mcp_transport::Tool;
use mcp_transport::types::RejectedTool;
use tokio::sync::Semaphore;

use crate::backoff::{Backoff, Paused};
use crate::catalog::{
    Catalog, CatalogDiagnostic, MaterializeOptions, SchemaCache, ServerFeatures, ServerTools,
};
use crate::clock::{Clock, rfc3339};
use crate::error::CatalogError;
use crate::search::ToolBudget;
use crate::servers::ServerSet;

use super::connection::{Connection, Connector, EventSink};
use super::listings::SharedListings;
use super::subscribe::UpdateSender;

use super::options::RuntimeOptions;
use super::reconcile::{CallGuard, Calls, Reconciled, Retired};

pub(super) type SharedBuild = Shared<BoxFuture<'static, Result<Arc<Catalog>, CatalogError>>>;

/// One connect attempt, shared by every caller that needs the server
/// while it runs, so a server is never opened twice at once.
pub(super) type SharedConnect =
    Shared<BoxFuture<'static, Result<Arc<dyn Connection>, CatalogError>>>;

/// What a call needs from its server's slot: the open connection, the
/// slot's epoch, the server's timeouts, and the guard that counts the
/// call while it runs.
pub(super) struct ForCall {
    pub(super) connection: Arc<dyn Connection>,
    pub(super) epoch: u64,
    pub(super) timeouts: mcp_config::Timeouts,
    pub(super) _call: CallGuard,
}

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
    /// Calls under way on this slot's connections.
    pub(super) calls: Arc<Calls>,
    /// The open connection's `instructions` (set with `connection`).
    pub(super) instructions: Option<Arc<str>>,
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
    pub(super) retired: Vec<Retired>,
    /// Retired connections whose calls are being waited for; closed at
    /// once by a shutdown.
    pub(super) draining: Vec<Arc<dyn Connection>>,
    /// Servers held back (awaiting approval, denied), reported in every
    /// catalog.
    pub(super) withheld: Vec<CatalogDiagnostic>,
    /// The host's budget for tool definitions (starting as the options').
    pub(super) budget: Option<ToolBudget>,
    /// Tools loaded on request (`search_tools`, [`SessionRuntime::load_tools`](super::SessionRuntime::load_tools)),
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
    ) -> Result<ForCall, CatalogError> {
        let (config, epoch, connection, call) = {
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
            (
                slot.config.clone(),
                slot.epoch,
                slot.connection.clone(),
                slot.calls.enter(),
            )
        };
        let connection = match connection {
            Some(connection) => connection,
            None => self.connect(&config, epoch).await?,
        };
        Ok(ForCall {
            connection,
            epoch,
            timeouts: config.timeouts,
            _call: call,
        })
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

    pub(super) fn reconcile(&self, servers: ServerSet) -> Reconciled {
        let (servers, withheld) = servers.into_parts();
        let wanted: BTreeMap<String, ServerConfig> = servers
            .into_iter()
            .filter(|s| s.enabled)
            .map(|s| (s.name.clone(), s))
            .collect();
        let mut state = self.lock();
        let mut reconciled = Reconciled::default();
        if state.withheld != withheld {
            reconciled.withheld_changed = true;
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
                state.retire(slot);
            }
            reconciled.removed.push(name);
        }
        for (name, config) in wanted {
            let hash = mcp_config::config_hash(&config);
            let same = state
                .slots
                .get(&name)
                .is_some_and(|slot| slot.config_hash == hash);
            if same {
                reconciled.unchanged.push(name);
                continue;
            }
            let epoch = state.take_epoch();
            match state.slots.insert(name.clone(), Slot::new(config, epoch)) {
                Some(old) => {
                    state.retire(old);
                    reconciled.changed.push(name);
                }
                None => reconciled.added.push(name),
            }
        }
        if !reconciled.is_unchanged() {
            state.invalidate();
        }
        reconciled
    }

    pub(super) async fn shutdown(&self) {
        let connections: Vec<Arc<dyn Connection>> = {
            let mut state = self.lock();
            state.shut_down = true;
            state.cached = None;
            state.inflight = None;
            // Subscribers learn of the end, not of a last version.
            state.updates.close();
            state.invalidate();
            let mut all: Vec<Arc<dyn Connection>> = std::mem::take(&mut state.retired)
                .into_iter()
                .map(|retired| retired.connection)
                .collect();
            all.append(&mut state.draining);
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

    pub(super) fn is_idle(&self, now: Instant) -> bool {
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

impl EventSink for RuntimeShared {
    fn on_tools_changed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        self.listings.forget(server, &slot.config_hash);
        slot.tools = None;
        slot.tools_epoch += 1;
        state.invalidate();
    }

    fn on_offers_changed(&self, server: &str, epoch: u64) {
        let mut state = self.lock();
        let Some(slot) = state.current_slot(server, epoch) else {
            return;
        };
        slot.offered_epoch += 1;
        if slot.offered.take().is_some() {
            state.invalidate();
        }
    }

    fn on_closed(&self, server: &str, epoch: u64) {
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

    /// Takes a slot out of service: its connection closes once the calls
    /// on it end (see [`RuntimeShared::close_retired`]).
    pub(super) fn retire(&mut self, slot: Slot) {
        if let Some(connection) = slot.connection {
            self.retired.push(Retired {
                connection,
                calls: Some(slot.calls),
            });
        }
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
    pub(super) fn new(config: ServerConfig, epoch: u64) -> Self {
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
            calls: Calls::new(),
            instructions: None,
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
            instructions: self.instructions.clone(),
        }
    }
}
