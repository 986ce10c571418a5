//! The runtimes of every session of a host: made on first use, leased
//! while in use, evicted after the idle TTL, updated together when the
//! server list changes.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::ops::Deref;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use crate::clock::{Clock, SystemClock};
use crate::servers::ServerSet;

use super::connection::Connector;
use super::listings::SharedListings;
use super::options::RuntimeOptions;
use super::reconcile::Reconciled;
use super::session::SessionRuntime;

/// The shortest interval of [`RuntimeManager::spawn_idle_sweeper`]: the
/// timer's resolution.
pub const MIN_SWEEP_INTERVAL: Duration = Duration::from_millis(1);

struct ManagerShared {
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    options: RuntimeOptions,
    servers: Mutex<ServerSet>,
    runtimes: Mutex<HashMap<String, Arc<SessionRuntime>>>,
    /// The one thing the runtimes share: listings their servers marked
    /// public (private ones stay with the session that fetched them).
    listings: Arc<SharedListings>,
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

/// How a [`RuntimeManager`] is made ([`RuntimeManager::builder`]): the
/// servers and the connector are required, the clock and the runtime
/// options optional. Building starts no runtime.
#[must_use = "a builder does nothing until `build` is called"]
pub struct RuntimeManagerBuilder {
    servers: ServerSet,
    connector: Arc<dyn Connector>,
    clock: Arc<dyn Clock>,
    options: RuntimeOptions,
}

impl fmt::Debug for RuntimeManagerBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RuntimeManagerBuilder")
            .field("servers", &self.servers)
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl RuntimeManagerBuilder {
    /// Keeps time through `clock` for every runtime of the manager.
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Gives every runtime of the manager `options`.
    pub fn with_options(mut self, options: RuntimeOptions) -> Self {
        self.options = options;
        self
    }

    /// The manager, with no runtime yet.
    pub fn build(self) -> RuntimeManager {
        RuntimeManager {
            shared: Arc::new(ManagerShared {
                connector: self.connector,
                clock: self.clock,
                options: self.options,
                servers: Mutex::new(self.servers),
                runtimes: Mutex::new(HashMap::new()),
                listings: Arc::default(),
            }),
        }
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
        self.runtime.release();
    }
}

impl RuntimeManager {
    /// Starts making a manager whose sessions all use the runnable
    /// servers of `servers` (held-back ones are reported in their
    /// catalogs' diagnostics), connecting through `connector`. Clock and
    /// options default as for [`SessionRuntime::builder`].
    pub fn builder(servers: ServerSet, connector: Arc<dyn Connector>) -> RuntimeManagerBuilder {
        RuntimeManagerBuilder {
            servers,
            connector,
            clock: Arc::new(SystemClock),
            options: RuntimeOptions::default(),
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
                Arc::new(SessionRuntime::sharing(
                    session_id,
                    servers,
                    Arc::clone(&self.shared.connector),
                    Arc::clone(&self.shared.clock),
                    self.shared.options.clone(),
                    Arc::clone(&self.shared.listings),
                ))
            });
            Arc::clone(runtime)
        };
        runtime.acquire();
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
                .filter(|(_, runtime)| runtime.is_idle(now))
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
    /// is dropped. Any value is accepted: one below [`MIN_SWEEP_INTERVAL`]
    /// (zero included) sweeps that often, and a very long one (up to
    /// `Duration::MAX`) waits as long as the timer can, about thirty years.
    pub fn spawn_idle_sweeper(&self, every: Duration) -> tokio::task::JoinHandle<()> {
        let weak = Arc::downgrade(&self.shared);
        // tokio's interval panics on a zero period.
        let every = every.max(MIN_SWEEP_INTERVAL);
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

    /// Applies a new server set to every session (see
    /// [`SessionRuntime::reconcile`]), and to sessions made from now on.
    /// Returns what changed, per session.
    pub async fn reconcile(&self, servers: ServerSet) -> BTreeMap<String, Reconciled> {
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
            changed.insert(id, runtime.reconcile(servers.clone()).await);
        }
        changed
    }

    /// Closes every session.
    pub async fn shutdown(&self) {
        let runtimes: Vec<Arc<SessionRuntime>> = self.runtimes().drain().map(|(_, r)| r).collect();
        futures::future::join_all(runtimes.iter().map(|runtime| runtime.shutdown())).await;
    }
}
