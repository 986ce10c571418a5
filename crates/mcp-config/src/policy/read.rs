//! Reading the policy: the managed directory's three files, and the
//! `allowedMcpServers` / `deniedMcpServers` lists of any settings file.
//! Every rule keeps its file and line, so a verdict can name it. A managed
//! file that cannot be read or holds an entry that cannot be understood
//! marks the policy broken (see [`super::verdict`]): a rule that is
//! skipped is a hole in the policy.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::expand::expand_vars;
use crate::file::read_text;
use crate::json::{Document, child_pointer, escape_text};
use crate::merge::Contribution;
use crate::parse::{ParseEnv, parse_servers};
use crate::tree::{Tree, parse_json, parse_toml};
use crate::types::{Diagnostic, Level, Scope};

use super::Policy;
use super::rules::{AllowList, CodexIdentity, CodexList, Matcher, Pin, PolicyRule, Rule};

/// Claude Code's managed server file: exclusive control.
pub const MANAGED_MCP_FILE: &str = "managed-mcp.json";
/// Claude Code's managed settings file: the lists and switches.
pub const MANAGED_SETTINGS_FILE: &str = "managed-settings.json";
/// Codex's administrator requirements: its allow list.
pub const REQUIREMENTS_FILE: &str = "requirements.toml";

const ALLOWED: &str = "allowedMcpServers";
const DENIED: &str = "deniedMcpServers";

/// What the managed directory holds.
pub(crate) struct ManagedRead {
    pub(crate) policy: Policy,
    /// Servers of `managedMcpServers` (rank 0) and `managed-mcp.json`
    /// (rank 1, wins a name both define).
    pub(crate) contributions: Vec<Contribution>,
    pub(crate) files: Vec<PathBuf>,
    pub(crate) diagnostics: Vec<Diagnostic>,
}

/// Reads the managed directory `dir`.
pub(crate) fn read_managed(dir: &Path, env: ParseEnv<'_>) -> ManagedRead {
    let mut read = ManagedRead {
        policy: Policy::default(),
        contributions: Vec::new(),
        files: Vec::new(),
        diagnostics: Vec::new(),
    };
    let settings_path = dir.join(MANAGED_SETTINGS_FILE);
    if let Some(text) = read.text(&settings_path) {
        match parse_json(&text, &settings_path) {
            Ok(tree) => read.settings(&tree, env.vars),
            Err(d) => read.fail(d),
        }
        read.provided_servers(&text, &settings_path, env);
    }
    let mcp_path = dir.join(MANAGED_MCP_FILE);
    if let Some(text) = read.text(&mcp_path) {
        match Document::parse(&text, &mcp_path) {
            Ok(doc) => {
                let pointer = "/mcpServers";
                let (line, _) = doc.position(pointer);
                read.policy.exclusive = Some(PolicyRule::new(
                    mcp_path.clone(),
                    line,
                    "mcpServers".to_owned(),
                    String::new(),
                ));
                let (entries, diagnostics) = parse_servers(&doc, pointer, env, None);
                read.diagnostics.extend(diagnostics);
                read.diagnostics.extend(doc.file_findings(&[pointer]));
                read.contributions.push(Contribution {
                    scope: Scope::Managed,
                    rank: 1,
                    entries,
                    settings: None,
                });
            }
            Err(d) => read.fail(d),
        }
    }
    let requirements_path = dir.join(REQUIREMENTS_FILE);
    if let Some(tree) = read.tree(&requirements_path, parse_toml) {
        read.requirements(&tree);
    }
    read
}

impl ManagedRead {
    fn text(&mut self, path: &Path) -> Option<String> {
        match read_text(path) {
            Ok(Some(text)) => {
                self.files.push(path.to_path_buf());
                Some(text)
            }
            Ok(None) => None,
            Err(d) => {
                self.fail(d);
                None
            }
        }
    }

    fn tree(
        &mut self,
        path: &Path,
        parse: fn(&str, &Path) -> Result<Tree, Diagnostic>,
    ) -> Option<Tree> {
        let text = self.text(path)?;
        parse(&text, path).map_err(|d| self.fail(d)).ok()
    }

