//! The command line: global options and one subcommand per verb.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

/// Inspect, edit, probe and call the MCP servers configured for a project.
///
/// Servers are read from every config source (plugin bundles, OpenClaw's
/// openclaw.json, the user's ~/.claude.json and ~/.claude/settings.json, the
/// project's .mcp.json, .claude.json and .claude/settings.json, and local
/// settings), merged by scope, and shown or connected from there.
#[derive(Debug, Parser)]
#[command(name = "mcp-cli", version, propagate_version = true)]
#[command(
    after_help = "Exit status: 0 ok, 1 a failure was found, 2 usage error.\nEvery verb, with example runs: docs/cli.md in the source repository."
)]
pub(crate) struct Cli {
    #[command(flatten)]
    pub(crate) global: GlobalArgs,
    #[command(subcommand)]
    pub(crate) command: Command,
}

/// Options every verb takes.
#[derive(Debug, Args)]
#[command(next_help_heading = "Global options")]
pub(crate) struct GlobalArgs {
    /// Home directory holding .claude.json and .claude/ [default: $HOME]
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) home: Option<PathBuf>,
    /// Project directory holding .mcp.json [default: the current directory]
    #[arg(long, global = true, value_name = "DIR")]
    pub(crate) project: Option<PathBuf>,
    /// OpenClaw home holding openclaw.json [default: <home>/.openclaw]
    #[arg(long = "openclaw-home", global = true, value_name = "DIR")]
    pub(crate) openclaw_home: Option<PathBuf>,
    /// The organisation's managed policy directory (managed-mcp.json,
    /// managed-settings.json, requirements.toml) [default: /etc/claude-code
    /// on Linux, /Library/Application Support/ClaudeCode on macOS,
    /// C:\Program Files\ClaudeCode on Windows]
    #[arg(long = "managed-dir", global = true, value_name = "DIR")]
    pub(crate) managed_dir: Option<PathBuf>,
    /// A plugin bundle folder to load (repeatable)
    #[arg(long = "plugin", global = true, value_name = "DIR")]
    pub(crate) plugins: Vec<PathBuf>,
    /// Start project servers that are not approved yet (for this run only)
    #[arg(long = "trust-project", global = true)]
    pub(crate) trust_project: bool,
    /// Print machine-readable JSON on stdout
    #[arg(long, global = true)]
    pub(crate) json: bool,
    /// Log more on stderr (-v info, -vv debug, -vvv trace)
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub(crate) verbose: u8,
    /// Speak exactly this MCP revision (e.g. 2025-11-25) instead of the
    /// newest the server supports
    #[arg(long, global = true, value_name = "REVISION", value_parser = protocol_revision)]
    pub(crate) protocol: Option<String>,
    /// A folder servers may ask for as a root (repeatable) [default: the
    /// project directory]
    #[arg(long = "root", global = true, value_name = "DIR")]
    pub(crate) roots: Vec<PathBuf>,
    /// Where OAuth tokens are kept: `file` (one file per server, readable
    /// by you alone, under <home>/.mcp-cli/credentials) or `secret-store`
    /// (the OS secret store) [default: $MCP_TOKEN_STORE, else file]
    #[arg(long = "token-store", global = true, value_enum, value_name = "STORE")]
    pub(crate) token_store: Option<TokenStoreArg>,
    /// Where `${secret:NAME}` values are kept: auto (the Secret Service
    /// when it answers, else the kernel keyring), secret-service,
    /// kernel-keyring, keychain, credential-manager [default:
    /// $MCP_SECRET_STORE, else auto]
    #[arg(
        long = "secret-store",
        global = true,
        value_name = "STORE",
        value_parser = secret_backend
    )]
    pub(crate) secret_store: Option<mcp_config::secret::SecretBackend>,
    /// The namespace secrets are filed under in that store (one per
    /// profile or test run) [default: $MCP_SECRET_NAMESPACE, else mcp-cli]
    #[arg(
        long = "secret-namespace",
        global = true,
        value_name = "NAMESPACE",
        value_parser = secret_namespace
    )]
    pub(crate) secret_namespace: Option<String>,
}

