//! The secret store: each server's credentials are one secret in a
//! [`SecretStore`] (the OS keyring, or whatever the host brings), named
//! `oauth.<file stem>` and holding the credentials as JSON. A secret store
//! has no lock, so the refresh lock stays a lock file in a folder the
//! caller gives (`lock`, the same one the file store takes).

use std::path::PathBuf;
use std::sync::Arc;

use mcp_config::secret::{SecretName, SecretStore, SecretValue};

use super::{CredentialStore, StoreKey, StoreLock, StoredCredentials, lock, parse, store_error};
use crate::AuthError;

/// Credentials kept in a [`SecretStore`], one secret per server; the
/// cross-process refresh lock is a lock file in `lock_dir`.
#[derive(Debug, Clone)]
pub struct SecretCredentialStore {
    secrets: Arc<dyn SecretStore>,
    lock_dir: PathBuf,
}

impl SecretCredentialStore {
    /// Credentials in `secrets`, with lock files in `lock_dir` (created
    /// 0700 on the first lock; an existing folder readable by others is
    /// made 0700).
    pub fn new(secrets: Arc<dyn SecretStore>, lock_dir: impl Into<PathBuf>) -> Self {
        SecretCredentialStore {
            secrets,
            lock_dir: lock_dir.into(),
        }
    }

    /// The secret that holds `key`'s credentials: `oauth.` and the key's
    /// [`StoreKey::file_stem`], which always follows the secret name rule
    /// (ASCII letters, digits, `_` and `-`, at most 87 bytes).
    pub fn secret_name(key: &StoreKey) -> Result<SecretName, AuthError> {
        let name = format!("oauth.{}", key.file_stem());
        SecretName::new(&name).map_err(|e| store_error(key, &name, e))
    }

    /// How messages name the secret of `key`: the store's kind and the name.
    fn place(&self, name: &SecretName) -> String {
        format!("{} secret {name}", self.secrets.kind())
    }
}

impl CredentialStore for SecretCredentialStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredCredentials>, AuthError> {
        let name = Self::secret_name(key)?;
        let place = self.place(&name);
        match self.secrets.get(&name) {
            Ok(None) => Ok(None),
            Ok(Some(value)) => parse(key, &place, value.expose()).map(Some),
            Err(e) => Err(store_error(key, &place, e)),
        }
    }

    fn save(&self, key: &StoreKey, credentials: &StoredCredentials) -> Result<(), AuthError> {
        let name = Self::secret_name(key)?;
        let place = self.place(&name);
        let text = serde_json::to_string(credentials).map_err(|e| store_error(key, &place, e))?;
        self.secrets
            .set(&name, &SecretValue::new(text))
            .map_err(|e| store_error(key, &place, e))
    }

    fn clear(&self, key: &StoreKey) -> Result<(), AuthError> {
        // The lock file goes too, as the file store's does: after a logout
        // nothing of the server is left.
        let name = Self::secret_name(key)?;
        self.secrets
            .remove(&name)
            .map_err(|e| store_error(key, &self.place(&name), e))?;
        lock::remove(&self.lock_dir, key)
    }

    fn lock(&self, key: &StoreKey) -> Result<StoreLock, AuthError> {
        lock::acquire(&self.lock_dir, key)
    }

    fn location(&self, key: &StoreKey) -> String {
        match Self::secret_name(key) {
            Ok(name) => self.place(&name),
            Err(_) => format!("{} secret store", self.secrets.kind()),
        }
    }
}
