//! The file store: one JSON file per server in a folder the caller
//! chooses, readable by the user alone, replaced atomically; the refresh
//! lock file sits beside it.

use std::fs;
use std::io::Write as _;
use std::path::PathBuf;

use super::lock::{self, shown};
use super::{CredentialStore, StoreKey, StoreLock, StoredCredentials, parse, store_error};
use crate::AuthError;

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
}

impl CredentialStore for FileCredentialStore {
    fn load(&self, key: &StoreKey) -> Result<Option<StoredCredentials>, AuthError> {
        let path = self.path_for(key);
        let text = match fs::read_to_string(&path) {
            Ok(text) => text,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
            Err(e) => return Err(store_error(key, &shown(&path), e)),
        };
        parse(key, &shown(&path), &text).map(Some)
    }

    fn save(&self, key: &StoreKey, credentials: &StoredCredentials) -> Result<(), AuthError> {
        lock::ensure_private_dir(&self.dir, key)?;
        let path = self.path_for(key);
        let tmp = self.dir.join(format!(
            ".{}.{}.tmp",
            key.file_stem(),
            crate::pkce::random_urlsafe(6)
        ));
        let text = serde_json::to_vec_pretty(credentials)
            .map_err(|e| store_error(key, &shown(&path), e))?;
        let write = || -> std::io::Result<()> {
            let mut file = lock::open_private(&tmp, true)?;
            file.write_all(&text)?;
            file.sync_all()?;
            fs::rename(&tmp, &path)
        };
        write().map_err(|e| {
            let _ = fs::remove_file(&tmp);
            store_error(key, &shown(&path), e)
        })
    }

    fn clear(&self, key: &StoreKey) -> Result<(), AuthError> {
        // The lock file goes too: after a logout nothing of the server is
        // left in the folder.
        lock::remove_file(key, &self.path_for(key))?;
        lock::remove(&self.dir, key)
    }

    fn lock(&self, key: &StoreKey) -> Result<StoreLock, AuthError> {
        lock::acquire(&self.dir, key)
    }

    fn location(&self, key: &StoreKey) -> String {
        shown(&self.path_for(key))
    }
}
