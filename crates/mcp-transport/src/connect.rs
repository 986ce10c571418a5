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

#[cfg(feature = "remote")]
use mcp_config::RemoteConfig;
use mcp_config::secret::SecretStore;
use mcp_config::{ServerConfig, TransportConfig};
#[cfg(feature = "oauth")]
use mcp_oauth::AuthProvider;

#[cfg(feature = "oauth")]
use crate::http::AuthProviders;
#[cfg(feature = "remote")]
use crate::http::HttpOptions;
#[cfg(feature = "sse")]
use crate::sse::SseTransport;
#[cfg(feature = "streamable-http")]
use crate::streamable_http::StreamableHttpTransport;
#[cfg(feature = "ws")]
use crate::ws::WsTransport;

use crate::era::EraMemory;
use crate::error::{TransportError, TransportErrorKind};
use crate::protocol::is_modern;
#[cfg(feature = "sdk")]
use crate::sdk::{SdkOptions, SdkRegistry, SdkTransport};
use crate::session::{ClientSession, SessionOptions};
#[cfg(feature = "stdio")]
use crate::stdio::{StdioOptions, StdioTransport};
use crate::transport::Transport;

/// What [`connect`] needs beyond the config entry. Its `Debug` names the
/// variables of `env`, never their values.
#[non_exhaustive]
#[derive(Clone, Default)]
pub struct ConnectOptions {
    /// Session behaviour. Its timeouts are replaced by the entry's own.
    pub session: SessionOptions,
    /// The environment stdio children draw their allow-listed variables
    /// from (a host passes its own, typically `std::env::vars()`; empty by
    /// default, so children get only their entry's `env`).
    pub env: BTreeMap<String, String>,
    /// Stdio transport options (`env` stands in for their `base_env`).
    #[cfg(feature = "stdio")]
    pub stdio: StdioOptions,
    /// The host's in-process servers, for `sdk` entries.
    #[cfg(feature = "sdk")]
    pub sdk_servers: Arc<SdkRegistry>,
    /// In-process transport options.
    #[cfg(feature = "sdk")]
    pub sdk: SdkOptions,
    /// Credentials for remote servers (streamable HTTP and legacy SSE), per
    /// server; `None` sends no `Authorization`.
    #[cfg(feature = "oauth")]
    pub auth: Option<Arc<dyn AuthProviders>>,
    /// The host's claude.ai credentials, for `claudeai-proxy` entries.
    #[cfg(feature = "oauth")]
    pub claudeai_credentials: Option<Arc<dyn AuthProvider>>,
    /// What earlier connects learned about each configuration's era: a
    /// server that answered `initialize` before is not probed with
    /// `server/discover` first, and every connect records what it found.
    /// Only a session that may go modern uses it: one held to older
    /// revisions (or pinned) never probes, so it learns nothing either.
    /// `None` (the default) keeps nothing: every connect probes.
    pub eras: Option<Arc<EraMemory>>,
    /// Where `${secret:NAME}` in an entry's `env` and `headers` values is
    /// read from when it connects (`mcp_config::secret::resolve`). `None`
    /// (the default): an entry that names a secret fails to connect with
    /// [`TransportErrorKind::NoSecretStore`]; others are unaffected.
    pub secrets: Option<Arc<dyn SecretStore>>,
}

impl ConnectOptions {
    /// Options with no environment, no in-process servers, no credentials and default session behaviour: the same as `ConnectOptions::default()`.
    pub fn new() -> Self {
        ConnectOptions::default()
    }

    /// Sets the session behaviour (its timeouts are still replaced by each entry's own).
    #[must_use]
    pub fn with_session(mut self, session: SessionOptions) -> Self {
        self.session = session;
        self
    }

    /// Sets the environment stdio children draw their allow-listed variables from (typically `std::env::vars().collect()`).
    #[must_use]
    pub fn with_env(mut self, env: BTreeMap<String, String>) -> Self {
        self.env = env;
        self
    }

    #[cfg(feature = "stdio")]
    /// Sets the stdio transport options.
    #[must_use]
    pub fn with_stdio(mut self, stdio: StdioOptions) -> Self {
        self.stdio = stdio;
        self
    }

    #[cfg(feature = "sdk")]
    /// Sets the in-process servers `sdk` entries name.
    #[must_use]
    pub fn with_sdk_servers(mut self, sdk_servers: Arc<SdkRegistry>) -> Self {
        self.sdk_servers = sdk_servers;
        self
    }

    #[cfg(feature = "sdk")]
    /// Sets the in-process transport options.
    #[must_use]
    pub fn with_sdk(mut self, sdk: SdkOptions) -> Self {
        self.sdk = sdk;
        self
    }

