//! The memory store: credentials held in this process only, with a lock
//! that serialises this process's callers.

use std::collections::HashMap;
use std::sync::{Arc, Condvar, Mutex};

use super::{CredentialStore, StoreKey, StoreLock, StoredCredentials, store_failure};
use crate::AuthError;

/// Credentials kept in memory only, for tests and for hosts that persist
/// elsewhere. The lock serialises callers within this process.
#[derive(Debug, Clone, Default)]
pub struct MemoryCredentialStore {
    entries: Arc<Mutex<HashMap<StoreKey, StoredCredentials>>>,
    gates: Arc<Mutex<HashMap<StoreKey, Arc<Gate>>>>,
}

impl MemoryCredentialStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }
}

/// A lock that can be released from a guard that owns it (a std
/// `MutexGuard` borrows its mutex and cannot be boxed as `StoreLock`).
#[derive(Debug, Default)]
struct Gate {
    held: Mutex<bool>,
    released: Condvar,
}

#[derive(Debug)]
struct GateGuard(Arc<Gate>);

impl Drop for GateGuard {
    fn drop(&mut self) {
        let mut held = self.0.held.lock().unwrap_or_else(|p| p.into_inner());
        *held = false;
        self.0.released.notify_one();
    }
}

fn poisoned(key: &StoreKey) -> AuthError {
    store_failure(key, "memory", "store lock poisoned".into())
}

impl CredentialStore for MemoryCredentialStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredCredentials>, AuthError> {
        let map = self.entries.lock().map_err(|_| poisoned(key))?;
        Ok(map.get(key).cloned())
    }

    fn save(&self, key: &StoreKey, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let mut map = self.entries.lock().map_err(|_| poisoned(key))?;
        map.insert(key.clone(), credentials.clone());
        Ok(())
    }

    fn clear(&self, key: &StoreKey) -> Result<(), AuthError> {
        let mut map = self.entries.lock().map_err(|_| poisoned(key))?;
        map.remove(key);
        Ok(())
    }

    fn lock(&self, key: &StoreKey) -> Result<StoreLock, AuthError> {
        let gate = {
            let mut gates = self.gates.lock().map_err(|_| poisoned(key))?;
            gates.entry(key.clone()).or_default().clone()
        };
        let mut held = gate.held.lock().map_err(|_| poisoned(key))?;
        while *held {
            held = gate.released.wait(held).map_err(|_| poisoned(key))?;
        }
        *held = true;
        drop(held);
        Ok(Box::new(GateGuard(gate)))
    }

    fn location(&self, _: &StoreKey) -> String {
        "memory".to_owned()
    }
}
