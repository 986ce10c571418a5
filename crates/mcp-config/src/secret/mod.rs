//! Secrets: values a server entry names instead of holding
//! (`${secret:NAME}` in an `env` or `headers` value), kept in a
//! [`SecretStore`] and put in only when a connection is opened, so no file
//! the user edits and no listing ever holds them.
//!
//! What is decided here, once: what a secret's name may be
//! ([`SecretName`]), that a value never shows itself ([`SecretValue`]: its
//! `Debug` prints `***` and it has no `Display`), and the store interface
//! every backend implements. [`MemorySecretStore`] keeps values in the
//! process (tests, and hosts that bring their own vault). Where a reference
//! may stand and how values are put in: `reference.rs` ([`resolve`]). The
//! operating system's stores (feature `os-store`): `os.rs`
//! (`OsSecretStore`), one file per backend.

use std::collections::BTreeMap;
use std::fmt;
use std::sync::Mutex;

use crate::error::{EditError, EditErrorKind};

mod reference;
pub(crate) use reference::{Reference, references};
pub use reference::{SECRET_REFERENCE_PREFIX, referenced_secrets, resolve};

#[cfg(feature = "os-store")]
mod os;
#[cfg(feature = "os-store")]
pub use os::{DEFAULT_NAMESPACE, OsSecretStore, SecretBackend};

#[cfg(all(feature = "os-store", target_os = "linux"))]
mod keyutils;
#[cfg(all(feature = "os-store", any(target_os = "macos", windows)))]
mod native;
#[cfg(all(
    feature = "os-store",
    unix,
    not(any(target_os = "macos", target_os = "ios", target_os = "android"))
))]
mod service;

/// The longest secret name, in bytes.
pub const MAX_SECRET_NAME: usize = 128;

/// A secret's name: 1 to [`MAX_SECRET_NAME`] ASCII letters, digits, `_`,
/// `-` and `.`, starting with a letter or digit (so it is the same key in
/// every OS store and can never be read as a path or an option).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SecretName(String);

impl SecretName {
    /// `name`, when it follows the rule; otherwise why not.
    pub fn new(name: &str) -> Result<SecretName, EditError> {
        match secret_name_problem(name) {
            None => Ok(SecretName(name.to_owned())),
            Some(reason) => Err(EditError::new(EditErrorKind::InvalidName {
                name: name.to_owned(),
                reason: format!("not a secret name: {reason}"),
            })),
        }
    }

    /// The name as written.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for SecretName {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

/// Why `name` is not a secret name, or `None` when it is one.
pub fn secret_name_problem(name: &str) -> Option<&'static str> {
    if name.is_empty() {
        return Some("it is empty");
    }
    if name.len() > MAX_SECRET_NAME {
        return Some("it is longer than 128 bytes");
    }
    if !name.as_bytes()[0].is_ascii_alphanumeric() {
        return Some("it must start with a letter or digit");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'-' | b'.'))
    {
        return Some("only ASCII letters, digits, '_', '-' and '.' are allowed");
    }
    None
}

/// A secret's value. Its `Debug` prints `***`; it has no `Display`, so it
/// cannot reach a message by accident. Reading it takes an explicit
/// [`SecretValue::expose`].
#[derive(Clone, PartialEq, Eq)]
pub struct SecretValue(String);

impl SecretValue {
    /// Wraps a value.
    pub fn new(value: impl Into<String>) -> SecretValue {
        SecretValue(value.into())
    }

    /// The value, for the one place that must use it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl fmt::Debug for SecretValue {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("***")
    }
}

/// Where secrets live. Calls may block (a D-Bus round trip, a system
/// call); async callers run them on a blocking thread. Errors name the
/// store and the secret, never a value.
pub trait SecretStore: Send + Sync + fmt::Debug {
    /// What the store is, for messages (`"Secret Service"`, `"memory"`).
    fn kind(&self) -> &'static str;
    /// The value of `name`, or `None` when the store has no such secret.
    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError>;
    /// Stores `value` as `name`, replacing any earlier value.
    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError>;
    /// Removes `name`; whether there was one.
    fn remove(&self, name: &SecretName) -> Result<bool, EditError>;
    /// Every secret's name, sorted.
    fn names(&self) -> Result<Vec<SecretName>, EditError>;
}

/// Secrets held in this process only.
#[derive(Debug, Default)]
pub struct MemorySecretStore {
    values: Mutex<BTreeMap<SecretName, SecretValue>>,
}

impl MemorySecretStore {
    /// An empty store.
    pub fn new() -> MemorySecretStore {
        MemorySecretStore::default()
    }

    fn values(&self) -> std::sync::MutexGuard<'_, BTreeMap<SecretName, SecretValue>> {
        // A panic elsewhere while holding the lock leaves the map whole.
        self.values
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl SecretStore for MemorySecretStore {
    fn kind(&self) -> &'static str {
        "memory"
    }

    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError> {
        Ok(self.values().get(name).cloned())
    }

    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError> {
        self.values().insert(name.clone(), value.clone());
        Ok(())
    }

    fn remove(&self, name: &SecretName) -> Result<bool, EditError> {
        Ok(self.values().remove(name).is_some())
    }

    fn names(&self) -> Result<Vec<SecretName>, EditError> {
        Ok(self.values().keys().cloned().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn secret_names_follow_one_rule() {
        for (name, ok) in [
            ("GITHUB_TOKEN", true),
            ("acme.api-key_2", true),
            ("9lives", true),
            ("", false),
            (".hidden", false),
            ("-flag", false),
            ("with space", false),
            ("a/b", false),
            ("ключ", false),
            (&"x".repeat(128), true),
            (&"x".repeat(129), false),
        ] {
            assert_eq!(SecretName::new(name).is_ok(), ok, "{name:?}");
        }
    }

    #[test]
    fn a_value_never_shows_itself() {
        let value = SecretValue::new("hunter2");
        assert_eq!(format!("{value:?}"), "***");
        assert_eq!(value.expose(), "hunter2");
    }

    #[test]
    fn the_memory_store_keeps_replaces_and_forgets() {
        let store = MemorySecretStore::new();
        let name = SecretName::new("api").unwrap();
        assert_eq!(store.get(&name).unwrap(), None);
        store.set(&name, &SecretValue::new("one")).unwrap();
        store.set(&name, &SecretValue::new("two")).unwrap();
        assert_eq!(store.get(&name).unwrap().unwrap().expose(), "two");
        assert_eq!(store.names().unwrap(), vec![name.clone()]);
        assert!(store.remove(&name).unwrap());
        assert!(!store.remove(&name).unwrap());
    }
}
