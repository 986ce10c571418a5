//! The operating system's secret store, chosen once per process: the
//! Secret Service (D-Bus) on Linux and the BSDs when a session bus and the
//! service answer, otherwise the Linux kernel keyring; the Keychain on
//! macOS; the Credential Manager on Windows.
//!
//! Decided here: which backend `auto` picks ([`OsSecretStore::open`]) and
//! the one namespace every backend files secrets under (the Secret Service
//! attribute `service`, the kernel key description prefix, the Keychain
//! and Credential Manager service), so `mcp-cli secret` and a connection
//! read the same secrets.

use std::fmt;
use std::str::FromStr;
use std::sync::OnceLock;

use super::{SecretName, SecretStore, SecretValue};
use crate::error::{EditError, EditErrorKind};

/// The namespace secrets are filed under unless a caller names another.
pub const DEFAULT_NAMESPACE: &str = "mcp-cli";

/// Which backend to use.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum SecretBackend {
    /// The platform's store: on Linux the Secret Service when it answers,
    /// otherwise the kernel keyring.
    #[default]
    Auto,
    /// The freedesktop Secret Service over D-Bus (GNOME Keyring, KWallet,
    /// KeePassXC).
    SecretService,
    /// The Linux kernel keyring (keyutils): the user's persistent keyring,
    /// or the user keyring where there is no persistent one.
    KernelKeyring,
    /// The macOS Keychain.
    Keychain,
    /// The Windows Credential Manager.
    CredentialManager,
}

impl SecretBackend {
    /// The backend's name as written on a command line.
    pub fn as_str(self) -> &'static str {
        match self {
            SecretBackend::Auto => "auto",
            SecretBackend::SecretService => "secret-service",
            SecretBackend::KernelKeyring => "kernel-keyring",
            SecretBackend::Keychain => "keychain",
            SecretBackend::CredentialManager => "credential-manager",
        }
    }

    /// Every name [`FromStr`] accepts.
    pub const NAMES: &'static [&'static str] = &[
        "auto",
        "secret-service",
        "kernel-keyring",
        "keychain",
        "credential-manager",
    ];
}

impl fmt::Display for SecretBackend {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl FromStr for SecretBackend {
    type Err = String;

    fn from_str(text: &str) -> Result<SecretBackend, String> {
        Ok(match text {
            "auto" => SecretBackend::Auto,
            "secret-service" => SecretBackend::SecretService,
            "kernel-keyring" => SecretBackend::KernelKeyring,
            "keychain" => SecretBackend::Keychain,
            "credential-manager" => SecretBackend::CredentialManager,
            _ => {
                return Err(format!(
                    "unknown secret store `{text}` (expected one of: {})",
                    SecretBackend::NAMES.join(", ")
                ));
            }
        })
    }
}

/// The operating system's secret store, one backend chosen when it is
/// opened. `kind()` says which.
///
/// [`OsSecretStore::open_in`] opens it at once; [`OsSecretStore::deferred`]
/// opens it on first use, so a host whose entries name no secret never
/// touches a keyring (and a host without one is unaffected).
pub struct OsSecretStore {
    backend: SecretBackend,
    namespace: String,
    inner: OnceLock<Opened>,
}

/// The open backend, or the store that failed to open and why.
type Opened = Result<Box<dyn SecretStore>, (&'static str, String)>;

impl fmt::Debug for OsSecretStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("OsSecretStore")
            .field("backend", &self.backend)
            .field("kind", &self.kind())
            .finish()
    }
}

impl OsSecretStore {
    /// Opens `backend` with the [`DEFAULT_NAMESPACE`].
    pub fn open(backend: SecretBackend) -> Result<OsSecretStore, EditError> {
        OsSecretStore::open_in(backend, DEFAULT_NAMESPACE)
    }

    /// Opens `backend`, filing secrets under `namespace` (tests use their
    /// own, so nothing of the user's secrets is read or touched).
    ///
    /// `Auto` on Linux tries the Secret Service first (a session bus must
    /// be reachable and the service must open a session), and falls back
    /// to the kernel keyring otherwise; elsewhere it is the platform's one
    /// store. A backend this platform does not have is an error naming it.
    pub fn open_in(backend: SecretBackend, namespace: &str) -> Result<OsSecretStore, EditError> {
        let store = OsSecretStore::deferred(backend, namespace);
        store.inner()?;
        Ok(store)
    }

    /// `backend` under `namespace`, opened on the first call that needs it
    /// (an open that fails is not retried: every call reports it).
    pub fn deferred(backend: SecretBackend, namespace: &str) -> OsSecretStore {
        OsSecretStore {
            backend,
            namespace: namespace.to_owned(),
            inner: OnceLock::new(),
        }
    }

    /// The backend this store was asked for (`Auto` stays `Auto`; `kind()`
    /// says what it chose once open).
    pub fn backend(&self) -> SecretBackend {
        self.backend
    }

    fn inner(&self) -> Result<&dyn SecretStore, EditError> {
        let opened = self.inner.get_or_init(|| {
            open_backend(self.backend, &self.namespace).map_err(|error| match error.kind() {
                EditErrorKind::SecretStore { store, reason, .. } => (*store, reason.clone()),
                _ => (label(self.backend), error.to_string()),
            })
        });
        match opened {
            Ok(store) => Ok(store.as_ref()),
            Err((store, reason)) => Err(EditError::new(EditErrorKind::SecretStore {
                store,
                secret: None,
                reason: format!("cannot be opened: {reason}"),
            })),
        }
    }
}