    #[cfg(feature = "oauth")]
    /// Sets who supplies credentials for remote servers.
    #[must_use]
    pub fn with_auth(mut self, auth: Arc<dyn AuthProviders>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sets the memory of server eras that connects consult and update
    /// ([`ConnectOptions::eras`]).
    #[must_use]
    pub fn with_eras(mut self, eras: Arc<EraMemory>) -> Self {
        self.eras = Some(eras);
        self
    }

    /// Sets the store `${secret:NAME}` references are read from
    /// ([`ConnectOptions::secrets`]).
    #[must_use]
    pub fn with_secrets(mut self, secrets: Arc<dyn SecretStore>) -> Self {
        self.secrets = Some(secrets);
        self
    }

    #[cfg(feature = "oauth")]
    /// Sets the host's claude.ai credentials, for `claudeai-proxy` entries.
    #[must_use]
    pub fn with_claudeai_credentials(
        mut self,
        claudeai_credentials: Arc<dyn AuthProvider>,
    ) -> Self {
        self.claudeai_credentials = Some(claudeai_credentials);
        self
    }
}

impl std::fmt::Debug for ConnectOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut debug = f.debug_struct("ConnectOptions");
        debug
            .field("session", &self.session)
            .field("env", &self.env.keys().collect::<Vec<_>>());
        #[cfg(feature = "stdio")]
        debug.field("stdio", &self.stdio);
        #[cfg(feature = "sdk")]
        debug
            .field("sdk_servers", &self.sdk_servers)
            .field("sdk", &self.sdk);
        #[cfg(feature = "oauth")]
        debug
            .field("auth", &self.auth)
            .field("claudeai_credentials", &self.claudeai_credentials);
        debug.field("eras", &self.eras.is_some());
        debug.field("secrets", &self.secrets.as_ref().map(|s| s.kind()));
        debug.finish()
    }
}

/// Builds the transport for `config`'s kind without initializing it. A
/// kind this build compiled out fails with
/// [`TransportErrorKind::KindNotCompiled`] naming the cargo feature.
pub async fn open_transport(
    config: &ServerConfig,
    options: &ConnectOptions,
) -> Result<Box<dyn Transport>, TransportError> {
    let server = config.name.clone();
    // With every kind compiled out, `options` serves nothing.
    #[cfg(not(any(feature = "stdio", feature = "sdk", feature = "remote")))]
    let _ = options;
    match &config.transport {
        #[cfg(feature = "stdio")]
        TransportConfig::Stdio(stdio) => Ok(Box::new(
            StdioTransport::spawn_with_base_env(server, stdio, &options.stdio, &options.env)
                .await?,
        )),
        #[cfg(not(feature = "stdio"))]
        TransportConfig::Stdio(_) => not_compiled(&server, "stdio", "stdio"),
        #[cfg(feature = "sdk")]
        TransportConfig::Sdk { name } => Ok(Box::new(SdkTransport::connect_registered(
            server,
            name,
            &options.sdk_servers,
            options.sdk,
        )?)),
        #[cfg(not(feature = "sdk"))]
        TransportConfig::Sdk { .. } => not_compiled(&server, "sdk (in-process)", "sdk"),
        #[cfg(feature = "streamable-http")]
        TransportConfig::Http(remote) => Ok(Box::new(
            StreamableHttpTransport::connect(remote_options(config, remote, options)?).await?,
        )),
        #[cfg(not(feature = "streamable-http"))]
        TransportConfig::Http(_) => not_compiled(&server, "streamable HTTP", "streamable-http"),
        #[cfg(feature = "sse")]
        TransportConfig::Sse(remote) => Ok(Box::new(
            SseTransport::connect(remote_options(config, remote, options)?).await?,
        )),
        #[cfg(not(feature = "sse"))]
        TransportConfig::Sse(_) => not_compiled(&server, "legacy SSE", "sse"),
        #[cfg(feature = "ws")]
        TransportConfig::Ws(remote) => {
            // WebSocket entries carry no OAuth.
            let mut ws = remote_options(config, remote, options)?;
            ws.auth = None;
            Ok(Box::new(WsTransport::connect(ws).await?))
        }
        #[cfg(not(feature = "ws"))]
        TransportConfig::Ws(_) => not_compiled(&server, "WebSocket", "ws"),
        #[cfg(feature = "claudeai-proxy")]
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
        #[cfg(not(feature = "claudeai-proxy"))]
        TransportConfig::ClaudeAiProxy(_) => {
            not_compiled(&server, "claude.ai proxy", "claudeai-proxy")
        }
    }
}

/// The refusal of an entry whose kind this build compiled out.
#[cfg(not(all(
    feature = "stdio",
    feature = "sdk",
    feature = "streamable-http",
    feature = "sse",
    feature = "ws",
    feature = "claudeai-proxy"
)))]
fn not_compiled(
    server: &str,
    kind: &'static str,
    feature: &'static str,
) -> Result<Box<dyn Transport>, TransportError> {
    Err(TransportError::new(
        server,
        TransportErrorKind::KindNotCompiled { kind, feature },
    ))
}

