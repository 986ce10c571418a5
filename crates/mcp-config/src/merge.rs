//! The layered merge (REFERENCE §1.3, §1.7): whole-entry replacement by
//! name, tombstones, signature dedupe of plugin servers, deep merge of the
//! other settings, and project server approval.
//!
//! The merge sorts its inputs by (scope, rank) itself, so the result never
//! depends on the order the files were read in, only on the documented
//! precedence.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::{Map, Value};

use crate::consent::{ApprovalRecord, RECORDS_KEY};
use crate::entry::EntryOutcome;
use crate::identity::{redacted_signature, signature};
use crate::parse::ParsedEntry;
use crate::types::{Approval, ApprovalBasis, Diagnostic, Level, Scope, ScopedServer, ServerConfig};

/// What one file (or one plugin) contributes to the merge.
#[derive(Debug, Clone, PartialEq)]
pub struct Contribution {
    /// The layer.
    pub scope: Scope,
    /// Position inside the layer: the documented file order, or the plugin
    /// registry order. Higher ranks win within a layer.
    pub rank: usize,
    /// The file's entries.
    pub entries: Vec<ParsedEntry>,
    /// The file's non-MCP settings, when the file is a settings source.
    pub settings: Option<Value>,
}

/// The merged result.
#[derive(Debug, Clone, PartialEq)]
pub struct Merged {
    /// Winning servers, sorted by name.
    pub servers: Vec<ScopedServer>,
    /// The raw JSON of each winning entry, by name.
    pub raw_entries: BTreeMap<String, Value>,
    /// Deep-merged non-MCP settings.
    pub settings: Value,
    /// Diagnostics about the merge (overrides, tombstones, dedupe, approval).
    pub diagnostics: Vec<Diagnostic>,
}

struct Winner {
    entry: ParsedEntry,
    scope: Scope,
    rank: usize,
}

/// Merges `contributions` (any order) into one deterministic result.
pub fn merge(mut contributions: Vec<Contribution>, trust_project_servers: bool) -> Merged {
    contributions.sort_by_key(|c| (c.scope, c.rank));
    let mut diagnostics = Vec::new();

    let mut settings = Value::Object(Map::new());
    for c in &contributions {
        if let Some(s) = &c.settings {
            deep_merge(&mut settings, s);
        }
    }
    let approvals = ApprovalSettings::from(&contributions);

    let mut slots: BTreeMap<String, Option<Winner>> = BTreeMap::new();
    for c in contributions {
        for entry in c.entries {
            let name = entry.name.clone();
            let previous = slots.remove(&name).flatten();
            let here = |level: Level, message: String| Diagnostic {
                level,
                message,
                file: Some(entry.source.clone()),
                line: Some(entry.line),
                column: Some(entry.column),
                server: Some(entry.name.clone()),
                field: None,
            };
            let hidden = previous
                .as_ref()
                .map(|p| format!("the {} entry in {}", p.scope, p.entry.source.display()));
            let slot = match (&entry.outcome, hidden) {
                (EntryOutcome::Server(_), hidden) => {
                    if let Some(hidden) = hidden {
                        diagnostics.push(here(
                            Level::Info,
                            format!("server `{}` replaces {hidden}", entry.name),
                        ));
                    }
                    Some(Winner {
                        entry,
                        scope: c.scope,
                        rank: c.rank,
                    })
                }
                (EntryOutcome::Tombstone, hidden) => {
                    let message = match hidden {
                        Some(hidden) => format!(
                            "server `{}` is disabled here, which hides {hidden}",
                            entry.name
                        ),
                        None => format!(
                            "server `{}` is disabled here and has no lower entry to hide",
                            entry.name
                        ),
                    };
                    diagnostics.push(here(Level::Info, message));
                    None
                }
                (EntryOutcome::Invalid, Some(hidden)) => {
                    diagnostics.push(here(
                        Level::Info,
                        format!("invalid server `{}` also removes {hidden}", entry.name),
                    ));
                    None
                }
                (EntryOutcome::Invalid, None) => None,
            };
            slots.insert(name, slot);
        }
    }

    // Plugin servers reaching an endpoint a configured server (or an
    // earlier plugin) already reaches are connected once: drop them.
    let configured: BTreeSet<String> = slots
        .values()
        .flatten()
        .filter(|w| w.scope != Scope::Plugin)
        .filter_map(|w| match &w.entry.outcome {
            EntryOutcome::Server(s) if s.enabled => signature(s),
            _ => None,
        })
        .collect();
    let mut plugin_names: Vec<(usize, String)> = slots
        .iter()
        .filter_map(|(name, w)| {
            w.as_ref()
                .filter(|w| w.scope == Scope::Plugin)
                .map(|w| (w.rank, name.clone()))
        })
        .collect();
    plugin_names.sort();
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (_, name) in plugin_names {
        let Some(Some(winner)) = slots.get(&name) else {
            continue;
        };
        let EntryOutcome::Server(config) = &winner.entry.outcome else {
            continue;
        };
        let Some(sig) = signature(config).filter(|_| config.enabled) else {
            continue;
        };
        let reason = if configured.contains(&sig) {
            Some("a configured server".to_owned())
        } else {
            seen.get(&sig)
                .map(|other| format!("plugin server `{other}`"))
        };
        match reason {
            Some(reason) => {
                let e = &winner.entry;
                // Diagnostics are printed: the endpoint without credentials.
                let shown = redacted_signature(config, Some(&e.raw)).unwrap_or_default();
                diagnostics.push(Diagnostic {
                    level: Level::Info,
                    message: format!(
                        "plugin server `{}` is dropped: {reason} already reaches {shown}",
                        e.name
                    ),
                    file: Some(e.source.clone()),
                    line: Some(e.line),
                    column: Some(e.column),
                    server: Some(e.name.clone()),
                    field: None,
                });
                slots.insert(name, None);
            }
            None => {
                seen.insert(sig, name);
            }
        }
    }

    let mut servers = Vec::new();
    let mut raw_entries = BTreeMap::new();
    for (name, winner) in slots {
        let Some(Winner { entry, scope, .. }) = winner else {
            continue;
        };
        let EntryOutcome::Server(config) = entry.outcome else {
            continue;
        };
        let (approval, approval_basis) = if scope == Scope::Project {
            approvals.decide(&name, &config, trust_project_servers)
        } else {
            (Approval::Approved, ApprovalBasis::NotNeeded)
        };
        if approval != Approval::Approved && config.enabled {
            let message = match &approval_basis {
                ApprovalBasis::Denied => {
                    format!("project server `{name}` is denied by disabledMcpjsonServers")
                }
                ApprovalBasis::Changed { fields } => format!(
                    "project server `{name}` changed since it was approved ({} changed); it awaits approval again",
                    fields.join(", ")
                ),
                _ => format!(
                    "project server `{name}` awaits approval (enabledMcpjsonServers or enableAllProjectMcpServers in user or local settings)"
                ),
            };
            diagnostics.push(Diagnostic {
                level: Level::Info,
                message,
                file: Some(entry.source.clone()),
                line: Some(entry.line),
                column: Some(entry.column),
                server: Some(name.clone()),
                field: None,
            });
        }
        raw_entries.insert(name.clone(), entry.raw);
        servers.push(ScopedServer {
            config,
            scope,
            source: entry.source,
            plugin: entry.plugin,
            approval,
            approval_basis,
        });
    }
    Merged {
        servers,
        raw_entries,
        settings,
        diagnostics,
    }
}

