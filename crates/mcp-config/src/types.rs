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
// Deliberately exhaustive, like `TransportConfig`: a new kind is a
// breaking change that every transport and front end must handle.
pub enum TransportKind {
    /// A child process speaking JSON-RPC over stdin and stdout.
    Stdio,
    /// The legacy HTTP+SSE transport (2024-11-05).
    Sse,
    /// Streamable HTTP, the current specification's transport.
    Http,
    /// A WebSocket connection.
    Ws,
    /// A server the host runs in its own process.
    Sdk,
    /// A server hosted by claude.ai, reached through its proxy.
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
///
/// Built with [`StdioConfig::new`] and the `with_*` methods: entries keep
/// gaining fields, so outside this crate it cannot be written as a struct
/// literal.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct StdioConfig {
    /// Program to run (never through a shell).
    pub command: String,
    /// Arguments, passed as they are (no shell splitting or globbing).
    pub args: Vec<String>,
    /// The entry's own environment, already checked by the env safety rules:
    /// refused keys never appear here.
    pub env: BTreeMap<String, String>,
    /// Working directory of the child.
    pub cwd: Option<PathBuf>,
    /// Further variables the child inherits from the host (`envPassthrough`),
    /// each a name that env safety does not refuse. Left out of the
    /// serialized form while empty, so the config hash of an entry without
    /// it is what it always was.
    #[serde(rename = "envPassthrough", skip_serializing_if = "Vec::is_empty")]
    pub env_passthrough: Vec<String>,
}

impl StdioConfig {
    /// A child running `command` with no arguments, no environment of its
    /// own, no working directory and no passthrough variables.
    pub fn new(command: impl Into<String>) -> Self {
        StdioConfig {
            command: command.into(),
            args: Vec::new(),
            env: BTreeMap::new(),
            cwd: None,
            env_passthrough: Vec::new(),
        }
    }

    /// Sets the arguments.
    pub fn with_args(mut self, args: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.args = args.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the entry's own environment. The loader applies the env safety
    /// rules to what a file says; a host building an entry itself is
    /// trusted with what it passes here.
    pub fn with_env(mut self, env: impl IntoIterator<Item = (String, String)>) -> Self {
        self.env = env.into_iter().collect();
        self
    }

    /// Sets the working directory of the child.
    pub fn with_cwd(mut self, cwd: impl Into<PathBuf>) -> Self {
        self.cwd = Some(cwd.into());
        self
    }

    /// Sets the host variables the child inherits beyond the allow-list.
    pub fn with_env_passthrough(
        mut self,
        names: impl IntoIterator<Item = impl Into<String>>,
    ) -> Self {
        self.env_passthrough = names.into_iter().map(Into::into).collect();
        self
    }
}

/// `oauth` block of a remote entry.
///
/// Fields added after the first five are left out of the serialized form
/// while unset, so the rendering (and with it the config hash) of an entry
/// that does not use them is what it always was. Secrets never serialize:
/// a literal `clientSecret` is a [`ConfigSecret`].
///
/// Built with [`McpOAuthConfig::default`] and the `with_*` methods, since
/// the block keeps gaining fields.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct McpOAuthConfig {
    /// A pre-registered client id (`clientId`); without one the client registers
    /// or uses a metadata document.
    pub client_id: Option<String>,
    /// The fixed loopback port of the redirect (`callbackPort`), for servers that
    /// registered an exact redirect uri; `None` takes a free port.
    pub callback_port: Option<u16>,
    /// Where the authorization server's metadata is, when discovery from the
    /// server cannot find it (`authServerMetadataUrl`).
    pub auth_server_metadata_url: Option<String>,
    /// Enterprise cross-app access grant (`grant: cross_app_access` sets it
    /// too, so the two spellings mean one thing).
    pub xaa: bool,
    /// Scopes to ask for; empty asks for what the server advertises.
    pub scopes: Vec<String>,
    /// The grant as written (`grant`); see [`McpOAuthConfig::grant`].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub grant: Option<OAuthGrantKind>,
    /// The name of the environment variable holding a pre-registered
    /// client's secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
    /// A client secret written into the file itself (after `${VAR}`
    /// expansion).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<ConfigSecret>,
    /// A client ID metadata document url (https), used as the client id
    /// where the authorization server supports it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_metadata_url: Option<String>,
    /// A PEM private key for `private_key_jwt` client authentication.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub private_key_file: Option<PathBuf>,
    /// The JWS algorithm of `privateKeyFile` (default [`DEFAULT_SIGNING_ALGORITHM`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub signing_algorithm: Option<String>,
    /// Where the workload JWT (`jwt_bearer`) or the identity provider's ID
    /// token (`cross_app_access`) comes from.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub assertion: Option<CredentialSource>,
    /// The identity provider of cross-app access.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub idp: Option<IdpConfig>,
    /// DPoP: `Some(true)` always, `Some(false)` never, `None` when the
    /// servers ask for it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dpop: Option<bool>,
}