/// A `--secret-namespace` value: it follows the secret-name rule, so it is
/// the same key in every store.
fn secret_namespace(value: &str) -> Result<String, String> {
    match mcp_config::secret::secret_name_problem(value) {
        None => Ok(value.to_owned()),
        Some(reason) => Err(format!("not a namespace: {reason}")),
    }
}

/// A `--secret-store` value.
fn secret_backend(value: &str) -> Result<mcp_config::secret::SecretBackend, String> {
    value.parse()
}

/// Where OAuth tokens are kept.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TokenStoreArg {
    /// One 0600 file per server under <home>/.mcp-cli/credentials
    File,
    /// The OS secret store (the lock files stay under <home>/.mcp-cli/credentials)
    SecretStore,
}

/// An error in what the user typed (an argument, a variable): exit
/// status 2.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub(crate) struct UsageError(pub(crate) String);

/// Builds a usage error (exit status 2).
pub(crate) fn usage(message: impl Into<String>) -> anyhow::Error {
    UsageError(message.into()).into()
}

/// A `--protocol` value: one of the revisions the client knows.
fn protocol_revision(value: &str) -> Result<String, String> {
    let known = mcp_transport::KNOWN_PROTOCOL_VERSIONS;
    if known.contains(&value) {
        Ok(value.to_owned())
    } else {
        Err(format!("unknown MCP revision; known: {}", known.join(", ")))
    }
}