    /// A managed file that cannot be understood: reported, and the policy
    /// blocks everything (the first such problem is the rule named).
    fn fail(&mut self, diagnostic: Diagnostic) {
        if self.policy.broken.is_none() {
            self.policy.broken = Some(PolicyRule {
                file: diagnostic.file.clone().unwrap_or_default(),
                line: diagnostic.line,
                key: diagnostic.field.clone().unwrap_or_default(),
                pattern: String::new(),
            });
        }
        self.diagnostics.push(Diagnostic {
            level: Level::Error,
            message: format!(
                "{}; managed policy is unreadable, so no server is allowed to run",
                diagnostic.message
            ),
            ..diagnostic
        });
    }

    /// `managedMcpServers`: servers every user gets, beside their own.
    fn provided_servers(&mut self, text: &str, path: &Path, env: ParseEnv<'_>) {
        let pointer = "/managedMcpServers";
        let Ok(doc) = Document::parse(text, path) else {
            return;
        };
        if doc.get(pointer).is_none() {
            return;
        }
        // A bad entry is no server, not a hole in the policy: reported, and
        // the other entries load.
        let (entries, diagnostics) = parse_servers(&doc, pointer, env, None);
        self.diagnostics.extend(diagnostics);
        self.contributions.push(Contribution {
            scope: Scope::Managed,
            rank: 0,
            entries,
            settings: None,
        });
    }

    fn settings(&mut self, tree: &Tree, vars: &BTreeMap<String, String>) {
        let mut problems = Vec::new();
        read_lists(tree, true, vars, &mut self.policy, &mut problems);
        for problem in problems {
            self.fail(problem);
        }
        let value = &tree.value;
        match value.get("allowManagedMcpServersOnly") {
            None => {}
            Some(Value::Bool(on)) => self.policy.managed_only = *on,
            Some(_) => self.fail(problem(
                tree,
                "/allowManagedMcpServersOnly",
                "`allowManagedMcpServersOnly` must be true or false".to_owned(),
            )),
        }
        let strict = "/strictPluginOnlyCustomization";
        let covers_mcp = match value.pointer(strict) {
            None => Some(false),
            Some(Value::Bool(on)) => Some(*on),
            Some(Value::Array(items)) if items.iter().all(Value::is_string) => {
                Some(items.iter().any(|item| item == "mcp"))
            }
            Some(_) => None,
        };
        match covers_mcp {
            Some(true) => {
                let pattern = value
                    .pointer(strict)
                    .map(Value::to_string)
                    .unwrap_or_default();
                self.policy.plugin_only = Some(rule_at(tree, strict, pattern));
            }
            Some(false) => {}
            None => self.fail(problem(
                tree,
                strict,
                "`strictPluginOnlyCustomization` must be true, false or a list of surface names"
                    .to_owned(),
            )),
        }
    }

