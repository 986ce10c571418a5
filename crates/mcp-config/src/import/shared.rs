//! What every host's translator shares: walking a server map with the
//! crate's naming rule, the entry builder that reads a host's fields
//! (marking each one used, so whatever a translator does not handle is
//! reported rather than lost), the variable syntaxes of the editor hosts
//! (`${env:VAR}`, `${workspaceFolder}`, `${input:ID}`) and Gemini's
//! `$VAR`, and the final check of every entry with the loader's own
//! parser.

use std::collections::{BTreeMap, BTreeSet, HashSet};

use serde_json::{Map, Value};

use super::{Host, ImportContext, Imported, ImportedServer, Untranslated};
use crate::json::{child_pointer, escape_text};
use crate::name::server_name_problem;
use crate::tree::Tree;
use crate::types::Level;

/// One file's translation in progress.
pub(super) struct Session<'a> {
    pub(super) tree: &'a Tree,
    pub(super) cx: &'a ImportContext<'a>,
    pub(super) host: Host,
    pub(super) out: Imported,
}

/// Which variable syntax a host's strings use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Vars {
    /// Strings are taken as written.
    Plain,
    /// VS Code's (and Cursor's, Windsurf's): `${env:VAR}`,
    /// `${workspaceFolder}`, `${userHome}`, `${input:ID}`, …
    Editor,
    /// Gemini CLI's: `$VAR` and `${VAR}`.
    Shell,
}

/// A name as a message shows it: escaped, and cut when very long.
pub(super) fn shown_name(name: &str) -> String {
    let escaped = escape_text(name);
    if escaped.chars().count() > 64 {
        let cut: String = escaped.chars().take(61).collect();
        format!("{cut}...")
    } else {
        escaped.into_owned()
    }
}

impl<'a> Session<'a> {
    /// Translates every entry of the server map at `keys` (object keys from
    /// the root) with `entry`. A missing map is no servers; anything other
    /// than an object there is an error.
    pub(super) fn servers(
        &mut self,
        keys: &[&str],
        vars: Vars,
        mut entry: impl FnMut(&mut EntryBuilder<'_>),
    ) {
        let tree = self.tree;
        let mut pointer = String::new();
        let mut value = &tree.value;
        for key in keys {
            pointer = child_pointer(&pointer, key);
            match value.get(*key) {
                Some(v) => value = v,
                None => return,
            }
        }
        let Some(map) = value.as_object() else {
            if !value.is_null() {
                self.out.diagnostics.push(tree.diagnostic(
                    Level::Error,
                    &pointer,
                    format!("`{}` is not an object of servers", keys.join(".")),
                    None,
                ));
            }
            return;
        };
        for (name, raw) in map {
            let entry_pointer = child_pointer(&pointer, name);
            if let Some(problem) = server_name_problem(name) {
                self.out.diagnostics.push(tree.diagnostic(
                    Level::Error,
                    &entry_pointer,
                    format!("server `{}`: {problem}; not imported", shown_name(name)),
                    None,
                ));
                continue;
            }
            let Some(obj) = raw.as_object() else {
                self.out.diagnostics.push(tree.diagnostic(
                    Level::Error,
                    &entry_pointer,
                    format!(
                        "server `{}`: the entry is not an object; not imported",
                        shown_name(name)
                    ),
                    Some(name),
                ));
                continue;
            };
            let mut builder = EntryBuilder {
                tree,
                cx: self.cx,
                host: self.host,
                name,
                pointer: entry_pointer,
                obj,
                used: HashSet::new(),
                entry: Map::new(),
                untranslated: Vec::new(),
                inputs: BTreeSet::new(),
                vars,
                refused: None,
                skipped: None,
            };
            entry(&mut builder);
            builder.finish(&mut self.out);
        }
    }
}

/// One entry being translated.
pub(super) struct EntryBuilder<'a> {
    tree: &'a Tree,
    cx: &'a ImportContext<'a>,
    pub(super) host: Host,
    pub(super) name: &'a str,
    pointer: String,
    obj: &'a Map<String, Value>,
    used: HashSet<&'a str>,
    /// Our entry, in the order fields are set.
    pub(super) entry: Map<String, Value>,
    untranslated: Vec<Untranslated>,
    inputs: BTreeSet<String>,
    vars: Vars,
    /// Why the entry cannot be imported (the first reason), at a pointer.
    refused: Option<(String, String)>,
    /// Why the entry is not one to import (a built-in extension).
    skipped: Option<String>,
}

