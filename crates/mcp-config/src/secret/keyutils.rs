//! The Linux kernel keyring (keyutils) as a [`SecretStore`]: the fallback
//! where no Secret Service runs (a server, a container, an SSH session).
//!
//! Each secret is a `user` key described `NAMESPACE:NAME`, linked into the
//! user's persistent keyring (it outlives the login session, and expires
//! after the kernel's `persistent_keyring_expiry` of idleness), or into
//! the user keyring where the kernel has no persistent keyrings. Keys stay
//! in kernel memory: a reboot forgets them. `names()` is the keyring's own
//! listing, filtered by the namespace, so no index of names is kept.

use linux_keyutils::{Key, KeyError, KeyRing, KeyRingIdentifier, KeyType};

use super::{SecretName, SecretStore, SecretValue};
use crate::error::{EditError, EditErrorKind};

/// What the store calls itself in messages.
const KIND: &str = "kernel keyring";

/// The most keys a listing reads from the keyring.
const MAX_LINKS: usize = 65_536;

/// Secrets as keys in the user's persistent (or user) kernel keyring.
#[derive(Debug)]
pub(crate) struct KernelKeyringStore {
    keyring: KeyRing,
    prefix: String,
}

fn failure(secret: Option<&SecretName>, what: &str, error: KeyError) -> EditError {
    EditError::new(EditErrorKind::SecretStore {
        store: KIND,
        secret: secret.map(SecretName::to_string),
        reason: format!("{what} failed: {error}"),
    })
}

impl KernelKeyringStore {
    /// The user's persistent keyring (linked into the session keyring, as
    /// `keyctl get_persistent @s` does), or the user keyring.
    pub(crate) fn open(namespace: &str) -> Result<KernelKeyringStore, EditError> {
        let keyring = match KeyRing::get_persistent(KeyRingIdentifier::Session) {
            Ok(keyring) => keyring,
            Err(_) => KeyRing::from_special_id(KeyRingIdentifier::User, true)
                .map_err(|e| failure(None, "opening the user keyring", e))?,
        };
        Ok(KernelKeyringStore {
            keyring,
            prefix: format!("{namespace}:"),
        })
    }

    fn description(&self, name: &SecretName) -> String {
        format!("{}{}", self.prefix, name.as_str())
    }

    /// The key of `name`, when there is one. A key revoked, expired or
    /// invalidated but not yet collected by the kernel is none.
    fn find(&self, name: &SecretName) -> Result<Option<Key>, EditError> {
        match self.keyring.search(&self.description(name)) {
            Ok(key) => Ok(Some(key)),
            Err(KeyError::KeyDoesNotExist | KeyError::KeyRevoked | KeyError::KeyExpired) => {
                Ok(None)
            }
            Err(e) => Err(failure(Some(name), "looking it up", e)),
        }
    }
}

impl SecretStore for KernelKeyringStore {
    fn kind(&self) -> &'static str {
        KIND
    }

    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError> {
        let Some(key) = self.find(name)? else {
            return Ok(None);
        };
        let bytes = key
            .read_to_vec()
            .map_err(|e| failure(Some(name), "reading it", e))?;
        let value = String::from_utf8(bytes).map_err(|_| {
            EditError::new(EditErrorKind::SecretStore {
                store: KIND,
                secret: Some(name.to_string()),
                reason: "the stored value is not UTF-8".to_owned(),
            })
        })?;
        Ok(Some(SecretValue::new(value)))
    }

    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError> {
        // A key of the same type and description in this keyring is
        // replaced (its payload updated), so a set never leaves two.
        self.keyring
            .add_key(&self.description(name), value.expose().as_bytes())
            .map(|_| ())
            .map_err(|e| failure(Some(name), "storing it", e))
    }

    fn remove(&self, name: &SecretName) -> Result<bool, EditError> {
        let Some(key) = self.find(name)? else {
            return Ok(false);
        };
        // Invalidated: gone from every keyring that links it. The kernel
        // collects it later, on its own; until then a search may still
        // see it as revoked, which `find` counts as absent.
        match key.invalidate() {
            Ok(()) | Err(KeyError::KeyDoesNotExist | KeyError::KeyRevoked) => Ok(true),
            Err(e) => Err(failure(Some(name), "removing it", e)),
        }
    }

    fn names(&self) -> Result<Vec<SecretName>, EditError> {
        let links = self
            .keyring
            .get_links(MAX_LINKS)
            .map_err(|e| failure(None, "listing the keyring", e))?;
        let mut names = Vec::new();
        for link in links.iter() {
            let Some(key) = link.as_key() else { continue };
            // A key invalidated or expired since the listing is skipped.
            let Ok(metadata) = key.metadata() else {
                continue;
            };
            if metadata.get_type() != KeyType::User {
                continue;
            }
            if let Some(name) = metadata.get_description().strip_prefix(&self.prefix)
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