#[derive(Debug, Subcommand)]
pub(crate) enum Command {
    /// List every merged server with its kind, scope, source and state
    List,
    /// Show one server in full (header and env values redacted)
    Get(GetArgs),
    /// Add a stdio server (`add NAME -- CMD ARGS…`) or a remote one
    /// (`add --transport http NAME URL`, or `--url URL`)
    #[command(
        after_help = "A server added to project scope (.mcp.json) by this verb is approved for you in the same step.\n\nExamples:\n  mcp-cli add fs --scope project --env ROOT=/data -- npx -y @modelcontextprotocol/server-filesystem /data\n  mcp-cli add --transport http docs https://example.com/mcp --header 'Authorization: Bearer TOKEN'\n  mcp-cli add docs --transport http --url https://example.com/mcp\n  mcp-cli add git --cwd ~/src/repo --timeout 120 --exclude-tools 'git_reset*' -- uvx mcp-server-git\n  mcp-cli add api --url https://api.example.com/mcp --grant client_credentials --client-id svc --client-secret-env API_SECRET\n  mcp-cli add wl --url https://api.example.com/mcp --grant jwt_bearer --assertion-command 'cat /var/run/secrets/token'"
    )]
    // Boxed: its many OAuth flags make it much larger than the other verbs.
    Add(Box<AddArgs>),
    /// Add a server from a JSON entry
    #[command(
        name = "add-json",
        after_help = "Example:\n  mcp-cli add-json echo '{\"command\":\"mcp-example-server\",\"args\":[]}'"
    )]
    AddJson(AddJsonArgs),
    /// Remove a server from the file of its scope
    Remove(NameScopeArgs),
    /// Switch a server back on (removes an `enabled: false` entry)
    Enable(NameScopeArgs),
    /// Switch a server off (writes `enabled: false`; also hides a plugin's server)
    Disable(NameScopeArgs),
    /// Connect to servers concurrently and report their state
    Probe(ProbeArgs),
    /// Print the tool catalog a host would give a model
    #[command(
        after_help = "Examples:\n  mcp-cli tools                      every approved server's tools\n  mcp-cli tools fs                   only server `fs` (connects only it)\n  mcp-cli tools --url http://localhost:3000/mcp\n  mcp-cli tools -- npx -y @modelcontextprotocol/server-everything"
    )]
    Tools(ToolsArgs),
    /// List the resources and resource templates of servers
    Resources(ListArgs),
    /// List the prompts of servers
    Prompts(ListArgs),
    /// Read one resource by its URI and print its contents
    Read(ReadArgs),
    /// Get one prompt with its arguments and print its messages
    Prompt(PromptArgs),
    /// Call one tool by its catalog name and print the result
    #[command(
        after_help = "Giving the arguments:\n  --args '{\"text\":\"hi\"}'   the whole argument object as JSON\n  --arg text=hi            one string argument (a number, boolean, array or object\n                           when the tool's schema says so)\n  --arg count:=3           one argument given as raw JSON"
    )]
    Call(CallArgs),
    /// Sign in to a remote server with OAuth
    #[command(
        after_help = "The authorization URL opens in $BROWSER when it is set (one program path, given the URL as its only argument, run without a shell), otherwise in the system's default browser."
    )]
    Login(LoginArgs),
    /// Forget the stored credentials of a server
    Logout(NameArgs),
    /// Show which remote servers have stored credentials
    #[command(name = "auth-status")]
    AuthStatus,
    /// Approve project servers, so they may start (written to local settings)
    Approve(ApproveArgs),
    /// Deny project servers, so they never start (written to local settings)
    Deny(DenyArgs),
    /// Forget every approval and denial of this project's servers
    #[command(name = "reset-project-choices")]
    ResetProjectChoices,
    /// Trust this project: files inside it (.claude/settings.local.json)
    /// then count as your consent (written to <home>/.claude.json)
    Trust,
    /// Stop trusting this project: files inside it no longer count as your
    /// consent
    Untrust,
    /// Check every config source and report problems with their positions
    #[command(name = "check-config")]
    CheckConfig(CheckArgs),
    /// Serve every approved server as one MCP server over stdio, for any
    /// host (`{"command": "mcp-cli", "args": ["serve"]}`)
    #[command(
        after_help = "Standard input and output carry the protocol (or HTTP, with --listen); diagnostics go to standard error.\n\nExamples:\n  mcp-cli serve                      every approved server, tools named mcp__server__tool\n  mcp-cli serve --naming openclaw    tools named server__tool\n  mcp-cli serve --passthrough -- npx -y @modelcontextprotocol/server-everything\n  mcp-cli serve --listen 127.0.0.1:8931   streamable HTTP at http://127.0.0.1:8931/mcp"
    )]
    Serve(ServeArgs),
    /// Import the servers of another host's config file (Cursor, VS Code,
    /// Codex, Gemini CLI, …)
    #[command(
        after_help = "Without --scope, servers of a host's user-wide file go to the user scope and those of a project's file to the local scope.\n\nExamples:\n  mcp-cli import --from cursor --dry-run\n  mcp-cli import --from vscode --input api-key=$KEY\n  mcp-cli import --from codex --scope project docs figma"
    )]
    Import(ImportArgs),
    /// Keep, show and remove the secrets entries name as `${secret:NAME}`
    /// in `env` and `headers` values
    #[command(
        after_help = "Values live in the OS secret store (--secret-store), never in a config file.\n\nExamples:\n  mcp-cli secret set GITHUB_TOKEN             asks without echo on a terminal\n  printf %s \"$TOKEN\" | mcp-cli secret set GITHUB_TOKEN\n  mcp-cli secret list                         names, and the servers that use each\n  mcp-cli secret get GITHUB_TOKEN --show"
    )]
    Secret(SecretArgs),
}

/// `secret`'s own verbs.
#[derive(Debug, Args)]
pub(crate) struct SecretArgs {
    #[command(subcommand)]
    pub(crate) command: SecretCommand,
}

/// What `secret` does.
#[derive(Debug, Subcommand)]
pub(crate) enum SecretCommand {
    /// Store a secret: asked for without echo on a terminal, otherwise
    /// read from standard input (one trailing newline dropped)
    Set(SecretNameArgs),
    /// Say whether a secret is set, and in which store
    Get(SecretGetArgs),
    /// Remove a secret
    Rm(SecretNameArgs),
    /// List the secrets, the servers that name each, and names no store holds
    List,
}

