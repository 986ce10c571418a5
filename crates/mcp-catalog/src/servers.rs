//! Which configured servers a runtime may start (REFERENCE §1.7).
//!
//! A project's own files can name any command, so a server from project
//! scope starts only once it is approved. [`ServerSet::from_loaded`] keeps
//! the servers that may start and turns every server that is held back
//! (awaiting approval, or denied) into a catalog diagnostic that names the
//! server, says why, and says how to approve it. The runtime never sees the
//! config of a held-back server, so it cannot connect it (or run its
//! `headersHelper`) by mistake.

use mcp_config::{Approval, ApprovalBasis, Level, LoadedConfig, ScopedServer, ServerConfig};

use crate::catalog::CatalogDiagnostic;

/// The servers a runtime starts, and notes on the servers it must not.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ServerSet {
    runnable: Vec<ServerConfig>,
    withheld: Vec<CatalogDiagnostic>,
}

impl ServerSet {
    /// Every server in `servers` may start (disabled ones are still
    /// skipped by the runtime). For hosts that did their own filtering.
    pub fn all(servers: impl IntoIterator<Item = ServerConfig>) -> Self {
        ServerSet {
            runnable: servers.into_iter().collect(),
            withheld: Vec::new(),
        }
    }

    /// The approved servers among `servers`; pending and denied ones become
    /// diagnostics. Disabled servers are skipped without a note (the user
    /// switched them off).
    pub fn from_scoped<'a>(servers: impl IntoIterator<Item = &'a ScopedServer>) -> Self {
        ServerSet::build(servers, None)
    }

    /// [`ServerSet::from_scoped`], with the notes on held-back servers
    /// ending in the host's own way to approve one: `approve_step(name)`
    /// is an imperative such as "run `my-host approve NAME`", and the note
    /// says "…; `<step>` to start it". Without a hint the notes name the
    /// settings keys, which every host reads.
    pub fn from_scoped_with_hint<'a>(
        servers: impl IntoIterator<Item = &'a ScopedServer>,
        approve_step: &dyn Fn(&str) -> String,
    ) -> Self {
        ServerSet::build(servers, Some(approve_step))
    }

    /// [`ServerSet::from_scoped_with_hint`] over a loaded configuration.
    pub fn from_loaded_with_hint(
        config: &LoadedConfig,
        approve_step: &dyn Fn(&str) -> String,
    ) -> Self {
        ServerSet::from_scoped_with_hint(&config.servers, approve_step)
    }

    fn build<'a>(
        servers: impl IntoIterator<Item = &'a ScopedServer>,
        approve_step: Option<&dyn Fn(&str) -> String>,
    ) -> Self {
        let mut set = ServerSet::default();
        for server in servers {
            if !server.config.enabled {
                continue;
            }
            match withheld_reason(server, approve_step) {
                None => set.runnable.push(server.config.clone()),
                Some(message) => set.withheld.push(CatalogDiagnostic::server(
                    Level::Warning,
                    &server.config.name,
                    message,
                )),
            }
        }
        set.withheld.sort();
        set
    }

    /// [`ServerSet::from_scoped`] over a loaded configuration.
    pub fn from_loaded(config: &LoadedConfig) -> Self {
        ServerSet::from_scoped(&config.servers)
    }

    /// The servers that may start.
    pub fn runnable(&self) -> &[ServerConfig] {
        &self.runnable
    }

    /// One warning per server held back, naming it and how to approve it.
    pub fn withheld(&self) -> &[CatalogDiagnostic] {
        &self.withheld
    }

    pub(crate) fn into_parts(self) -> (Vec<ServerConfig>, Vec<CatalogDiagnostic>) {
        (self.runnable, self.withheld)
    }
}

impl From<Vec<ServerConfig>> for ServerSet {
    fn from(servers: Vec<ServerConfig>) -> Self {
        ServerSet::all(servers)
    }
}

