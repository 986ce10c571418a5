//! Editing the config files a user owns: add, replace, remove, enable or
//! disable one server entry.
//!
//! Every edit is a read-modify-write of one file under an exclusive lock, so
//! two processes editing the same file at once both keep their change. The
//! file is rewritten whole but faithfully: every other key stays, key order
//! stays (an entry that is replaced keeps its place, a new one goes last),
//! the indentation unit, line endings and trailing newline of the original
//! are kept. The new bytes go to a temporary file in the same directory that
//! is renamed over the original, so a reader sees the old file or the new
//! one, never half of either. If the file's bytes changed on disk since they
//! were read (an editor that does not take our lock), nothing is written.
//!
//! A file that is not plain JSON (comments, trailing commas) is refused
//! rather than rewritten, because rewriting it would lose what a person
//! wrote there. So is every file the loader would refuse to read (the same
//! check: not a regular file, larger than
//! [`MAX_CONFIG_FILE_BYTES`](crate::file::MAX_CONFIG_FILE_BYTES), not UTF-8), and
//! every edit whose result would be larger than that cap: either would
//! leave a file that no longer loads.
//!
//! A config file that is a symlink (a `~/.claude.json` kept in a dotfiles
//! repository) is edited where it points: the target is replaced and the
//! link stays a link. A symlink to nothing, or to anything but a regular
//! file, is refused with the link's path in the error.
//!
//! Names and entries are checked before anything is written: see
//! [`validate_name`] and [`validate_entry`].
//!
//! The module is split along its seams: `location` says which file and
//! keys a scope's entries live at (from the crate's one table of sources), `document`
//! reads, changes and writes one file faithfully, `lock` keeps concurrent
//! edits apart, and `validate` decides what may be written.

mod document;
mod location;
mod lock;
mod validate;

use serde_json::Value;

use crate::types::Scope;

use crate::error::EditError;
pub use document::{ConfigDocument, ProjectChoice, tombstone};
pub use location::{EditDirs, ServersLocation};
pub use validate::{ValidEntry, validate_entry, validate_name};

use location::edit_target;
use lock::EditLock;

/// The writable scopes, lowest precedence first.
pub const WRITABLE_SCOPES: [Scope; 4] =
    [Scope::OpenClaw, Scope::User, Scope::Project, Scope::Local];

/// The writable scopes whose file has an entry named `name`, lowest
/// precedence first, with the entry found there.
pub fn find_entries(name: &str, dirs: &EditDirs) -> Result<Vec<(Scope, Value)>, EditError> {
    let mut found = Vec::new();
    for scope in WRITABLE_SCOPES {
        let document = ConfigDocument::read(ServersLocation::for_scope(scope, dirs)?)?;
        if let Some(entry) = document.get(name)? {
            found.push((scope, entry.clone()));
        }
    }
    Ok(found)
}

/// Runs one locked read-modify-write of the file at `location`: takes an
/// exclusive lock that every process editing through this function honours,
/// reads the file, lets `change` edit it, and writes it back when it changed.
/// When `change` fails nothing is written.
pub fn edit<T>(
    location: ServersLocation,
    change: impl FnOnce(&mut ConfigDocument) -> Result<T, EditError>,
) -> Result<T, EditError> {
    // Lock where the file really is, so edits through a symlink and
    // through its target exclude each other.
    let _lock = EditLock::acquire(&edit_target(&location.path)?)?;
    let mut document = ConfigDocument::read(location)?;
    let outcome = change(&mut document)?;
    if document.is_modified() {
        document.write()?;
    }
    Ok(outcome)
}
