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
//! [`MAX_CONFIG_FILE_BYTES`](crate::MAX_CONFIG_FILE_BYTES), not UTF-8), and
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

use std::collections::BTreeMap;
use std::fs::{self, File};
use std::io::{self, Write};
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::consent::{ApprovalRecord, RECORDS_KEY, TRUST_KEY};
use crate::entry::{EntryContext, EntryOutcome, parse_entry};
use crate::json::{Document, FindingKind, escape_text};
use crate::name::server_name_problem;
use crate::types::{Level, Scope, TransportKind};

/// The longest server name [`validate_name`] accepts.
pub use crate::name::MAX_NAME_LEN;

/// Why an edit was refused or failed. Nothing is written when any of these is
/// returned.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum EditError {
    /// The file or its directory could not be read, locked or written.
    #[error("{}: {source}", path.display())]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The file is not plain JSON, so rewriting it would lose content.
    #[error(
        "{}:{line}:{column}: not plain JSON ({message}); refusing to rewrite it",
        path.display()
    )]
    Syntax {
        path: PathBuf,
        line: usize,
        column: usize,
        message: String,
    },
    /// A key on the way to the server map holds something other than an object.
    #[error("{}: `{key}` is not a JSON object; refusing to rewrite it", path.display())]
    NotAnObject { path: PathBuf, key: String },
    /// A list the edit changes holds something other than an array.
    #[error("{}: `{key}` is not a JSON array; refusing to rewrite it", path.display())]
    NotAnArray { path: PathBuf, key: String },
    /// The file changed on disk between reading and writing.
    #[error("{} changed on disk since it was read; nothing written", path.display())]
    Changed { path: PathBuf },
    /// The server name breaks the naming rules.
    #[error("invalid server name `{name}`: {reason}")]
    InvalidName { name: String, reason: String },
    /// The entry is not a valid server entry.
    #[error("invalid entry for server `{name}`: {reason}")]
    InvalidEntry { name: String, reason: String },
    /// A command-line style `K=V` or `K: V` value could not be split.
    #[error("invalid {what} `{text}`: expected {expected}")]
    InvalidPair {
        what: &'static str,
        text: String,
        expected: &'static str,
    },
    /// The file already has an entry of that name (and replacing was not asked for).
    #[error("server `{name}` already exists in {}", path.display())]
    AlreadyExists { name: String, path: PathBuf },
    /// No entry of that name in the file.
    #[error("no server named `{name}` in {}", path.display())]
    NotFound { name: String, path: PathBuf },
    /// The scope has no file this library writes.
    #[error("scope `{scope}` is read-only: {reason}")]
    ReadOnlyScope { scope: Scope, reason: &'static str },
    /// The file is one the loader would refuse to read (not a regular
    /// file, a symlink to nothing, too large, not UTF-8): editing it would
    /// hide the problem or make it worse.
    #[error("{}: {reason}; refusing to edit it", path.display())]
    Unreadable { path: PathBuf, reason: String },
    /// The edited file would be larger than the loader reads, so the edit
    /// would make the whole file stop loading.
    #[error(
        "{}: the edited file would be larger than {limit_mib} MiB, the most the loader reads; nothing written",
        path.display()
    )]
    TooLarge { path: PathBuf, limit_mib: usize },
}

/// The directories that decide where each scope's file lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EditDirs {
    /// The user's home directory (holds `.claude.json`).
    pub home: PathBuf,
    /// The project directory, absolute (holds `.mcp.json`; also the key of
    /// the local scope's entries in `<home>/.claude.json`).
    pub project: PathBuf,
    /// OpenClaw's home (holds `openclaw.json`).
    pub openclaw_home: PathBuf,
}

/// One file and the path of keys inside it that leads to its server map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServersLocation {
    /// The file.
    pub path: PathBuf,
    /// Object keys from the root to the server map, e.g. `["mcpServers"]`.
    pub key_path: Vec<String>,
}

impl ServersLocation {
    /// Where the entries of `scope` are written:
    ///
    /// | scope | file | keys |
    /// |---|---|---|
    /// | user | `<home>/.claude.json` | `mcpServers` |
    /// | project | `<project>/.mcp.json` | `mcpServers` |
    /// | local | `<home>/.claude.json` | `projects["<project>"].mcpServers` |
    /// | openclaw | `<openclaw home>/openclaw.json` | `mcp.servers` |
    ///
    /// Plugin bundles are never written: a plugin's server is switched off
    /// with a tombstone (`{"enabled": false}`) in a scope above it.
    pub fn for_scope(scope: Scope, dirs: &EditDirs) -> Result<ServersLocation, EditError> {
        let keys = |keys: &[&str]| keys.iter().map(|k| (*k).to_owned()).collect();
        Ok(match scope {
            Scope::User => ServersLocation {
                path: dirs.home.join(".claude.json"),
                key_path: keys(&["mcpServers"]),
            },
            Scope::Project => ServersLocation {
                path: dirs.project.join(".mcp.json"),
                key_path: keys(&["mcpServers"]),
            },
            Scope::Local => ServersLocation {
                path: dirs.home.join(".claude.json"),
                key_path: vec![
                    "projects".to_owned(),
                    dirs.project.to_string_lossy().into_owned(),
                    "mcpServers".to_owned(),
                ],
            },
            Scope::OpenClaw => ServersLocation {
                path: dirs.openclaw_home.join("openclaw.json"),
                key_path: keys(&["mcp", "servers"]),
            },
            Scope::Plugin => {
                return Err(EditError::ReadOnlyScope {
                    scope,
                    reason: "plugin bundles are never edited; disable the server instead",
                });
            }
        })
    }

    /// A readable rendering of the key path, e.g. `projects./repo.mcpServers`.
    pub fn key_path_display(&self) -> String {
        self.key_path.join(".")
    }
}

