//! Parsing one config file from text: the pure core of loading.
//!
//! **Repeated keys and lone surrogates** ([`crate::json::Finding`]) are
//! reported at a level that follows what they could hide:
//!
//! - inside a server entry, at any depth (two `command`s, two `env.TOKEN`s,
//!   two headers of one name), and a server name repeated in its map: an
//!   error, and the entry is invalid. JSON keeps the last occurrence, so a
//!   reviewer reading the first would approve something else;
//! - a key on the way to a server map (`mcpServers` twice, the project's
//!   `projects[...]` twice): an error; the last map is the one loaded, as
//!   every JSON reader loads it;
//! - anywhere else (settings): a warning naming both positions; the last
//!   value is used.
//!
//! Server names follow [`crate::name`]: a refused name is an error at the
//! entry, shown escaped.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::consent::APPROVAL_KEYS;
use crate::entry::{EntryContext, EntryOutcome, PluginPaths, parse_entry};
use crate::json::{Document, child_pointer, escape_text};
use crate::name::server_name_problem;
use crate::types::{Diagnostic, Level, Scope};

/// The inputs expansion needs: variables and the home directory. Its
/// `Debug` names the variables, never their values.
#[derive(Clone, Copy)]
#[non_exhaustive]
pub struct ParseEnv<'a> {
    /// Variables for `${VAR}` expansion.
    pub vars: &'a BTreeMap<String, String>,
    /// The directory a leading `~` stands for.
    pub home: Option<&'a Path>,
}

impl<'a> ParseEnv<'a> {
    /// Expansion from `vars`, with no home directory (a leading `~` stays).
    pub fn new(vars: &'a BTreeMap<String, String>) -> Self {
        ParseEnv { vars, home: None }
    }

    /// Sets the directory a leading `~` stands for.
    pub fn with_home(mut self, home: &'a Path) -> Self {
        self.home = Some(home);
        self
    }
}

impl std::fmt::Debug for ParseEnv<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ParseEnv")
            .field("vars", &self.vars.keys().collect::<Vec<_>>())
            .field("home", &self.home)
            .finish()
    }
}

/// One entry of a file, after parsing.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedEntry {
    /// The server name (the entry's key).
    pub name: String,
    /// What the entry turned out to be.
    pub outcome: EntryOutcome,
    /// The entry's JSON as written (for plugins: after the merge patch).
    pub raw: Value,
    /// The file the entry was read from.
    pub source: PathBuf,
    /// 1-based position of the entry in `source`.
    pub line: u32,
    /// 1-based column of the entry in `source`.
    pub column: u32,
    /// The contributing plugin, for plugin entries.
    pub plugin: Option<String>,
}

/// Everything one file contributed.
#[derive(Debug, Clone, PartialEq)]
pub struct ParsedFile {
    /// The file.
    pub path: PathBuf,
    /// Server entries in file order.
    pub entries: Vec<ParsedEntry>,
    /// The file's other (non-MCP) settings, an object (empty when none).
    pub settings: Value,
    /// Problems found in this file.
    pub diagnostics: Vec<Diagnostic>,
}

/// Where the server map sits in a file of `scope`: the table of sources
/// says, except for plugin files, which hold `{mcpServers:{…}}`,
/// `{servers:{…}}` or a bare map.
fn servers_pointer(scope: Scope, value: &Value) -> String {
    match crate::sources::root_servers(scope) {
        Some(keys) => crate::sources::pointer_below("", keys),
        None if value.get("mcpServers").is_some() => "/mcpServers".to_owned(),
        None if value.get("servers").is_some() => "/servers".to_owned(),
        None => String::new(),
    }
}

/// Parses one file of `scope` from `text`.
///
/// Claude-style files keep servers under `mcpServers`, OpenClaw's under
/// `mcp.servers`, plugin files under `mcpServers`, `servers` or at the top.
/// Everything else in the file is returned as its settings.
pub fn parse_file(text: &str, path: &Path, scope: Scope, env: ParseEnv<'_>) -> ParsedFile {
    let mut file = ParsedFile {
        path: path.to_path_buf(),
        entries: Vec::new(),
        settings: Value::Object(Default::default()),
        diagnostics: Vec::new(),
    };
    let doc = match Document::parse(text, path) {
        Ok(doc) => doc,
        Err(d) => {
            file.diagnostics.push(d);
            return file;
        }
    };
    if !doc.value.is_object() {
        file.diagnostics.push(doc.diagnostic(
            Level::Error,
            "",
            "the file must hold a JSON object".into(),
            None,
            None,
        ));
        return file;
    }
    let pointer = servers_pointer(scope, &doc.value);
    let (entries, diagnostics) = parse_servers(&doc, &pointer, env, None);
    file.entries = entries;
    file.diagnostics.extend(diagnostics);
    file.diagnostics
        .extend(doc.file_findings(&[pointer.as_str()]));
    file.settings = settings_without(&doc.value, &pointer);
    if scope == Scope::Project {
        // A project must not approve its own servers (REFERENCE §1.7).
        for key in APPROVAL_KEYS {
            if let Some(map) = file.settings.as_object_mut()
                && map.remove(*key).is_some()
            {
                {
                    let pointer = child_pointer("", key);
                    file.diagnostics.push(doc.diagnostic(
                        Level::Warning,
                        &pointer,
                        format!("`{key}` in a project file is ignored; approve project servers in user or local settings"),
                        None,
                        Some(key),
                    ));
                }
            }
        }
    }
    if scope == Scope::OpenClaw
        && let Some(ttl) = doc.get("/mcp/sessionIdleTtlMs")
        && !ttl.is_u64()
    {
        file.diagnostics.push(doc.diagnostic(
            Level::Error,
            "/mcp/sessionIdleTtlMs",
            "`mcp.sessionIdleTtlMs` must be a non-negative integer of milliseconds".into(),
            None,
            Some("sessionIdleTtlMs"),
        ));
    }
    file
}