impl McpOAuthConfig {
    /// Sets the pre-registered client id.
    pub fn with_client_id(mut self, v: impl Into<String>) -> Self {
        self.client_id = Some(v.into());
        self
    }

    /// Sets the fixed loopback port of the redirect.
    pub fn with_callback_port(mut self, v: u16) -> Self {
        self.callback_port = Some(v);
        self
    }

    /// Sets where the authorization server's metadata is.
    pub fn with_auth_server_metadata_url(mut self, v: impl Into<String>) -> Self {
        self.auth_server_metadata_url = Some(v.into());
        self
    }

    /// Sets whether the enterprise cross-app access grant is used.
    pub fn with_xaa(mut self, v: bool) -> Self {
        self.xaa = v;
        self
    }

    /// Sets the scopes to ask for.
    pub fn with_scopes(mut self, v: impl IntoIterator<Item = String>) -> Self {
        self.scopes = v.into_iter().collect();
        self
    }

    /// Sets the grant, as `grant` would write it.
    pub fn with_grant(mut self, v: OAuthGrantKind) -> Self {
        self.grant = Some(v);
        self
    }

    /// Sets the variable holding the client secret.
    pub fn with_client_secret_env(mut self, v: impl Into<String>) -> Self {
        self.client_secret_env = Some(v.into());
        self
    }

    /// Sets a literal client secret.
    pub fn with_client_secret(mut self, v: ConfigSecret) -> Self {
        self.client_secret = Some(v);
        self
    }

    /// Sets the client ID metadata document url.
    pub fn with_client_metadata_url(mut self, v: impl Into<String>) -> Self {
        self.client_metadata_url = Some(v.into());
        self
    }

    /// Sets the PEM private key for `private_key_jwt`.
    pub fn with_private_key_file(mut self, v: impl Into<PathBuf>) -> Self {
        self.private_key_file = Some(v.into());
        self
    }

    /// Sets the JWS algorithm of the private key.
    pub fn with_signing_algorithm(mut self, v: impl Into<String>) -> Self {
        self.signing_algorithm = Some(v.into());
        self
    }

    /// Sets where the assertion comes from.
    pub fn with_assertion(mut self, v: CredentialSource) -> Self {
        self.assertion = Some(v);
        self
    }

    /// Sets the identity provider of cross-app access.
    pub fn with_idp(mut self, v: IdpConfig) -> Self {
        self.idp = Some(v);
        self
    }

    /// Sets whether tokens are always (`true`) or never (`false`) DPoP-bound.
    pub fn with_dpop(mut self, v: bool) -> Self {
        self.dpop = Some(v);
        self
    }

    /// The grant in effect: the one written, else cross-app access when
    /// `xaa` is on, else the authorization code grant.
    pub fn grant(&self) -> OAuthGrantKind {
        match self.grant {
            Some(grant) => grant,
            None if self.xaa => OAuthGrantKind::CrossAppAccess,
            None => OAuthGrantKind::AuthorizationCode,
        }
    }
}

/// The JWS algorithm of a `privateKeyFile` when `signingAlgorithm` is not given.
pub const DEFAULT_SIGNING_ALGORITHM: &str = "ES256";

/// The algorithms `signingAlgorithm` accepts (asymmetric JWS algorithms).
pub const SIGNING_ALGORITHMS: &[&str] = &[
    "ES256", "ES384", "RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "EdDSA",
];

/// How an entry's OAuth tokens are obtained (`oauth.grant`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "snake_case")]
#[non_exhaustive]
pub enum OAuthGrantKind {
    /// Authorization code + PKCE: a person signs in with `login`.
    #[default]
    AuthorizationCode,
    /// Client credentials: the client's own secret or private key.
    ClientCredentials,
    /// Workload identity federation: an RFC 7523 JWT bearer assertion.
    JwtBearer,
    /// Enterprise-managed authorization (cross-app access, SEP-990).
    CrossAppAccess,
}

