//! The macOS Keychain and the Windows Credential Manager as a
//! [`SecretStore`], through the keyring crates' native stores.
//!
//! Each secret is a generic password with service `NAMESPACE` and account
//! `NAME`. Neither store lists by service through these crates, so the
//! names are kept in one more entry of the same store (account
//! `.names`, which no secret can be called, one name a line): it holds names only, never a value,
//! and lives where the secrets do, so no file of ours is written.

use std::sync::Arc;

use keyring_core::api::CredentialStoreApi;
use keyring_core::{Entry, Error};

use super::os::{SecretBackend, keyring_error};
use super::{SecretName, SecretStore, SecretValue};
use crate::error::EditError;

/// Secrets in the platform's native store.
pub(crate) struct NativeStore {
    store: Arc<dyn CredentialStoreApi + Send + Sync>,
    kind: &'static str,
    namespace: String,
}

impl std::fmt::Debug for NativeStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("NativeStore")
            .field("kind", &self.kind)
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl NativeStore {
    pub(crate) fn open(backend: SecretBackend, namespace: &str) -> Result<NativeStore, EditError> {
        let (store, kind) = platform_store(backend)?;
        Ok(NativeStore {
            store,
            kind,
            namespace: namespace.to_owned(),
        })
    }

    fn entry(&self, account: &str, name: Option<&SecretName>) -> Result<Entry, EditError> {
        self.store
            .build(&self.namespace, account, None)
            .map_err(|e| keyring_error(self.kind, name, e))
    }

    fn index(&self) -> Result<Entry, EditError> {
        self.entry(".names", None)
    }

    fn read_index(&self) -> Result<Vec<SecretName>, EditError> {
        let text = match self.index()?.get_password() {
            Ok(text) => text,
            Err(Error::NoEntry) => return Ok(Vec::new()),
            Err(e) => return Err(keyring_error(self.kind, None, e)),
        };
        let mut names: Vec<SecretName> = text
            .lines()
            .filter_map(|line| SecretName::new(line).ok())
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }

    fn write_index(&self, names: &[SecretName]) -> Result<(), EditError> {
        let entry = self.index()?;
        if names.is_empty() {
            return match entry.delete_credential() {
                Ok(()) | Err(Error::NoEntry) => Ok(()),
                Err(e) => Err(keyring_error(self.kind, None, e)),
            };
        }
        let text: Vec<&str> = names.iter().map(SecretName::as_str).collect();
        entry
            .set_password(&text.join("\n"))
            .map_err(|e| keyring_error(self.kind, None, e))
    }
}

#[cfg(target_os = "macos")]
fn platform_store(
    backend: SecretBackend,
) -> Result<(Arc<dyn CredentialStoreApi + Send + Sync>, &'static str), EditError> {
    if backend != SecretBackend::Keychain {
        return Err(super::os::unavailable("Credential Manager"));
    }
    let store = apple_native_keyring_store::keychain::Store::new()
        .map_err(|e| keyring_error("Keychain", None, e))?;
    Ok((store, "Keychain"))
}

#[cfg(windows)]
fn platform_store(
    backend: SecretBackend,
) -> Result<(Arc<dyn CredentialStoreApi + Send + Sync>, &'static str), EditError> {
    if backend != SecretBackend::CredentialManager {
        return Err(super::os::unavailable("Keychain"));
    }
    let store = windows_native_keyring_store::Store::new()
        .map_err(|e| keyring_error("Credential Manager", None, e))?;
    Ok((store, "Credential Manager"))
}

impl SecretStore for NativeStore {
    fn kind(&self) -> &'static str {
        self.kind
    }

    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError> {
        match self.entry(name.as_str(), Some(name))?.get_password() {
            Ok(value) => Ok(Some(SecretValue::new(value))),
            Err(Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(self.kind, Some(name), e)),
        }
    }

    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError> {
        self.entry(name.as_str(), Some(name))?
            .set_password(value.expose())
            .map_err(|e| keyring_error(self.kind, Some(name), e))?;
        let mut names = self.read_index()?;
        if !names.contains(name) {
            names.push(name.clone());
            names.sort();
            self.write_index(&names)?;
        }
        Ok(())
    }

    fn remove(&self, name: &SecretName) -> Result<bool, EditError> {
        let removed = match self.entry(name.as_str(), Some(name))?.delete_credential() {
            Ok(()) => true,
            Err(Error::NoEntry) => false,
            Err(e) => return Err(keyring_error(self.kind, Some(name), e)),
        };
        let mut names = self.read_index()?;
        let before = names.len();
        names.retain(|n| n != name);
        if names.len() != before {
            self.write_index(&names)?;
        }
        Ok(removed)
    }

    fn names(&self) -> Result<Vec<SecretName>, EditError> {
        self.read_index()
    }
}
