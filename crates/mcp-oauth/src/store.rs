//! Where credentials live between runs: the [`CredentialStore`] trait, a
//! file store (one 0600 file per server, atomic replace, a lock file that
//! serialises refreshes across processes) and an in-memory store.

use std::collections::HashMap;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex};

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::{AuthError, AuthErrorKind, Secret};

/// Identifies one server's credentials: its configured name plus its url,
/// so a renamed or repointed server never receives another's tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreKey {
    /// The configured server name.
    pub server_name: String,
    /// The server url.
    pub server_url: String,
}

impl StoreKey {
    /// A key for `server_name` at `server_url`.
    pub fn new(server_name: impl Into<String>, server_url: impl Into<String>) -> Self {
        Self {
            server_name: server_name.into(),
            server_url: server_url.into(),
        }
    }

    /// The file stem: the name reduced to `[A-Za-z0-9_-]` plus the first
    /// 16 hex digits of SHA-256 of the url.
    pub fn file_stem(&self) -> String {
        let name: String = self
            .server_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        let digest = Sha256::digest(self.server_url.as_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("{name}-{hex}")
    }
}

/// A client identity obtained by registration or configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The `client_id` (a URL for client ID metadata documents).
    pub client_id: String,
    /// The secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub token_endpoint_auth_method: String,
    /// The redirect uri registered with the client, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

/// Tokens granted to a client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSet {
    /// The bearer token.
    pub access_token: Secret,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// Expiry in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (space separated), else the scopes requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The lifetime the server gave the access token (`expires_in`), so the
    /// refresh margin can be bounded by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<u64>,
}

impl TokenSet {
    /// Whether the access token expires within `margin_secs` of `now`.
    pub fn expires_within(&self, now: u64, margin_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| now.saturating_add(margin_secs) >= at)
    }

    /// Whether the token is due for a refresh: within `margin_secs` of its
    /// expiry, with the margin never more than a quarter of the token's
    /// lifetime, so a token living a minute or less is refreshed about once
    /// per lifetime rather than before every request.
    pub fn refresh_due(&self, now: u64, margin_secs: u64) -> bool {
        let margin = match self.lifetime {
            Some(lifetime) => margin_secs.min(lifetime / 4),
            None => margin_secs,
        };
        self.expires_within(now, margin)
    }

    /// Whether the access token has expired at `now`.
    pub fn expired(&self, now: u64) -> bool {
        self.expires_within(now, 0)
    }
}

/// Everything stored for one server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCredentials {
    /// The authorization server's issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The token endpoint, so a refresh needs no discovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The RFC 8707 resource the tokens are for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The client identity the current tokens were issued to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// Dynamic registrations by the issuer that made them: a registration
    /// is only ever used with its own authorization server, and one kept
    /// here is reused if the server moves back.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub registrations: std::collections::BTreeMap<String, ClientRegistration>,
    /// The authorization server's RFC 7009 revocation endpoint, so a
    /// logout can revoke without discovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,

    /// The current tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
    /// The DPoP proof key (base64url PKCS#8) the tokens are bound to; set
    /// exactly when they are DPoP tokens, so every refresh and every later
    /// process proves possession of the same key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

/// Held while one process refreshes a server's tokens; dropping it lets the
/// next one in.
pub type StoreLock = Box<dyn Send>;

/// Loads, saves and clears one server's credentials. Calls block (file I/O
/// and lock waits); async callers run them on a blocking thread.
pub trait CredentialStore: Send + Sync + std::fmt::Debug {
    /// The stored credentials, or `None` when there are none.
    fn load(&self, key: &StoreKey) -> Result<Option<StoredCredentials>, AuthError>;
    /// Replaces the stored credentials.
    fn save(&self, key: &StoreKey, credentials: &StoredCredentials) -> Result<(), AuthError>;
    /// Removes the stored credentials (logout). Clearing nothing is fine.
    fn clear(&self, key: &StoreKey) -> Result<(), AuthError>;
    /// Takes the exclusive refresh lock for `key`, waiting for other holders
    /// (in this or another process).
    fn lock(&self, key: &StoreKey) -> Result<StoreLock, AuthError>;
}

/// One JSON file per server in a directory the caller chooses, readable by
/// the user alone.
#[derive(Debug, Clone)]
pub struct FileCredentialStore {
    dir: PathBuf,
}