/// The document without the server map at `pointer` (an empty object for
/// a file that is a bare server map).
pub(crate) fn settings_without(value: &Value, pointer: &str) -> Value {
    // A bare map (`""`) is all servers: no settings.
    let Some((parent, last)) = pointer.rsplit_once('/') else {
        return Value::Object(Default::default());
    };
    let key = last.replace("~1", "/").replace("~0", "~");
    let mut settings = value.clone();
    if let Some(map) = settings.pointer_mut(parent).and_then(Value::as_object_mut) {
        map.remove(&key);
    }
    settings
}

/// Parses every entry of the server map at `pointer` in `doc`. A missing
/// map is no entries; a map of the wrong type is an error.
pub(crate) fn parse_servers(
    doc: &Document,
    pointer: &str,
    env: ParseEnv<'_>,
    plugin: Option<(&str, PluginPaths<'_>)>,
) -> (Vec<ParsedEntry>, Vec<Diagnostic>) {
    let mut entries = Vec::new();
    let mut diagnostics = Vec::new();
    let Some(value) = doc.get(pointer) else {
        return (entries, diagnostics);
    };
    let Some(map) = value.as_object() else {
        let field = pointer.rsplit('/').next().unwrap_or("mcpServers");
        diagnostics.push(doc.diagnostic(
            Level::Error,
            pointer,
            format!("`{field}` must be an object of server entries"),
            None,
            Some(field),
        ));
        return (entries, diagnostics);
    };
    for (name, raw) in doc.in_file_order(pointer, map) {
        let entry_pointer = child_pointer(pointer, name);
        entries.push(parse_one(
            doc,
            &entry_pointer,
            name,
            raw.clone(),
            env,
            plugin,
            &mut diagnostics,
        ));
    }
    (entries, diagnostics)
}

/// Parses one entry whose value is `raw` and whose position is `pointer`
/// in `doc` (`raw` may differ from the document's value after a plugin
/// merge patch).
pub(crate) fn parse_one(
    doc: &Document,
    pointer: &str,
    name: &str,
    raw: Value,
    env: ParseEnv<'_>,
    plugin: Option<(&str, PluginPaths<'_>)>,
    diagnostics: &mut Vec<Diagnostic>,
) -> ParsedEntry {
    let (line, column) = doc.position(pointer);
    let mut outcome = if let Some(problem) = server_name_problem(name) {
        let shown = escape_text(name);
        diagnostics.push(doc.diagnostic(
            Level::Error,
            pointer,
            format!("server `{shown}`: {problem}"),
            Some(name),
            None,
        ));
        EntryOutcome::Invalid
    } else {
        let cx = EntryContext {
            doc,
            pointer,
            name,
            env: env.vars,
            home: env.home,
            plugin: plugin.map(|(_, p)| p),
        };
        parse_entry(&raw, &cx, diagnostics)
    };
    // A repeated key or an undecodable escape inside the entry: what runs
    // would not be what a reader of the file sees, so the entry is invalid.
    let shown = escape_text(name);
    for finding in doc.findings_within(pointer) {
        let field = finding
            .pointer
            .get(pointer.len() + 1..)
            .and_then(|rest| rest.split('/').next())
            .filter(|token| !token.is_empty())
            .map(|token| token.replace("~1", "/").replace("~0", "~"));
        diagnostics.push(doc.finding_diagnostic(
            finding,
            Level::Error,
            format!("server `{shown}`: {}", finding.message),
            Some(name),
            field.as_deref(),
        ));
        outcome = EntryOutcome::Invalid;
    }
    ParsedEntry {
        name: name.to_owned(),
        outcome,
        raw,
        source: doc.path.clone(),
        line,
        column,
        plugin: plugin.map(|(n, _)| n.to_owned()),
    }
}