impl OAuthGrantKind {
    /// Every grant, in the order documentation lists them.
    pub const ALL: [OAuthGrantKind; 4] = [
        OAuthGrantKind::AuthorizationCode,
        OAuthGrantKind::ClientCredentials,
        OAuthGrantKind::JwtBearer,
        OAuthGrantKind::CrossAppAccess,
    ];

    /// The name written in `oauth.grant`.
    pub fn as_str(self) -> &'static str {
        match self {
            OAuthGrantKind::AuthorizationCode => "authorization_code",
            OAuthGrantKind::ClientCredentials => "client_credentials",
            OAuthGrantKind::JwtBearer => "jwt_bearer",
            OAuthGrantKind::CrossAppAccess => "cross_app_access",
        }
    }

    /// The grant named `text` (snake_case, or the same with `-`).
    pub fn parse(text: &str) -> Option<OAuthGrantKind> {
        let text = text.replace('-', "_");
        OAuthGrantKind::ALL
            .into_iter()
            .find(|grant| grant.as_str() == text)
    }

    /// Whether this grant needs a person at a browser (`mcp-cli login`).
    pub fn needs_sign_in(self) -> bool {
        self == OAuthGrantKind::AuthorizationCode
    }
}

impl std::fmt::Display for OAuthGrantKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A secret written into a config file. `Debug` and `Serialize` show `***`
/// (the config hash mixes in a digest of the value instead, see
/// [`config_hash`](crate::config_hash)); only [`ConfigSecret::expose`]
/// reads it.
#[derive(Clone, PartialEq, Eq)]
pub struct ConfigSecret(String);

impl ConfigSecret {
    /// Wraps a secret value.
    pub fn new(value: impl Into<String>) -> ConfigSecret {
        ConfigSecret(value.into())
    }

    /// The secret itself, for the one place that must use it.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for ConfigSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("***")
    }
}

impl Serialize for ConfigSecret {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str("***")
    }
}

/// Where a credential the host must fetch comes from: `{"env": "VAR"}` or
/// `{"command": ["program", "arg", ...], "timeoutMs": N}`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum CredentialSource {
    /// The value of an environment variable, read each time it is needed.
    Env {
        /// The variable's name.
        name: String,
    },
    /// The trimmed stdout of a program run without a shell.
    Command {
        /// Program and arguments.
        argv: Vec<String>,
        /// How long it may run (`timeoutMs`); `None` is the host's default.
        timeout: Option<Duration>,
    },
}

impl Serialize for CredentialSource {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            CredentialSource::Env { name } => {
                let mut map = s.serialize_map(Some(1))?;
                map.serialize_entry("env", name)?;
                map.end()
            }
            CredentialSource::Command { argv, timeout } => {
                let mut map = s.serialize_map(None)?;
                map.serialize_entry("command", argv)?;
                if let Some(timeout) = timeout {
                    let ms = u64::try_from(timeout.as_millis()).unwrap_or(u64::MAX);
                    map.serialize_entry("timeoutMs", &ms)?;
                }
                map.end()
            }
        }
    }
}

/// The enterprise identity provider of cross-app access (`oauth.idp`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct IdpConfig {
    /// The IdP's token endpoint (RFC 8693 token exchange).
    pub token_endpoint: String,
    /// This application's client id at the IdP.
    pub client_id: String,
    /// The name of the environment variable holding the IdP client secret.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub client_secret_env: Option<String>,
}

impl IdpConfig {
    /// The identity provider whose token endpoint is `token_endpoint`, where
    /// this application's client id is `client_id` (a public client).
    pub fn new(token_endpoint: impl Into<String>, client_id: impl Into<String>) -> Self {
        IdpConfig {
            token_endpoint: token_endpoint.into(),
            client_id: client_id.into(),
            client_secret_env: None,
        }
    }

    /// Sets the variable holding the IdP client secret (a confidential client).
    pub fn with_client_secret_env(mut self, name: impl Into<String>) -> Self {
        self.client_secret_env = Some(name.into());
        self
    }
}

/// A remote server reached over HTTP (streamable or legacy SSE) or WebSocket.
/// Its `Debug` shows header names, never their values.
///
/// Built with [`RemoteConfig::new`] and the `with_*` methods: entries keep
/// gaining fields, so outside this crate it cannot be written as a struct
/// literal.
#[derive(Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct RemoteConfig {
    /// The endpoint (`http(s)://` or, for WebSocket, `ws(s)://`), after `${VAR}`
    /// expansion.
    pub url: String,
    /// Static headers; values are secrets and must never be logged.
    pub headers: BTreeMap<String, String>,
    /// A command whose stdout is a JSON object of extra headers.
    pub headers_helper: Option<String>,
    /// Always `None` for WebSocket entries.
    pub oauth: Option<McpOAuthConfig>,
}

