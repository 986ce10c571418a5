//! The cross-process refresh lock: one lock file per server
//! (`<file stem>.lock`) in a private folder, held with an exclusive
//! advisory lock while a process refreshes. The file and secret stores
//! both take it from here, so there is one lock and one folder rule.

use std::fs::{self, OpenOptions};
use std::path::{Path, PathBuf};

use super::{StoreKey, StoreLock, store_error};
use crate::AuthError;

/// The lock file of `key` in `dir`.
pub(super) fn lock_path(dir: &Path, key: &StoreKey) -> PathBuf {
    dir.join(format!("{}.lock", key.file_stem()))
}

/// Takes the exclusive lock of `key` in `dir`, waiting for other holders
/// in this or another process; the folder is made private first.
pub(super) fn acquire(dir: &Path, key: &StoreKey) -> Result<StoreLock, AuthError> {
    use fs4::fs_std::FileExt as _;
    ensure_private_dir(dir, key)?;
    let path = lock_path(dir, key);
    let file = open_private(&path, false).map_err(|e| store_error(key, &shown(&path), e))?;
    file.lock_exclusive()
        .map_err(|e| store_error(key, &shown(&path), e))?;
    // Closing the file releases the lock.
    Ok(Box::new(file))
}

/// Removes the lock file of `key` (logout); a missing one is fine.
pub(super) fn remove(dir: &Path, key: &StoreKey) -> Result<(), AuthError> {
    remove_file(key, &lock_path(dir, key))
}

/// Removes `path`; a missing file is fine.
pub(super) fn remove_file(key: &StoreKey, path: &Path) -> Result<(), AuthError> {
    match fs::remove_file(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(store_error(key, &shown(path), e)),
    }
}

/// Creates `dir` 0700; an existing folder readable by others is made
/// 0700 too.
pub(super) fn ensure_private_dir(dir: &Path, key: &StoreKey) -> Result<(), AuthError> {
    let mut builder = fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder
        .create(dir)
        .map_err(|e| store_error(key, &shown(dir), e))?;
    // A folder that existed with looser bits is made private too: the
    // mode above applies only to folders this call creates.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt as _;
        let meta = fs::metadata(dir).map_err(|e| store_error(key, &shown(dir), e))?;
        if meta.permissions().mode() & 0o077 != 0 {
            fs::set_permissions(dir, fs::Permissions::from_mode(0o700))
                .map_err(|e| store_error(key, &shown(dir), e))?;
        }
    }
    Ok(())
}

/// Opens `path` for writing, created 0600.
pub(super) fn open_private(path: &Path, truncate: bool) -> std::io::Result<fs::File> {
    let mut options = OpenOptions::new();
    options.write(true).create(true).truncate(truncate);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    options.open(path)
}

/// A path as error messages name it.
pub(super) fn shown(path: &Path) -> String {
    path.display().to_string()
}
