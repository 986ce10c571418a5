//! One server entry: from its JSON object (either dialect) to a typed
//! [`ServerConfig`], a tombstone, or an invalid entry, with a positioned
//! diagnostic for every problem found (REFERENCE §1.1, §1.2, §1.4, §1.6).
//!
//! Besides shape, every field a transport will hand on is checked where it
//! is written: env keys are names; header names are RFC 9110 tokens and
//! header values hold no control character but tab (a CR or LF would end
//! the header and start another), after expansion; a `ws` url is ws or
//! wss, every other url http or https; a stdio command, argument, env
//! value or cwd holds no NUL. Messages never quote a value that may be a
//! secret (an expanded variable, a header or env value). `envPassthrough`
//! names follow the env key rules (see `passthrough`).

use std::collections::BTreeMap;
use std::num::NonZeroUsize;
use std::path::{Component, Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use crate::env_safety::{is_dangerous_env_key, is_env_name};
use crate::expand::{expand_tilde, expand_vars};
use crate::json::{Document, child_pointer, escape_text};
use crate::secret;
mod oauth;
mod passthrough;
mod plugin_paths;

pub(crate) use plugin_paths::{PathField, RootGuard};

use crate::types::{
    Diagnostic, Level, ProxyConfig, RemoteConfig, ServerConfig, StdioConfig, Timeouts, ToolFilter,
    TransportConfig, TransportKind,
};

/// What one entry turned out to be.
// Nearly every entry is a server, so boxing it would only add allocations.
#[allow(clippy::large_enum_variant)]
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EntryOutcome {
    /// A usable entry (possibly `enabled: false`).
    Server(ServerConfig),
    /// A bare `{"enabled": false}`: removes same-named lower entries and
    /// adds nothing.
    Tombstone,
    /// An entry with at least one error: it removes same-named lower entries
    /// (a broken override must not silently fall back) and adds nothing.
    Invalid,
}

/// Paths a plugin entry is resolved against. An entry may be patched
/// together from several files, so each path field has the folder of the
/// file that wrote it (see [`crate::plugin`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct PluginPaths<'a> {
    /// The plugin root (every path must stay inside it).
    pub guard: &'a RootGuard,
    /// The folder of the file that wrote `command`; also the default `cwd`.
    pub command_base: &'a Path,
    /// The folder of the file that wrote `args`.
    pub args_base: &'a Path,
    /// The folder of the file that wrote `cwd`.
    pub cwd_base: &'a Path,
    /// The folder of the file that wrote `headersHelper`.
    pub helper_base: &'a Path,
}

/// Everything an entry is parsed against.
#[derive(Debug, Clone, Copy)]
pub(crate) struct EntryContext<'a> {
    /// The document the entry's fields are positioned in.
    pub doc: &'a Document,
    /// JSON pointer of the entry inside `doc`.
    pub pointer: &'a str,
    /// The server name (the key of the entry).
    pub name: &'a str,
    /// Variables for `${VAR}` expansion.
    pub env: &'a BTreeMap<String, String>,
    /// The directory `~` stands for.
    pub home: Option<&'a Path>,
    /// Set for entries that come from a plugin bundle.
    pub plugin: Option<PluginPaths<'a>>,
}

/// Canonical field names with their accepted aliases.
const FIELDS: &[(&str, &[&str])] = &[
    ("type", &[]),
    ("transport", &[]),
    ("command", &[]),
    ("args", &[]),
    ("env", &[]),
    ("envPassthrough", &["env_passthrough"]),
    ("cwd", &["workingDirectory", "working_directory"]),
    ("url", &[]),
    ("headers", &[]),
    ("headersHelper", &["headers_helper"]),
    ("oauth", &[]),
    ("name", &[]),
    ("id", &[]),
    ("enabled", &[]),
    ("required", &[]),
    ("toolFilter", &["tool_filter"]),
    ("connectionTimeoutMs", &["connection_timeout_ms"]),
    ("connectTimeout", &["connect_timeout"]),
    ("requestTimeoutMs", &["request_timeout_ms"]),
    ("timeout", &[]),
    ("toolCallTimeoutMs", &["tool_call_timeout_ms"]),
    ("descriptionLimit", &["description_limit"]),
];

