//! The typed form of a server entry, shared by every crate above this one.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::Serialize;

/// Default connect timeout (REFERENCE §2).
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(30);
/// Default request timeout.
pub const DEFAULT_REQUEST_TIMEOUT: Duration = Duration::from_secs(60);
/// Default tool-call timeout.
pub const DEFAULT_TOOL_CALL_TIMEOUT: Duration = Duration::from_secs(60);
/// Default idle TTL of a session runtime (`mcp.sessionIdleTtlMs`).
pub const DEFAULT_SESSION_IDLE_TTL: Duration = Duration::from_millis(600_000);

/// The six transport kinds, as written in `kind` fields of reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum TransportKind {
    Stdio,
    Sse,
    Http,
    Ws,
    Sdk,
    #[serde(rename = "claudeai-proxy")]
    ClaudeAiProxy,
}

impl TransportKind {
    /// The lowercase name used in reports and `--json` output.
    pub fn as_str(self) -> &'static str {
        match self {
            TransportKind::Stdio => "stdio",
            TransportKind::Sse => "sse",
            TransportKind::Http => "http",
            TransportKind::Ws => "ws",
            TransportKind::Sdk => "sdk",
            TransportKind::ClaudeAiProxy => "claudeai-proxy",
        }
    }
}

impl std::fmt::Display for TransportKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A local server spawned as a child process. Its `Debug` shows env keys,
/// never their values.
#[derive(Clone, PartialEq, Eq, Serialize)]
pub struct StdioConfig {
    /// Program to run (never through a shell).
    pub command: String,
    pub args: Vec<String>,
    /// The entry's own environment, already checked by the env safety rules:
    /// refused keys never appear here.
    pub env: BTreeMap<String, String>,
    /// Working directory of the child.
    pub cwd: Option<PathBuf>,
}

/// `oauth` block of a remote entry.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct McpOAuthConfig {
    pub client_id: Option<String>,
    pub callback_port: Option<u16>,
    pub auth_server_metadata_url: Option<String>,
    /// Enterprise cross-app access grant.
    pub xaa: bool,
    pub scopes: Vec<String>,
}

/// A remote server reached over HTTP (streamable or legacy SSE) or WebSocket.
/// Its `Debug` shows header names, never their values.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RemoteConfig {
    pub url: String,
    /// Static headers; values are secrets and must never be logged.
    pub headers: BTreeMap<String, String>,
    /// A command whose stdout is a JSON object of extra headers.
    pub headers_helper: Option<String>,
    /// Always `None` for WebSocket entries.
    pub oauth: Option<McpOAuthConfig>,
}

/// Keys of a map of secrets, each with its value masked, for `Debug`.
struct Redacted<'a>(&'a BTreeMap<String, String>);

impl std::fmt::Debug for Redacted<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map()
            .entries(self.0.keys().map(|key| (key, format_args!("***"))))
            .finish()
    }
}

impl std::fmt::Debug for StdioConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("StdioConfig")
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &Redacted(&self.env))
            .field("cwd", &self.cwd)
            .finish()
    }
}

impl std::fmt::Debug for RemoteConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RemoteConfig")
            .field("url", &self.url)
            .field("headers", &Redacted(&self.headers))
            .field("headers_helper", &self.headers_helper)
            .field("oauth", &self.oauth)
            .finish()
    }
}

/// A server hosted by claude.ai and reached through its proxy.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ProxyConfig {
    pub url: String,
    pub id: String,
}

/// The transport-specific part of an entry: one variant per kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
pub enum TransportConfig {
    Stdio(StdioConfig),
    Sse(RemoteConfig),
    Http(RemoteConfig),
    Ws(RemoteConfig),
    /// An in-process server the host registers under `name`.
    Sdk {
        name: String,
    },
    #[serde(rename = "claudeai-proxy")]
    ClaudeAiProxy(ProxyConfig),
}

