//! The configuration check shared by `cargo xtask check-config` and the
//! CLI: load, render human lines or one JSON object, and decide the exit
//! status. Callers only parse arguments and print.

use serde_json::{Value, json};

use crate::identity::{config_hash, redacted_signature};
use crate::load::{LoadOptions, LoadedConfig, load};
use crate::types::{Approval, Diagnostic, Level};

/// The result of checking a configuration.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckReport {
    /// Everything that was loaded.
    pub config: LoadedConfig,
}

impl CheckReport {
    /// Loads the configuration `options` names.
    pub fn run(options: &LoadOptions) -> CheckReport {
        CheckReport {
            config: load(options),
        }
    }

    /// Counts of diagnostics at error, warning and info level.
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |l| {
            self.config
                .diagnostics
                .iter()
                .filter(|d| d.level == l)
                .count()
        };
        (
            count(Level::Error),
            count(Level::Warning),
            count(Level::Info),
        )
    }

    /// Whether the check fails: any error, or with `strict` any warning.
    pub fn failed(&self, strict: bool) -> bool {
        let threshold = if strict { Level::Warning } else { Level::Error };
        self.config.has_diagnostics_at(threshold)
    }

    /// The process exit status: 0 when the check passes, 1 otherwise.
    pub fn exit_code(&self, strict: bool) -> i32 {
        i32::from(self.failed(strict))
    }

    /// Human-readable lines: one per server (name, kind, scope, source and
    /// state), one per diagnostic as `file:line:col: level: message`, then a
    /// summary.
    pub fn human_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        let servers = &self.config.servers;
        if servers.is_empty() {
            lines.push("no servers configured".to_owned());
        } else {
            lines.push(format!("{} server(s):", servers.len()));
            let width = servers
                .iter()
                .map(|s| s.config.name.len())
                .max()
                .unwrap_or(0);
            for s in servers {
                let mut state = Vec::new();
                if !s.config.enabled {
                    state.push("disabled".to_owned());
                }
                match (s.blocked(), s.approval) {
                    (Some(_), _) => state.push("blocked by policy".to_owned()),
                    (None, Approval::Approved) => {}
                    (None, Approval::Pending) => state.push("pending approval".to_owned()),
                    (None, Approval::Denied) => state.push("denied".to_owned()),
                }
                if let Some(plugin) = &s.plugin {
                    state.push(format!("plugin {plugin}"));
                }
                let state = if state.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", state.join(", "))
                };
                lines.push(format!(
                    "  {:width$}  {:14}  {:8}  {}{state}",
                    s.config.name,
                    s.config.transport.kind().as_str(),
                    s.scope.as_str(),
                    s.source.display(),
                ));
            }
        }
        for d in &self.config.diagnostics {
            lines.push(diagnostic_line(d));
        }
        let (errors, warnings, infos) = self.counts();
        lines.push(format!(
            "{errors} error(s), {warnings} warning(s), {infos} note(s)"
        ));
        lines
    }

    /// The report as one JSON object:
    /// `{"servers":[{name,kind,scope,source,enabled,signature,hash}],
    ///   "diagnostics":[{level,message,file,line,column,server,field}]}`.
    /// `signature` is shown redacted ([`redacted_signature`]): the report
    /// is printed and kept in CI logs.
    pub fn to_json(&self) -> Value {
        let servers: Vec<Value> = self
            .config
            .servers
            .iter()
            .map(|s| {
                json!({
                    "name": s.config.name,
                    "kind": s.config.transport.kind().as_str(),
                    "scope": s.scope.as_str(),
                    "source": s.source.display().to_string(),
                    "enabled": s.config.enabled,
                    "signature": redacted_signature(
                        &s.config,
                        self.config.raw_entries.get(&s.config.name),
                    ),
                    "hash": config_hash(&s.config),
                })
            })
            .collect();
        let diagnostics: Vec<Value> = self
            .config
            .diagnostics
            .iter()
            .map(|d| {
                json!({
                    "level": d.level,
                    "message": d.message,
                    "file": d.file.as_ref().map(|f| f.display().to_string()),
                    "line": d.line,
                    "column": d.column,
                    "server": d.server,
                    "field": d.field,
                })
            })
            .collect();
        json!({ "servers": servers, "diagnostics": diagnostics })
    }
}

