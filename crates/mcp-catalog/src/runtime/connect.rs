//! Connecting one server: the attempt is made once and shared by every
//! caller that needs the server while it runs, so a stdio server is never
//! spawned twice at once; its outcome lands in the server's slot.

use std::sync::{Arc, Weak};
use std::time::Duration;

use futures::future::FutureExt;
use mcp_config::ServerConfig;
use tokio::sync::Semaphore;

use crate::error::{CatalogError, Cause};

use super::connection::{Connection, Connector, EventSink, ServerEvents};
use super::reconcile::Retired;
use super::state::RuntimeShared;

impl RuntimeShared {
    /// The slot's connection: the open one, the attempt under way (joined),
    /// or a new attempt, which then stores its connection in the slot.
    /// A failed attempt counts once in the server's backoff, however many
    /// callers shared it.
    pub(super) async fn connect(
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
                        state.retired.push(Retired::now(connection));
                        Ok(existing)
                    }
                    None => {
                        slot.instructions = connection
                            .identity()
                            .and_then(|identity| identity.instructions)
                            .map(Arc::from);
                        slot.connection = Some(Arc::clone(&connection));
                        slot.offered = None;
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
                state.retired.push(Retired::now(connection));
                Err(entry_changed(server))
            }
            (None, Err(error)) => Err(error),
        }
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
        let runtime: Weak<dyn EventSink> = self.runtime.clone();
        let events = ServerEvents {
            runtime,
            server: server.to_owned(),
            epoch: self.epoch,
        };
        let timeout = self.config.timeouts.connect;
        // The transport enforces the same timeout itself and reports it
        // with what it knows (the server's last stderr lines, a hint about
        // the environment); this timer only bounds a connector that does
        // not, so it waits a little longer and never wins that race.
        let bound = timeout.saturating_add(CONNECT_GRACE);
        match tokio::time::timeout(bound, self.connector.connect(&self.config, events)).await {
            Ok(result) => result,
            Err(_) => Err(CatalogError::connect(server, Cause::TimedOut(timeout))),
        }
    }
}

/// How long past its connect timeout a connector that enforces no timeout
/// of its own is waited for.
const CONNECT_GRACE: Duration = Duration::from_millis(250);

fn entry_changed(server: &str) -> CatalogError {
    CatalogError::connect(server, Cause::EntryChanged)
}
