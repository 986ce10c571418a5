//! What a policy is made of: the entries of the lists, each with the
//! position of its rule ([`PolicyRule`], shown with every verdict).

use std::collections::BTreeMap;

pub use crate::types::{PolicyBlock, PolicyRule};

/// What one list entry matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Matcher {
    /// `serverName`: the configured name, exactly.
    Name(String),
    /// `serverCommand`: the command and every argument, in order.
    Command(Vec<String>),
    /// `serverUrl`: a url pattern with `*` wildcards.
    Url(String),
}

/// One entry of an allow or deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) matcher: Matcher,
    /// `configHash` (and `pinned`) of an allow entry.
    pub(crate) pin: Option<Pin>,
    pub(crate) at: PolicyRule,
}

/// What an allow entry pins: the server's hash must equal `hash`; when it
/// does not, the parts whose `pinned` digests differ are the ones named.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Pin {
    /// `configHash`: the [`config_hash`](crate::config_hash), which alone
    /// decides.
    pub(crate) hash: String,
    /// `pinned`: the [`config_field_hashes`](crate::policy::config_field_hashes)
    /// at pinning time (empty when the entry has none), which only explain.
    pub(crate) fields: BTreeMap<String, String>,
}

/// One file's `allowedMcpServers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AllowList {
    /// Read from managed settings (kept under `allowManagedMcpServersOnly`).
    pub(crate) managed: bool,
    /// The `allowedMcpServers` key itself, named when nothing matches.
    pub(crate) at: PolicyRule,
    pub(crate) rules: Vec<Rule>,
}

/// One `[mcp_servers.NAME.identity]` of Codex's `requirements.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodexIdentity {
    pub(crate) name: String,
    /// `command` (stdio) or `url` (remote): Codex compares the program,
    /// not its arguments.
    pub(crate) command: Option<String>,
    pub(crate) url: Option<String>,
    pub(crate) at: PolicyRule,
}

/// Codex's allow list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodexList {
    pub(crate) at: PolicyRule,
    pub(crate) identities: Vec<CodexIdentity>,
}