impl RemoteConfig {
    /// A remote server at `url` with no headers, no helper and no OAuth.
    pub fn new(url: impl Into<String>) -> Self {
        RemoteConfig {
            url: url.into(),
            headers: BTreeMap::new(),
            headers_helper: None,
            oauth: None,
        }
    }

    /// Sets the static headers.
    pub fn with_headers(mut self, headers: impl IntoIterator<Item = (String, String)>) -> Self {
        self.headers = headers.into_iter().collect();
        self
    }

    /// Sets the command whose stdout is a JSON object of extra headers.
    pub fn with_headers_helper(mut self, command: impl Into<String>) -> Self {
        self.headers_helper = Some(command.into());
        self
    }

    /// Sets the `oauth` block (ignored for WebSocket entries).
    pub fn with_oauth(mut self, oauth: McpOAuthConfig) -> Self {
        self.oauth = Some(oauth);
        self
    }
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
            .field("env_passthrough", &self.env_passthrough)
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
///
/// Built with [`ProxyConfig::new`]: entries keep gaining fields, so
/// outside this crate it cannot be written as a struct literal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct ProxyConfig {
    /// The proxy's url.
    pub url: String,
    /// The hosted server's id, sent to the proxy with every request.
    pub id: String,
}

impl ProxyConfig {
    /// The hosted server `id` behind the proxy at `url`.
    pub fn new(url: impl Into<String>, id: impl Into<String>) -> Self {
        ProxyConfig {
            url: url.into(),
            id: id.into(),
        }
    }
}

/// The transport-specific part of an entry: one variant per kind.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "kebab-case")]
// Deliberately exhaustive: a host that matches on it must learn of a new
// kind at compile time, since it cannot connect to one it does not know.
pub enum TransportConfig {
    /// A child process ([`TransportKind::Stdio`]).
    Stdio(StdioConfig),
    /// Legacy HTTP+SSE ([`TransportKind::Sse`]).
    Sse(RemoteConfig),
    /// Streamable HTTP ([`TransportKind::Http`]).
    Http(RemoteConfig),
    /// WebSocket ([`TransportKind::Ws`]).
    Ws(RemoteConfig),
    /// An in-process server the host registers under `name`.
    Sdk {
        /// The name the host registers the server under.
        name: String,
    },
    /// A claude.ai-hosted server ([`TransportKind::ClaudeAiProxy`]).
    #[serde(rename = "claudeai-proxy")]
    ClaudeAiProxy(ProxyConfig),
}

impl TransportConfig {
    /// The kind of this transport, as reports name it.
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
///
/// Built with [`ToolFilter::default`] and the `with_*` methods: entries keep
/// gaining fields, so outside this crate it cannot be written as a struct
/// literal.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize)]
#[non_exhaustive]
pub struct ToolFilter {
    /// Tools to keep; empty keeps every tool.
    pub include: Vec<String>,
    /// Tools to drop: a match hides the tool even when `include` names it.
    pub exclude: Vec<String>,
}

impl ToolFilter {
    /// Sets the patterns of tools to keep.
    pub fn with_include(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.include = patterns.into_iter().map(Into::into).collect();
        self
    }

    /// Sets the patterns of tools to drop.
    pub fn with_exclude(mut self, patterns: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.exclude = patterns.into_iter().map(Into::into).collect();
        self
    }
}

/// Per-server timeouts, already resolved (milliseconds win over seconds).
///
/// Built with [`Timeouts::default`] and the `with_*` methods: entries keep
/// gaining fields, so outside this crate it cannot be written as a struct
/// literal.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct Timeouts {
    /// Time to establish the connection and finish `initialize`.
    #[serde(with = "duration_ms")]
    pub connect: Duration,
    /// Time for one ordinary request (listing, reading, pinging).
    #[serde(with = "duration_ms")]
    pub request: Duration,
    /// Time for one `tools/call`.
    #[serde(with = "duration_ms")]
    pub tool_call: Duration,
}

impl Timeouts {
    /// Sets the connect timeout.
    pub fn with_connect(mut self, timeout: Duration) -> Self {
        self.connect = timeout;
        self
    }

    /// Sets the timeout of one ordinary request.
    pub fn with_request(mut self, timeout: Duration) -> Self {
        self.request = timeout;
        self
    }

