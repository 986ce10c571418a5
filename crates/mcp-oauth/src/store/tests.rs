//! Every store against one contract (the `check` table), then what only
//! the file store (its file's mode and format) or only the secret store
//! (its secret's name) promises.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use mcp_config::secret::{MemorySecretStore, SecretStore, SecretValue};

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

/// The stores under test, each over its own temporary folder.
#[derive(Debug, Clone, Copy)]
enum Kind {
    File,
    Memory,
    Secret,
}

const KINDS: [Kind; 3] = [Kind::File, Kind::Memory, Kind::Secret];

/// One store with what the contract needs to reach past it.
struct Fixture {
    store: Arc<dyn CredentialStore>,
    dir: PathBuf,
    secrets: Arc<MemorySecretStore>,
    kind: Kind,
}

impl Fixture {
    fn new(kind: Kind, dir: &Path) -> Fixture {
        let dir = dir.join("creds");
        let secrets = Arc::new(MemorySecretStore::new());
        let store: Arc<dyn CredentialStore> = match kind {
            Kind::File => Arc::new(FileCredentialStore::new(&dir)),
            Kind::Memory => Arc::new(MemoryCredentialStore::new()),
            Kind::Secret => Arc::new(SecretCredentialStore::new(secrets.clone(), &dir)),
        };
        Fixture {
            store,
            dir,
            secrets,
            kind,
        }
    }

    /// Puts `text` where the store keeps `key`'s credentials, bypassing it;
    /// `None` for the memory store, which holds parsed values only.
    fn write_raw(&self, key: &StoreKey, text: &str) -> Option<()> {
        match self.kind {
            Kind::File => {
                fs::create_dir_all(&self.dir).unwrap();
                fs::write(self.dir.join(format!("{}.json", key.file_stem())), text).unwrap();
            }
            Kind::Memory => return None,
            Kind::Secret => {
                let name = SecretCredentialStore::secret_name(key).unwrap();
                self.secrets.set(&name, &SecretValue::new(text)).unwrap();
            }
        }
        Some(())
    }

    /// Whether the store's lock file for `key` exists (`None`: the store
    /// locks in memory).
    fn lock_file_exists(&self, key: &StoreKey) -> Option<bool> {
        match self.kind {
            Kind::Memory => None,
            Kind::File | Kind::Secret => Some(lock::lock_path(&self.dir, key).exists()),
        }
    }
}

