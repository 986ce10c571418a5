//! The one decision: whether the policy blocks a server, and by which rule.
//! The loader asks it for every merged server, the edit module for every
//! entry a verb is about to write; the checks run in the order the module
//! docs of [`crate::policy`] list.

use std::collections::BTreeSet;
use std::path::Path;

use serde_json::Value;

use crate::identity::{config_field_hashes, config_hash};
use crate::types::{Scope, ServerConfig, TransportConfig};

use super::Policy;
use super::matching::{argv, matches, urls};
use super::read::MANAGED_SETTINGS_FILE;
use super::rules::{Matcher, Pin, PolicyBlock, PolicyRule};

/// A server as the policy sees it.
pub(crate) struct Candidate<'a> {
    pub(crate) config: &'a ServerConfig,
    pub(crate) scope: Scope,
    /// The file it was read from (`None` for an entry about to be written).
    pub(crate) source: Option<&'a Path>,
    /// The entry as written, to see `${VAR}` references.
    pub(crate) raw: Option<&'a Value>,
}

/// What the config hash covers, named when a pin that records only the
/// hash differs (that is all such a pin can tell).
const HASHED_PARTS: &str = "type, command, args, env, envPassthrough, cwd, url, headers, \
                            headersHelper, oauth, timeouts, toolFilter, required, descriptionLimit";

/// Why a server whose config hash `hash` is not its pin's is blocked: the
/// parts whose digests differ from the pin's `pinned` ones (a part set
/// on one side only counts), or, for a pin of the hash alone, what the
/// hash covers.
fn changed_since_pinned(config: &ServerConfig, hash: &str, pin: &Pin) -> String {
    let name = &config.name;
    let hashes = format!("config hash {hash}, pinned {}", pin.hash);
    if pin.fields.is_empty() {
        return format!(
            "`{name}` changed since it was pinned ({hashes}); the pin records only the hash, \
             which covers {HASHED_PARTS} (`mcp-cli get {name} --pin` prints a pin that names the part)"
        );
    }
    let now = config_field_hashes(config);
    let parts: BTreeSet<&String> = now.keys().chain(pin.fields.keys()).collect();
    let changed: Vec<&str> = parts
        .into_iter()
        .filter(|part| now.get(*part) != pin.fields.get(*part))
        .map(String::as_str)
        .collect();
    match changed.as_slice() {
        [] => format!(
            "`{name}` differs from its pinned configHash though every part in `pinned` matches \
             ({hashes}): the pin's parts are not those of its hash"
        ),
        [one] => format!("`{name}`: its {one} changed since it was pinned ({hashes})"),
        [first @ .., last] => format!(
            "`{name}`: its {} and {last} changed since it was pinned ({hashes})",
            first.join(", ")
        ),
    }
}

fn block(rule: &PolicyRule, reason: String) -> Option<PolicyBlock> {
    Some(PolicyBlock {
        rule: rule.clone(),
        reason,
    })
}

