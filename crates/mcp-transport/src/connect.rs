//! [`connect`]: from a server's config entry to an initialized
//! [`ClientSession`].
//!
//! [`open_transport`] builds the transport for the entry's kind; [`connect`]
//! adds the MCP handshake, bounded by the entry's connect timeout. The host
//! passes everything a transport needs from the outside world in
//! [`ConnectOptions`] (the environment for stdio children, its in-process
//! servers, credentials): nothing here reads the process environment or
//! any other global state.
//!
//! The connect timeout covers the whole handshake, including any 401/403
//! answered by the auth provider during it. An interactive login (a browser
//! round trip) rarely fits in that budget, so a host signs in first (for
//! example `OAuthProvider::login` from `mcp-oauth`, or the CLI's `login`
//! command) and calls [`connect`] with the stored tokens in place; inside
//! `connect` the provider should only refresh.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_config::{RemoteConfig, ServerConfig, TransportConfig};
use mcp_oauth::AuthProvider;

use crate::http::{AuthProviders, HttpOptions};
use crate::sse::SseTransport;
use crate::streamable_http::StreamableHttpTransport;
use crate::ws::WsTransport;

use crate::sdk::{SdkOptions, SdkRegistry, SdkTransport};
use crate::session::{ClientSession, SessionOptions};
use crate::stdio::{StdioOptions, StdioTransport};
use crate::transport::{Transport, TransportError, TransportErrorKind};

/// What [`connect`] needs beyond the config entry. Its `Debug` names the
/// variables of `env`, never their values.
#[derive(Clone, Default)]
pub struct ConnectOptions {
    /// Session behaviour. Its timeouts are replaced by the entry's own.
    pub session: SessionOptions,
    /// The environment stdio children draw their allow-listed variables
    /// from (a host passes its own, typically `std::env::vars()`; empty by
    /// default, so children get only their entry's `env`).
    pub env: BTreeMap<String, String>,
    /// Stdio transport options (`base_env` is filled from `env`).
    pub stdio: StdioOptions,
    /// The host's in-process servers, for `sdk` entries.
    pub sdk_servers: Arc<SdkRegistry>,
    /// In-process transport options.
    pub sdk: SdkOptions,
    /// Credentials for remote servers (streamable HTTP and legacy SSE), per
    /// server; `None` sends no `Authorization`.
    pub auth: Option<Arc<dyn AuthProviders>>,
    /// The host's claude.ai credentials, for `claudeai-proxy` entries.
    pub claudeai_credentials: Option<Arc<dyn AuthProvider>>,
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ConnectOptions")
            .field("session", &self.session)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("stdio", &self.stdio)
            .field("sdk_servers", &self.sdk_servers)
            .field("sdk", &self.sdk)
            .field("auth", &self.auth)
            .field("claudeai_credentials", &self.claudeai_credentials)
            .finish()
    }
}

/// Builds the transport for `config`'s kind without initializing it.
pub async fn open_transport(
    config: &ServerConfig,
    options: &ConnectOptions,
) -> Result<Box<dyn Transport>, TransportError> {
    let server = config.name.clone();
    match &config.transport {
        TransportConfig::Stdio(stdio) => {
            let mut stdio_options = options.stdio.clone();
            stdio_options.base_env = options.env.clone();
            Ok(Box::new(StdioTransport::spawn(
                server,
                stdio,
                &stdio_options,
            )?))
        }
        TransportConfig::Sdk { name } => Ok(Box::new(SdkTransport::connect_registered(
            server,
            name,
            &options.sdk_servers,
            options.sdk,
        )?)),
        TransportConfig::Http(remote) => Ok(Box::new(
            StreamableHttpTransport::connect(remote_options(config, remote, options)).await?,
        )),
        TransportConfig::Sse(remote) => Ok(Box::new(
            SseTransport::connect(remote_options(config, remote, options)).await?,
        )),
        TransportConfig::Ws(remote) => {
            // WebSocket entries carry no OAuth.
            let mut ws = remote_options(config, remote, options);
            ws.auth = None;
            Ok(Box::new(WsTransport::connect(ws).await?))
        }
        TransportConfig::ClaudeAiProxy(proxy) => Ok(Box::new(
            crate::claudeai_proxy::connect(
                &server,
                &proxy.url,
                &proxy.id,
                options.claudeai_credentials.clone(),
                config.timeouts.connect,
            )
            .await?,
        )),
    }
}

/// The HTTP options of a remote entry: its url, headers, helper, connect
/// timeout and the host's credentials for it.
fn remote_options(
    config: &ServerConfig,
    remote: &RemoteConfig,
    options: &ConnectOptions,
) -> HttpOptions {
    HttpOptions {
        server: config.name.clone(),
        url: remote.url.clone(),
        headers: remote.headers.clone(),
        headers_helper: remote.headers_helper.clone(),
        auth: options
            .auth
            .as_ref()
            .and_then(|auth| auth.provider_for(config)),
        connect_timeout: config.timeouts.connect,
    }
}

/// Opens the transport for `config` and runs the MCP handshake, all within
/// the entry's connect timeout (so run interactive logins before calling
/// it; see the module docs).
pub async fn connect(
    config: &ServerConfig,
    options: &ConnectOptions,
) -> Result<ClientSession, TransportError> {
    let mut session_options = options.session.clone();
    let connect_timeout = config.timeouts.connect;
    session_options.connect_timeout = connect_timeout;
    session_options.request_timeout = config.timeouts.request;
    session_options.tool_call_timeout = config.timeouts.tool_call;
    let started = tokio::time::Instant::now();
    let transport = tokio::time::timeout(connect_timeout, open_transport(config, options))
        .await
        .map_err(|_| {
            TransportError::new(
                &*config.name,
                TransportErrorKind::ConnectTimeout {
                    after: connect_timeout,
                    stderr_tail: String::new(),
                    hint: None,
                },
            )
        })??;
    // The handshake gets what is left of the connect timeout.
    session_options.connect_timeout = connect_timeout.saturating_sub(started.elapsed());
    ClientSession::initialize(transport, config.name.clone(), session_options)
        .await
        .map_err(|error| match error.kind() {
            // The handshake's own timer saw only what was left of the budget.
            TransportErrorKind::ConnectTimeout {
                stderr_tail, hint, ..
            } => TransportError::new(
                error.server(),
                TransportErrorKind::ConnectTimeout {
                    after: connect_timeout,
                    stderr_tail: stderr_tail.clone(),
                    hint: hint.clone(),
                },
            ),
            _ => error,
        })
}
