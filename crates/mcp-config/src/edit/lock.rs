//! The exclusive advisory lock every edit of one file holds, so two
//! processes editing the same file at once both keep their change.

use std::fs::{self, File};
use std::path::{Path, PathBuf};

use crate::error::{EditError, EditErrorKind};

/// An exclusive advisory lock for edits of one file, released on drop.
///
/// On Unix the lock is taken on the file's directory, so no lock file is
/// left next to the user's config; elsewhere on a `<file>.lock` sibling.
#[derive(Debug)]
pub(super) struct EditLock {
    _file: File,
}

impl EditLock {
    pub(super) fn acquire(path: &Path) -> Result<EditLock, EditError> {
        use fs4::fs_std::FileExt;

        let dir = parent_dir(path);
        let io_err = |source| EditError::at(path, EditErrorKind::Io(source));
        fs::create_dir_all(&dir).map_err(io_err)?;
        #[cfg(unix)]
        let file = File::open(&dir).map_err(io_err)?;
        #[cfg(not(unix))]
        let file = {
            let mut name = path.file_name().unwrap_or_default().to_os_string();
            name.push(".lock");
            fs::OpenOptions::new()
                .create(true)
                .truncate(false)
                .write(true)
                .open(dir.join(name))
                .map_err(io_err)?
        };
        FileExt::lock_exclusive(&file).map_err(io_err)?;
        Ok(EditLock { _file: file })
    }
}

pub(super) fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}
