//! [`connect`]: from a server's config entry to an initialized
//! [`ClientSession`].
//!
//! [`open_transport`] builds the transport for the entry's kind; [`connect`]
//! adds the MCP handshake, bounded by the entry's connect timeout. The host
//! passes everything a transport needs from the outside world in
//! [`ConnectOptions`] (the environment for stdio children, its in-process
//! servers), so nothing here reads global state unless asked to.

use std::collections::BTreeMap;
use std::sync::Arc;

use mcp_config::{ServerConfig, TransportConfig};

use crate::sdk::{SdkOptions, SdkRegistry, SdkTransport};
use crate::session::{ClientSession, SessionOptions};
use crate::stdio::{StdioOptions, StdioTransport};
use crate::transport::{Transport, TransportError};

/// What [`connect`] needs beyond the config entry.
#[derive(Debug, Clone, Default)]
pub struct ConnectOptions {
    /// Session behaviour. Its timeouts are replaced by the entry's own.
    pub session: SessionOptions,
    /// The environment stdio children draw their allow-listed variables
    /// from; `None` means this process's environment.
    pub env: Option<BTreeMap<String, String>>,
    /// Stdio transport options (`base_env` is filled from `env`).
    pub stdio: StdioOptions,
    /// The host's in-process servers, for `sdk` entries.
    pub sdk_servers: Arc<SdkRegistry>,
    /// In-process transport options.
    pub sdk: SdkOptions,
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
            stdio_options.base_env = match &options.env {
                Some(env) => env.clone(),
                None => std::env::vars().collect(),
            };
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
        // The network kinds (http, sse, ws, claudeai-proxy) are built here
        // by their own modules.
        other => Err(TransportError::Unsupported {
            server,
            kind: other.kind().to_string(),
        }),
    }
}

/// Opens the transport for `config` and runs the MCP handshake, all within
/// the entry's connect timeout.
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
        .map_err(|_| TransportError::ConnectTimeout {
            server: config.name.clone(),
            after: connect_timeout,
            stderr_tail: String::new(),
        })??;
    // The handshake gets what is left of the connect timeout.
    session_options.connect_timeout = connect_timeout.saturating_sub(started.elapsed());
    ClientSession::initialize(transport, config.name.clone(), session_options)
        .await
        .map_err(|error| match error {
            TransportError::ConnectTimeout {
                server,
                stderr_tail,
                ..
            } => TransportError::ConnectTimeout {
                server,
                after: connect_timeout,
                stderr_tail,
            },
            other => other,
        })
}
