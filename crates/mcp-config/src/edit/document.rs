//! One config file in memory: read the way the loader reads it, changed
//! one entry or consent key at a time, and written back with the
//! original's layout (indentation, line endings, BOM, key order).

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::consent::{ApprovalRecord, RECORDS_KEY, TRUST_KEY};
use crate::json::{Document, FindingKind};
use crate::types::Level;

use super::location::{edit_target, read_capped};
use super::lock::parent_dir;
use super::{ServersLocation, ValidEntry, validate_name};
use crate::error::{EditError, EditErrorKind};

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
    /// The original's key order, which a rewrite keeps.
    order: KeyOrder,
}

/// The order of every object's keys in the file as read, so a rewrite
/// keeps it whatever order `serde_json::Map` iterates in: sorted by
/// default, in insertion order with `preserve_order`, a feature a library
/// must not force on its host. Keys the file did not have follow those it
/// had, in the map's own order.
#[derive(Debug, Clone, Default)]
struct KeyOrder {
    /// An object's keys in file order, each with the order inside its value.
    keys: Vec<(String, KeyOrder)>,
    /// An array's items, each with the order inside it.
    items: Vec<KeyOrder>,
}

impl<'de> serde::Deserialize<'de> for KeyOrder {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Visitor;
        impl<'de> serde::de::Visitor<'de> for Visitor {
            type Value = KeyOrder;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("JSON")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(
                self,
                mut map: A,
            ) -> Result<KeyOrder, A::Error> {
                let mut keys = Vec::new();
                while let Some(key) = map.next_key::<String>()? {
                    keys.push((key, map.next_value()?));
                }
                Ok(KeyOrder {
                    keys,
                    items: Vec::new(),
                })
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<KeyOrder, A::Error> {
                let mut items = Vec::new();
                while let Some(item) = seq.next_element()? {
                    items.push(item);
                }
                Ok(KeyOrder {
                    keys: Vec::new(),
                    items,
                })
            }
            fn visit_bool<E>(self, _: bool) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_i64<E>(self, _: i64) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_u64<E>(self, _: u64) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_f64<E>(self, _: f64) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_str<E>(self, _: &str) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
            fn visit_unit<E>(self) -> Result<KeyOrder, E> {
                Ok(KeyOrder::default())
            }
        }
        deserializer.deserialize_any(Visitor)
    }
}

/// A value serialised with its objects' keys in [`KeyOrder`].
struct Ordered<'a> {
    value: &'a Value,
    order: Option<&'a KeyOrder>,
}

impl serde::Serialize for Ordered<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::{SerializeMap, SerializeSeq};
        match self.value {
            Value::Object(map) => {
                let known = self.order.map(|o| o.keys.as_slice()).unwrap_or_default();
                let mut out = serializer.serialize_map(Some(map.len()))?;
                let first = known
                    .iter()
                    .filter_map(|(key, order)| map.get_key_value(key).map(|kv| (kv, Some(order))));
                let rest = map
                    .iter()
                    .filter(|(key, _)| !known.iter().any(|(k, _)| k == *key))
                    .map(|kv| (kv, None));
                for ((key, value), order) in first.chain(rest) {
                    out.serialize_entry(key, &Ordered { value, order })?;
                }
                out.end()
            }
            Value::Array(items) => {
                let mut out = serializer.serialize_seq(Some(items.len()))?;
                for (n, value) in items.iter().enumerate() {
                    let order = self.order.and_then(|o| o.items.get(n));
                    out.serialize_element(&Ordered { value, order })?;
                }
                out.end()
            }
            other => other.serialize(serializer),
        }
    }
}

impl ConfigDocument {
    /// Reads the file at `location`; a missing file reads as an empty
    /// object. A file the loader would refuse is refused here too.
    pub fn read(location: ServersLocation) -> Result<ConfigDocument, EditError> {
        let target = edit_target(&location.path)?;
        let original = read_capped(&location.path, &target)?;
        let fresh = || (Map::new(), Layout::fresh(), KeyOrder::default());
        let (root, layout, order) = match &original {
            None => fresh(),
            Some(bytes) if bytes.trim_ascii().is_empty() => fresh(),
            Some(bytes) => {
                // A byte order mark is kept on writing, and not JSON.
                let body = bytes.strip_prefix(UTF8_BOM).unwrap_or(bytes);
                refuse_repeated_keys(body, &location.path)?;
                let value: Value = serde_json::from_slice(body).map_err(|err| {
                    EditError::at(
                        &location.path,
                        EditErrorKind::Syntax {
                            line: err.line(),
                            column: err.column(),
                            message: err
                                .to_string()
                                .split(" at line")
                                .next()
                                .unwrap_or("")
                                .to_owned(),
                        },
                    )
                })?;
                let Value::Object(root) = value else {
                    return Err(EditError::at(
                        &location.path,
                        EditErrorKind::NotAnObject {
                            key: "(root)".to_owned(),
                        },
                    ));
                };
                // The same bytes parsed again: they are valid JSON.
                let order = serde_json::from_slice(body).unwrap_or_default();
                (root, Layout::detect(bytes), order)
            }
        };
        let document = ConfigDocument {
            location,
            target,
            original,
            root,
            layout,
            order,
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
            return Err(EditError::at(
                &self.location.path,
                EditErrorKind::AlreadyExists {
                    name: name.to_owned(),
                },
            ));
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
        servers.remove(name).ok_or_else(|| self.not_found(name))
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
                    self.servers_mut()?.remove(name);
                } else {
                    let mut entry = entry;
                    entry.remove("enabled");
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
            (Some(_), _) => Err(EditError::new(EditErrorKind::InvalidEntry {
                name: name.to_owned(),
                reason: format!(
                    "the entry in {} is not a JSON object",
                    self.location.path.display()
                ),
            })),
        }
    }