    fn requirements(&mut self, tree: &Tree) {
        let Some(servers) = tree.value.get("mcp_servers") else {
            return;
        };
        let Some(servers) = servers.as_object() else {
            self.fail(problem(
                tree,
                "/mcp_servers",
                "`mcp_servers` must be a table".to_owned(),
            ));
            return;
        };
        let mut identities = Vec::new();
        for (name, server) in servers {
            let pointer = child_pointer("/mcp_servers", name);
            let identity_pointer = child_pointer(&pointer, "identity");
            let identity = server.get("identity").and_then(Value::as_object);
            let text = |key: &str| {
                identity
                    .and_then(|table| table.get(key))
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            let (command, url) = (text("command"), text("url"));
            if command.is_some() == url.is_some() {
                self.fail(problem(
                    tree,
                    &identity_pointer,
                    format!(
                        "`mcp_servers.{}.identity` must hold exactly one of `command` and `url`",
                        escape_text(name)
                    ),
                ));
                continue;
            }
            let pattern = command.clone().or_else(|| url.clone()).unwrap_or_default();
            identities.push(CodexIdentity {
                name: name.clone(),
                command,
                url,
                at: PolicyRule {
                    key: format!("mcp_servers.{name}.identity"),
                    ..rule_at(tree, &identity_pointer, pattern)
                },
            });
        }
        self.policy.codex = Some(CodexList {
            at: PolicyRule {
                key: "mcp_servers".to_owned(),
                ..rule_at(tree, "/mcp_servers", String::new())
            },
            identities,
        });
    }
}

/// A rule positioned at `pointer` of `tree`, its key the pointer's path.
fn rule_at(tree: &Tree, pointer: &str, pattern: String) -> PolicyRule {
    let (line, _) = tree.position(pointer);
    PolicyRule::new(tree.path.clone(), line, key_of(pointer), pattern)
}

/// `/deniedMcpServers/2/serverUrl` as `deniedMcpServers[2].serverUrl`.
fn key_of(pointer: &str) -> String {
    let mut key = String::new();
    for token in pointer.split('/').skip(1) {
        let token = token.replace("~1", "/").replace("~0", "~");
        if token.bytes().all(|b| b.is_ascii_digit()) && !token.is_empty() {
            key.push_str(&format!("[{token}]"));
        } else {
            if !key.is_empty() {
                key.push('.');
            }
            key.push_str(&token);
        }
    }
    key
}

fn problem(tree: &Tree, pointer: &str, message: String) -> Diagnostic {
    let (line, column) = tree.position(pointer);
    Diagnostic {
        level: Level::Error,
        message,
        file: Some(tree.path.clone()),
        line: Some(line),
        column: Some(column),
        server: None,
        field: Some(key_of(pointer)),
    }
}

/// Reads the lists of a user, project or local settings file into
/// `policy`. An entry that cannot be understood is an error diagnostic
/// and is left out (the managed policy is what must not lose a rule).
pub(crate) fn read_settings_lists(
    text: &str,
    path: &Path,
    vars: &BTreeMap<String, String>,
    policy: &mut Policy,
    diagnostics: &mut Vec<Diagnostic>,
) {
    if !text.contains(ALLOWED) && !text.contains(DENIED) {
        return;
    }
    if let Ok(tree) = parse_json(text, path) {
        read_lists(&tree, false, vars, policy, diagnostics);
    }
}

/// Reads `allowedMcpServers` and `deniedMcpServers` of `tree`; every entry
/// that cannot be understood becomes an error in `problems`.
fn read_lists(
    tree: &Tree,
    managed: bool,
    vars: &BTreeMap<String, String>,
    policy: &mut Policy,
    problems: &mut Vec<Diagnostic>,
) {
    for list in [ALLOWED, DENIED] {
        let pointer = child_pointer("", list);
        let Some(value) = tree.value.get(list) else {
            continue;
        };
        let Some(items) = value.as_array() else {
            problems.push(problem(tree, &pointer, format!("`{list}` must be a list")));
            continue;
        };
        let allow = list == ALLOWED;
        let mut rules = Vec::new();
        for (i, item) in items.iter().enumerate() {
            let item_pointer = child_pointer(&pointer, &i.to_string());
            match list_entry(tree, &item_pointer, item, allow, vars) {
                Ok(Some(rule)) => rules.push(rule),
                Ok(None) => {}
                Err(d) => problems.push(d),
            }
        }
        if allow {
            policy.allow.push(AllowList {
                managed,
                at: rule_at(tree, &pointer, String::new()),
                rules,
            });
        } else {
            policy.deny.extend(rules);
        }
    }
}

/// One list entry: an object with exactly one of `serverName`,
/// `serverCommand`, `serverUrl`, and in an allow list an optional
/// `configHash`. `Ok(None)`: an allow entry whose variables are unset,
/// ignored as Claude Code ignores it.
fn list_entry(
    tree: &Tree,
    pointer: &str,
    item: &Value,
    allow: bool,
    vars: &BTreeMap<String, String>,
) -> Result<Option<Rule>, Diagnostic> {
    let key = key_of(pointer);
    let Some(object) = item.as_object() else {
        return Err(problem(tree, pointer, format!("`{key}` must be an object")));
    };
    let kinds = ["serverName", "serverCommand", "serverUrl"];
    let allowed_keys: &[&str] = if allow {
        &["configHash", "pinned"]
    } else {
        &[]
    };
    if let Some(unknown) = object
        .keys()
        .find(|k| !kinds.contains(&k.as_str()) && !allowed_keys.contains(&k.as_str()))
    {
        return Err(problem(
            tree,
            &child_pointer(pointer, unknown),
            format!("`{key}` has an unknown key `{}`", escape_text(unknown)),
        ));
    }
    let present: Vec<&str> = kinds
        .iter()
        .copied()
        .filter(|k| object.contains_key(*k))
        .collect();
    let [kind] = present.as_slice() else {
        return Err(problem(
            tree,
            pointer,
            format!("`{key}` must have exactly one of `serverName`, `serverCommand`, `serverUrl`"),
        ));
    };
    let field_pointer = child_pointer(pointer, kind);
    let bad = |what: &str| {
        problem(
            tree,
            &field_pointer,
            format!("`{key}.{kind}` must be {what}"),
        )
    };
    let mut unset = Vec::new();
    let mut expand = |text: &str| {
        let expanded = expand_vars(text, |name| vars.get(name).cloned());
        unset.extend(expanded.unset);
        expanded.value
    };
    let value = &object[*kind];
    let matcher = match *kind {
        "serverName" => match value.as_str() {
            Some(name) if !name.is_empty() => Matcher::Name(name.to_owned()),
            _ => return Err(bad("a non-empty string")),
        },
        "serverCommand" => match value.as_array() {
            Some(words) if !words.is_empty() && words.iter().all(Value::is_string) => {
                Matcher::Command(
                    words
                        .iter()
                        .filter_map(Value::as_str)
                        .map(&mut expand)
                        .collect(),
                )
            }
            _ => return Err(bad("a non-empty list of strings")),
        },
        _ => match value.as_str() {
            Some(url) if !url.is_empty() => Matcher::Url(expand(url)),
            _ => return Err(bad("a non-empty string")),
        },
    };
    let pin = match (object.get("configHash"), object.get("pinned")) {
        (None, None) => None,
        (Some(hash), pinned) => {
            let hash = digest(hash).ok_or_else(|| {
                problem(
                    tree,
                    &child_pointer(pointer, "configHash"),
                    format!("`{key}.configHash` must be the 16 hex digits `mcp-cli get` prints"),
                )
            })?;
            let fields = match pinned {
                None => BTreeMap::new(),
                Some(pinned) => pinned_fields(pinned).ok_or_else(|| {
                    problem(
                        tree,
                        &child_pointer(pointer, "pinned"),
                        format!(
                            "`{key}.pinned` must map each part to the 16 hex digits `mcp-cli get --pin` prints"
                        ),
                    )
                })?,
            };
            Some(Pin { hash, fields })
        }
        (None, Some(_)) => {
            return Err(problem(
                tree,
                &child_pointer(pointer, "pinned"),
                format!("`{key}.pinned` explains a `configHash`, and there is none"),
            ));
        }
    };
    if allow && !unset.is_empty() {
        // An allow entry that means something else in each environment is
        // no rule; Claude Code ignores it too.
        return Ok(None);
    }
    let pattern = match &matcher {
        Matcher::Name(name) => name.clone(),
        Matcher::Command(words) => words.join(" "),
        Matcher::Url(url) => url.clone(),
    };
    Ok(Some(Rule {
        matcher,
        pin,
        at: PolicyRule::new(
            tree.path.clone(),
            tree.position(&field_pointer).0,
            format!("{key}.{kind}"),
            pattern,
        ),
    }))
}

/// A digest as a pin writes it: 16 hex digits, kept in lowercase.
fn digest(value: &Value) -> Option<String> {
    let text = value.as_str()?;
    (text.len() == 16 && text.bytes().all(|b| b.is_ascii_hexdigit()))
        .then(|| text.to_ascii_lowercase())
}

/// `pinned`: an object of part names, each with its digest.
fn pinned_fields(value: &Value) -> Option<BTreeMap<String, String>> {
    value
        .as_object()?
        .iter()
        .map(|(part, value)| Some((part.clone(), digest(value)?)))
        .collect()
}