fn withheld_reason(
    server: &ScopedServer,
    approve_step: Option<&dyn Fn(&str) -> String>,
) -> Option<String> {
    let name = &server.config.name;
    let source = server.source.display();
    // The policy's verdict comes first: no approval gets around it.
    if let Some(block) = server.blocked() {
        return Some(format!(
            "server `{name}` (from {source}) was not started: the managed policy blocks it: {block}"
        ));
    }
    let step = approve_step.map(|step| step(name));
    if let (Approval::Pending, ApprovalBasis::Changed { fields }) =
        (server.approval, &server.approval_basis)
    {
        let fix = match &step {
            Some(step) => format!("{step} to approve it again"),
            None => "approve it again to start it".to_owned(),
        };
        return Some(format!(
            "project server `{name}` (from {source}) was not started: it changed since it was \
             approved ({} changed); {fix}",
            fields.join(", ")
        ));
    }
    match server.approval {
        Approval::Approved => None,
        Approval::Pending => Some(format!(
            "project server `{name}` (from {source}) was not started: it awaits approval; {}",
            match &step {
                Some(step) => format!("{step} to start it"),
                None => "add it to enabledMcpjsonServers (or set enableAllProjectMcpServers) \
                         in user or local settings"
                    .to_owned(),
            }
        )),
        Approval::Denied => Some(format!(
            "project server `{name}` (from {source}) was not started: it is denied by \
             disabledMcpjsonServers in user or local settings; {}",
            match &step {
                Some(step) => format!(
                    "remove it there to approve it, or {step} when the denial is in local settings"
                ),
                None => "remove it there to approve it".to_owned(),
            }
        )),
    }
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use mcp_config::policy::{PolicyBlock, PolicyRule};
    use mcp_config::{Scope, StdioConfig, TransportConfig};

    use super::*;

    fn project_server(name: &str, approval: Approval, basis: ApprovalBasis) -> ScopedServer {
        ScopedServer {
            config: ServerConfig::new(name, TransportConfig::Stdio(StdioConfig::new("x"))),
            scope: Scope::Project,
            source: PathBuf::from("/p/.mcp.json"),
            plugin: None,
            approval,
            approval_basis: basis,
        }
    }

    #[test]
    fn held_back_servers_say_why_and_only_approved_ones_run() {
        let servers = [
            project_server("a", Approval::Approved, ApprovalBasis::Recorded),
            project_server("b", Approval::Approved, ApprovalBasis::NameOnly),
            project_server("c", Approval::Pending, ApprovalBasis::NotApproved),
            project_server(
                "d",
                Approval::Pending,
                ApprovalBasis::Changed {
                    fields: vec!["command".to_owned(), "args".to_owned()],
                },
            ),
            project_server("e", Approval::Denied, ApprovalBasis::Denied),
            project_server(
                "f",
                Approval::Denied,
                ApprovalBasis::Blocked(PolicyBlock {
                    rule: PolicyRule {
                        file: PathBuf::from("/etc/claude-code/managed-settings.json"),
                        line: Some(3),
                        key: "deniedMcpServers[0]".to_owned(),
                        pattern: "serverName f".to_owned(),
                    },
                    reason: "`f` is on a deny list".to_owned(),
                }),
            ),
        ];
        let set = ServerSet::from_scoped(&servers);
        let runnable: Vec<&str> = set.runnable().iter().map(|s| s.name.as_str()).collect();
        assert_eq!(runnable, ["a", "b"]);
        let held: Vec<(&str, &str)> = set
            .withheld()
            .iter()
            .map(|d| (d.server.as_str(), d.message.as_str()))
            .collect();
        assert_eq!(held.len(), 4, "{held:#?}");
        let message = |name: &str| held.iter().find(|(s, _)| *s == name).map(|(_, m)| *m);
        assert!(message("c").is_some_and(|m| m.contains("awaits approval")));
        assert!(
            message("d").is_some_and(
                |m| m.contains("changed since it was approved (command, args changed)")
            ),
            "{held:#?}"
        );
        assert!(message("e").is_some_and(|m| m.contains("denied")));
        assert_eq!(
            message("f"),
            Some(
                "server `f` (from /p/.mcp.json) was not started: the managed policy blocks it: \
                 `f` is on a deny list (by /etc/claude-code/managed-settings.json:3 \
                 `deniedMcpServers[0]` serverName f)"
            )
        );
    }

    #[test]
    fn a_hint_names_the_hosts_own_way_to_approve() {
        let servers = [
            project_server("c", Approval::Pending, ApprovalBasis::NotApproved),
            project_server(
                "d",
                Approval::Pending,
                ApprovalBasis::Changed {
                    fields: vec!["url".to_owned()],
                },
            ),
            project_server("e", Approval::Denied, ApprovalBasis::Denied),
        ];
        let step = |name: &str| format!("run `host approve {name}`");
        let set = ServerSet::from_scoped_with_hint(&servers, &step);
        let messages: Vec<&str> = set.withheld().iter().map(|d| d.message.as_str()).collect();
        assert_eq!(
            messages,
            [
                "project server `c` (from /p/.mcp.json) was not started: it awaits approval; run `host approve c` to start it",
                "project server `d` (from /p/.mcp.json) was not started: it changed since it was approved (url changed); run `host approve d` to approve it again",
                "project server `e` (from /p/.mcp.json) was not started: it is denied by disabledMcpjsonServers in user or local settings; remove it there to approve it, or run `host approve e` when the denial is in local settings",
            ]
        );
        // Without a hint the note stays host-neutral.
        let plain = ServerSet::from_scoped(&servers);
        assert!(plain.withheld()[0].message.ends_with(
            "it awaits approval; add it to enabledMcpjsonServers (or set enableAllProjectMcpServers) in user or local settings"
        ));
    }
}