impl FileCredentialStore {
    /// A store in `dir` (created 0700 on first save; an existing folder
    /// readable by others is made 0700).
    pub fn new(dir: impl Into<PathBuf>) -> Self {
        Self { dir: dir.into() }
    }

    /// The credentials file for `key`.
    pub fn path_for(&self, key: &StoreKey) -> PathBuf {
        self.dir.join(format!("{}.json", key.file_stem()))
    }

    fn lock_path_for(&self, key: &StoreKey) -> PathBuf {
        self.dir.join(format!("{}.lock", key.file_stem()))
    }

    fn ensure_dir(&self, key: &StoreKey) -> Result<(), AuthError> {
        let mut builder = fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
            .create(&self.dir)
            .map_err(|e| store_error(key, &self.dir, e))?;
        // A folder that existed with looser bits is made private too: the
        // mode above applies only to folders this call creates.
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let meta = fs::metadata(&self.dir).map_err(|e| store_error(key, &self.dir, e))?;
            if meta.permissions().mode() & 0o077 != 0 {
                fs::set_permissions(&self.dir, fs::Permissions::from_mode(0o700))
                    .map_err(|e| store_error(key, &self.dir, e))?;
            }
        }
        Ok(())
    }
}

/// A store failure caused by `e`, kept as the source.
fn store_error<E>(key: &StoreKey, path: &Path, e: E) -> AuthError
where
    E: std::error::Error + Send + Sync + 'static,
{
    store_failure(key, path, e.to_string()).with_source(e)
}

fn store_failure(key: &StoreKey, path: &Path, message: String) -> AuthError {
    AuthError::new(
        key.server_name.clone(),
        AuthErrorKind::Store {
            path: path.display().to_string(),
            message,
        },
    )
}

fn open_private(path: &Path, truncate: bool) -> std::io::Result<fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(truncate);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

