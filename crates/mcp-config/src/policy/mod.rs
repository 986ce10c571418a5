//! The organisation's managed policy: which MCP servers may run, decided
//! once per server and carried on it, so every consumer (the list and get
//! reports, the write verbs, the runtime, the gateway) sees the same
//! verdict.
//!
//! The files and their meaning are Claude Code's, so an organisation's
//! existing managed directory works unchanged:
//!
//! | file (in the managed directory) | what it does |
//! |---|---|
//! | `managed-mcp.json` | exclusive control: only its servers (and `managedMcpServers`) load; an empty map disables MCP |
//! | `managed-settings.json` | `allowedMcpServers`, `deniedMcpServers` (by `serverName`, `serverCommand`, `serverUrl`), `allowManagedMcpServersOnly`, `strictPluginOnlyCustomization`, `managedMcpServers` |
//! | `requirements.toml` | Codex's allow list: `[mcp_servers.NAME.identity]` with `command` or `url`; name and identity must both match |
//!
//! The user's, the project's and the local settings files add their own
//! `deniedMcpServers` (always) and `allowedMcpServers` (unless
//! `allowManagedMcpServersOnly`).
//!
//! Beyond Claude Code, an `allowedMcpServers` entry may pin a server's
//! content with `configHash` (the [`config_hash`](crate::config_hash) that
//! `mcp-cli get NAME` prints): a server the entry matches whose hash
//! differs is blocked. The hash alone decides, and alone it can only say
//! that something changed; so the entry may also carry `pinned`, a digest
//! of each part the hash covers ([`config_field_hashes`]:
//! `type`, `command`, `args`, `env`, `url`, `headers`, `headersHelper`,
//! `oauth`, `cwd`, `timeouts`, ...), and then the verdict names every part
//! whose digest differs ("`tool`: its command and env changed since it
//! was pinned"). `mcp-cli get NAME --pin` prints such an entry, ready to
//! paste:
//!
//! ```json
//! {"serverName": "docs", "configHash": "1f0c…", "pinned": {"type": "9a41…", "url": "c2d7…", …}}
//! ```
//!
//! `pinned` without `configHash`, or a digest that is not 16 hex digits,
//! is a malformed entry (step 1).
//!
//! A server is checked in this order (`verdict.rs`); the first rule that
//! blocks it is its verdict:
//!
//! 1. a malformed managed file blocks every server (fail closed: a policy
//!    that disappears on a typo is no policy);
//! 2. `managed-mcp.json` blocks every server that is not managed;
//! 3. `strictPluginOnlyCustomization` (`true`, or a list naming `mcp`)
//!    blocks user, project, local and OpenClaw servers;
//! 4. a `managedMcpServers` entry that is not an `https://` HTTP or SSE
//!    server is blocked (a managed settings document never names a program);
//! 5. any `deniedMcpServers` entry that matches blocks it;
//! 6. an `allowedMcpServers` entry with a `configHash` that matches it, and
//!    a different hash, blocks it (naming the parts whose `pinned` digests
//!    differ);
//! 7. when an allow list is set anywhere, a server must match it (a remote
//!    server a `serverUrl` entry, a stdio server a `serverCommand` entry;
//!    a `serverName` entry counts only when the list has no entry of that
//!    kind). `managed-mcp.json` and `managedMcpServers` servers skip this
//!    step, unless a managed-mcp.json entry uses `${VAR}`;
//! 8. with `requirements.toml`, a server must match a named identity there
//!    (same exemption as 7).
//!
//! In-process (`sdk`) servers skip every check, as in Claude Code.
//! A blocked server stays in [`LoadedConfig::servers`](crate::LoadedConfig)
//! with [`ApprovalBasis::Blocked`](crate::ApprovalBasis::Blocked), so reports show it and
//! the rule; [`ScopedServer::is_runnable`](crate::ScopedServer::is_runnable)
//! refuses it.
//!
//! Nothing here reads a platform path on its own: the loader reads the
//! directory [`LoadOptions::with_managed_dir`](crate::LoadOptions::with_managed_dir)
//! names, and [`default_managed_dir`] tells a host which one that is.

mod matching;
mod read;
mod rules;
mod verdict;

use std::path::PathBuf;

pub use crate::identity::config_field_hashes;
pub use read::{MANAGED_MCP_FILE, MANAGED_SETTINGS_FILE, REQUIREMENTS_FILE};
pub(crate) use read::{read_managed, read_settings_lists};
pub use rules::{PolicyBlock, PolicyRule};
pub(crate) use verdict::Candidate;

use rules::{AllowList, CodexList, Rule};

/// The platform's managed directory, where an administrator deploys
/// `managed-mcp.json` and `managed-settings.json` (Claude Code's paths).
/// Pure: it names the directory, it reads nothing.
pub fn default_managed_dir() -> PathBuf {
    if cfg!(target_os = "macos") {
        PathBuf::from("/Library/Application Support/ClaudeCode")
    } else if cfg!(windows) {
        PathBuf::from(r"C:\Program Files\ClaudeCode")
    } else {
        PathBuf::from("/etc/claude-code")
    }
}

/// The rules read from the managed directory and the settings files. The
/// default is no policy: every server is allowed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Policy {
    /// A managed file that could not be read: every server is blocked.
    broken: Option<PolicyRule>,
    /// `managed-mcp.json` is present: only managed servers load.
    exclusive: Option<PolicyRule>,
    /// `strictPluginOnlyCustomization` covers `mcp`.
    plugin_only: Option<PolicyRule>,
    /// `allowManagedMcpServersOnly: true` in managed settings.
    managed_only: bool,
    /// Every `deniedMcpServers` entry, from every file.
    deny: Vec<Rule>,
    /// Every `allowedMcpServers` list, one per file that sets one.
    allow: Vec<AllowList>,
    /// Codex's `requirements.toml` allow list.
    codex: Option<CodexList>,
}

impl Policy {
    /// Adds the lists of the settings files (read by the loader) to the
    /// managed policy.
    pub(crate) fn absorb(&mut self, settings: Policy) {
        self.deny.extend(settings.deny);
        self.allow.extend(settings.allow);
    }

    /// Whether a managed file could not be read, so every server is
    /// blocked. A host that keeps its last good configuration when a
    /// reload has errors applies this one instead: a policy must not
    /// disappear on a typo.
    pub fn is_unreadable(&self) -> bool {
        self.broken.is_some()
    }

    /// Whether there is no rule at all (every server is allowed).
    pub fn is_empty(&self) -> bool {
        *self == Policy::default()
    }

    /// The rule that blocks a server `name` configured as `config` in
    /// `scope`, when one does: the check every loaded server gets, for a
    /// server that is about to be written (`raw` is its entry as written,
    /// to see `${VAR}` references).
    pub fn check(
        &self,
        config: &crate::ServerConfig,
        scope: crate::Scope,
        raw: Option<&serde_json::Value>,
    ) -> Option<PolicyBlock> {
        self.verdict(&Candidate {
            config,
            scope,
            source: None,
            raw,
        })
    }
}