/// A secret's name.
#[derive(Debug, Args)]
pub(crate) struct SecretNameArgs {
    /// The secret's name (letters, digits, `_`, `-`, `.`)
    pub(crate) name: String,
}

/// `secret get`.
#[derive(Debug, Args)]
pub(crate) struct SecretGetArgs {
    /// The secret's name
    pub(crate) name: String,
    /// Print the value itself on standard output
    #[arg(long)]
    pub(crate) show: bool,
}

/// A file scope a write goes to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ScopeArg {
    /// <home>/.claude.json (every project of this user)
    User,
    /// <project>/.mcp.json (shared with the project)
    Project,
    /// <home>/.claude.json under this project's entry (this user, this project)
    Local,
    /// <openclaw-home>/openclaw.json
    #[value(name = "openclaw")]
    OpenClaw,
}

impl ScopeArg {
    pub(crate) fn scope(self) -> mcp_config::Scope {
        match self {
            ScopeArg::User => mcp_config::Scope::User,
            ScopeArg::Project => mcp_config::Scope::Project,
            ScopeArg::Local => mcp_config::Scope::Local,
            ScopeArg::OpenClaw => mcp_config::Scope::OpenClaw,
        }
    }
}

/// The transport of a server added with `add`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum TransportArg {
    /// A local process speaking over stdin/stdout
    Stdio,
    /// Streamable HTTP
    Http,
    /// Legacy HTTP+SSE
    Sse,
    /// WebSocket
    Ws,
}

/// The OAuth grant of a server added with `add`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum GrantArg {
    /// A person signs in with `mcp-cli login` (PKCE)
    #[value(name = "authorization_code")]
    AuthorizationCode,
    /// The client's own secret or private key; no sign-in
    #[value(name = "client_credentials")]
    ClientCredentials,
    /// Workload identity federation (RFC 7523 JWT bearer); no sign-in
    #[value(name = "jwt_bearer")]
    JwtBearer,
    /// Enterprise-managed cross-app access through an identity provider; no sign-in
    #[value(name = "cross_app_access")]
    CrossAppAccess,
}

impl GrantArg {
    pub(crate) fn grant(self) -> mcp_config::OAuthGrantKind {
        match self {
            GrantArg::AuthorizationCode => mcp_config::OAuthGrantKind::AuthorizationCode,
            GrantArg::ClientCredentials => mcp_config::OAuthGrantKind::ClientCredentials,
            GrantArg::JwtBearer => mcp_config::OAuthGrantKind::JwtBearer,
            GrantArg::CrossAppAccess => mcp_config::OAuthGrantKind::CrossAppAccess,
        }
    }
}

#[derive(Debug, Args)]
pub(crate) struct GetArgs {
    /// The server's name
    pub(crate) name: String,
    /// Show header and env values instead of `***`
    #[arg(long = "show-secrets")]
    pub(crate) show_secrets: bool,
    /// Print an `allowedMcpServers` entry for managed settings that pins
    /// this server: its config hash, and a digest of each part, so that a
    /// change is blocked and the parts that changed are named
    #[arg(long, conflicts_with = "show_secrets")]
    pub(crate) pin: bool,
}

