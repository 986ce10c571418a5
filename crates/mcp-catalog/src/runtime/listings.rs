//! Tool listings shared between the session runtimes of one
//! [`super::RuntimeManager`], under the caching rules of 2026-07-28:
//! only a listing the server marked `cacheScope: "public"` and gave a
//! `ttlMs` is shared, and only until that TTL runs out. A `private`
//! listing (the reading when a server says nothing) stays with the
//! runtime that fetched it, whose session is its authorization context.
//!
//! Entries are keyed by server name and config hash, so a changed entry
//! (another url, other credentials in its headers) never sees the
//! listing of the old one.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use mcp_transport::CacheScope;
use mcp_transport::Tool;

/// Public listings by server, shared between runtimes.
#[derive(Debug, Default)]
pub(crate) struct SharedListings {
    entries: Mutex<HashMap<(String, String), Shared>>,
}

#[derive(Debug)]
struct Shared {
    tools: Arc<[Tool]>,
    fresh_until: Instant,
}

impl SharedListings {
    fn lock(&self) -> MutexGuard<'_, HashMap<(String, String), Shared>> {
        self.entries.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Keeps a listing for other runtimes, if its scope and TTL allow.
    pub(crate) fn offer(
        &self,
        server: &str,
        config_hash: &str,
        tools: &Arc<[Tool]>,
        scope: CacheScope,
        fresh_until: Option<Instant>,
    ) {
        let (CacheScope::Public, Some(fresh_until)) = (scope, fresh_until) else {
            return;
        };
        self.lock().insert(
            (server.to_owned(), config_hash.to_owned()),
            Shared {
                tools: Arc::clone(tools),
                fresh_until,
            },
        );
    }

    /// A shared listing of the server still fresh at `now`, with when it
    /// stops being fresh.
    pub(crate) fn fresh(
        &self,
        server: &str,
        config_hash: &str,
        now: Instant,
    ) -> Option<(Arc<[Tool]>, Instant)> {
        let mut entries = self.lock();
        let key = (server.to_owned(), config_hash.to_owned());
        match entries.get(&key) {
            Some(entry) if now < entry.fresh_until => {
                Some((Arc::clone(&entry.tools), entry.fresh_until))
            }
            Some(_) => {
                entries.remove(&key);
                None
            }
            None => None,
        }
    }

    /// The server said its tools changed: no runtime may reuse the
    /// listing any more.
    pub(crate) fn forget(&self, server: &str, config_hash: &str) {
        self.lock()
            .remove(&(server.to_owned(), config_hash.to_owned()));
    }
}