impl Policy {
    pub(crate) fn verdict(&self, server: &Candidate<'_>) -> Option<PolicyBlock> {
        let config = server.config;
        let transport = &config.transport;
        if matches!(transport, TransportConfig::Sdk { .. }) {
            return None;
        }
        let name = config.name.as_str();
        let managed = server.scope == Scope::Managed;
        if let Some(rule) = &self.broken {
            return block(
                rule,
                "the managed policy could not be read, so no server may run".to_owned(),
            );
        }
        if let Some(rule) = &self.exclusive
            && !managed
        {
            return block(
                rule,
                "managed-mcp.json has exclusive control: only its servers may run".to_owned(),
            );
        }
        if let Some(rule) = &self.plugin_only
            && !matches!(server.scope, Scope::Plugin | Scope::Managed)
        {
            return block(
                rule,
                format!(
                    "strictPluginOnlyCustomization: servers come only from plugins, not from {} settings",
                    server.scope
                ),
            );
        }
        if let Some(reason) = provided_shape(server) {
            let rule = PolicyRule {
                file: server.source.map(Path::to_path_buf).unwrap_or_default(),
                line: None,
                key: format!("managedMcpServers.{name}"),
                pattern: String::new(),
            };
            return block(&rule, reason);
        }
        if let Some(rule) = self
            .deny
            .iter()
            .find(|rule| matches(&rule.matcher, name, transport, false))
        {
            return block(&rule.at, format!("`{name}` is on a deny list"));
        }
        let lists = self
            .allow
            .iter()
            .filter(|list| list.managed || !self.managed_only);
        // Hashed once, and only when a pin names the server.
        let mut hash = None;
        for rule in lists.clone().flat_map(|list| &list.rules) {
            let Some(pin) = &rule.pin else { continue };
            if !matches(&rule.matcher, name, transport, true) {
                continue;
            }
            let hash = hash.get_or_insert_with(|| config_hash(config));
            if *hash != pin.hash {
                return block(&rule.at, changed_since_pinned(config, hash, pin));
            }
        }
        if managed && !uses_variables(server.raw) {
            return None;
        }
        let lists: Vec<_> = lists.collect();
        if let Some(first) = lists.iter().find(|list| list.managed).or(lists.first()) {
            let rules = || lists.iter().flat_map(|list| &list.rules);
            let has = |want: fn(&Matcher) -> bool| rules().any(|rule| want(&rule.matcher));
            let remote = !urls(transport).is_empty();
            let stdio = argv(transport).is_some();
            let strict_kind: fn(&Matcher) -> bool = if remote {
                |m| matches!(m, Matcher::Url(_))
            } else {
                |m| matches!(m, Matcher::Command(_))
            };
            // A name counts only when the list has no entry of the
            // server's own kind: otherwise renaming would get around it.
            let name_counts = !((remote || stdio) && has(strict_kind));
            let allowed = rules().any(|rule| match &rule.matcher {
                Matcher::Name(_) => name_counts && matches(&rule.matcher, name, transport, true),
                other => matches(other, name, transport, true),
            });
            if !allowed {
                let what = match (remote, stdio, name_counts) {
                    (true, _, false) => "its url matches no `serverUrl` entry",
                    (_, true, false) => "its command matches no `serverCommand` entry",
                    _ => "it matches no entry",
                };
                return block(
                    &first.at,
                    format!("`{name}` is not on the allow list: {what}"),
                );
            }
        }
        if let Some(codex) = &self.codex {
            let urls = urls(transport);
            let command = match transport {
                TransportConfig::Stdio(stdio) => Some(stdio.command.as_str()),
                _ => None,
            };
            let identity = codex.identities.iter().find(|id| id.name == name);
            let allowed = identity.is_some_and(|id| match (&id.command, &id.url) {
                (Some(want), _) => command == Some(want.as_str()),
                (_, Some(want)) => !urls.is_empty() && urls.iter().all(|url| url == want),
                _ => false,
            });
            if !allowed {
                let (rule, reason) = match identity {
                    Some(id) => (
                        &id.at,
                        format!("`{name}` does not have the identity required for it"),
                    ),
                    None => (
                        &codex.at,
                        format!("`{name}` is not a server the requirements name"),
                    ),
                };
                return block(rule, reason);
            }
        }
        None
    }
}

/// A `managedMcpServers` entry must be a remote HTTP or SSE server at an
/// `https://` url: managed settings never name a program to run.
fn provided_shape(server: &Candidate<'_>) -> Option<String> {
    let from_settings = server.scope == Scope::Managed
        && server
            .source
            .and_then(Path::file_name)
            .is_some_and(|file| file == MANAGED_SETTINGS_FILE);
    if !from_settings {
        return None;
    }
    let name = &server.config.name;
    match &server.config.transport {
        TransportConfig::Http(remote) | TransportConfig::Sse(remote) => {
            if !remote.url.starts_with("https://") {
                Some(format!("managed server `{name}` must use an https:// url"))
            } else if remote.headers_helper.is_some() {
                Some(format!(
                    "managed server `{name}` must not name a headersHelper program"
                ))
            } else {
                None
            }
        }
        _ => Some(format!(
            "managed server `{name}` must be an http or sse server"
        )),
    }
}

/// Whether an entry's command, args, env, url or headers use `${VAR}`:
/// such a managed server means what each user's environment makes of it,
/// so it is checked against the allow list like any other.
fn uses_variables(raw: Option<&Value>) -> bool {
    let Some(raw) = raw else { return false };
    ["command", "args", "env", "url", "headers"]
        .iter()
        .filter_map(|key| raw.get(*key))
        .any(|value| value.to_string().contains("${"))
}