/// A person's choice about one project server (REFERENCE §1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProjectChoice {
    /// The server may start (`enabledMcpjsonServers`).
    Approve,
    /// The server never starts (`disabledMcpjsonServers`, which wins).
    Deny,
}

const ENABLED_KEY: &str = "enabledMcpjsonServers";
const DISABLED_KEY: &str = "disabledMcpjsonServers";

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

/// How the original file was laid out, so a rewrite looks the same.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Layout {
    /// The indentation unit; `None` for a single-line (compact) file.
    indent: Option<Vec<u8>>,
    trailing_newline: bool,
    crlf: bool,
    bom: bool,
}

impl Layout {
    /// Two spaces and a trailing newline, for files this library creates.
    fn fresh() -> Layout {
        Layout {
            indent: Some(b"  ".to_vec()),
            trailing_newline: true,
            crlf: false,
            bom: false,
        }
    }

    fn detect(bytes: &[u8]) -> Layout {
        let crlf = bytes.windows(2).any(|w| w == b"\r\n");
        let trimmed_end = bytes.trim_ascii_end();
        let trailing_newline = bytes.ends_with(b"\n");
        // The first line that starts with whitespace followed by content is
        // at depth one, so its leading whitespace is the unit.
        let indent = if trimmed_end.contains(&b'\n') {
            let unit = trimmed_end
                .split(|b| *b == b'\n')
                .skip(1)
                .map(|line| {
                    let width = line
                        .iter()
                        .take_while(|b| **b == b' ' || **b == b'\t')
                        .count();
                    (&line[..width], line.len() > width && line[width] != b'\r')
                })
                .find(|(lead, has_content)| !lead.is_empty() && *has_content)
                .map(|(lead, _)| lead.to_vec());
            Some(unit.unwrap_or_else(|| b"  ".to_vec()))
        } else {
            None
        };
        Layout {
            indent,
            trailing_newline,
            crlf,
            bom: bytes.starts_with(UTF8_BOM),
        }
    }
}

/// The file an edit of `path` reads and replaces: `path` itself, or, when
/// it is a symlink (a `~/.claude.json` kept in a dotfiles repository), the
/// file it points to, so the link stays a link. A missing `path` is a file
/// to create; a symlink to nothing, or to anything but a regular file, is
/// refused.
fn edit_target(path: &Path) -> Result<PathBuf, EditError> {
    let refuse = |reason: String| EditError::Unreadable {
        path: path.to_path_buf(),
        reason,
    };
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(source) => {
            return Err(EditError::Io {
                path: path.to_path_buf(),
                source,
            });
        }
    };
    if !meta.file_type().is_symlink() {
        return if meta.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(refuse("not a regular file".to_owned()))
        };
    }
    let shown = fs::read_link(path)
        .map(|target| target.display().to_string())
        .unwrap_or_default();
    match fs::canonicalize(path) {
        Ok(real) if fs::metadata(&real).is_ok_and(|m| m.is_file()) => Ok(real),
        Ok(real) => Err(refuse(format!(
            "a symlink to {}, which is not a regular file",
            real.display()
        ))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            Err(refuse(format!("a symlink to a missing file ({shown})")))
        }
        Err(err) => Err(refuse(format!(
            "a symlink that cannot be followed ({shown}): {err}"
        ))),
    }
}

/// The bytes of `target` the way the loader reads them (regular files
/// only, capped, UTF-8), `None` when it does not exist; `shown` is the path
/// errors name.
fn read_capped(shown: &Path, target: &Path) -> Result<Option<Vec<u8>>, EditError> {
    crate::load::read_text(target)
        .map(|text| text.map(String::into_bytes))
        .map_err(|d| EditError::Unreadable {
            path: shown.to_path_buf(),
            reason: d.message,
        })
}

/// One config file read into memory, ready to be edited and written back.
#[derive(Debug, Clone)]
pub struct ConfigDocument {
    location: ServersLocation,
    /// The file read and replaced: `location.path`, or its symlink's target.
    target: PathBuf,
    /// The bytes read, `None` when the file did not exist.
    original: Option<Vec<u8>>,
    root: Map<String, Value>,
    layout: Layout,
}

impl ConfigDocument {
    /// Reads the file at `location`; a missing file reads as an empty
    /// object. A file the loader would refuse is refused here too.
    pub fn read(location: ServersLocation) -> Result<ConfigDocument, EditError> {
        let target = edit_target(&location.path)?;
        let original = read_capped(&location.path, &target)?;
        let (root, layout) = match &original {
            None => (Map::new(), Layout::fresh()),
            Some(bytes) if bytes.trim_ascii().is_empty() => (Map::new(), Layout::fresh()),
            Some(bytes) => {
                // A byte order mark is kept on writing, and not JSON.
                let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
                refuse_repeated_keys(body, &location.path)?;
                let value: Value =
                    serde_json::from_slice(body).map_err(|err| EditError::Syntax {
                        path: location.path.clone(),
                        line: err.line(),
                        column: err.column(),
                        message: err
                            .to_string()
                            .split(" at line")
                            .next()
                            .unwrap_or("")
                            .to_owned(),
                    })?;
                let Value::Object(root) = value else {
                    return Err(EditError::NotAnObject {
                        path: location.path.clone(),
                        key: "(root)".to_owned(),
                    });
                };
                (root, Layout::detect(bytes))
            }
        };
        let document = ConfigDocument {
            location,
            target,
            original,
            root,
            layout,
        };
        // Surface a malformed key path now, before any change is attempted.
        document.servers()?;
        Ok(document)
    }

    /// The file and key path this document edits.
    pub fn location(&self) -> &ServersLocation {
        &self.location
    }

    /// Whether the file existed when it was read.
    pub fn existed(&self) -> bool {
        self.original.is_some()
    }

    /// The server map, or `None` when the file has none yet.
    pub fn servers(&self) -> Result<Option<&Map<String, Value>>, EditError> {
        let mut current = &self.root;
        for key in &self.location.key_path {
            match current.get(key) {
                None => return Ok(None),
                Some(Value::Object(map)) => current = map,
                Some(_) => return Err(self.not_an_object(key)),
            }
        }
        Ok(Some(current))
    }