    /// The bytes [`write`](Self::write) would put on disk.
    pub fn render(&self) -> Vec<u8> {
        let root = Value::Object(self.root.clone());
        let root = Ordered {
            value: &root,
            order: Some(&self.order),
        };
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
        let io_err = |source| EditError::at(path, EditErrorKind::Io(source));
        let bytes = self.render();
        if bytes.len() > crate::file::MAX_CONFIG_FILE_BYTES {
            return Err(EditError::at(
                path,
                EditErrorKind::TooLarge {
                    limit_mib: crate::file::MAX_CONFIG_FILE_BYTES >> 20,
                },
            ));
        }
        // The link must still lead where it led when the file was read.
        if edit_target(path)? != self.target {
            return Err(EditError::at(path, EditErrorKind::Changed));
        }
        let current = read_capped(path, &self.target)?;
        if current != self.original {
            return Err(EditError::at(path, EditErrorKind::Changed));
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
                return Err(EditError::at(
                    &path,
                    EditErrorKind::NotAnArray {
                        key: drop.to_owned(),
                    },
                ));
            };
            let before = items.len();
            items.retain(|item| item.as_str() != Some(name));
            changed |= items.len() != before;
        }
        let list = settings
            .entry(add.to_owned())
            .or_insert_with(|| Value::Array(Vec::new()));
        let Value::Array(items) = list else {
            return Err(EditError::at(
                &path,
                EditErrorKind::NotAnArray {
                    key: add.to_owned(),
                },
            ));
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
    /// `enabledMcpjsonServers` (see [`ApprovalRecord`](crate::ApprovalRecord)): a later change to
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
            return Err(EditError::at(
                &path,
                EditErrorKind::NotAnObject {
                    key: RECORDS_KEY.to_owned(),
                },
            ));
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
            return Err(EditError::at(
                &path,
                EditErrorKind::NotAnObject {
                    key: RECORDS_KEY.to_owned(),
                },
            ));
        };
        let removed = map.remove(name).is_some();
        if map.is_empty() {
            settings.remove(RECORDS_KEY);
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
        for key in crate::consent::APPROVAL_KEYS {
            changed |= settings.remove(*key).is_some();
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
                    return Err(EditError::at(
                        &path,
                        EditErrorKind::NotAnObject { key: key.clone() },
                    ));
                }
            };
        }
        Ok(current)
    }

    fn not_an_object(&self, key: &str) -> EditError {
        EditError::at(
            &self.location.path,
            EditErrorKind::NotAnObject {
                key: key.to_owned(),
            },
        )
    }

    fn not_found(&self, name: &str) -> EditError {
        EditError::at(
            &self.location.path,
            EditErrorKind::NotFound {
                name: name.to_owned(),
            },
        )
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
    Err(EditError::at(
        path,
        EditErrorKind::Syntax {
            line: d.line.map_or(0, |l| l as usize),
            column: d.column.map_or(0, |c| c as usize),
            message: finding.message.clone(),
        },
    ))
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;
    use crate::edit::{edit, validate_entry};
    use crate::policy::Policy;
    use crate::types::Scope;

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
        valid(serde_json::json!({"type": "stdio", "command": command, "args": ["--flag"]}))
    }

    fn valid(entry: Value) -> ValidEntry {
        validate_entry(
            "test",
            entry,
            &BTreeMap::new(),
            &Policy::default(),
            Scope::User,
        )
        .expect("a valid entry")
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
            // A new entry's keys come in its map's order: sorted, or as
            // inserted when the host enables serde_json's `preserve_order`.
            // These keys are in both orders at once.
            |doc| {
                let entry = valid(serde_json::json!(
                    {"args": ["--flag"], "command": "run", "type": "stdio"}
                ));
                doc.upsert("a", entry).map(drop)
            },
            Ok(
                "{\n  \"mcpServers\": {\n    \"a\": {\n      \"args\": [\n        \"--flag\"\n      ],\n      \"command\": \"run\",\n      \"type\": \"stdio\"\n    }\n  }\n}\n",
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
    fn env_passthrough_survives_writing_disabling_and_enabling() {
        check(
            Some(r#"{"mcpServers":{}}"#),
            &["mcpServers"],
            |doc| {
                let entry = valid(serde_json::json!(
                    {"command": "x", "envPassthrough": ["AWS_PROFILE", "KUBECONFIG"]}
                ));
                doc.insert_new("a", entry)?;
                assert!(doc.set_enabled("a", false)?);
                assert!(doc.set_enabled("a", true)?);
                Ok(())
            },
            Ok(
                r#"{"mcpServers":{"a":{"command":"x","envPassthrough":["AWS_PROFILE","KUBECONFIG"]}}}"#,
            ),
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
            (
                "b",
                r#"{"command": "x", "envPassthrough": ["LD_PRELOAD"]}"#,
                "`envPassthrough` names `LD_PRELOAD`",
            ),
            (
                "b",
                r#"{"command": "x", "envPassthrough": "AWS_PROFILE"}"#,
                "`envPassthrough` must be an array",
            ),
        ];
        for (name, entry, message) in bad_entries {
            let entry: Value = serde_json::from_str(entry).expect("test json");
            check(
                Some(file),
                &["mcpServers"],
                |doc| {
                    let entry = validate_entry(
                        name,
                        entry,
                        &BTreeMap::new(),
                        &Policy::default(),
                        Scope::User,
                    )?;
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
}
