//! The freedesktop Secret Service (GNOME Keyring, KWallet, KeePassXC) as a
//! [`SecretStore`], over D-Bus in pure Rust (zbus).
//!
//! Each secret is an item in the default collection with the attributes
//! `service = NAMESPACE` and `username = NAME` (the keyring crates'
//! layout, so other keyring tools see the same items). `names()` is an
//! attribute search on `service`, so no index of names is kept.

use std::collections::HashMap;
use std::sync::Arc;

use keyring_core::api::CredentialStoreApi;
use keyring_core::{Entry, Error};
use zbus_secret_service_keyring_store::Store;

use super::os::keyring_error;
use super::{SecretName, SecretStore, SecretValue};
use crate::error::EditError;

const KIND: &str = "Secret Service";

/// Secrets as Secret Service items.
pub(crate) struct SecretServiceStore {
    store: Arc<Store>,
    namespace: String,
}

impl std::fmt::Debug for SecretServiceStore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SecretServiceStore")
            .field("namespace", &self.namespace)
            .finish()
    }
}

impl SecretServiceStore {
    /// Connects to the session bus and opens a session with the service;
    /// an error when either does not answer.
    pub(crate) fn open(namespace: &str) -> Result<SecretServiceStore, EditError> {
        let store = Store::new().map_err(|e| keyring_error(KIND, None, e))?;
        Ok(SecretServiceStore {
            store,
            namespace: namespace.to_owned(),
        })
    }

    fn entry(&self, name: &SecretName) -> Result<Entry, EditError> {
        self.store
            .build(&self.namespace, name.as_str(), None)
            .map_err(|e| keyring_error(KIND, Some(name), e))
    }
}

impl SecretStore for SecretServiceStore {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError> {
        match self.entry(name)?.get_password() {
            Ok(value) => Ok(Some(SecretValue::new(value))),
            Err(Error::NoEntry) => Ok(None),
            Err(e) => Err(keyring_error(KIND, Some(name), e)),
        }
    }

    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError> {
        self.entry(name)?
            .set_password(value.expose())
            .map_err(|e| keyring_error(KIND, Some(name), e))
    }

    fn remove(&self, name: &SecretName) -> Result<bool, EditError> {
        match self.entry(name)?.delete_credential() {
            Ok(()) => Ok(true),
            Err(Error::NoEntry) => Ok(false),
            Err(e) => Err(keyring_error(KIND, Some(name), e)),
        }
    }

    fn names(&self) -> Result<Vec<SecretName>, EditError> {
        let spec = HashMap::from([("service", self.namespace.as_str())]);
        let entries = self
            .store
            .search(&spec)
            .map_err(|e| keyring_error(KIND, None, e))?;
        let mut names = Vec::new();
        for entry in entries {
            let attributes = entry
                .get_attributes()
                .map_err(|e| keyring_error(KIND, None, e))?;
            if let Some(name) = attributes.get("username")
                && let Ok(name) = SecretName::new(name)
            {
                names.push(name);
            }
        }
        names.sort();
        names.dedup();
        Ok(names)
    }
}
