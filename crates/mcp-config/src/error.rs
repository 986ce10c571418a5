//! The crate's one error type. Loading never fails (every problem is a
//! [`Diagnostic`](crate::Diagnostic)); only an edit of a config file can,
//! so the error names the file once, says what went wrong in its
//! [`EditErrorKind`], and keeps the I/O error underneath as its source.

use std::fmt;
use std::io;
use std::path::{Path, PathBuf};

use crate::types::Scope;

/// Why an edit was refused or failed. Nothing is written when one is
/// returned.
#[derive(Debug)]
pub struct EditError {
    path: Option<PathBuf>,
    kind: EditErrorKind,
}

/// What went wrong in an [`EditError`].
#[derive(Debug)]
#[non_exhaustive]
pub enum EditErrorKind {
    /// The file or its directory could not be read, locked or written.
    Io(io::Error),
    /// The file is not plain JSON, so rewriting it would lose content.
    Syntax {
        /// 1-based line of the first syntax problem.
        line: usize,
        /// 1-based column of the first syntax problem.
        column: usize,
        /// The parser's description of the problem.
        message: String,
    },
    /// A key on the way to the server map holds something other than an object.
    NotAnObject {
        /// The key, dotted from the file's root.
        key: String,
    },
    /// A list the edit changes holds something other than an array.
    NotAnArray {
        /// The key, dotted from the file's root.
        key: String,
    },
    /// The file changed on disk between reading and writing.
    Changed,
    /// The server name breaks the naming rules.
    InvalidName {
        /// The name as given.
        name: String,
        /// Which rule it breaks.
        reason: String,
    },
    /// The entry is not a valid server entry.
    InvalidEntry {
        /// The server the entry is for.
        name: String,
        /// What makes the entry invalid.
        reason: String,
    },
    /// The managed policy would block the server: writing it would only
    /// leave an entry that can never run.
    Blocked {
        /// The server the entry is for.
        name: String,
        /// The rule that blocks it.
        block: Box<crate::types::PolicyBlock>,
    },
    /// The file already has an entry of that name (and replacing was not asked for).
    AlreadyExists {
        /// The server name already present.
        name: String,
    },
    /// No entry of that name in the file.
    NotFound {
        /// The server name looked for.
        name: String,
    },
    /// The scope has no file this library writes.
    ReadOnlyScope {
        /// The scope asked for.
        scope: Scope,
        /// Why nothing is written there.
        reason: &'static str,
    },
    /// The file is one the loader would refuse to read (not a regular
    /// file, a symlink to nothing, too large, not UTF-8): editing it would
    /// hide the problem or make it worse.
    Unreadable {
        /// What the loader would refuse the file for.
        reason: String,
    },
    /// The edited file would be larger than the loader reads, so the edit
    /// would make the whole file stop loading.
    TooLarge {
        /// The loader's cap, in MiB.
        limit_mib: usize,
    },
    /// A secret store could not be opened or did not answer. Names the
    /// store and, when there is one, the secret; never a value.
    SecretStore {
        /// Which store (`"Secret Service"`, `"kernel keyring"`, ...).
        store: &'static str,
        /// The secret the call was about, when there is one.
        secret: Option<String>,
        /// What went wrong, in words that hold no value.
        reason: String,
    },
    /// An entry names a secret the store does not hold.
    MissingSecret {
        /// The secret's name.
        secret: String,
        /// The server whose entry names it.
        server: String,
        /// The store that was asked.
        store: &'static str,
    },
    /// A secret's value cannot be used where the entry puts it (a line
    /// break in a header, a NUL in an environment variable).
    UnusableSecret {
        /// The secret's name.
        secret: String,
        /// The server whose entry names it.
        server: String,
        /// Why, naming the field; never the value.
        reason: String,
    },
}

impl EditError {
    /// An error about the file at `path`.
    pub(crate) fn at(path: &Path, kind: EditErrorKind) -> EditError {
        EditError {
            path: Some(path.to_path_buf()),
            kind,
        }
    }

    /// An error about no file in particular (a name, an entry, a scope).
    pub(crate) fn new(kind: EditErrorKind) -> EditError {
        EditError { path: None, kind }
    }

    /// The file the edit was about, when there is one.
    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// What went wrong.
    pub fn kind(&self) -> &EditErrorKind {
        &self.kind
    }

    /// Whether what the caller asked for is wrong (a bad name or entry),
    /// rather than the file or the disk.
    pub fn is_invalid_input(&self) -> bool {
        matches!(
            self.kind,
            EditErrorKind::InvalidName { .. } | EditErrorKind::InvalidEntry { .. }
        )
    }
}

impl fmt::Display for EditError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let path = self
            .path
            .as_deref()
            .unwrap_or(Path::new("config file"))
            .display();
        match &self.kind {
            EditErrorKind::Io(source) => write!(f, "{path}: {source}"),
            EditErrorKind::Syntax {
                line,
                column,
                message,
            } => write!(
                f,
                "{path}:{line}:{column}: not plain JSON ({message}); refusing to rewrite it"
            ),
            EditErrorKind::NotAnObject { key } => {
                write!(
                    f,
                    "{path}: `{key}` is not a JSON object; refusing to rewrite it"
                )
            }
            EditErrorKind::NotAnArray { key } => {
                write!(
                    f,
                    "{path}: `{key}` is not a JSON array; refusing to rewrite it"
                )
            }
            EditErrorKind::Changed => {
                write!(
                    f,
                    "{path} changed on disk since it was read; nothing written"
                )
            }
            EditErrorKind::InvalidName { name, reason } => {
                write!(f, "invalid server name `{name}`: {reason}")
            }
            EditErrorKind::InvalidEntry { name, reason } => {
                write!(f, "invalid entry for server `{name}`: {reason}")
            }
            EditErrorKind::Blocked { name, block } => {
                write!(f, "server `{name}` is blocked by policy: {block}")
            }
            EditErrorKind::AlreadyExists { name } => {
                write!(f, "server `{name}` already exists in {path}")
            }
            EditErrorKind::NotFound { name } => write!(f, "no server named `{name}` in {path}"),
            EditErrorKind::ReadOnlyScope { scope, reason } => {
                write!(f, "scope `{scope}` is read-only: {reason}")
            }
            EditErrorKind::Unreadable { reason } => {
                write!(f, "{path}: {reason}; refusing to edit it")
            }
            EditErrorKind::TooLarge { limit_mib } => write!(
                f,
                "{path}: the edited file would be larger than {limit_mib} MiB, the most the loader reads; nothing written"
            ),
            EditErrorKind::SecretStore {
                store,
                secret: Some(secret),
                reason,
            } => write!(f, "secret `{secret}` in the {store}: {reason}"),
            EditErrorKind::SecretStore {
                store,
                secret: None,
                reason,
            } => write!(f, "the {store}: {reason}"),
            EditErrorKind::MissingSecret {
                secret,
                server,
                store,
            } => write!(
                f,
                "server `{server}` names secret `{secret}`, which the {store} does not hold (set it with `mcp-cli secret set {secret}`)"
            ),
            EditErrorKind::UnusableSecret {
                secret,
                server,
                reason,
            } => write!(f, "server `{server}`: secret `{secret}` {reason}"),
        }
    }
}

impl std::error::Error for EditError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match &self.kind {
            EditErrorKind::Io(source) => Some(source),
            _ => None,
        }
    }
}
