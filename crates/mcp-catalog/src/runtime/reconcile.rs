//! What applying a new server set changed ([`Reconciled`]), as
//! [`SessionRuntime::reconcile`](super::SessionRuntime::reconcile)
//! reports it.
//!
//! A server is matched by name and compared by `config_hash`: the same
//! hash keeps its session, listing and backoff untouched; a new hash
//! replaces the entry (the new one connects on the next attempt); a
//! name no longer present is removed. The connection of a changed or
//! removed server is closed once the calls under way on it end, or when
//! [`RuntimeOptions::retire_grace`](super::RuntimeOptions::retire_grace)
//! runs out, which ends the calls still running with a closed-connection
//! error. A server added connects lazily, like every other.
//!
//! This file also holds how a taken-out connection is retired: the calls
//! counted on its slot ([`Calls`]) are waited for before it closes.

use std::sync::Arc;

use serde::Serialize;
use tokio::sync::watch;

use super::connection::Connection;
use super::state::RuntimeShared;

/// The servers a reconcile added, replaced, removed and kept, each in
/// name order.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct Reconciled {
    /// New names: they connect on the next attempt.
    pub added: Vec<String>,
    /// Entries whose `config_hash` changed: the old session closes, the
    /// new entry connects on the next attempt.
    pub changed: Vec<String>,
    /// Names no longer present (or no longer allowed to start).
    pub removed: Vec<String>,
    /// Entries with the same `config_hash`, left as they were.
    pub unchanged: Vec<String>,
    /// Whether the notes on held-back servers changed.
    pub withheld_changed: bool,
}

impl Reconciled {
    /// Whether nothing changed: every server kept as it was.
    pub fn is_unchanged(&self) -> bool {
        self.added.is_empty()
            && self.changed.is_empty()
            && self.removed.is_empty()
            && !self.withheld_changed
    }

    /// The servers added, changed or removed, in name order.
    pub fn touched(&self) -> Vec<String> {
        let mut touched: Vec<String> = self
            .added
            .iter()
            .chain(&self.changed)
            .chain(&self.removed)
            .cloned()
            .collect();
        touched.sort();
        touched
    }
}

/// A connection taken out of its slot, waiting to be closed; with the
/// calls that may still run on it, when it was retired by a change of
/// the server set (they are waited for, within the runtime's grace).
pub(super) struct Retired {
    pub(super) connection: Arc<dyn Connection>,
    pub(super) calls: Option<Arc<Calls>>,
}

impl Retired {
    /// A connection no call is waited on: closed with the next sweep.
    pub(super) fn now(connection: Arc<dyn Connection>) -> Self {
        Retired {
            connection,
            calls: None,
        }
    }
}

/// How many calls run on one slot's connections: a retired connection
/// closes once they end.
pub(super) struct Calls(watch::Sender<usize>);

impl Calls {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Calls(watch::Sender::new(0)))
    }

    /// Counts a call until the guard drops.
    pub(super) fn enter(self: &Arc<Self>) -> CallGuard {
        self.0.send_modify(|count| *count += 1);
        CallGuard(Arc::clone(self))
    }

    fn idle(&self) -> bool {
        *self.0.borrow() == 0
    }

    /// Resolves once no call runs.
    async fn ended(&self) {
        let mut count = self.0.subscribe();
        // The sender lives in `self`, so the wait ends only by the count.
        let _ = count.wait_for(|count| *count == 0).await;
    }
}

/// One call under way on a slot's connection (see [`Calls`]).
pub(super) struct CallGuard(Arc<Calls>);

impl Drop for CallGuard {
    fn drop(&mut self) {
        self.0
            .0
            .send_modify(|count| *count = count.saturating_sub(1));
    }
}

impl RuntimeShared {
    /// Closes the retired connections: at once when no call runs on
    /// them, else once their calls end or the runtime's retire grace
    /// runs out (which ends the calls still running).
    pub(super) async fn close_retired(self: &Arc<Self>) {
        let retired = std::mem::take(&mut self.lock().retired);
        let mut now = Vec::new();
        for Retired { connection, calls } in retired {
            match calls {
                Some(calls) if !calls.idle() => self.drain(connection, calls),
                _ => now.push(connection),
            }
        }
        futures::future::join_all(now.iter().map(|c| c.close())).await;
    }

    /// Closes `connection` in the background once `calls` end or the
    /// grace runs out; a shutdown meanwhile closes it at once.
    fn drain(self: &Arc<Self>, connection: Arc<dyn Connection>, calls: Arc<Calls>) {
        self.lock().draining.push(Arc::clone(&connection));
        let grace = self.options.retire_grace;
        let runtime = Arc::downgrade(self);
        tokio::spawn(async move {
            let _ = tokio::time::timeout(grace, calls.ended()).await;
            if let Some(runtime) = runtime.upgrade() {
                runtime
                    .lock()
                    .draining
                    .retain(|other| !Arc::ptr_eq(other, &connection));
            }
            connection.close().await;
        });
    }
}