    /// Sets the timeout of one `tools/call`.
    pub fn with_tool_call(mut self, timeout: Duration) -> Self {
        self.tool_call = timeout;
        self
    }
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
///
/// Built with [`ServerConfig::new`] and the `with_*` methods: entries keep
/// gaining fields, so outside this crate it cannot be written as a struct
/// literal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
#[non_exhaustive]
pub struct ServerConfig {
    /// The server's name: the key of its entry, unique in a merged config.
    pub name: String,
    /// How to reach the server.
    pub transport: TransportConfig,
    /// `enabled`: a disabled entry is kept (it tombstones lower layers) but never
    /// started.
    pub enabled: bool,
    /// A required server that fails fails the whole catalog.
    pub required: bool,
    /// `toolFilter`: which of the server's tools a catalog offers.
    pub tool_filter: ToolFilter,
    /// Connect, request and tool-call timeouts.
    pub timeouts: Timeouts,
    /// `descriptionLimit`: tool descriptions longer than this many
    /// characters are cut; `None` leaves the host's limit.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub description_limit: Option<std::num::NonZeroUsize>,
}

impl ServerConfig {
    /// An enabled, optional server `name` reached through `transport`, with
    /// no tool filter, the default timeouts and the host's description
    /// limit: what an entry that only names its transport loads as.
    pub fn new(name: impl Into<String>, transport: TransportConfig) -> Self {
        ServerConfig {
            name: name.into(),
            transport,
            enabled: true,
            required: false,
            tool_filter: ToolFilter::default(),
            timeouts: Timeouts::default(),
            description_limit: None,
        }
    }

    /// Sets whether the server is enabled.
    pub fn with_enabled(mut self, enabled: bool) -> Self {
        self.enabled = enabled;
        self
    }

    /// Sets whether a failure of this server fails the whole catalog.
    pub fn with_required(mut self, required: bool) -> Self {
        self.required = required;
        self
    }

    /// Sets which of the server's tools a catalog offers.
    pub fn with_tool_filter(mut self, filter: ToolFilter) -> Self {
        self.tool_filter = filter;
        self
    }

    /// Sets the timeouts.
    pub fn with_timeouts(mut self, timeouts: Timeouts) -> Self {
        self.timeouts = timeouts;
        self
    }

    /// Sets the longest tool description kept, in characters.
    pub fn with_description_limit(mut self, limit: std::num::NonZeroUsize) -> Self {
        self.description_limit = Some(limit);
        self
    }
}

/// Where an entry came from, lowest precedence first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Scope {
    /// A plugin bundle's MCP files.
    Plugin,
    /// OpenClaw's `openclaw.json` (`mcp.servers`).
    #[serde(rename = "openclaw")]
    OpenClaw,
    /// The user's own files (`~/.claude.json`, `~/.claude/settings.json`).
    User,
    /// Files checked into the project (`.mcp.json`, `.claude/settings.json`):
    /// its servers need the user's approval.
    Project,
    /// The user's settings for one project (`.claude/settings.local.json`, the
    /// project's entry in `~/.claude.json`).
    Local,
    /// The organisation's managed directory (`managed-mcp.json`, and
    /// `managedMcpServers` in `managed-settings.json`): above every other
    /// scope, and never written.
    Managed,
}

impl Scope {
    /// The lowercase name used in reports and `--scope` arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Plugin => "plugin",
            Scope::OpenClaw => "openclaw",
            Scope::User => "user",
            Scope::Project => "project",
            Scope::Local => "local",
            Scope::Managed => "managed",
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
    /// The server may start.
    Approved,
    /// The server waits for the user's approval; it is not started.
    Pending,
    /// The user refused the server; it is not started.
    Denied,
}

/// Why a server has its [`Approval`] (REFERENCE §1.7, see
/// [`ApprovalRecord`](crate::ApprovalRecord)).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "kebab-case", tag = "basis")]
#[non_exhaustive]
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
    Changed {
        /// The recorded parts that differ now (see
        /// [`ApprovalRecord::changed`](crate::ApprovalRecord::changed)).
        fields: Vec<String>,
    },
    /// Named in `disabledMcpjsonServers`.
    Denied,
    /// Blocked by the managed policy (see [`crate::policy`]): never started,
    /// whatever the user approved.
    Blocked(PolicyBlock),
}