/// The contract every store keeps: round trip, replace, separate keys,
/// clear (twice), an exclusive lock until dropped, the lock file gone
/// after a clear, and unreadable contents named without their text.
fn check(kind: Kind) {
    let tmp = tempfile::tempdir().unwrap();
    let f = Fixture::new(kind, tmp.path());
    let key = StoreKey::new("my server/1", "https://mcp.example.com/mcp");
    let other = StoreKey::new("my server/1", "https://other.example.com/mcp");
    let store = &f.store;

    assert_eq!(store.load(&key).unwrap(), None, "{kind:?}: empty");
    store.save(&key, &sample()).unwrap();
    assert_eq!(store.load(&key).unwrap(), Some(sample()), "{kind:?}: saved");
    let location = store.location(&key);
    match kind {
        Kind::File => assert_eq!(
            location,
            format!(
                "{}",
                f.dir.join(format!("{}.json", key.file_stem())).display()
            )
        ),
        Kind::Memory => assert_eq!(location, "memory"),
        Kind::Secret => assert_eq!(location, format!("memory secret oauth.{}", key.file_stem())),
    }
    assert_eq!(store.load(&other).unwrap(), None, "{kind:?}: other url");
    let mut changed = sample();
    changed.tokens = None;
    store.save(&key, &changed).unwrap();
    assert_eq!(
        store.load(&key).unwrap(),
        Some(changed),
        "{kind:?}: replaced"
    );

    // The lock excludes a second taker, in this process too, until dropped.
    let first = store.lock(&key).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    let waiter = {
        let store = store.clone();
        let key = key.clone();
        std::thread::spawn(move || {
            let _second = store.lock(&key).unwrap();
            tx.send(()).unwrap();
        })
    };
    assert!(
        rx.recv_timeout(Duration::from_millis(100)).is_err(),
        "{kind:?}: a second lock while the first is held"
    );
    drop(first);
    rx.recv_timeout(Duration::from_secs(5)).unwrap();
    waiter.join().unwrap();
    // Another server's lock is not this one.
    let _held = store.lock(&key).unwrap();
    drop(store.lock(&other).unwrap());
    drop(_held);

    assert_ne!(f.lock_file_exists(&key), Some(false), "{kind:?}: lock file");
    store.clear(&key).unwrap();
    assert_eq!(store.load(&key).unwrap(), None, "{kind:?}: cleared");
    assert_ne!(
        f.lock_file_exists(&key),
        Some(true),
        "{kind:?}: lock file left"
    );
    store.clear(&key).unwrap();

    // Contents that are not credentials: the error names the server and
    // where, and never quotes the text (a token among it).
    let raw = r#"{"tokens":{"access_token":"tok-aaaa","expires_at":"tok-bbbb"}}"#;
    if f.write_raw(&key, raw).is_some() {
        let err = store.load(&key).unwrap_err();
        let text = format!("{err} {err:?}");
        assert!(
            text.starts_with("credential store for my server/1 at "),
            "{text}"
        );
        assert!(
            text.contains(
                "not valid credentials json (a value of the wrong shape at line 1 column "
            ),
            "{text}"
        );
        assert!(!text.contains("tok-"), "{kind:?}: {text}");
        assert!(
            std::error::Error::source(&err).is_none(),
            "{kind:?}: a source could quote"
        );
        f.write_raw(&key, "{not json").unwrap();
        let err = store.load(&key).unwrap_err().to_string();
        assert!(
            err.contains("not valid credentials json (a syntax error"),
            "{err}"
        );
    }
}

#[test]
fn every_store_keeps_the_contract() {
    for kind in KINDS {
        check(kind);
    }
}

#[test]
fn file_store_file_is_private_and_replaced_atomically() {
    let dir = tempfile::tempdir().unwrap();
    let store = FileCredentialStore::new(dir.path().join("creds"));
    let key = StoreKey::new("my server/1", "https://mcp.example.com/mcp");
    store.save(&key, &sample()).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs::metadata(store.path_for(&key))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
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
fn secret_store_keeps_one_secret_per_server_and_only_the_lock_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let secrets = Arc::new(MemorySecretStore::new());
    let store = SecretCredentialStore::new(secrets.clone(), dir.path().join("locks"));
    let key = StoreKey::new("srv", "https://mcp.example.com/mcp");
    store.save(&key, &sample()).unwrap();
    let name = SecretCredentialStore::secret_name(&key).unwrap();
    assert_eq!(name.as_str(), format!("oauth.{}", key.file_stem()));
    assert_eq!(store.location(&key), format!("memory secret {name}"));
    assert_eq!(secrets.names().unwrap(), vec![name.clone()]);
    // The value is the same JSON the file store writes.
    let value: serde_json::Value =
        serde_json::from_str(secrets.get(&name).unwrap().unwrap().expose()).unwrap();
    assert_eq!(value, serde_json::to_value(sample()).unwrap());
    // No token reaches the folder: it holds the lock file and nothing else.
    drop(store.lock(&key).unwrap());
    let names: Vec<String> = fs::read_dir(dir.path().join("locks"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, [format!("{}.lock", key.file_stem())]);
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = fs::metadata(dir.path().join("locks"))
            .unwrap()
            .permissions()
            .mode()
            & 0o777;
        assert_eq!(mode, 0o700, "lock dir mode");
    }
}

#[test]
fn every_key_makes_a_valid_secret_name() {
    for (name, url) in [
        ("srv", "https://a.example.com/mcp"),
        ("../x y", "u"),
        ("ключ", "https://b.example.com/"),
        ("", ""),
        (&"n".repeat(500), "https://c.example.com/"),
    ] {
        let key = StoreKey::new(name, url);
        let secret = SecretCredentialStore::secret_name(&key).unwrap();
        assert!(secret.as_str().starts_with("oauth."), "{secret}");
    }
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