#[derive(Debug, Args)]
pub(crate) struct AddArgs {
    /// The server's name (printable text, no control characters; at most 128)
    // `--` belongs to the command, so a name the loader accepts that starts
    // with `-` is taken as a value here.
    #[arg(allow_hyphen_values = true)]
    pub(crate) name: String,
    /// `claude mcp add`'s shape: the url of a remote server, or a stdio
    /// server's command and its arguments (arguments starting with `-` go
    /// after `--`)
    #[arg(value_name = "COMMAND_OR_URL")]
    pub(crate) target: Vec<String>,
    /// The file the entry is written to
    #[arg(long, short, value_enum, default_value = "local")]
    pub(crate) scope: ScopeArg,
    /// Transport [default: stdio with a command, http with --url]
    #[arg(long, short, value_enum)]
    pub(crate) transport: Option<TransportArg>,
    /// URL of a remote server
    #[arg(long, short)]
    pub(crate) url: Option<String>,
    /// Environment variable for a stdio server (repeatable)
    #[arg(long, short, value_name = "KEY=VALUE")]
    pub(crate) env: Vec<String>,
    /// HTTP header for a remote server (repeatable)
    #[arg(long = "header", short = 'H', value_name = "'NAME: VALUE'")]
    pub(crate) headers: Vec<String>,
    /// OAuth client id, when the server does not allow dynamic registration
    #[arg(long = "client-id", value_name = "ID")]
    pub(crate) client_id: Option<String>,
    /// Fixed port of the OAuth callback listener
    #[arg(long = "callback-port", value_name = "N")]
    pub(crate) callback_port: Option<u16>,
    /// How OAuth tokens are obtained [default: authorization_code]
    #[arg(long, value_enum, value_name = "GRANT")]
    pub(crate) grant: Option<GrantArg>,
    /// Environment variable holding the OAuth client secret (its name, not the secret)
    #[arg(long = "client-secret-env", value_name = "VAR")]
    pub(crate) client_secret_env: Option<String>,
    /// Client ID metadata document url (https) to use as the OAuth client id
    #[arg(long = "client-metadata-url", value_name = "URL")]
    pub(crate) client_metadata_url: Option<String>,
    /// PEM private key for client credentials with private_key_jwt
    #[arg(long = "private-key-file", value_name = "PATH")]
    pub(crate) private_key_file: Option<String>,
    /// JWS algorithm of --private-key-file [default: ES256]
    #[arg(
        long = "signing-algorithm",
        value_name = "ALG",
        requires = "private_key_file"
    )]
    pub(crate) signing_algorithm: Option<String>,
    /// Environment variable holding the assertion (jwt_bearer) or ID token (cross_app_access)
    #[arg(
        long = "assertion-env",
        value_name = "VAR",
        conflicts_with = "assertion_command"
    )]
    pub(crate) assertion_env: Option<String>,
    /// Command printing the assertion or ID token, as one quoted line split
    /// into program and arguments (run without a shell)
    #[arg(long = "assertion-command", value_name = "'PROGRAM ARGS'")]
    pub(crate) assertion_command: Option<String>,
    /// Token endpoint of the identity provider (cross_app_access)
    #[arg(long = "idp-token-endpoint", value_name = "URL")]
    pub(crate) idp_token_endpoint: Option<String>,
    /// This application's client id at the identity provider (cross_app_access)
    #[arg(long = "idp-client-id", value_name = "ID")]
    pub(crate) idp_client_id: Option<String>,
    /// Environment variable holding the identity provider client secret
    #[arg(long = "idp-client-secret-env", value_name = "VAR")]
    pub(crate) idp_client_secret_env: Option<String>,
    /// Working directory of a stdio server (a relative one is taken from
    /// the current directory)
    #[arg(long, value_name = "DIR")]
    pub(crate) cwd: Option<String>,
    /// Seconds the server may take for anything: connecting, each request
    /// and each tool call (connectionTimeoutMs, requestTimeoutMs,
    /// toolCallTimeoutMs)
    #[arg(long, value_name = "SECONDS", value_parser = seconds)]
    pub(crate) timeout: Option<f64>,
    /// Seconds the server may take to start and initialize
    /// (connectionTimeoutMs; overrides --timeout)
    #[arg(long = "connect-timeout", value_name = "SECONDS", value_parser = seconds)]
    pub(crate) connect_timeout: Option<f64>,
    /// Seconds one tool call may take (toolCallTimeoutMs; overrides --timeout)
    #[arg(long = "tool-timeout", value_name = "SECONDS", value_parser = seconds)]
    pub(crate) tool_timeout: Option<f64>,
    /// Offer only the tools matching these patterns (toolFilter.include;
    /// comma-separated or repeated; `*` matches any characters)
    #[arg(long = "include-tools", value_name = "PATTERNS", value_delimiter = ',')]
    pub(crate) include_tools: Vec<String>,
    /// Never offer the tools matching these patterns (toolFilter.exclude;
    /// comma-separated or repeated; wins over --include-tools)
    #[arg(long = "exclude-tools", value_name = "PATTERNS", value_delimiter = ',')]
    pub(crate) exclude_tools: Vec<String>,
    /// Both in one flag: `--tool-filter 'read_*,!delete_*'` offers the
    /// tools matching a pattern and hides those matching a `!pattern`
    #[arg(long = "tool-filter", value_name = "PATTERNS", value_delimiter = ',')]
    pub(crate) tool_filter: Vec<String>,
    /// Replace an entry of the same name in that file
    #[arg(long)]
    pub(crate) force: bool,
    /// Command and arguments of a stdio server, after `--`
    #[arg(last = true, value_name = "CMD ARGS")]
    pub(crate) command: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct AddJsonArgs {
    /// The server's name
    pub(crate) name: String,
    /// The entry, e.g. '{"type":"http","url":"https://example.com/mcp"}'
    #[arg(value_name = "JSON")]
    pub(crate) entry: String,
    /// The file the entry is written to
    #[arg(long, short, value_enum, default_value = "local")]
    pub(crate) scope: ScopeArg,
    /// Replace an entry of the same name in that file
    #[arg(long)]
    pub(crate) force: bool,
}