/// `file:line:col: level: message` (position parts left out when unknown).
pub fn diagnostic_line(d: &Diagnostic) -> String {
    let level = match d.level {
        Level::Error => "error",
        Level::Warning => "warning",
        Level::Info => "info",
    };
    let mut location = d
        .file
        .as_ref()
        .map_or_else(|| "<input>".to_owned(), |f| f.display().to_string());
    if let Some(line) = d.line {
        location.push_str(&format!(":{line}"));
        if let Some(column) = d.column {
            location.push_str(&format!(":{column}"));
        }
    }
    format!("{location}: {level}: {}", d.message)
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use super::*;
    use crate::load::LoadedConfig;

    fn diagnostic(level: Level, line: Option<u32>, column: Option<u32>) -> Diagnostic {
        Diagnostic {
            level,
            message: "something is off".into(),
            file: Some(PathBuf::from("/p/.mcp.json")),
            line,
            column,
            server: Some("s".into()),
            field: None,
        }
    }

    fn report(levels: &[Level]) -> CheckReport {
        CheckReport {
            config: LoadedConfig {
                servers: Vec::new(),
                raw_entries: Default::default(),
                settings: Value::Null,
                session_idle_ttl: crate::types::DEFAULT_SESSION_IDLE_TTL,
                plugins: Vec::new(),
                files: Vec::new(),
                diagnostics: levels
                    .iter()
                    .map(|l| diagnostic(*l, Some(1), Some(2)))
                    .collect(),
                project_trusted: false,
                policy: Default::default(),
            },
        }
    }

    #[test]
    fn diagnostic_lines_leave_out_unknown_positions() {
        let check = |d: Diagnostic, expect: &str| assert_eq!(diagnostic_line(&d), expect);
        check(
            diagnostic(Level::Error, Some(3), Some(7)),
            "/p/.mcp.json:3:7: error: something is off",
        );
        check(
            diagnostic(Level::Warning, Some(3), None),
            "/p/.mcp.json:3: warning: something is off",
        );
        check(
            diagnostic(Level::Info, None, None),
            "/p/.mcp.json: info: something is off",
        );
        let mut no_file = diagnostic(Level::Info, None, None);
        no_file.file = None;
        check(no_file, "<input>: info: something is off");
    }

    #[test]
    fn exit_code_depends_on_levels_and_strictness() {
        let check = |levels: &[Level], normal: i32, strict: i32| {
            let r = report(levels);
            assert_eq!(
                (r.exit_code(false), r.exit_code(true)),
                (normal, strict),
                "{levels:?}"
            );
        };
        check(&[], 0, 0);
        check(&[Level::Info], 0, 0);
        check(&[Level::Info, Level::Warning], 0, 1);
        check(&[Level::Error], 1, 1);
    }

    #[test]
    fn json_has_the_documented_keys_even_when_empty() {
        let json = report(&[Level::Warning]).to_json();
        assert_eq!(json["servers"], Value::Array(Vec::new()));
        let d = &json["diagnostics"][0];
        // In the documented order only when the host keeps insertion
        // order (serde_json's `preserve_order`); the keys are there either way.
        let mut keys: Vec<&str> = d
            .as_object()
            .map(|m| m.keys().map(String::as_str).collect())
            .unwrap_or_default();
        keys.sort_unstable();
        assert_eq!(
            keys,
            [
                "column", "field", "file", "level", "line", "message", "server"
            ]
        );
        assert_eq!(d["level"], "warning");
    }
}