/// What a store not yet opened calls itself.
fn label(backend: SecretBackend) -> &'static str {
    match backend {
        SecretBackend::Auto => "OS secret store",
        SecretBackend::SecretService => "Secret Service",
        SecretBackend::KernelKeyring => "kernel keyring",
        SecretBackend::Keychain => "Keychain",
        SecretBackend::CredentialManager => "Credential Manager",
    }
}

fn open_backend(
    backend: SecretBackend,
    namespace: &str,
) -> Result<Box<dyn SecretStore>, EditError> {
    match backend {
        SecretBackend::Auto => open_auto(namespace),
        SecretBackend::SecretService => open_secret_service(namespace),
        SecretBackend::KernelKeyring => open_kernel_keyring(namespace),
        SecretBackend::Keychain | SecretBackend::CredentialManager => {
            open_native(backend, namespace)
        }
    }
}

impl SecretStore for OsSecretStore {
    fn kind(&self) -> &'static str {
        match self.inner.get() {
            Some(Ok(store)) => store.kind(),
            _ => label(self.backend),
        }
    }
    fn get(&self, name: &SecretName) -> Result<Option<SecretValue>, EditError> {
        self.inner()?.get(name)
    }
    fn set(&self, name: &SecretName, value: &SecretValue) -> Result<(), EditError> {
        self.inner()?.set(name, value)
    }
    fn remove(&self, name: &SecretName) -> Result<bool, EditError> {
        self.inner()?.remove(name)
    }
    fn names(&self) -> Result<Vec<SecretName>, EditError> {
        self.inner()?.names()
    }
}

pub(super) fn unavailable(store: &'static str) -> EditError {
    EditError::new(EditErrorKind::SecretStore {
        store,
        secret: None,
        reason: "not available on this platform".to_owned(),
    })
}

#[cfg(target_os = "linux")]
fn open_auto(namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    match open_secret_service(namespace) {
        Ok(store) => Ok(store),
        Err(_) => open_kernel_keyring(namespace),
    }
}

#[cfg(not(target_os = "linux"))]
fn open_auto(namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    let backend = if cfg!(target_os = "macos") {
        SecretBackend::Keychain
    } else if cfg!(windows) {
        SecretBackend::CredentialManager
    } else {
        SecretBackend::SecretService
    };
    open_backend(backend, namespace)
}

#[cfg(all(
    unix,
    not(any(target_os = "macos", target_os = "ios", target_os = "android"))
))]
fn open_secret_service(namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    Ok(Box::new(super::service::SecretServiceStore::open(
        namespace,
    )?))
}

#[cfg(not(all(
    unix,
    not(any(target_os = "macos", target_os = "ios", target_os = "android"))
)))]
fn open_secret_service(_namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    Err(unavailable("Secret Service"))
}

#[cfg(target_os = "linux")]
fn open_kernel_keyring(namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    Ok(Box::new(super::keyutils::KernelKeyringStore::open(
        namespace,
    )?))
}

#[cfg(not(target_os = "linux"))]
fn open_kernel_keyring(_namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    Err(unavailable("kernel keyring"))
}

#[cfg(any(target_os = "macos", windows))]
fn open_native(backend: SecretBackend, namespace: &str) -> Result<Box<dyn SecretStore>, EditError> {
    Ok(Box::new(super::native::NativeStore::open(
        backend, namespace,
    )?))
}

#[cfg(not(any(target_os = "macos", windows)))]
fn open_native(
    backend: SecretBackend,
    _namespace: &str,
) -> Result<Box<dyn SecretStore>, EditError> {
    Err(unavailable(match backend {
        SecretBackend::Keychain => "Keychain",
        _ => "Credential Manager",
    }))
}

/// A keyring-core error as an [`EditError`] naming `store` and `secret`.
/// The variants that carry the stored bytes are put in words without them.
#[cfg(not(any(target_os = "ios", target_os = "android")))]
pub(super) fn keyring_error(
    store: &'static str,
    secret: Option<&SecretName>,
    error: keyring_core::Error,
) -> EditError {
    use keyring_core::Error;
    let reason = match error {
        Error::PlatformFailure(e) => format!("the store failed: {e}"),
        Error::NoStorageAccess(e) => format!("the store cannot be reached: {e}"),
        Error::NoEntry => "no such secret".to_owned(),
        Error::BadEncoding(_) => "the stored value is not UTF-8".to_owned(),
        Error::BadDataFormat(..) => "the stored value is not in the expected format".to_owned(),
        Error::Ambiguous(entries) => format!("{} stored items match it", entries.len()),
        Error::TooLong(attribute, limit) => {
            format!("`{attribute}` is longer than the store allows ({limit})")
        }
        other => other.to_string(),
    };
    EditError::new(EditErrorKind::SecretStore {
        store,
        secret: secret.map(SecretName::to_string),
        reason,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_names_round_trip() {
        for name in SecretBackend::NAMES {
            let backend: SecretBackend = name.parse().unwrap();
            assert_eq!(backend.as_str(), *name);
        }
        assert!("gnome".parse::<SecretBackend>().is_err());
    }
}