#[derive(Debug, Args)]
pub(crate) struct NameScopeArgs {
    /// The server's name
    pub(crate) name: String,
    /// The file to change [default: the one scope whose file has the server;
    /// `disable` of a server no file has (a plugin's) writes to local]
    #[arg(long, short, value_enum)]
    pub(crate) scope: Option<ScopeArg>,
}

#[derive(Debug, Args)]
pub(crate) struct NameArgs {
    /// The server's name
    pub(crate) name: String,
}

#[derive(Debug, Args)]
pub(crate) struct ApproveArgs {
    /// The project servers' names
    #[arg(required_unless_present = "all", conflicts_with = "all")]
    pub(crate) names: Vec<String>,
    /// Every project server awaiting approval
    #[arg(long)]
    pub(crate) all: bool,
}

#[derive(Debug, Args)]
pub(crate) struct DenyArgs {
    /// The project servers' names
    #[arg(required = true)]
    pub(crate) names: Vec<String>,
}

/// A positive, finite number of seconds (a timeout).
fn seconds(value: &str) -> Result<f64, String> {
    match value.parse::<f64>() {
        Ok(seconds) if seconds.is_finite() && seconds > 0.0 && seconds <= 86_400.0 * 365.0 => {
            Ok(seconds)
        }
        _ => Err("expected a positive number of seconds".to_owned()),
    }
}

#[derive(Debug, Args)]
pub(crate) struct ProbeArgs {
    /// Probe only this server [default: every enabled server]
    pub(crate) name: Option<String>,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
    /// Give up on a server after this many seconds [default: its connect timeout]
    #[arg(long, value_name = "S")]
    pub(crate) timeout: Option<f64>,
}

/// How catalog names are formed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum NamingArg {
    /// mcp__<server>__<tool>
    Claw,
    /// <server>__<tool>
    #[value(name = "openclaw")]
    OpenClaw,
}

/// Which model provider's schema rules the catalog follows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ProviderArg {
    /// Normalised JSON Schema
    Generic,
    /// No top-level anyOf/oneOf/allOf
    Anthropic,
    /// OpenAI strict mode: closed objects, every property required
    #[value(name = "openai-strict")]
    OpenAiStrict,
    /// Gemini's schema subset
    Gemini,
}

#[derive(Debug, Args)]
pub(crate) struct ToolsArgs {
    /// Only this server's tools (connects only it)
    pub(crate) server: Option<String>,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
    /// Naming style of tool names
    #[arg(long, value_enum, default_value = "claw")]
    pub(crate) naming: NamingArg,
    /// Provider profile of the input schemas
    #[arg(long, value_enum, default_value = "generic")]
    pub(crate) provider: ProviderArg,
}