impl TransportConfig {
    pub fn kind(&self) -> TransportKind {
        match self {
            TransportConfig::Stdio(_) => TransportKind::Stdio,
            TransportConfig::Sse(_) => TransportKind::Sse,
            TransportConfig::Http(_) => TransportKind::Http,
            TransportConfig::Ws(_) => TransportKind::Ws,
            TransportConfig::Sdk { .. } => TransportKind::Sdk,
            TransportConfig::ClaudeAiProxy(_) => TransportKind::ClaudeAiProxy,
        }
    }
}

/// `toolFilter`: patterns over raw tool names; `*` is the only wildcard.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
pub struct ToolFilter {
    pub include: Vec<String>,
    pub exclude: Vec<String>,
}

/// Per-server timeouts, already resolved (milliseconds win over seconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Timeouts {
    #[serde(with = "duration_ms")]
    pub connect: Duration,
    #[serde(with = "duration_ms")]
    pub request: Duration,
    #[serde(with = "duration_ms")]
    pub tool_call: Duration,
}

impl Default for Timeouts {
    fn default() -> Self {
        Timeouts {
            connect: DEFAULT_CONNECT_TIMEOUT,
            request: DEFAULT_REQUEST_TIMEOUT,
            tool_call: DEFAULT_TOOL_CALL_TIMEOUT,
        }
    }
}

mod duration_ms {
    use std::time::Duration;

    pub(crate) fn serialize<S: serde::Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }
}

/// One fully parsed server entry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerConfig {
    pub name: String,
    pub transport: TransportConfig,
    pub enabled: bool,
    /// A required server that fails fails the whole catalog.
    pub required: bool,
    pub tool_filter: ToolFilter,
    pub timeouts: Timeouts,
}

/// Where an entry came from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    Plugin,
    #[serde(rename = "openclaw")]
    OpenClaw,
    User,
    Project,
    Local,
}

impl Scope {
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Plugin => "plugin",
            Scope::OpenClaw => "openclaw",
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
        }
    }
}

impl std::fmt::Display for Scope {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Whether a project-scope server may start (REFERENCE §1.7).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Approval {
    Approved,
    Pending,
    Denied,
}

/// Why a server has its [`Approval`] (REFERENCE §1.7, see
/// [`crate::consent`]).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "basis")]
pub enum ApprovalBasis {
    /// Not a project server: nothing to approve.
    NotNeeded,
    /// Approved, and the server is what the recorded approval approved.
    Recorded,
    /// Named in `enabledMcpjsonServers` with no record of what was
    /// approved (as Claude Code writes it): approved by name only.
    NameOnly,
    /// `enableAllProjectMcpServers` in user or local settings.
    AllProjectServers,
    /// The host trusts every project server for this run
    /// ([`crate::LoadOptions::trust_project_servers`]).
    TrustedRun,
    /// Awaiting approval: never approved.
    NotApproved,
    /// Awaiting approval again: approved once, changed since in `fields`.
    Changed { fields: Vec<String> },
    /// Named in `disabledMcpjsonServers`.
    Denied,
}

/// A merged server: its config plus where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopedServer {
    pub config: ServerConfig,
    pub scope: Scope,
    /// The file the winning entry was read from.
    pub source: PathBuf,
    /// The plugin that contributed it, for plugin-scope servers.
    pub plugin: Option<String>,
    pub approval: Approval,
    /// Why the server has that approval.
    #[serde(rename = "approvalBasis")]
    pub approval_basis: ApprovalBasis,
}

/// Severity of a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    Info,
    Warning,
    Error,
}

/// One problem found while loading, with its position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    pub level: Level,
    pub message: String,
    pub file: Option<PathBuf>,
    /// 1-based line, when the position is known.
    pub line: Option<u32>,
    /// 1-based column, when the position is known.
    pub column: Option<u32>,
    pub server: Option<String>,
    pub field: Option<String>,
}

/// The inherited environment of a stdio child is this allow-list plus the
/// entry's own `env` (REFERENCE §1.6).
pub const INHERITED_ENV_ALLOWLIST: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ",
];

/// Extra inherited variables on Windows.
pub const INHERITED_ENV_ALLOWLIST_WINDOWS: &[&str] = &["SYSTEMROOT", "PATHEXT", "COMSPEC"];