    /// The entry named `name`, if the file has one.
    pub fn get(&self, name: &str) -> Result<Option<&Value>, EditError> {
        Ok(self.servers()?.and_then(|servers| servers.get(name)))
    }

    /// Adds `entry` under `name`, refusing when the file already has an
    /// entry of that name.
    pub fn insert_new(&mut self, name: &str, entry: ValidEntry) -> Result<(), EditError> {
        if self.get(name)?.is_some() {
            return Err(EditError::AlreadyExists {
                name: name.to_owned(),
                path: self.location.path.clone(),
            });
        }
        self.upsert(name, entry).map(drop)
    }

    /// Adds `entry` under `name`, or replaces the entry of that name in place.
    /// Returns the entry it replaced.
    pub fn upsert(&mut self, name: &str, entry: ValidEntry) -> Result<Option<Value>, EditError> {
        validate_name(name)?;
        let entry = entry.0;
        let servers = self.servers_mut()?;
        match servers.get_mut(name) {
            Some(slot) => Ok(Some(std::mem::replace(slot, entry))),
            None => {
                servers.insert(name.to_owned(), entry);
                Ok(None)
            }
        }
    }

    /// Removes the entry named `name`, keeping the order of the others.
    pub fn remove(&mut self, name: &str) -> Result<Value, EditError> {
        if self.get(name)?.is_none() {
            return Err(self.not_found(name));
        }
        let servers = self.servers_mut()?;
        servers
            .shift_remove(name)
            .ok_or_else(|| self.not_found(name))
    }

    /// Switches the entry named `name` on or off.
    ///
    /// Disabling sets `"enabled": false` on an existing entry, or adds the
    /// tombstone `{"enabled": false}` when the file has no entry of that name
    /// (which switches off a same-named server of a lower scope). Enabling
    /// removes a bare tombstone, and removes `"enabled": false` from a full
    /// entry. Returns whether the file content changed.
    pub fn set_enabled(&mut self, name: &str, enabled: bool) -> Result<bool, EditError> {
        validate_name(name)?;
        let existing = self.get(name)?.cloned();
        match (existing, enabled) {
            (None, true) => Ok(false),
            (None, false) => {
                self.servers_mut()?.insert(name.to_owned(), tombstone());
                Ok(true)
            }
            (Some(Value::Object(entry)), true) => {
                if entry.get("enabled") != Some(&Value::Bool(false)) {
                    return Ok(false);
                }
                if entry.len() == 1 {
                    self.servers_mut()?.shift_remove(name);
                } else {
                    let mut entry = entry;
                    entry.shift_remove("enabled");
                    self.servers_mut()?
                        .insert(name.to_owned(), Value::Object(entry));
                }
                Ok(true)
            }
            (Some(Value::Object(mut entry)), false) => {
                if entry.get("enabled") == Some(&Value::Bool(false)) {
                    return Ok(false);
                }
                entry.insert("enabled".to_owned(), Value::Bool(false));
                self.servers_mut()?
                    .insert(name.to_owned(), Value::Object(entry));
                Ok(true)
            }
            (Some(_), _) => Err(EditError::InvalidEntry {
                name: name.to_owned(),
                reason: format!(
                    "the entry in {} is not a JSON object",
                    self.location.path.display()
                ),
            }),
        }
    }

    /// The bytes [`write`](Self::write) would put on disk.
    pub fn render(&self) -> Vec<u8> {
        let root = Value::Object(self.root.clone());
        let mut out = Vec::new();
        if self.layout.bom {
            out.extend_from_slice(UTF8_BOM);
        }
        let written = match &self.layout.indent {
            Some(indent) => {
                let formatter = serde_json::ser::PrettyFormatter::with_indent(indent);
                let mut serializer = serde_json::Serializer::with_formatter(&mut out, formatter);
                serde::Serialize::serialize(&root, &mut serializer)
            }
            None => serde_json::to_writer(&mut out, &root),
        };
        // Serialising a `Value` into memory cannot fail; keep the bytes we have.
        drop(written);
        if self.layout.trailing_newline {
            out.push(b'\n');
        }
        if self.layout.crlf {
            let mut crlf = Vec::with_capacity(out.len() + out.len() / 16);
            for byte in out {
                if byte == b'\n' {
                    crlf.push(b'\r');
                }
                crlf.push(byte);
            }
            out = crlf;
        }
        out
    }

    /// Whether the document differs from what was read.
    pub fn is_modified(&self) -> bool {
        match &self.original {
            Some(original) => *original != self.render(),
            // A missing file that is still empty is not worth creating.
            None => !self.root.is_empty(),
        }
    }

    /// Writes the document back atomically, refusing when the file on disk
    /// no longer holds the bytes that were read.
    ///
    /// Through a symlink, the link's target is replaced and the link kept.
    /// A result larger than the loader reads is refused, naming the file.
    pub fn write(&self) -> Result<(), EditError> {
        let path = &self.location.path;
        let io_err = |source| EditError::Io {
            path: path.clone(),
            source,
        };
        let bytes = self.render();
        if bytes.len() > crate::load::MAX_CONFIG_FILE_BYTES {
            return Err(EditError::TooLarge {
                path: path.clone(),
                limit_mib: crate::load::MAX_CONFIG_FILE_BYTES >> 20,
            });
        }
        // The link must still lead where it led when the file was read.
        if edit_target(path)? != self.target {
            return Err(EditError::Changed { path: path.clone() });
        }
        let current = read_capped(path, &self.target)?;
        if current != self.original {
            return Err(EditError::Changed { path: path.clone() });
        }
        let target = &self.target;
        let dir = parent_dir(target);
        fs::create_dir_all(&dir).map_err(io_err)?;
        let mut temp = tempfile::Builder::new()
            .prefix(".mcp-edit-")
            .tempfile_in(&dir)
            .map_err(io_err)?;
        temp.write_all(&bytes).map_err(io_err)?;
        temp.as_file().sync_all().map_err(io_err)?;
        // Keep the original's permissions (`.claude.json` is often 0600).
        if let Ok(meta) = fs::metadata(target) {
            fs::set_permissions(temp.path(), meta.permissions()).map_err(io_err)?;
        }
        temp.persist(target).map_err(|err| io_err(err.error))?;
        Ok(())
    }