/// The HTTP options of a remote entry: its url, headers, helper, connect
/// timeout and the host's credentials for it. Without `tls`, an `https` or
/// `wss` url is refused here, naming the feature, before anything is
/// opened (reqwest would only say its scheme is not `http`).
#[cfg(feature = "remote")]
fn remote_options(
    config: &ServerConfig,
    remote: &RemoteConfig,
    options: &ConnectOptions,
) -> Result<HttpOptions, TransportError> {
    #[cfg(not(feature = "tls"))]
    {
        let scheme = remote.url.split_once(':').map_or("", |(scheme, _)| scheme);
        if let Some(secure) = ["https", "wss"]
            .into_iter()
            .find(|secure| scheme.eq_ignore_ascii_case(secure))
        {
            return Err(TransportError::new(
                &config.name,
                TransportErrorKind::KindNotCompiled {
                    kind: secure,
                    feature: "tls",
                },
            ));
        }
    }
    Ok(HttpOptions {
        server: config.name.clone(),
        url: remote.url.clone(),
        headers: remote.headers.clone(),
        headers_helper: remote.headers_helper.clone(),
        auth: options
            .auth
            .as_ref()
            .and_then(|auth| auth.provider_for(config)),
        connect_timeout: config.timeouts.connect,
    })
}

/// `config` with its secrets put in, or `None` when it names none. The
/// store is asked on a blocking thread (a D-Bus round trip, a system call).
async fn resolve_secrets(
    config: &ServerConfig,
    options: &ConnectOptions,
) -> Result<Option<ServerConfig>, TransportError> {
    let names = mcp_config::secret::referenced_secrets(config);
    let Some(first) = names.first() else {
        return Ok(None);
    };
    let Some(store) = options.secrets.clone() else {
        return Err(TransportError::new(
            &*config.name,
            TransportErrorKind::NoSecretStore {
                secret: first.to_string(),
            },
        ));
    };
    let owned = config.clone();
    let resolved =
        tokio::task::spawn_blocking(move || mcp_config::secret::resolve(&owned, store.as_ref()))
            .await
            .map_err(|_| {
                TransportError::new(
                    &*config.name,
                    TransportErrorKind::Secret {
                        message: "reading secrets stopped before it finished".to_owned(),
                    },
                )
            })?;
    resolved.map(Some).map_err(|error| {
        TransportError::new(
            &*config.name,
            TransportErrorKind::Secret {
                message: error.to_string(),
            },
        )
    })
}

/// Opens the transport for `config` and runs the MCP handshake, all within
/// the entry's connect timeout (so run interactive logins before calling
/// it; see the module docs).
pub async fn connect(
    config: &ServerConfig,
    options: &ConnectOptions,
) -> Result<ClientSession, TransportError> {
    let mut session_options = options.session.clone();
    session_options.connect_timeout = config.timeouts.connect;
    session_options.request_timeout = config.timeouts.request;
    session_options.tool_call_timeout = config.timeouts.tool_call;
    #[cfg(feature = "otel")]
    if let TransportConfig::Http(remote)
    | TransportConfig::Sse(remote)
    | TransportConfig::Ws(remote) = &config.transport
    {
        session_options.telemetry = session_options.telemetry.with_server_url(&remote.url);
    }
    // Only a session that may go modern determines the era: one held to
    // older revisions never probes, and its `initialize` says nothing of
    // whether the server also speaks the modern era.
    let determines_era =
        is_modern(&session_options.protocol_version) && !session_options.pin_protocol;
    let era = options
        .eras
        .as_deref()
        .filter(|_| determines_era)
        .and_then(|eras| Some((eras, EraMemory::key(config)?)));
    if let Some((eras, key)) = &era {
        session_options.assume_legacy |= eras.assumes_legacy(key);
    }
    #[cfg(feature = "otel")]
    {
        use opentelemetry::context::FutureExt as _;
        let step = crate::telemetry::steps::connecting(
            config.transport.kind().as_str(),
            &session_options.telemetry,
        );
        // Boxed as the steps inside are: the span's context beside them
        // would otherwise grow every connect future held at once.
        let outcome = Box::pin(establish(config, options, session_options, era))
            .with_context(step.context())
            .await;
        match &outcome {
            Ok(session) => {
                crate::telemetry::steps::connected(
                    &step,
                    session.protocol_version(),
                    session.session_id(),
                );
                step.finish(None);
            }
            Err(error) => step.finish(Some(error)),
        }
        outcome
    }
    // Boxed for the same reason as the steps inside.
    #[cfg(not(feature = "otel"))]
    Box::pin(establish(config, options, session_options, era)).await
}