impl CredentialStore for FileCredentialStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredCredentials>, AuthError> {
        let path = self.path_for(key);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(key, &path, e)),
        };
        serde_json::from_str(&text).map(Some).map_err(|e| {
            store_failure(key, &path, format!("not valid credentials json: {e}")).with_source(e)
        })
    }

    fn save(&self, key: &StoreKey, credentials: &StoredCredentials) -> Result<(), AuthError> {
        self.ensure_dir(key)?;
        let path = self.path_for(key);
        let tmp = self.dir.join(format!(
            ".{}.{}.tmp",
            key.file_stem(),
            crate::pkce::random_urlsafe(6)
        ));
        let text =
            serde_json::to_vec_pretty(credentials).map_err(|e| store_error(key, &path, e))?;
        let write = || -> std::io::Result<()> {
            let mut file = open_private(&tmp, true)?;
            file.write_all(&text)?;
            file.sync_all()?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            store_error(key, &path, e)
        })
    }

    fn clear(&self, key: &StoreKey) -> Result<(), AuthError> {
        // The lock file goes too: after a logout nothing of the server is
        // left in the folder.
        for path in [self.path_for(key), self.lock_path_for(key)] {
            match fs::remove_file(&path) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
                Err(e) => return Err(store_error(key, &path, e)),
            }
        }
        Ok(())
    }

    fn lock(&self, key: &StoreKey) -> Result<StoreLock, AuthError> {
        use fs4::fs_std::FileExt as _;
        self.ensure_dir(key)?;
        let path = self.lock_path_for(key);
        let file = open_private(&path, false).map_err(|e| store_error(key, &path, e))?;
        file.lock_exclusive()
            .map_err(|e| store_error(key, &path, e))?;
        // Closing the file releases the lock.
        Ok(Box::new(file))
    }
}

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
    store_failure(key, Path::new("memory"), "store lock poisoned".into())
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
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> StoredCredentials {
        StoredCredentials {
            issuer: Some("https://as.example.com".into()),
            token_endpoint: Some("https://as.example.com/token".into()),
            resource: Some("https://mcp.example.com/mcp".into()),
            client: Some(ClientRegistration {
                client_id: "client-1".into(),
                client_secret: Some(Secret::new("client-secret-value")),
                token_endpoint_auth_method: "client_secret_basic".into(),
                redirect_uri: Some("http://127.0.0.1:1/callback".into()),
            }),
            tokens: Some(TokenSet {
                access_token: Secret::new("access-token-value"),
                refresh_token: Some(Secret::new("refresh-token-value")),
                expires_at: Some(1_000),
                scope: Some("a b".into()),
                lifetime: Some(3_600),
            }),
            registrations: [(
                "https://as.example.com".to_owned(),
                ClientRegistration {
                    client_id: "client-1".into(),
                    client_secret: Some(Secret::new("client-secret-value")),
                    token_endpoint_auth_method: "client_secret_basic".into(),
                    redirect_uri: Some("http://127.0.0.1:1/callback".into()),
                },
            )]
            .into(),
            revocation_endpoint: Some("https://as.example.com/revoke".into()),
            dpop_key: None,
        }
    }

    #[test]
    fn file_store_round_trip_is_private_and_atomic() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileCredentialStore::new(dir.path().join("creds"));
        let key = StoreKey::new("my server/1", "https://mcp.example.com/mcp");
        assert_eq!(store.load(&key).unwrap(), None);
        store.save(&key, &sample()).unwrap();
        assert_eq!(store.load(&key).unwrap(), Some(sample()));
        let path = store.path_for(&key);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt as _;
            let mode = fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600, "token file mode");
            let dir_mode = fs::metadata(dir.path().join("creds"))
                .unwrap()
                .permissions()
                .mode()
                & 0o777;
            assert_eq!(dir_mode, 0o700, "store dir mode");
        }
        // No temporary files are left behind by the atomic replace.
        let names: Vec<String> = fs::read_dir(dir.path().join("creds"))
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names, [format!("{}.json", key.file_stem())]);
        store.clear(&key).unwrap();
        assert_eq!(store.load(&key).unwrap(), None);
        store.clear(&key).unwrap();
    }

    #[test]
    fn credential_file_format() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileCredentialStore::new(dir.path());
        let key = StoreKey::new("srv", "https://mcp.example.com/mcp");
        store.save(&key, &sample()).unwrap();
        let text = fs::read_to_string(store.path_for(&key)).unwrap();
        let value: serde_json::Value = serde_json::from_str(&text).unwrap();
        insta::assert_json_snapshot!(value);
        assert_eq!(
            store.path_for(&key).file_name().unwrap().to_string_lossy(),
            format!("{}.json", key.file_stem())
        );
    }

    #[test]
    fn keys_separate_servers_by_name_and_url() {
        let a = StoreKey::new("srv", "https://a.example.com/mcp").file_stem();
        let b = StoreKey::new("srv", "https://b.example.com/mcp").file_stem();
        let c = StoreKey::new("other", "https://a.example.com/mcp").file_stem();
        assert_ne!(a, b);
        assert_ne!(a, c);
        assert!(a.starts_with("srv-") && a.len() == "srv-".len() + 16, "{a}");
        assert_eq!(StoreKey::new("../x y", "u").file_stem()[..6], *"___x_y");
    }

    #[test]
    fn corrupt_file_names_the_server_and_path() {
        let dir = tempfile::tempdir().unwrap();
        let store = FileCredentialStore::new(dir.path());
        let key = StoreKey::new("srv", "https://a.example.com/mcp");
        fs::write(store.path_for(&key), "{not json").unwrap();
        let err = store.load(&key).unwrap_err().to_string();
        assert!(err.starts_with("credential store for srv at "), "{err}");
        assert!(err.contains("not valid credentials json"), "{err}");
    }

    #[test]
    fn memory_lock_excludes_until_dropped() {
        let store = MemoryCredentialStore::new();
        let key = StoreKey::new("srv", "u");
        let first = store.lock(&key).unwrap();
        let store2 = store.clone();
        let key2 = key.clone();
        let (tx, rx) = std::sync::mpsc::channel();
        let waiter = std::thread::spawn(move || {
            let _second = store2.lock(&key2).unwrap();
            tx.send(()).unwrap();
        });
        assert!(
            rx.recv_timeout(std::time::Duration::from_millis(100))
                .is_err()
        );
        drop(first);
        rx.recv_timeout(std::time::Duration::from_secs(5)).unwrap();
        waiter.join().unwrap();
    }

    #[test]
    fn debug_never_shows_secrets() {
        let text = format!("{:?}", sample());
        for secret in [
            "client-secret-value",
            "access-token-value",
            "refresh-token-value",
        ] {
            assert!(!text.contains(secret), "{text}");
        }
        assert!(text.contains("***"));
    }
}