    /// Records a person's choice about the project server `name` in the
    /// object that holds this document's server map (for the local scope's
    /// location, this project's entry in `<home>/.claude.json`, where
    /// Claude Code keeps it too): approving puts the name in
    /// `enabledMcpjsonServers` and takes it out of `disabledMcpjsonServers`,
    /// denying does the opposite. Other names and keys stay as they are.
    /// Returns whether the file content changed.
    pub fn set_project_choice(
        &mut self,
        name: &str,
        choice: ProjectChoice,
    ) -> Result<bool, EditError> {
        let (add, drop) = match choice {
            ProjectChoice::Approve => (ENABLED_KEY, DISABLED_KEY),
            ProjectChoice::Deny => (DISABLED_KEY, ENABLED_KEY),
        };
        let path = self.location.path.clone();
        let settings = self.settings_mut()?;
        let mut changed = false;
        if let Some(list) = settings.get_mut(drop) {
            let Value::Array(items) = list else {
                return Err(EditError::NotAnArray {
                    path,
                    key: drop.to_owned(),
                });
            };
            let before = items.len();
            items.retain(|item| item.as_str() != Some(name));
            changed |= items.len() != before;
        }
        let list = settings
            .entry(add.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(items) = list else {
            return Err(EditError::NotAnArray {
                path,
                key: add.to_owned(),
            });
        };
        if !items.iter().any(|item| item.as_str() == Some(name)) {
            items.push(Value::String(name.to_owned()));
            changed = true;
        }
        if choice == ProjectChoice::Deny {
            changed |= self.remove_approval_record(name)?;
        }
        Ok(changed)
    }

    /// Records what approving the project server `name` approved, next to
    /// `enabledMcpjsonServers` (see [`crate::consent`]): a later change to
    /// the server makes it pending again. Returns whether the file content
    /// changed.
    pub fn set_approval_record(
        &mut self,
        name: &str,
        record: &ApprovalRecord,
    ) -> Result<bool, EditError> {
        let path = self.location.path.clone();
        let settings = self.settings_mut()?;
        let records = settings
            .entry(RECORDS_KEY.to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        let Value::Object(records) = records else {
            return Err(EditError::NotAnObject {
                path,
                key: RECORDS_KEY.to_owned(),
            });
        };
        let value = record.to_json();
        if records.get(name) == Some(&value) {
            return Ok(false);
        }
        records.insert(name.to_owned(), value);
        Ok(true)
    }

    /// Forgets the approval record of `name`, and the records object once
    /// it is empty.
    fn remove_approval_record(&mut self, name: &str) -> Result<bool, EditError> {
        let path = self.location.path.clone();
        let settings = self.settings_mut()?;
        let Some(records) = settings.get_mut(RECORDS_KEY) else {
            return Ok(false);
        };
        let Value::Object(map) = records else {
            return Err(EditError::NotAnObject {
                path,
                key: RECORDS_KEY.to_owned(),
            });
        };
        let removed = map.shift_remove(name).is_some();
        if map.is_empty() {
            settings.shift_remove(RECORDS_KEY);
        }
        Ok(removed)
    }

    /// Records whether the user trusts this document's project
    /// (`hasTrustDialogAccepted` next to the server map, for the local
    /// scope's location: the project's entry in `<home>/.claude.json`).
    /// Only then do files inside the project count as the user's consent.
    /// Returns whether the file content changed.
    pub fn set_project_trust(&mut self, trusted: bool) -> Result<bool, EditError> {
        // Untrusting a project that is not trusted leaves the file alone.
        if !trusted && !self.project_trusted()? {
            return Ok(false);
        }
        let settings = self.settings_mut()?;
        let value = Value::Bool(trusted);
        if settings.get(TRUST_KEY) == Some(&value) {
            return Ok(false);
        }
        settings.insert(TRUST_KEY.to_owned(), value);
        Ok(true)
    }

    /// Whether this document's project is trusted (see
    /// [`ConfigDocument::set_project_trust`]).
    pub fn project_trusted(&self) -> Result<bool, EditError> {
        Ok(self
            .settings()?
            .and_then(|settings| settings.get(TRUST_KEY))
            .and_then(Value::as_bool)
            == Some(true))
    }

    /// Forgets every choice about project servers kept next to this
    /// document's server map: `enabledMcpjsonServers`,
    /// `disabledMcpjsonServers` and `enableAllProjectMcpServers`. Returns
    /// whether the file content changed.
    pub fn reset_project_choices(&mut self) -> Result<bool, EditError> {
        if self.settings()?.is_none() {
            return Ok(false);
        }
        let settings = self.settings_mut()?;
        let mut changed = false;
        for key in crate::merge::APPROVAL_KEYS {
            changed |= settings.shift_remove(*key).is_some();
        }
        Ok(changed)
    }

    /// The object holding the server map, or `None` when the file has none.
    fn settings(&self) -> Result<Option<&Map<String, Value>>, EditError> {
        let mut current = &self.root;
        let parents = self.location.key_path.len().saturating_sub(1);
        for key in &self.location.key_path[..parents] {
            match current.get(key) {
                None => return Ok(None),
                Some(Value::Object(map)) => current = map,
                Some(_) => return Err(self.not_an_object(key)),
            }
        }
        Ok(Some(current))
    }

    /// The object holding the server map (its settings file's own level).
    fn settings_mut(&mut self) -> Result<&mut Map<String, Value>, EditError> {
        let parents = self.location.key_path.len().saturating_sub(1);
        self.object_at_mut(parents)
    }

    fn servers_mut(&mut self) -> Result<&mut Map<String, Value>, EditError> {
        self.object_at_mut(self.location.key_path.len())
    }

    /// The object at the first `depth` keys of the key path, made on the
    /// way where missing.
    fn object_at_mut(&mut self, depth: usize) -> Result<&mut Map<String, Value>, EditError> {
        let path = self.location.path.clone();
        let mut current = &mut self.root;
        for key in &self.location.key_path[..depth] {
            let slot = current
                .entry(key.clone())
                .or_insert_with(|| Value::Object(Map::new()));
            current = match slot {
                Value::Object(map) => map,
                _ => {
                    return Err(EditError::NotAnObject {
                        path,
                        key: key.clone(),
                    });
                }
            };
        }
        Ok(current)
    }

    fn not_an_object(&self, key: &str) -> EditError {
        EditError::NotAnObject {
            path: self.location.path.clone(),
            key: key.to_owned(),
        }
    }

    fn not_found(&self, name: &str) -> EditError {
        EditError::NotFound {
            name: name.to_owned(),
            path: self.location.path.clone(),
        }
    }
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

/// An exclusive advisory lock for edits of one file, released on drop.
///
/// On Unix the lock is taken on the file's directory, so no lock file is
/// left next to the user's config; elsewhere on a `<file>.lock` sibling.
#[derive(Debug)]
struct EditLock {
    _file: File,
}

impl EditLock {
    fn acquire(path: &Path) -> Result<EditLock, EditError> {
        use fs4::fs_std::FileExt;

        let dir = parent_dir(path);
        let io_err = |source| EditError::Io {
            path: path.to_path_buf(),
            source,
        };
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

fn parent_dir(path: &Path) -> PathBuf {
    match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent.to_path_buf(),
        _ => PathBuf::from("."),
    }
}

/// The entry that switches a server off and nothing else.
pub fn tombstone() -> Value {
    let mut entry = Map::new();
    entry.insert("enabled".to_owned(), Value::Bool(false));
    Value::Object(entry)
}

const UTF8_BOM: &[u8] = b"\xEF\xBB\xBF";

/// Refuses a file that repeats a key: it reads as its last occurrence, so
/// rewriting it would silently delete the first (perhaps a whole server
/// map) from the file a person reads.
fn refuse_repeated_keys(body: &[u8], path: &Path) -> Result<(), EditError> {
    let Ok(text) = std::str::from_utf8(body) else {
        return Ok(());
    };
    // Anything this parser refuses, serde_json refuses too, with its own
    // message; only a repeated key is this check's to report.
    let Ok(document) = Document::parse(text, path) else {
        return Ok(());
    };
    let Some(finding) = document
        .findings()
        .iter()
        .find(|f| f.kind == FindingKind::DuplicateKey)
    else {
        return Ok(());
    };
    let d = document.finding_diagnostic(finding, Level::Error, finding.message.clone(), None, None);
    Err(EditError::Syntax {
        path: path.to_path_buf(),
        line: d.line.map_or(0, |l| l as usize),
        column: d.column.map_or(0, |c| c as usize),
        message: finding.message.clone(),
    })
}

/// Checks a server name for writing: the loader's own rule
/// ([`crate::name::server_name_problem`]), so every name that loads can be
/// managed by every verb and no verb writes a name that would not load.
pub fn validate_name(name: &str) -> Result<(), EditError> {
    match server_name_problem(name) {
        None => Ok(()),
        Some(reason) => Err(EditError::InvalidName {
            name: escape_text(name).into_owned(),
            reason: reason
                .strip_prefix("a server name ")
                .unwrap_or(&reason)
                .to_owned(),
        }),
    }
}

/// A server entry that passed [`validate_entry`]: the only kind of entry
/// [`ConfigDocument::upsert`] and [`ConfigDocument::insert_new`] accept.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidEntry(Value);

impl ValidEntry {
    /// The entry's JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

/// Checks that `entry` is a server entry the loader accepts, by running the
/// loader's own entry parser ([`crate::entry::parse_entry`]) over it with
/// `vars` for `${VAR}` expansion. Any error-level diagnostic refuses the
/// entry; warnings (an unknown key, an unset variable) do not.
pub fn validate_entry(
    name: &str,
    entry: Value,
    vars: &BTreeMap<String, String>,
) -> Result<ValidEntry, EditError> {
    validate_name(name)?;
    let invalid = |reason: String| EditError::InvalidEntry {
        name: name.to_owned(),
        reason,
    };
    if !entry.is_object() {
        return Err(invalid(format!(
            "expected a JSON object, got {}",
            json_type(&entry)
        )));
    }
    let text = serde_json::to_string(&entry).map_err(|err| invalid(err.to_string()))?;
    let document = Document::parse(&text, Path::new(name)).map_err(|d| invalid(d.message))?;
    let context = EntryContext {
        doc: &document,
        pointer: "",
        name,
        env: vars,
        home: None,
        plugin: None,
    };
    let mut diagnostics = Vec::new();
    let outcome = parse_entry(&document.value, &context, &mut diagnostics);
    let errors: Vec<String> = diagnostics
        .into_iter()
        .filter(|d| d.level == Level::Error)
        .map(|d| {
            // The error already names the server; keep its message bare.
            let prefix = format!("server `{name}`: ");
            d.message
                .strip_prefix(&prefix)
                .map(str::to_owned)
                .unwrap_or(d.message)
        })
        .collect();
    if !errors.is_empty() || outcome == EntryOutcome::Invalid {
        return Err(invalid(if errors.is_empty() {
            "not a valid server entry".to_owned()
        } else {
            errors.join("; ")
        }));
    }
    Ok(ValidEntry(entry))
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Builds a stdio entry: `{"type":"stdio","command","args","env"}`, leaving
/// out `env` when it is empty.
pub fn stdio_entry(command: &str, args: &[String], env: &[(String, String)]) -> Value {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from("stdio"));
    entry.insert("command".to_owned(), Value::from(command));
    entry.insert("args".to_owned(), Value::from(args.to_vec()));
    if !env.is_empty() {
        entry.insert("env".to_owned(), pairs_object(env));
    }
    Value::Object(entry)
}

/// What a remote entry built by [`remote_entry`] contains.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteEntry<'a> {
    /// `http`, `sse` or `ws`.
    pub kind: TransportKind,
    pub url: &'a str,
    pub headers: &'a [(String, String)],
    pub client_id: Option<&'a str>,
    pub callback_port: Option<u16>,
}

/// Builds a remote entry: `{"type","url","headers","oauth":{clientId,callbackPort}}`,
/// leaving out empty parts.
pub fn remote_entry(remote: &RemoteEntry<'_>) -> Value {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from(remote.kind.as_str()));
    entry.insert("url".to_owned(), Value::from(remote.url));
    if !remote.headers.is_empty() {
        entry.insert("headers".to_owned(), pairs_object(remote.headers));
    }
    let mut oauth = Map::new();
    if let Some(client_id) = remote.client_id {
        oauth.insert("clientId".to_owned(), Value::from(client_id));
    }
    if let Some(port) = remote.callback_port {
        oauth.insert("callbackPort".to_owned(), Value::from(port));
    }
    if !oauth.is_empty() {
        entry.insert("oauth".to_owned(), Value::Object(oauth));
    }
    Value::Object(entry)
}

fn pairs_object(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
            .collect(),
    )
}

/// Splits `KEY=VALUE` (an `--env` argument). The key must be non-empty.
pub fn parse_env_pair(text: &str) -> Result<(String, String), EditError> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(EditError::InvalidPair {
            what: "env",
            text: redact_pair(text, '='),
            expected: "KEY=VALUE",
        }),
    }
}

/// Splits `Name: value` (a `--header` argument). The name must be a valid
/// HTTP header name.
pub fn parse_header_pair(text: &str) -> Result<(String, String), EditError> {
    let invalid = || EditError::InvalidPair {
        what: "header",
        text: redact_pair(text, ':'),
        expected: "'Name: value'",
    };
    let (name, value) = text.split_once(':').ok_or_else(invalid)?;
    let name = name.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(invalid());
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// Keeps the part before `separator` so an error never echoes a secret value.
fn redact_pair(text: &str, separator: char) -> String {
    match text.split_once(separator) {
        Some((key, _)) => format!("{key}{separator}***"),
        None if text.len() > 24 => "***".to_owned(),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn location(dir: &Path, file: &str, keys: &[&str]) -> ServersLocation {
        ServersLocation {
            path: dir.join(file),
            key_path: keys.iter().map(|k| (*k).to_owned()).collect(),
        }
    }

    /// Writes `before`, runs `change` through [`edit`], and compares the
    /// file with `after` (or, on an error, with `before`, byte for byte).
    fn check(
        before: Option<&str>,
        keys: &[&str],
        change: impl FnOnce(&mut ConfigDocument) -> Result<(), EditError>,
        after: Result<&str, &str>,
    ) {
        let dir = tempfile::tempdir().expect("tempdir");
        let loc = location(dir.path(), "config.json", keys);
        if let Some(before) = before {
            fs::write(&loc.path, before).expect("write");
        }
        let outcome = edit(loc.clone(), change);
        let on_disk = fs::read_to_string(&loc.path).ok();
        match after {
            Ok(expected) => {
                assert!(outcome.is_ok(), "unexpected error: {outcome:?}");
                assert_eq!(on_disk.as_deref(), Some(expected));
            }
            Err(message) => {
                let err = outcome.expect_err("expected an error");
                let text = err.to_string();
                assert!(text.contains(message), "error `{text}` lacks `{message}`");
                assert_eq!(
                    on_disk.as_deref(),
                    before,
                    "a refused edit changed the file"
                );
            }
        }
        let leftovers: Vec<_> = fs::read_dir(dir.path())
            .expect("read_dir")
            .filter_map(Result::ok)
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|name| name != "config.json")
            .collect();
        assert!(leftovers.is_empty(), "stray files: {leftovers:?}");
    }

    fn stdio(command: &str) -> ValidEntry {
        valid(stdio_entry(command, &["--flag".to_owned()], &[]))
    }

    fn valid(entry: Value) -> ValidEntry {
        validate_entry("test", entry, &BTreeMap::new()).expect("a valid entry")
    }

    #[test]
    fn project_choices_move_a_name_between_lists_next_to_the_server_map() {
        let local = ["projects", "/repo", "mcpServers"];
        check(
            None,
            &local,
            |doc| {
                doc.set_project_choice("fs", ProjectChoice::Approve)
                    .map(drop)
            },
            Ok(
                "{\n  \"projects\": {\n    \"/repo\": {\n      \"enabledMcpjsonServers\": [\n        \"fs\"\n      ]\n    }\n  }\n}\n",
            ),
        );
        // Denying moves the name; other names, keys and order stay.
        check(
            Some(
                r#"{"projects":{"/repo":{"mcpServers":{},"enabledMcpjsonServers":["a","fs"],"x":1}},"k":2}"#,
            ),
            &local,
            |doc| {
                assert!(doc.set_project_choice("fs", ProjectChoice::Deny)?);
                assert!(!doc.set_project_choice("fs", ProjectChoice::Deny)?);
                Ok(())
            },
            Ok(
                r#"{"projects":{"/repo":{"mcpServers":{},"enabledMcpjsonServers":["a"],"x":1,"disabledMcpjsonServers":["fs"]}},"k":2}"#,
            ),
        );
        check(
            Some(
                r#"{"projects":{"/repo":{"disabledMcpjsonServers":["fs"],"enabledMcpjsonServers":[]}}}"#,
            ),
            &local,
            |doc| {
                doc.set_project_choice("fs", ProjectChoice::Approve)
                    .map(drop)
            },
            Ok(
                r#"{"projects":{"/repo":{"disabledMcpjsonServers":[],"enabledMcpjsonServers":["fs"]}}}"#,
            ),
        );
        check(
            Some(r#"{"projects":{"/repo":{"enabledMcpjsonServers":"fs"}}}"#),
            &local,
            |doc| {
                doc.set_project_choice("fs", ProjectChoice::Approve)
                    .map(drop)
            },
            Err("`enabledMcpjsonServers` is not a JSON array; refusing to rewrite it"),
        );
    }

    #[test]
    fn resetting_project_choices_drops_the_three_keys_only() {
        let local = ["projects", "/repo", "mcpServers"];
        check(
            Some(
                r#"{"projects":{"/repo":{"enableAllProjectMcpServers":true,"mcpServers":{"a":{"command":"x"}},"enabledMcpjsonServers":["a"],"disabledMcpjsonServers":["b"]},"/other":{"enabledMcpjsonServers":["c"]}}}"#,
            ),
            &local,
            |doc| {
                assert!(doc.reset_project_choices()?);
                assert!(!doc.reset_project_choices()?);
                Ok(())
            },
            Ok(
                r#"{"projects":{"/repo":{"mcpServers":{"a":{"command":"x"}}},"/other":{"enabledMcpjsonServers":["c"]}}}"#,
            ),
        );
        // Nothing to reset: the file is left alone (and not created).
        let dir = tempfile::tempdir().expect("tempdir");
        let loc = location(dir.path(), "config.json", &local);
        assert!(!edit(loc.clone(), |doc| doc.reset_project_choices()).expect("reset"));
        assert!(!loc.path.exists());
    }

    #[test]
    fn adds_to_a_missing_file_with_two_space_indent() {
        check(
            None,
            &["mcpServers"],
            |doc| doc.upsert("a", stdio("run")).map(drop),
            Ok(
                "{\n  \"mcpServers\": {\n    \"a\": {\n      \"type\": \"stdio\",\n      \"command\": \"run\",\n      \"args\": [\n        \"--flag\"\n      ]\n    }\n  }\n}\n",
            ),
        );
    }

    #[test]
    fn keeps_other_keys_order_and_tab_indent() {
        check(
            Some(
                "{\n\t\"z\": 1,\n\t\"mcpServers\": {\n\t\t\"b\": {\"url\": \"http://x\"}\n\t},\n\t\"a\": [1, 2]\n}",
            ),
            &["mcpServers"],
            |doc| {
                doc.upsert("a", valid(serde_json::json!({"command": "x"})))
                    .map(drop)
            },
            Ok(
                "{\n\t\"z\": 1,\n\t\"mcpServers\": {\n\t\t\"b\": {\n\t\t\t\"url\": \"http://x\"\n\t\t},\n\t\t\"a\": {\n\t\t\t\"command\": \"x\"\n\t\t}\n\t},\n\t\"a\": [\n\t\t1,\n\t\t2\n\t]\n}",
            ),
        );
    }

    #[test]
    fn replacing_keeps_the_entry_in_place() {
        check(
            Some(r#"{"mcpServers":{"a":{"command":"1"},"b":{"command":"2"},"c":{"command":"3"}}}"#),
            &["mcpServers"],
            |doc| {
                doc.upsert("b", valid(serde_json::json!({"command": "new"})))
                    .map(drop)
            },
            Ok(r#"{"mcpServers":{"a":{"command":"1"},"b":{"command":"new"},"c":{"command":"3"}}}"#),
        );
    }

    #[test]
    fn removing_keeps_the_order_of_the_rest() {
        check(
            Some(
                "{\r\n  \"mcpServers\": {\"a\": {\"command\": \"1\"}, \"b\": {\"command\": \"2\"}, \"c\": {\"command\": \"3\"}}\r\n}\r\n",
            ),
            &["mcpServers"],
            |doc| doc.remove("a").map(drop),
            Ok(
                "{\r\n  \"mcpServers\": {\r\n    \"b\": {\r\n      \"command\": \"2\"\r\n    },\r\n    \"c\": {\r\n      \"command\": \"3\"\r\n    }\r\n  }\r\n}\r\n",
            ),
        );
    }

    #[test]
    fn creates_nested_key_paths() {
        check(
            Some(r#"{"projects":{"/other":{"x":1}}}"#),
            &["projects", "/repo", "mcpServers"],
            |doc| doc.set_enabled("gh", false).map(drop),
            Ok(
                r#"{"projects":{"/other":{"x":1},"/repo":{"mcpServers":{"gh":{"enabled":false}}}}}"#,
            ),
        );
    }

    #[test]
    fn disabling_and_enabling_a_full_entry() {
        check(
            Some(r#"{"mcp":{"servers":{"a":{"command":"x","enabled":true}}}}"#),
            &["mcp", "servers"],
            |doc| {
                assert!(doc.set_enabled("a", false)?);
                assert_eq!(
                    doc.get("a")?,
                    Some(&serde_json::json!({"command":"x","enabled":false}))
                );
                assert!(doc.set_enabled("a", true)?);
                assert!(!doc.set_enabled("a", true)?);
                Ok(())
            },
            Ok(r#"{"mcp":{"servers":{"a":{"command":"x"}}}}"#),
        );
    }

    #[test]
    fn enabling_removes_a_bare_tombstone() {
        check(
            Some(r#"{"mcpServers":{"p":{"enabled":false},"q":{"command":"x"}}}"#),
            &["mcpServers"],
            |doc| doc.set_enabled("p", true).map(drop),
            Ok(r#"{"mcpServers":{"q":{"command":"x"}}}"#),
        );
    }

    #[test]
    fn refusals_leave_the_file_byte_identical() {
        let file = "{ \"mcpServers\": {\"a\": {\"command\": \"x\"}} }";
        let bad_entries = [
            (
                "bad\u{1b}[2Jname",
                r#"{"command": "x"}"#,
                "invalid server name `bad\\u{1b}[2Jname`",
            ),
            ("", r#"{"command": "x"}"#, "must not be empty"),
            (&"n".repeat(129), r#"{"command": "x"}"#, "longer than 128"),
            (" x", r#"{"command": "x"}"#, "white space"),
            ("b", "[1]", "expected a JSON object, got an array"),
            ("b", r#"{"command": ""}"#, "command"),
            ("b", r#"{"command": "x", "args": [1]}"#, "args"),
            ("b", r#"{"type": "http", "url": "ftp://x"}"#, "scheme `ftp`"),
            ("b", r#"{"type": "nope"}"#, "nope"),
            ("b", r#"{"args": []}"#, "missing `command`"),
            (
                "b",
                r#"{"command": "x", "env": {"LD_PRELOAD": "/x.so"}}"#,
                "LD_PRELOAD",
            ),
        ];
        for (name, entry, message) in bad_entries {
            let entry: Value = serde_json::from_str(entry).expect("test json");
            check(
                Some(file),
                &["mcpServers"],
                |doc| {
                    let entry = validate_entry(name, entry, &BTreeMap::new())?;
                    doc.upsert(name, entry).map(drop)
                },
                Err(message),
            );
        }
        check(
            Some(file),
            &["mcpServers"],
            |doc| doc.remove("zzz").map(drop),
            Err("no server named `zzz`"),
        );
        check(
            Some(file),
            &["mcpServers"],
            |doc| doc.insert_new("a", stdio("y")),
            Err("server `a` already exists"),
        );
        check(
            Some(file),
            &["mcpServers"],
            |doc| doc.set_enabled("two\nlines", false).map(drop),
            Err("invalid server name"),
        );
    }

    #[test]
    fn refuses_files_that_are_not_plain_json() {
        check(
            Some("{\n  // a comment\n  \"mcpServers\": {}\n}\n"),
            &["mcpServers"],
            |doc| doc.upsert("a", stdio("x")).map(drop),
            Err("config.json:2:3: not plain JSON"),
        );
        check(
            Some(r#"{"mcpServers": []}"#),
            &["mcpServers"],
            |doc| doc.upsert("a", stdio("x")).map(drop),
            Err("`mcpServers` is not a JSON object"),
        );
    }

    #[test]
    fn refuses_to_write_over_a_file_changed_since_read() {
        let dir = tempfile::tempdir().expect("tempdir");
        let loc = location(dir.path(), ".mcp.json", &["mcpServers"]);
        fs::write(&loc.path, "{}").expect("write");
        let mut doc = ConfigDocument::read(loc.clone()).expect("read");
        doc.upsert("a", stdio("x")).expect("upsert");
        fs::write(&loc.path, "{\"other\": true}").expect("write");
        let err = doc.write().expect_err("must refuse");
        assert!(
            err.to_string()
                .ends_with("changed on disk since it was read; nothing written")
        );
        assert_eq!(
            fs::read_to_string(&loc.path).expect("read"),
            "{\"other\": true}"
        );
    }

    #[cfg(unix)]
    #[test]
    fn keeps_file_permissions() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let loc = location(dir.path(), ".claude.json", &["mcpServers"]);
        fs::write(&loc.path, "{}").expect("write");
        fs::set_permissions(&loc.path, fs::Permissions::from_mode(0o600)).expect("chmod");
        edit(loc.clone(), |doc| doc.upsert("a", stdio("x")).map(drop)).expect("edit");
        let mode = fs::metadata(&loc.path).expect("meta").permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
    }

    #[test]
    fn concurrent_edits_keep_every_entry() {
        let dir = tempfile::tempdir().expect("tempdir");
        let loc = location(dir.path(), ".mcp.json", &["mcpServers"]);
        std::thread::scope(|scope| {
            for thread in 0..8 {
                let loc = loc.clone();
                scope.spawn(move || {
                    for i in 0..5 {
                        let name = format!("s{thread}-{i}");
                        edit(loc.clone(), |doc| doc.upsert(&name, stdio("x")).map(drop))
                            .expect("edit");
                    }
                });
            }
        });
        let doc = ConfigDocument::read(loc).expect("read");
        assert_eq!(doc.servers().expect("servers").map(Map::len), Some(40));
    }

    #[test]
    fn scope_locations() {
        let dirs = EditDirs {
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
            openclaw_home: PathBuf::from("/o"),
        };
        let shown: Vec<String> = WRITABLE_SCOPES
            .iter()
            .map(|scope| {
                let loc = ServersLocation::for_scope(*scope, &dirs).expect("writable");
                format!("{scope}: {} {}", loc.path.display(), loc.key_path_display())
            })
            .collect();
        assert_eq!(
            shown,
            [
                "openclaw: /o/openclaw.json mcp.servers",
                "user: /h/.claude.json mcpServers",
                "project: /p/.mcp.json mcpServers",
                "local: /h/.claude.json projects./p.mcpServers",
            ]
        );
        assert!(ServersLocation::for_scope(Scope::Plugin, &dirs).is_err());
    }

    #[test]
    fn pairs() {
        assert_eq!(
            parse_env_pair("A=b=c").expect("ok"),
            ("A".to_owned(), "b=c".to_owned())
        );
        assert_eq!(
            parse_header_pair("Authorization: Bearer x").expect("ok"),
            ("Authorization".to_owned(), "Bearer x".to_owned())
        );
        assert_eq!(
            parse_env_pair("=secret").expect_err("bad").to_string(),
            "invalid env `=***`: expected KEY=VALUE"
        );
        assert_eq!(
            parse_header_pair("Bad Name: secret")
                .expect_err("bad")
                .to_string(),
            "invalid header `Bad Name:***`: expected 'Name: value'"
        );
    }
}