const COMMON_FIELDS: &[&str] = &[
    "type",
    "transport",
    "enabled",
    "required",
    "toolFilter",
    "connectionTimeoutMs",
    "connectTimeout",
    "requestTimeoutMs",
    "timeout",
    "toolCallTimeoutMs",
    "descriptionLimit",
];

fn kind_fields(kind: TransportKind) -> &'static [&'static str] {
    match kind {
        TransportKind::Stdio => &["command", "args", "env", "envPassthrough", "cwd"],
        TransportKind::Sse | TransportKind::Http => &["url", "headers", "headersHelper", "oauth"],
        TransportKind::Ws => &["url", "headers", "headersHelper"],
        TransportKind::Sdk => &["name"],
        TransportKind::ClaudeAiProxy => &["url", "id"],
    }
}

fn parse_kind(text: &str) -> Option<TransportKind> {
    Some(match text {
        "stdio" => TransportKind::Stdio,
        "sse" => TransportKind::Sse,
        "http" | "streamable-http" | "streamableHttp" | "streamable_http" => TransportKind::Http,
        "ws" | "websocket" => TransportKind::Ws,
        "sdk" => TransportKind::Sdk,
        "claudeai-proxy" => TransportKind::ClaudeAiProxy,
        _ => return None,
    })
}