impl<'a> EntryBuilder<'a> {
    /// The raw field, marking it handled.
    pub(super) fn field(&mut self, field: &'a str) -> Option<&'a Value> {
        let (key, value) = self.obj.get_key_value(field)?;
        self.used.insert(key.as_str());
        Some(value)
    }

    /// Whether the host's entry has `field` (without handling it).
    pub(super) fn has(&self, field: &str) -> bool {
        self.obj.contains_key(field)
    }

    fn pointer_of(&self, path: &[&str]) -> String {
        path.iter()
            .fold(self.pointer.clone(), |p, key| child_pointer(&p, key))
    }

    /// Records that `path` (a field, or a field and the keys below it) was
    /// not carried over, and why.
    pub(super) fn untranslated(&mut self, path: &[&str], reason: impl Into<String>) {
        let (line, column) = self.tree.position(&self.pointer_of(path));
        self.untranslated.push(Untranslated {
            field: path.join("."),
            line,
            column,
            reason: reason.into(),
        });
    }

    /// Handles `field` by reporting it as not carried over.
    pub(super) fn drop_field(&mut self, field: &'a str, reason: &str) {
        if self.field(field).is_some() {
            self.untranslated(&[field], reason);
        }
    }

    /// Refuses the whole entry: something it needs cannot be read.
    pub(super) fn refuse(&mut self, path: &[&str], message: impl Into<String>) {
        if self.refused.is_none() {
            self.refused = Some((self.pointer_of(path), message.into()));
        }
    }

    /// Leaves the entry out on purpose (reported as a warning).
    pub(super) fn skip(&mut self, reason: impl Into<String>) {
        self.skipped = Some(reason.into());
    }

    /// Sets a field of our entry.
    pub(super) fn set(&mut self, key: &str, value: Value) {
        self.entry.insert(key.to_owned(), value);
    }

    /// A string field, its variables translated; a value of another type
    /// refuses the entry.
    pub(super) fn string(&mut self, field: &'a str) -> Option<String> {
        let value = self.field(field)?;
        self.string_at(&[field], value)
    }

    /// [`EntryBuilder::string`] of a value at `path` below the entry.
    pub(super) fn string_at(&mut self, path: &[&str], value: &Value) -> Option<String> {
        match value {
            Value::String(s) => Some(self.text(s, path)),
            _ => {
                self.refuse(path, format!("`{}` is not a string", path.join(".")));
                None
            }
        }
    }

    /// A list of strings (numbers and booleans are written as text, as the
    /// hosts pass them); any other element refuses the entry, since
    /// dropping one argument would run a different command.
    pub(super) fn string_list(&mut self, field: &'a str) -> Option<Vec<String>> {
        let value = self.field(field)?;
        self.list_at(&[field], value)
    }

    /// [`EntryBuilder::string_list`] of a value at `path`.
    pub(super) fn list_at(&mut self, path: &[&str], value: &Value) -> Option<Vec<String>> {
        let shown = path.join(".");
        let Value::Array(items) = value else {
            self.refuse(path, format!("`{shown}` is not an array of strings"));
            return None;
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let index = i.to_string();
            let mut at: Vec<&str> = path.to_vec();
            at.push(&index);
            match scalar_text(item) {
                Some(text) => out.push(self.text(&text, &at)),
                None => {
                    self.refuse(&at, format!("`{shown}` element {i} is not a string"));
                    return None;
                }
            }
        }
        Some(out)
    }

    /// An object of string values (numbers and booleans as text); a value
    /// of another type is reported and left out, a field that is not an
    /// object at all is reported whole.
    pub(super) fn string_map(&mut self, field: &'a str) -> Option<Map<String, Value>> {
        let value = self.field(field)?;
        self.map_at(&[field], value)
    }

    /// [`EntryBuilder::string_map`] of a value at `path`.
    pub(super) fn map_at(&mut self, path: &[&str], value: &Value) -> Option<Map<String, Value>> {
        let Value::Object(map) = value else {
            self.untranslated(path, "not an object of strings; left out");
            return None;
        };
        let mut out = Map::new();
        for (key, value) in map {
            let mut at: Vec<&str> = path.to_vec();
            at.push(key);
            match scalar_text(value) {
                Some(text) => {
                    let text = self.text(&text, &at);
                    out.insert(key.clone(), Value::String(text));
                }
                None => self.untranslated(&at, "the value is not a string; left out"),
            }
        }
        Some(out)
    }

    /// A boolean field; another type is reported and left out.
    pub(super) fn boolean(&mut self, field: &'a str) -> Option<bool> {
        match self.field(field)? {
            Value::Bool(b) => Some(*b),
            _ => {
                self.untranslated(&[field], "not a boolean; left out");
                None
            }
        }
    }

    /// A non-negative number field; another value is reported and left out.
    pub(super) fn number(&mut self, field: &'a str) -> Option<f64> {
        match self.field(field)?.as_f64() {
            Some(n) if n.is_finite() && n >= 0.0 => Some(n),
            _ => {
                self.untranslated(&[field], "not a non-negative number; left out");
                None
            }
        }
    }

    /// Sets our millisecond field `key` from the host's `field` in
    /// `unit_ms` milliseconds per unit.
    pub(super) fn duration(&mut self, field: &'a str, key: &str, unit_ms: f64) {
        if let Some(n) = self.number(field) {
            let ms = (n * unit_ms).round();
            if ms >= 1.0 && ms <= u32::MAX as f64 {
                self.set(key, Value::from(ms as u64));
            } else {
                self.untranslated(&[field], "out of range; left out");
            }
        }
    }

    /// Copies `field`'s list of tool names into `toolFilter.<part>`.
    pub(super) fn tool_list(&mut self, field: &'a str, part: &str) {
        let Some(value) = self.field(field) else {
            return;
        };
        let names: Option<Vec<Value>> = value.as_array().and_then(|items| {
            items
                .iter()
                .map(|v| v.as_str().map(|s| Value::String(s.to_owned())))
                .collect()
        });
        match names {
            Some(names) => {
                let filter = self
                    .entry
                    .entry("toolFilter")
                    .or_insert_with(|| Value::Object(Map::new()));
                if let Value::Object(filter) = filter {
                    filter.insert(part.to_owned(), Value::Array(names));
                }
            }
            None => self.untranslated(&[field], "not an array of tool names; left out"),
        }
    }

    /// The usual stdio fields under their usual names: `command` (a
    /// string), `args`, `env`, `cwd`.
    pub(super) fn stdio(&mut self, command: &'a str, args: &'a str, env: &'a str) {
        self.set("type", Value::from("stdio"));
        if let Some(c) = self.string(command) {
            self.set("command", Value::String(c));
        }
        if let Some(a) = self.string_list(args) {
            self.set("args", a.into_iter().map(Value::String).collect());
        }
        if let Some(e) = self.string_map(env) {
            self.set("env", Value::Object(e));
        }
        if let Some(cwd) = self.string("cwd") {
            self.set("cwd", Value::String(cwd));
        }
    }

    /// A remote entry of `kind` (`http` or `sse`) from `url_field` and
    /// `headers`.
    pub(super) fn remote(&mut self, kind: &str, url_field: &'a str) {
        self.set("type", Value::from(kind));
        if let Some(url) = self.string(url_field) {
            self.set("url", Value::String(url));
        }
        if let Some(h) = self.string_map("headers") {
            self.set("headers", Value::Object(h));
        }
    }

    /// `text` with the host's variables in our syntax; `path` names the
    /// field for reports.
    fn text(&mut self, text: &str, path: &[&str]) -> String {
        match self.vars {
            Vars::Plain => text.to_owned(),
            Vars::Shell => shell_vars(text),
            Vars::Editor => {
                let (out, problems) = editor_vars(text, self.cx, &mut self.inputs);
                for problem in problems {
                    self.untranslated(path, problem);
                }
                out
            }
        }
    }

    fn finish(mut self, out: &mut Imported) {
        let name = self.name;
        if let Some(reason) = self.skipped.take() {
            out.diagnostics.push(self.tree.diagnostic(
                Level::Warning,
                &self.pointer,
                format!("server `{}`: {reason}; not imported", shown_name(name)),
                Some(name),
            ));
            return;
        }
        if let Some((pointer, message)) = self.refused.take() {
            out.diagnostics.push(self.tree.diagnostic(
                Level::Error,
                &pointer,
                format!("server `{}`: {message}; not imported", shown_name(name)),
                Some(name),
            ));
            return;
        }
        let unused: Vec<&'a str> = self
            .obj
            .keys()
            .map(String::as_str)
            .filter(|k| !self.used.contains(k))
            .collect();
        for key in unused {
            let reason = format!("not a field {} import knows", self.host.display_name());
            self.untranslated(&[key], reason);
        }
        let entry = Value::Object(std::mem::take(&mut self.entry));
        // The loader's own parser has the last word, with placeholders
        // standing in for the inputs nobody has typed yet.
        let mut probe = entry.clone();
        let stand_ins: BTreeMap<String, String> = self
            .inputs
            .iter()
            .map(|id| (id.clone(), "input".to_owned()))
            .collect();
        super::fill_inputs(&mut probe, &stand_ins);
        if let Err(err) = crate::edit::validate_entry(
            name,
            probe,
            &BTreeMap::new(),
            &crate::policy::Policy::default(),
            crate::Scope::User,
        ) {
            out.diagnostics.push(self.tree.diagnostic(
                Level::Error,
                &self.pointer,
                format!("{err}; not imported"),
                Some(name),
            ));
            return;
        }
        let (line, column) = self.tree.position(&self.pointer);
        self.untranslated.sort_by_key(|u| (u.line, u.column));
        out.servers.push(ImportedServer {
            name: name.to_owned(),
            entry,
            line,
            column,
            untranslated: self.untranslated,
            inputs: self.inputs.into_iter().collect(),
        });
    }
}

/// A scalar as the text a host would pass: strings as they are, numbers and
/// booleans written out.
fn scalar_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => Some(n.to_string()),
        Value::Bool(b) => Some(b.to_string()),
        _ => None,
    }
}