#[derive(Debug, Args)]
pub(crate) struct CallArgs {
    /// The tool's catalog name, as `tools` prints it
    pub(crate) tool: String,
    /// The arguments as one JSON object
    #[arg(long, value_name = "JSON", conflicts_with = "arg")]
    pub(crate) args: Option<String>,
    /// One argument (repeatable): KEY=VALUE, or KEY:=JSON
    #[arg(long, value_name = "K=V")]
    pub(crate) arg: Vec<String>,
    /// Give up after this many seconds [default: the server's tool-call timeout]
    #[arg(long, value_name = "S")]
    pub(crate) timeout: Option<f64>,
    /// Naming style TOOL is written in
    #[arg(long, value_enum, default_value = "claw")]
    pub(crate) naming: NamingArg,
    /// Also print the raw result the server sent
    #[arg(long)]
    pub(crate) raw: bool,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

/// Which servers a connecting verb connects: the configured ones, those
/// named with `--server`, or one ad-hoc server described here.
#[derive(Debug, Clone, Args)]
#[command(next_help_heading = "Servers")]
pub(crate) struct TargetArgs {
    /// Connect only this configured server (repeatable)
    #[arg(long = "server", value_name = "NAME", conflicts_with_all = ["adhoc_url", "adhoc_command"])]
    pub(crate) servers: Vec<String>,
    /// Connect to this remote server instead of the configured ones
    #[arg(
        long = "url",
        id = "adhoc_url",
        value_name = "URL",
        conflicts_with = "adhoc_command"
    )]
    pub(crate) url: Option<String>,
    /// Transport of --url [default: http]
    #[arg(
        long = "transport",
        id = "adhoc_transport",
        value_enum,
        requires = "adhoc_url"
    )]
    pub(crate) transport: Option<RemoteTransportArg>,
    /// HTTP header for --url (repeatable)
    #[arg(
        long = "header",
        id = "adhoc_headers",
        value_name = "'NAME: VALUE'",
        requires = "adhoc_url"
    )]
    pub(crate) headers: Vec<String>,
    /// Environment variable for the command after `--` (repeatable)
    #[arg(
        long = "env",
        id = "adhoc_env",
        value_name = "KEY=VALUE",
        requires = "adhoc_command"
    )]
    pub(crate) env: Vec<String>,
    /// Name of the server given by --url or after `--`
    #[arg(
        long = "name",
        id = "adhoc_name",
        value_name = "NAME",
        default_value = "adhoc"
    )]
    pub(crate) name: String,
    /// A stdio server to connect to instead of the configured ones: its
    /// command and arguments, after `--`
    #[arg(last = true, id = "adhoc_command", value_name = "CMD ARGS")]
    pub(crate) command: Vec<String>,
}

/// The transport of an ad-hoc `--url`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum RemoteTransportArg {
    /// Streamable HTTP
    Http,
    /// Legacy HTTP+SSE
    Sse,
    /// WebSocket
    Ws,
}

#[derive(Debug, Args)]
pub(crate) struct ServeArgs {
    #[command(flatten)]
    pub(crate) target: TargetArgs,
    /// Naming style of tool and prompt names
    #[arg(long, value_enum, default_value = "claw")]
    pub(crate) naming: NamingArg,
    /// Serve tool and prompt names and resource URIs as the servers give
    /// them (for one server: with several, a name two share goes to one)
    #[arg(long)]
    pub(crate) passthrough: bool,
    /// Serve streamable HTTP at http://ADDR/mcp instead of stdio
    #[arg(long, value_name = "ADDR")]
    pub(crate) listen: Option<std::net::SocketAddr>,
    /// Allow a --listen address beyond loopback; every request must then
    /// carry the bearer token kept in <home>/.mcp-cli/gateway-token
    #[arg(long, requires = "listen")]
    pub(crate) allow_remote: bool,
    /// Accept requests from this Origin besides loopback ones (repeatable)
    #[arg(long, value_name = "ORIGIN", requires = "listen")]
    pub(crate) allow_origin: Vec<String>,
    /// List tool definitions only up to this many tokens, then a
    /// `search_tools` tool; the tools a search finds join the list
    #[arg(long, value_name = "TOKENS")]
    pub(crate) tool_budget: Option<usize>,
    /// A tool always listed, past the budget (its catalog name; repeatable)
    #[arg(long, value_name = "NAME", requires = "tool_budget")]
    pub(crate) pin: Vec<String>,
}