/// A merged server: its config plus where it came from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ScopedServer {
    /// The merged entry.
    pub config: ServerConfig,
    /// The layer the winning entry came from.
    pub scope: Scope,
    /// The file the winning entry was read from.
    pub source: PathBuf,
    /// The plugin that contributed it, for plugin-scope servers.
    pub plugin: Option<String>,
    /// Whether it may start.
    pub approval: Approval,
    /// Why the server has that approval.
    #[serde(rename = "approvalBasis")]
    pub approval_basis: ApprovalBasis,
}

impl ScopedServer {
    /// Whether the server may be started: enabled, approved, and not
    /// blocked by the managed policy. Every path that starts servers asks
    /// this (or [`LoadedConfig::runnable`](crate::LoadedConfig::runnable),
    /// which does), so a blocked server has no way to run.
    pub fn is_runnable(&self) -> bool {
        self.config.enabled && self.approval == Approval::Approved && self.blocked().is_none()
    }

    /// The policy rule that blocks the server, when one does.
    pub fn blocked(&self) -> Option<&PolicyBlock> {
        match &self.approval_basis {
            ApprovalBasis::Blocked(block) => Some(block),
            _ => None,
        }
    }
}

/// Where a policy rule is written: the file, its line, the key (such as
/// `deniedMcpServers[2].serverUrl`) and the pattern it holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct PolicyRule {
    /// The file the rule is in.
    pub file: PathBuf,
    /// 1-based line of the rule, when known.
    pub line: Option<u32>,
    /// The key of the rule inside its file.
    pub key: String,
    /// The pattern or value it holds, as written (empty for a switch).
    pub pattern: String,
}

impl PolicyRule {
    pub(crate) fn new(file: PathBuf, line: u32, key: String, pattern: String) -> Self {
        PolicyRule {
            file,
            line: Some(line),
            key,
            pattern,
        }
    }
}

impl std::fmt::Display for PolicyRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            write!(f, " `{}`", self.key)?;
        }
        if !self.pattern.is_empty() {
            write!(f, " {}", self.pattern)?;
        }
        Ok(())
    }
}

/// Why the managed policy blocks a server: the rule and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct PolicyBlock {
    /// The rule that blocks the server.
    pub rule: PolicyRule,
    /// Lowercase reason, naming what matched or what is missing.
    pub reason: String,
}

impl std::fmt::Display for PolicyBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (by {})", self.reason, self.rule)
    }
}

/// Severity of a diagnostic.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Worth knowing; nothing is wrong (an inferred type, a dedupe).
    Info,
    /// Loaded, but probably not as meant (an unknown key, an unset variable).
    Warning,
    /// Not loaded: the entry or file is dropped.
    Error,
}

/// One problem found while loading, with its position.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Diagnostic {
    /// How serious it is.
    pub level: Level,
    /// Lowercase description; quotes file text escaped, never a secret value.
    pub message: String,
    /// The file it concerns, when there is one.
    pub file: Option<PathBuf>,
    /// 1-based line, when the position is known.
    pub line: Option<u32>,
    /// 1-based column, when the position is known.
    pub column: Option<u32>,
    /// The server entry it concerns, when there is one.
    pub server: Option<String>,
    /// The field of the entry it concerns (`args`, `env.TOKEN`), when there is one.
    pub field: Option<String>,
}

/// The inherited environment of a stdio child is this allow-list, the
/// network variables ([`INHERITED_NETWORK_ENV`]), the `XDG_*` variables
/// ([`INHERITED_ENV_PREFIXES`]) and the entry's `envPassthrough` names,
/// plus the entry's own `env` (REFERENCE §1.6).
pub const INHERITED_ENV_ALLOWLIST: &[&str] = &[
    "HOME", "LOGNAME", "PATH", "SHELL", "TERM", "USER", "LANG", "LC_ALL", "TMPDIR", "TZ",
];

/// Proxy and trust-store variables a stdio child inherits (REFERENCE §1.6,
/// Decision 2026-12): they cannot make a program load code, and without
/// them `npx -y …` and `uvx …` cannot download behind a corporate proxy or
/// a private certificate authority.
pub const INHERITED_NETWORK_ENV: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
    "REQUESTS_CA_BUNDLE",
];

/// Prefixes of inherited variables (the XDG base directories and session
/// variables). A name env safety refuses (`XDG_CONFIG_HOME`) is not
/// inherited through a prefix.
pub const INHERITED_ENV_PREFIXES: &[&str] = &["XDG_"];

/// Extra inherited variables on Windows.
pub const INHERITED_ENV_ALLOWLIST_WINDOWS: &[&str] = &["SYSTEMROOT", "PATHEXT", "COMSPEC"];