/// Gemini's `$VAR` as our `${VAR}` (`${VAR}` is the same in both).
fn shell_vars(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('$') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        let len = after
            .char_indices()
            .find(|&(j, c)| !(c == '_' || c.is_ascii_alphabetic() || (j > 0 && c.is_ascii_digit())))
            .map_or(after.len(), |(j, _)| j);
        if len > 0 {
            out.push_str("${");
            out.push_str(&after[..len]);
            out.push('}');
            rest = &after[len..];
        } else {
            out.push('$');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// VS Code's variables in our syntax: `${env:VAR}` → `${VAR}`,
/// `${workspaceFolder}` → the project, `${workspaceFolderBasename}`,
/// `${userHome}`, `${pathSeparator}` and `${/}`; `${input:ID}` stays and
/// its id is recorded. Returns the text and what could not be resolved
/// (kept as written).
fn editor_vars(
    text: &str,
    cx: &ImportContext<'_>,
    inputs: &mut BTreeSet<String>,
) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut problems = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 2..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let var = &after[..end];
        let whole = &rest[start..start + 2 + end + 1];
        rest = &after[end + 1..];
        if let Some(name) = var.strip_prefix("env:") {
            if crate::env_safety::is_env_name(name) {
                out.push_str("${");
                out.push_str(name);
                out.push('}');
            } else {
                out.push_str(whole);
                problems.push(format!(
                    "`${{env:{}}}` is not a variable name; kept as written",
                    escape_text(name)
                ));
            }
            continue;
        }
        if let Some(id) = var.strip_prefix("input:") {
            inputs.insert(id.to_owned());
            out.push_str(whole);
            continue;
        }
        let project = cx.project.map(|p| p.to_string_lossy().into_owned());
        let resolved = match var {
            "workspaceFolder" | "workspaceRoot" => project,
            "workspaceFolderBasename" => cx
                .project
                .and_then(|p| p.file_name())
                .map(|n| n.to_string_lossy().into_owned()),
            "userHome" => cx.home.map(|h| h.to_string_lossy().into_owned()),
            "pathSeparator" | "/" => Some(std::path::MAIN_SEPARATOR.to_string()),
            // A plain name is one of our own `${VAR}`s already.
            _ if crate::env_safety::is_env_name(var) => Some(whole.to_owned()),
            _ => None,
        };
        match resolved {
            Some(text) => out.push_str(&text),
            None if var.starts_with("workspaceFolder") || var == "workspaceRoot" => {
                out.push_str(whole);
                problems.push(format!(
                    "`{whole}` stands for the open project, and a user-wide entry has none; kept as written (import into a project's scope to resolve it)"
                ));
            }
            None => {
                out.push_str(whole);
                problems.push(format!(
                    "`{}` cannot be resolved outside the editor; kept as written",
                    escape_text(whole)
                ));
            }
        }
    }
    out.push_str(rest);
    (out, problems)
}