#[derive(Debug, Args)]
pub(crate) struct ListArgs {
    /// Only this server
    pub(crate) server: Option<String>,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

#[derive(Debug, Args)]
pub(crate) struct ReadArgs {
    /// The resource's URI, as `resources` lists it
    pub(crate) uri: String,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

#[derive(Debug, Args)]
#[command(
    after_help = "Example:\n  mcp-cli prompt simple-prompt --server everything\n  mcp-cli prompt complex_prompt --arg temperature=0.7 --arg style=terse"
)]
pub(crate) struct PromptArgs {
    /// The prompt's name, as `prompts` lists it
    pub(crate) name: String,
    /// One argument (repeatable): KEY=VALUE
    #[arg(long, value_name = "K=V")]
    pub(crate) arg: Vec<String>,
    #[command(flatten)]
    pub(crate) target: TargetArgs,
}

#[derive(Debug, Args)]
pub(crate) struct LoginArgs {
    /// The server's name
    pub(crate) name: String,
    /// Print the authorization URL instead of opening a browser
    #[arg(long = "no-browser")]
    pub(crate) no_browser: bool,
}

#[derive(Debug, Args)]
pub(crate) struct CheckArgs {
    /// Treat warnings as errors
    #[arg(long)]
    pub(crate) strict: bool,
}

/// The host `import --from` reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub(crate) enum ImportHost {
    /// ~/.config/Claude/claude_desktop_config.json
    ClaudeDesktop,
    /// ~/.cursor/mcp.json and <project>/.cursor/mcp.json
    Cursor,
    /// <project>/.vscode/mcp.json and ~/.config/Code/User/mcp.json
    #[value(name = "vscode")]
    VsCode,
    /// ~/.codex/config.toml and <project>/.codex/config.toml
    Codex,
    /// ~/.gemini/settings.json and <project>/.gemini/settings.json
    Gemini,
    /// ~/.codeium/windsurf/mcp_config.json
    Windsurf,
    /// ~/.config/zed/settings.json and <project>/.zed/settings.json
    Zed,
    /// ~/.config/goose/config.yaml
    Goose,
}

#[derive(Debug, Args)]
pub(crate) struct ImportArgs {
    /// The host whose file is read
    #[arg(long, value_enum, value_name = "HOST")]
    pub(crate) from: ImportHost,
    /// Read this file instead of the host's usual ones
    #[arg(long, value_name = "PATH")]
    pub(crate) file: Option<PathBuf>,
    /// The file the entries are written to [default: user for a host's
    /// user-wide file, local for a project's]
    #[arg(long, short, value_enum)]
    pub(crate) scope: Option<ScopeArg>,
    /// Show what would be written and write nothing
    #[arg(long = "dry-run")]
    pub(crate) dry_run: bool,
    /// Replace entries of the same names in the target files
    #[arg(long)]
    pub(crate) force: bool,
    /// A value for VS Code's `${input:ID}` (repeatable); asked on a
    /// terminal otherwise
    #[arg(long = "input", value_name = "ID=VALUE")]
    pub(crate) inputs: Vec<String>,
    /// Import only these servers [default: all]
    #[arg(value_name = "NAME")]
    pub(crate) names: Vec<String>,
}

#[cfg(test)]
mod tests {
    use clap::CommandFactory;

    #[test]
    fn the_command_line_is_consistent() {
        super::Cli::command().debug_assert();
    }
}