/// Opens the transport and runs the handshake within the connect timeout
/// (the body of [`connect`], which telemetry wraps in its span).
async fn establish(
    config: &ServerConfig,
    options: &ConnectOptions,
    mut session_options: SessionOptions,
    era: Option<(&EraMemory, String)>,
) -> Result<ClientSession, TransportError> {
    let connect_timeout = config.timeouts.connect;
    let started = tokio::time::Instant::now();
    // The one place secrets are put in: the copy with values lives only
    // for this connect; `config` (and every listing of it) keeps the
    // references.
    // Boxed like the steps below: the future and the copy stay off the
    // connect future's own state.
    let resolved = tokio::time::timeout(connect_timeout, Box::pin(resolve_secrets(config, options)))
        .await
        .map_err(|_| {
            TransportError::new(
                &*config.name,
                TransportErrorKind::Secret {
                    message: format!(
                        "the secret store did not answer within {connect_timeout:?} (a locked keyring waiting for its password?)"
                    ),
                },
            )
        })??
        .map(Box::new);
    let config = resolved.as_deref().unwrap_or(config);
    // Both steps are boxed: their state machines are several kilobytes,
    // and a host connecting a hundred servers at once would otherwise hold
    // the largest of them for every connect until the last one is done.
    let transport =
        tokio::time::timeout(connect_timeout, Box::pin(open_transport(config, options)))
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
    let session = Box::pin(ClientSession::initialize(
        transport,
        config.name.clone(),
        session_options,
    ))
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
    })?;
    if let Some((eras, key)) = &era {
        eras.record(key, !is_modern(session.protocol_version()));
    }
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A host whose build left a kind out is told which feature to turn
    /// on.
    #[test]
    fn a_kind_compiled_out_names_its_feature() {
        let kind = TransportErrorKind::KindNotCompiled {
            kind: "WebSocket",
            feature: "ws",
        };
        assert_eq!(
            kind.to_string(),
            "this build has no WebSocket transport: enable the `ws` feature of mcp-transport (or mcp-catalog)"
        );
    }

    /// Connecting many servers at once holds one connect future each; the
    /// future itself stays small (its steps are boxed while they run).
    #[test]
    fn a_connect_future_is_small() {
        let config = ServerConfig::new(
            "small",
            TransportConfig::Stdio(mcp_config::StdioConfig::new("true")),
        );
        let options = ConnectOptions::default();
        let future = connect(&config, &options);
        let size = std::mem::size_of_val(&future);
        assert!(size <= 1024, "the connect future is {size} bytes");
    }

    /// Without `tls`, an `https` or `wss` entry is refused before anything
    /// is opened, and a plain-http one is not (run with
    /// `--no-default-features --features stdio,streamable-http`).
    #[cfg(all(feature = "streamable-http", not(feature = "tls")))]
    #[tokio::test]
    async fn a_secure_url_is_refused_without_the_tls_feature() {
        async fn refusal(url: &str) -> Option<TransportErrorKind> {
            let config = ServerConfig::new(
                "remote",
                TransportConfig::Http(mcp_config::RemoteConfig::new(url)),
            );
            open_transport(&config, &ConnectOptions::default())
                .await
                .err()
                .map(|error| error.kind().clone())
                .filter(|kind| matches!(kind, TransportErrorKind::KindNotCompiled { .. }))
        }
        for (url, kind) in [
            ("https://127.0.0.1:9/mcp", Some("https")),
            ("HTTPS://127.0.0.1:9/mcp", Some("https")),
            ("wss://127.0.0.1:9/mcp", Some("wss")),
            ("http://127.0.0.1:9/mcp", None),
        ] {
            let expected = kind.map(|kind| TransportErrorKind::KindNotCompiled {
                kind,
                feature: "tls",
            });
            assert_eq!(refusal(url).await, expected, "{url}");
        }
        let message = TransportError::new(
            "remote",
            TransportErrorKind::KindNotCompiled {
                kind: "https",
                feature: "tls",
            },
        )
        .to_string();
        assert!(message.contains("enable the `tls` feature"), "{message}");
    }

    /// Without `ws`, a WebSocket entry is refused before anything is
    /// opened (run with `--no-default-features --features stdio`).
    #[cfg(not(feature = "ws"))]
    #[tokio::test]
    async fn a_websocket_entry_is_refused_without_the_ws_feature() {
        let config = ServerConfig::new(
            "remote",
            TransportConfig::Ws(mcp_config::RemoteConfig::new("ws://127.0.0.1:9/mcp")),
        );
        let error = open_transport(&config, &ConnectOptions::default())
            .await
            .err()
            .map(|error| error.kind().clone());
        assert_eq!(
            error,
            Some(TransportErrorKind::KindNotCompiled {
                kind: "WebSocket",
                feature: "ws"
            })
        );
    }
}