/// Parses one entry, pushing every problem onto `diagnostics`.
pub(crate) fn parse_entry(
    value: &Value,
    cx: &EntryContext<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> EntryOutcome {
    let mut p = EntryParser {
        cx,
        diagnostics,
        invalid: false,
        fields: BTreeMap::new(),
    };
    let Some(object) = value.as_object() else {
        p.error(None, "entry must be an object".into());
        return EntryOutcome::Invalid;
    };
    p.collect_fields(object);
    p.finish()
}

struct EntryParser<'a, 'd> {
    cx: &'a EntryContext<'a>,
    diagnostics: &'d mut Vec<Diagnostic>,
    invalid: bool,
    /// canonical name -> (key as written, value)
    fields: BTreeMap<&'static str, (&'a str, &'a Value)>,
}

impl<'a> EntryParser<'a, '_> {
    fn pointer(&self, field: Option<&str>) -> String {
        match field {
            Some(f) => {
                let key = self.fields.get(f).map_or(f, |(k, _)| k);
                child_pointer(self.cx.pointer, key)
            }
            None => self.cx.pointer.to_owned(),
        }
    }

    fn push_at(&mut self, level: Level, pointer: &str, field: Option<&str>, message: String) {
        if level == Level::Error {
            self.invalid = true;
        }
        let message = format!("server `{}`: {message}", escape_text(self.cx.name));
        let d = self
            .cx
            .doc
            .diagnostic(level, pointer, message, Some(self.cx.name), field);
        self.diagnostics.push(d);
    }

    fn push(&mut self, level: Level, field: Option<&str>, message: String) {
        let pointer = self.pointer(field);
        self.push_at(level, &pointer, field, message);
    }

    fn error(&mut self, field: Option<&str>, message: String) {
        self.push(Level::Error, field, message);
    }

    fn warning(&mut self, field: Option<&str>, message: String) {
        self.push(Level::Warning, field, message);
    }

    fn collect_fields(&mut self, object: &'a Map<String, Value>) {
        for (key, value) in self.cx.doc.in_file_order(self.cx.pointer, object) {
            let canonical = FIELDS
                .iter()
                .find(|(c, aliases)| *c == key || aliases.contains(&key.as_str()))
                .map(|(c, _)| *c);
            match canonical {
                Some(c) => {
                    if let Some((first, _)) = self.fields.get(c) {
                        let message = format!("`{key}` repeats `{first}`; the first one is used");
                        let pointer = child_pointer(self.cx.pointer, key);
                        self.push_at(Level::Warning, &pointer, Some(c), message);
                    } else {
                        self.fields.insert(c, (key.as_str(), value));
                    }
                }
                None => {
                    let pointer = child_pointer(self.cx.pointer, key);
                    self.push_at(
                        Level::Warning,
                        &pointer,
                        Some(key),
                        format!("unknown field `{key}`"),
                    );
                }
            }
        }
    }

    fn get(&self, field: &str) -> Option<&'a Value> {
        self.fields.get(field).map(|(_, v)| *v)
    }

    fn kind(&mut self) -> Result<Option<TransportKind>, ()> {
        let mut named = None;
        for field in ["type", "transport"] {
            let Some(value) = self.get(field) else {
                continue;
            };
            let Some(text) = value.as_str() else {
                self.error(Some(field), format!("`{field}` must be a string"));
                return Err(());
            };
            let Some(kind) = parse_kind(text) else {
                self.error(
                    Some(field),
                    format!(
                        "unknown {field} `{text}` (expected stdio, sse, http, streamable-http, ws, sdk or claudeai-proxy)"
                    ),
                );
                return Err(());
            };
            match named {
                Some(first) if first != kind => {
                    self.error(
                        Some(field),
                        format!("`type` and `transport` disagree ({first} vs {kind})"),
                    );
                    return Err(());
                }
                _ => named = Some(kind),
            }
        }
        if named.is_some() {
            return Ok(named);
        }
        if self.get("command").is_some() {
            return Ok(Some(TransportKind::Stdio));
        }
        if self.get("url").is_some() {
            self.push(
                Level::Info,
                Some("url"),
                "no `type` given; a url-only entry is streamable http".into(),
            );
            return Ok(Some(TransportKind::Http));
        }
        Ok(None)
    }

    fn finish(mut self) -> EntryOutcome {
        let enabled = self.bool_field("enabled").unwrap_or(true);
        let kind = match self.kind() {
            Ok(Some(kind)) => kind,
            Ok(None) => {
                let only_enabled = self.fields.keys().all(|k| *k == "enabled");
                if !enabled && only_enabled {
                    return EntryOutcome::Tombstone;
                }
                self.error(
                    Some("command"),
                    "missing `command` (stdio) or `url` (remote)".into(),
                );
                return EntryOutcome::Invalid;
            }
            Err(()) => return EntryOutcome::Invalid,
        };
        let allowed = kind_fields(kind);
        let unused: Vec<&'static str> = self
            .fields
            .keys()
            .copied()
            .filter(|k| !COMMON_FIELDS.contains(k) && !allowed.contains(k))
            .collect();
        for field in unused {
            self.warning(
                Some(field),
                format!("`{field}` is not used by {kind} servers"),
            );
        }
        let required = self.bool_field("required").unwrap_or(false);
        let tool_filter = self.tool_filter();
        let timeouts = self.timeouts();
        let description_limit = self.description_limit();
        let transport = match kind {
            TransportKind::Stdio => self.stdio().map(TransportConfig::Stdio),
            TransportKind::Sse => self.remote(kind).map(TransportConfig::Sse),
            TransportKind::Http => self.remote(kind).map(TransportConfig::Http),
            TransportKind::Ws => self.remote(kind).map(TransportConfig::Ws),
            TransportKind::Sdk => self.sdk(),
            TransportKind::ClaudeAiProxy => self.proxy().map(TransportConfig::ClaudeAiProxy),
        };
        match transport {
            Some(transport) if !self.invalid => EntryOutcome::Server(ServerConfig {
                name: self.cx.name.to_owned(),
                transport,
                enabled,
                required,
                tool_filter,
                timeouts,
                description_limit,
            }),
            _ => EntryOutcome::Invalid,
        }
    }

    fn bool_field(&mut self, field: &str) -> Option<bool> {
        let value = self.get(field)?;
        match value.as_bool() {
            Some(b) => Some(b),
            None => {
                self.error(Some(field), format!("`{field}` must be true or false"));
                None
            }
        }
    }

    fn string_field(&mut self, field: &str) -> Option<&'a str> {
        let value = self.get(field)?;
        match value.as_str() {
            Some(s) => Some(s),
            None => {
                self.error(Some(field), format!("`{field}` must be a string"));
                None
            }
        }
    }

    fn string_list(&mut self, field: &str, value: &'a Value, pointer: &str) -> Vec<&'a str> {
        let Some(items) = value.as_array() else {
            self.push_at(
                Level::Error,
                pointer,
                Some(field),
                format!("`{field}` must be an array of strings"),
            );
            return Vec::new();
        };
        let mut out = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            match item.as_str() {
                Some(s) => out.push(s),
                None => {
                    let p = format!("{pointer}/{i}");
                    self.push_at(
                        Level::Error,
                        &p,
                        Some(field),
                        format!("`{field}[{i}]` must be a string"),
                    );
                }
            }
        }
        out
    }

    /// Expands `${VAR}` (and, for plugins, the plugin root) in one value.
    fn expand(
        &mut self,
        field: &str,
        pointer: &str,
        text: &str,
        plugin_vars: bool,
        tilde: bool,
    ) -> String {
        let root = self
            .cx
            .plugin
            .filter(|_| plugin_vars)
            .map(|p| p.guard.root());
        self.secret_references(field, pointer, text);
        let env = self.cx.env;
        let expanded = expand_vars(text, |name| match (root, name) {
            (Some(root), "CLAUDE_PLUGIN_ROOT" | "PLUGIN_ROOT") => Some(path_text(root)),
            _ => env.get(name).cloned(),
        });
        for var in &expanded.unset {
            self.push_at(
                Level::Warning,
                pointer,
                Some(field),
                format!(
                    "`{field}` uses `${{{var}}}`, which is not set; the text is kept as written"
                ),
            );
        }
        if matches!(field, "command" | "args" | "env" | "cwd") && expanded.value.contains('\0') {
            // A spawn would fail on it; say so where it is written. The
            // value may be a secret: the message names the field only.
            self.push_at(
                Level::Error,
                pointer,
                Some(field),
                format!("`{field}` holds a NUL character, which no program can be given"),
            );
        }
        if tilde {
            expand_tilde(&expanded.value, self.cx.home)
        } else {
            expanded.value
        }
    }

    /// Checks every `${secret:NAME}` in one value as written: only `env`
    /// and `headers` values are resolved (`secret::resolve`), so anywhere
    /// else a reference is an error, as is a name that breaks the rule.
    fn secret_references(&mut self, field: &str, pointer: &str, text: &str) {
        let references = secret::references(text);
        if references.is_empty() {
            return;
        }
        if !matches!(field, "env" | "headers") {
            self.push_at(
                Level::Error,
                pointer,
                Some(field),
                format!(
                    "`{field}` uses `${{secret:…}}`, which is resolved only in `env` and `headers` values"
                ),
            );
            return;
        }
        for reference in references {
            let message = match reference {
                secret::Reference::Name(_) => continue,
                secret::Reference::Invalid(name, reason) => format!(
                    "`{field}` names secret `{}`, which is not a secret name: {reason}",
                    escape_text(name)
                ),
                secret::Reference::Unclosed => {
                    format!("`{field}` holds `${{secret:` without its closing `}}`")
                }
            };
            self.push_at(Level::Error, pointer, Some(field), message);
        }
    }

    /// Resolves one path of a plugin entry (see [`PluginPaths::resolve`]);
    /// a path that leaves the plugin root is an error and is kept as
    /// written, since the entry is invalid anyway.
    fn plugin_path(
        &mut self,
        field: PathField<'_>,
        pointer: &str,
        raw: &str,
        expanded: String,
    ) -> String {
        let Some(plugin) = self.cx.plugin else {
            return expanded;
        };
        match plugin.resolve(field, raw, expanded) {
            Ok(resolved) => resolved,
            Err(expanded) => {
                let name = field.name();
                self.push_at(
                    Level::Error,
                    pointer,
                    Some(name),
                    format!("`{name}` path `{raw}` leaves the plugin root"),
                );
                expanded
            }
        }
    }

    fn stdio(&mut self) -> Option<StdioConfig> {
        let command = match self.get("command") {
            None => {
                self.error(Some("command"), "missing `command`".into());
                None
            }
            Some(Value::String(s)) if s.trim().is_empty() => {
                self.error(Some("command"), "`command` must not be empty".into());
                None
            }
            Some(Value::String(s)) => {
                let pointer = self.pointer(Some("command"));
                let expanded = self.expand("command", &pointer, s, true, true);
                Some(self.plugin_path(PathField::Command, &pointer, s, expanded))
            }
            Some(_) => {
                self.error(Some("command"), "`command` must be a string".into());
                None
            }
        };
        // `cwd` before `args`: a plugin's relative args are checked where
        // the child will resolve them.
        let cwd = match self.string_field("cwd") {
            Some(raw) => {
                let pointer = self.pointer(Some("cwd"));
                let expanded = self.expand("cwd", &pointer, raw, true, true);
                Some(PathBuf::from(self.plugin_path(
                    PathField::Cwd,
                    &pointer,
                    raw,
                    expanded,
                )))
            }
            None => self.cx.plugin.map(|p| p.command_base.to_path_buf()),
        };
        let mut args = Vec::new();
        if let Some(value) = self.get("args") {
            let pointer = self.pointer(Some("args"));
            for (i, arg) in self
                .string_list("args", value, &pointer)
                .into_iter()
                .enumerate()
            {
                let p = format!("{pointer}/{i}");
                let expanded = self.expand("args", &p, arg, true, true);
                let field = PathField::Arg {
                    cwd: cwd.as_deref(),
                };
                args.push(self.plugin_path(field, &p, arg, expanded));
            }
        }
        let env = self.stdio_env();
        let env_passthrough = self.env_passthrough();
        Some(StdioConfig {
            command: command?,
            args,
            env,
            cwd,
            env_passthrough,
        })
    }

    fn stdio_env(&mut self) -> BTreeMap<String, String> {
        let mut env = BTreeMap::new();
        let Some(value) = self.get("env") else {
            return env;
        };
        let pointer = self.pointer(Some("env"));
        let Some(map) = value.as_object() else {
            self.error(Some("env"), "`env` must be an object".into());
            return env;
        };
        for (key, value) in map {
            let p = child_pointer(&pointer, key);
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                _ => {
                    self.push_at(
                        Level::Error,
                        &p,
                        Some("env"),
                        format!("`env.{key}` must be a string, number or boolean"),
                    );
                    continue;
                }
            };
            if !is_env_name(key) {
                // `A=B` would reach the child as the variable `A`, `A\0B`
                // would stop the spawn: neither is a name any shell sets.
                self.diagnostics.push(self.cx.doc.diagnostic(
                    Level::Error,
                    &p,
                    format!(
                        "server `{}`: `env` key `{}` is not a variable name (letters, digits and `_`, not starting with a digit) and is refused",
                        escape_text(self.cx.name),
                        escape_text(key)
                    ),
                    Some(self.cx.name),
                    Some("env"),
                ));
                continue;
            }
            if is_dangerous_env_key(key) {
                // Reported as an error so checks fail, but the entry stays
                // usable: the key is dropped and never reaches a child.
                self.diagnostics.push(self.cx.doc.diagnostic(
                    Level::Error,
                    &p,
                    format!(
                        "server `{}`: `env.{key}` can change how the server's interpreter starts and is refused",
                        escape_text(self.cx.name)
                    ),
                    Some(self.cx.name),
                    Some("env"),
                ));
                continue;
            }
            let expanded = self.expand("env", &p, &text, true, false);
            env.insert(key.clone(), expanded);
        }
        env
    }

    fn remote(&mut self, kind: TransportKind) -> Option<RemoteConfig> {
        let url = self.url(kind);
        let mut headers = BTreeMap::new();
        if let Some(value) = self.get("headers") {
            let pointer = self.pointer(Some("headers"));
            match value.as_object() {
                Some(map) => {
                    for (key, value) in map {
                        let p = child_pointer(&pointer, key);
                        if !is_header_name(key) {
                            self.push_at(
                                Level::Error,
                                &p,
                                Some("headers"),
                                format!(
                                    "header name `{}` is not an HTTP token (RFC 9110: letters, digits and !#$%&'*+-.^_`|~)",
                                    escape_text(key)
                                ),
                            );
                            continue;
                        }
                        match value.as_str() {
                            Some(v) => {
                                let expanded = self.expand("headers", &p, v, false, false);
                                // Checked after expansion: a variable can
                                // carry the line break too. The value is a
                                // secret, so the message names the header.
                                // RFC 9110 field values: visible text,
                                // spaces and tabs.
                                if expanded.chars().any(|c| c.is_ascii_control() && c != '\t') {
                                    self.push_at(
                                        Level::Error,
                                        &p,
                                        Some("headers"),
                                        format!(
                                            "`headers.{key}` holds a control character (a line break or NUL would end the header early and start another)"
                                        ),
                                    );
                                    continue;
                                }
                                headers.insert(key.clone(), expanded);
                            }
                            None => self.push_at(
                                Level::Error,
                                &p,
                                Some("headers"),
                                format!("`headers.{key}` must be a string"),
                            ),
                        }
                    }
                }
                None => self.error(Some("headers"), "`headers` must be an object".into()),
            }
        }
        let headers_helper = self.string_field("headersHelper").map(|raw| {
            let pointer = self.pointer(Some("headersHelper"));
            self.secret_references("headersHelper", &pointer, raw);
            self.plugin_path(PathField::HeadersHelper, &pointer, raw, raw.to_owned())
        });
        let oauth = if kind == TransportKind::Ws {
            None
        } else {
            self.oauth()
        };
        Some(RemoteConfig {
            url: url?,
            headers,
            headers_helper,
            oauth,
        })
    }

    fn url(&mut self, kind: TransportKind) -> Option<String> {
        let Some(raw) = self.get("url") else {
            self.error(Some("url"), "missing `url`".into());
            return None;
        };
        let Some(raw) = raw.as_str() else {
            self.error(Some("url"), "`url` must be a string".into());
            return None;
        };
        let pointer = self.pointer(Some("url"));
        let expanded = self.expand("url", &pointer, raw, false, false);
        if expanded.contains("${") {
            // Already reported as unset; do not pile a parse error on top.
            return Some(expanded);
        }
        let schemes: &[&str] = match kind {
            TransportKind::Ws => &["ws", "wss"],
            _ => &["http", "https"],
        };
        match url::Url::parse(&expanded) {
            Ok(u) if schemes.contains(&u.scheme()) => Some(expanded),
            Ok(_) => {
                // The scheme as written: after expansion it may be the value
                // of a variable, which a diagnostic must never show.
                let scheme = raw.split(':').next().unwrap_or(raw);
                self.error(
                    Some("url"),
                    format!(
                        "`url` scheme `{}` is not valid for {kind} servers (expected {})",
                        escape_text(scheme),
                        schemes.join(" or ")
                    ),
                );
                None
            }
            Err(e) => {
                self.error(Some("url"), format!("`url` is not a valid url: {e}"));
                None
            }
        }
    }

    fn sdk(&mut self) -> Option<TransportConfig> {
        let name = self.string_field("name").unwrap_or(self.cx.name).to_owned();
        Some(TransportConfig::Sdk { name })
    }

    fn proxy(&mut self) -> Option<ProxyConfig> {
        let url = self.url(TransportKind::ClaudeAiProxy);
        let id = match self.get("id") {
            None => {
                self.error(Some("id"), "missing `id`".into());
                None
            }
            Some(_) => self.string_field("id").map(str::to_owned),
        };
        Some(ProxyConfig { url: url?, id: id? })
    }

    fn tool_filter(&mut self) -> ToolFilter {
        let mut filter = ToolFilter::default();
        let Some(value) = self.get("toolFilter") else {
            return filter;
        };
        let pointer = self.pointer(Some("toolFilter"));
        let Some(map) = value.as_object() else {
            self.error(Some("toolFilter"), "`toolFilter` must be an object".into());
            return filter;
        };
        for (key, value) in map {
            let p = child_pointer(&pointer, key);
            match key.as_str() {
                "include" | "exclude" => {
                    let list: Vec<String> = self
                        .string_list("toolFilter", value, &p)
                        .into_iter()
                        .map(str::to_owned)
                        .collect();
                    if key == "include" {
                        filter.include = list;
                    } else {
                        filter.exclude = list;
                    }
                }
                _ => self.push_at(
                    Level::Warning,
                    &p,
                    Some("toolFilter"),
                    format!("unknown field `toolFilter.{key}`"),
                ),
            }
        }
        filter
    }

    fn duration(&mut self, field: &str, unit_ms: bool) -> Option<Duration> {
        let value = self.get(field)?;
        let d = if unit_ms {
            value.as_u64().map(Duration::from_millis)
        } else {
            value
                .as_f64()
                .filter(|s| s.is_finite() && *s >= 0.0)
                .and_then(|s| Duration::try_from_secs_f64(s).ok())
        };
        if d.is_none() {
            let unit = if unit_ms { "milliseconds" } else { "seconds" };
            self.error(
                Some(field),
                format!("`{field}` must be a non-negative number of {unit}"),
            );
        }
        d
    }

    /// `descriptionLimit`: the longest tool description, in characters,
    /// this server's tools keep (a positive integer).
    fn description_limit(&mut self) -> Option<NonZeroUsize> {
        let value = self.get("descriptionLimit")?;
        let limit = value
            .as_u64()
            .and_then(|n| usize::try_from(n).ok())
            .and_then(NonZeroUsize::new);
        if limit.is_none() {
            self.error(
                Some("descriptionLimit"),
                "`descriptionLimit` must be a positive whole number of characters".into(),
            );
        }
        limit
    }

    fn timeouts(&mut self) -> Timeouts {
        let defaults = Timeouts::default();
        let connect_ms = self.duration("connectionTimeoutMs", true);
        let connect_s = self.duration("connectTimeout", false);
        let request_ms = self.duration("requestTimeoutMs", true);
        let request_s = self.duration("timeout", false);
        let tool_call = self.duration("toolCallTimeoutMs", true);
        Timeouts {
            connect: connect_ms.or(connect_s).unwrap_or(defaults.connect),
            request: request_ms.or(request_s).unwrap_or(defaults.request),
            tool_call: tool_call.unwrap_or(defaults.tool_call),
        }
    }
}

/// Whether `name` is an HTTP field name: an RFC 9110 token.
fn is_header_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

/// `path` as text, as `Display` writes it (lossily only when it is not
/// UTF-8), without going through the formatter in the common case.
pub(crate) fn path_text(path: &Path) -> String {
    path.to_str()
        .map_or_else(|| path.display().to_string(), str::to_owned)
}

pub(crate) fn is_explicitly_relative(path: &str) -> bool {
    path == "." || path == ".." || path.starts_with("./") || path.starts_with("../")
}

/// Lexically removes `.` and `..` components.
pub(crate) fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}