/// `text` with each `${input:ID}` replaced by `values[ID]`, and the ids
/// that had no value.
pub(super) fn fill_placeholders(
    text: &str,
    values: &BTreeMap<String, String>,
) -> (String, Vec<String>) {
    let mut out = String::with_capacity(text.len());
    let mut missing = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("${input:") {
        out.push_str(&rest[..start]);
        let after = &rest[start + 8..];
        let Some(end) = after.find('}') else {
            out.push_str(&rest[start..]);
            rest = "";
            break;
        };
        let id = &after[..end];
        match values.get(id) {
            Some(value) => out.push_str(value),
            None => {
                out.push_str(&rest[start..start + 8 + end + 1]);
                missing.push(id.to_owned());
            }
        }
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    (out, missing)
}

/// The entry shape Claude Desktop, Cursor, VS Code and Windsurf share: an
/// optional `type` (`stdio`, `http`, `sse`), then `command`/`args`/`env`/
/// `cwd`, or `url_field`/`headers`; a url alone is streamable HTTP.
pub(super) fn command_or_url(b: &mut EntryBuilder<'_>, url_field: &'static str) {
    let kind = match b.field("type") {
        None => None,
        Some(Value::String(t)) => Some(t.as_str()),
        Some(_) => {
            b.refuse(&["type"], "`type` is not a string");
            return;
        }
    };
    let kind = match kind {
        Some("stdio") => "stdio",
        Some("http" | "streamable-http" | "streamableHttp" | "streamable_http") => "http",
        Some("sse") => "sse",
        Some(other) => {
            b.refuse(&["type"], format!("unknown type `{}`", shown_name(other)));
            return;
        }
        None if b.has("command") => "stdio",
        None if b.has(url_field) => "http",
        None => {
            b.refuse(
                &[],
                format!("the entry has neither `command` nor `{url_field}`"),
            );
            return;
        }
    };
    if kind == "stdio" {
        b.stdio("command", "args", "env");
    } else {
        b.remote(kind, url_field);
    }
}

/// Reports an `envFile` field: its variables are not copied, since a
/// dotenv file's quoting rules differ between the hosts' readers and the
/// file may change after the import.
pub(super) fn env_file(b: &mut EntryBuilder<'_>) {
    b.drop_field(
        "envFile",
        "the variables of this file are not copied; put them in `env` (or keep them in the environment and name them in `envPassthrough`)",
    );
}
