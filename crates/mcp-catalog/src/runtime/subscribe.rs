//! Catalog change notices: a host that keeps a catalog in front of its
//! model awaits [`CatalogUpdates::changed`] instead of comparing catalogs.
//!
//! The runtime numbers its catalog versions with the counter it already
//! keeps to tell an overtaken build from a current one: every invalidation
//! that may change what the next catalog holds (a server's `list_changed`
//! of tools, resources or prompts, a changed server list or approval, a
//! closed connection that will reconnect, [`SessionRuntime::invalidate`])
//! bumps it, and the new value
//! goes out on a `tokio::sync::watch` channel. A watch keeps only the
//! latest value, so a host that is busy while several changes land wakes
//! once, with the newest version, and never falls behind. Changes the
//! runtime only notices when asked (a listing's TTL running out, a failed
//! server's retry time) are not announced: nothing has changed until then.

use tokio::sync::watch;

use super::session::SessionRuntime;

/// The sending side, kept in the runtime's state; `None` once the runtime
/// shut down, which ends every subscription.
pub(super) struct UpdateSender(Option<watch::Sender<u64>>);

impl UpdateSender {
    pub(super) fn new(version: u64) -> Self {
        UpdateSender(Some(watch::channel(version).0))
    }

    /// Announces `version` to every subscriber (none is fine).
    pub(super) fn announce(&self, version: u64) {
        if let Some(sender) = &self.0 {
            sender.send_replace(version);
        }
    }

    /// Ends every subscription: `changed` returns `None` from now on.
    pub(super) fn close(&mut self) {
        self.0 = None;
    }

    fn subscribe(&self, version: u64) -> CatalogUpdates {
        let receiver = match &self.0 {
            Some(sender) => sender.subscribe(),
            // Its sender dropped at once: the receiver is closed.
            None => watch::channel(version).1,
        };
        CatalogUpdates { receiver }
    }
}

/// A subscription to one runtime's catalog versions, from
/// [`SessionRuntime::subscribe`].
#[derive(Debug, Clone)]
pub struct CatalogUpdates {
    receiver: watch::Receiver<u64>,
}

impl CatalogUpdates {
    /// Waits until the catalog changes after the version this subscription
    /// last saw (the one current when it was made, at first), and returns
    /// the new version; the host then asks for the catalog again (which
    /// may hold the same tools: a server's `list_changed` need not change
    /// its listing). `None`
    /// once the runtime is shut down or dropped.
    pub async fn changed(&mut self) -> Option<u64> {
        self.receiver.changed().await.ok()?;
        Some(*self.receiver.borrow_and_update())
    }

    /// The latest version, seen or not. Versions only grow.
    pub fn version(&self) -> u64 {
        *self.receiver.borrow()
    }
}

impl SessionRuntime {
    /// A subscription to this runtime's catalog versions: its
    /// [`CatalogUpdates::changed`] wakes on every change after now. The
    /// first catalog a runtime builds is not a change; a host asks for it
    /// as usual.
    pub fn subscribe(&self) -> CatalogUpdates {
        let state = self.shared.lock();
        state.updates.subscribe(state.generation)
    }
}