/// Deep merge: objects merge key by key; scalars and arrays from `patch` win.
pub(crate) fn deep_merge(target: &mut Value, patch: &Value) {
    match (target, patch) {
        (Value::Object(t), Value::Object(p)) => {
            for (k, v) in p {
                match t.get_mut(k) {
                    Some(existing) if existing.is_object() && v.is_object() => {
                        deep_merge(existing, v)
                    }
                    _ => {
                        t.insert(k.clone(), v.clone());
                    }
                }
            }
        }
        (t, p) => *t = p.clone(),
    }
}

#[derive(Debug, Default)]
struct ApprovalSettings {
    enable_all: bool,
    enabled: BTreeSet<String>,
    disabled: BTreeSet<String>,
    /// What each approval approved; `None` for a record that cannot be read.
    records: BTreeMap<String, Option<ApprovalRecord>>,
}

impl ApprovalSettings {
    /// Reads the approval keys of the contributions (sorted). Consent
    /// counts only from user and local contributions; a denial counts from
    /// any file that still holds one (project files lose theirs when
    /// parsed, an untrusted project's local settings keep theirs: a denial
    /// can only hold a server back). The name lists accumulate across
    /// files; the flag's last value and each name's last record win.
    fn from(contributions: &[Contribution]) -> Self {
        let mut a = ApprovalSettings::default();
        for c in contributions {
            let Some(s) = &c.settings else { continue };
            if let Some(items) = s.get("disabledMcpjsonServers").and_then(Value::as_array) {
                a.disabled
                    .extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            if !matches!(c.scope, Scope::User | Scope::Local) {
                continue;
            }
            if let Some(b) = s.get("enableAllProjectMcpServers").and_then(Value::as_bool) {
                a.enable_all = b;
            }
            if let Some(items) = s.get("enabledMcpjsonServers").and_then(Value::as_array) {
                a.enabled
                    .extend(items.iter().filter_map(Value::as_str).map(str::to_owned));
            }
            if let Some(records) = s.get(RECORDS_KEY).and_then(Value::as_object) {
                for (name, record) in records {
                    a.records
                        .insert(name.clone(), ApprovalRecord::from_json(record));
                }
            }
        }
        a
    }

    fn decide(&self, name: &str, config: &ServerConfig, trust: bool) -> (Approval, ApprovalBasis) {
        if self.disabled.contains(name) {
            return (Approval::Denied, ApprovalBasis::Denied);
        }
        if trust {
            return (Approval::Approved, ApprovalBasis::TrustedRun);
        }
        let by_name = if self.enabled.contains(name) {
            match self.records.get(name) {
                None => Some(ApprovalBasis::NameOnly),
                Some(Some(record)) => {
                    let fields = record.changed(&ApprovalRecord::of(config));
                    if fields.is_empty() {
                        Some(ApprovalBasis::Recorded)
                    } else {
                        Some(ApprovalBasis::Changed { fields })
                    }
                }
                // A damaged record approves nothing: ask again.
                Some(None) => Some(ApprovalBasis::Changed {
                    fields: vec!["record".to_owned()],
                }),
            }
        } else {
            None
        };
        match by_name {
            Some(ApprovalBasis::Changed { .. }) | None if self.enable_all => {
                (Approval::Approved, ApprovalBasis::AllProjectServers)
            }
            Some(basis @ ApprovalBasis::Changed { .. }) => (Approval::Pending, basis),
            Some(basis) => (Approval::Approved, basis),
            None => (Approval::Pending, ApprovalBasis::NotApproved),
        }
    }
}
