//! What the HTTP-based transports (streamable HTTP, legacy SSE, the claude.ai
//! proxy; WebSocket for its handshake headers) share: the options a host
//! passes, the client, and reqwest failures as transport errors, here;
//! per-request headers with the 401/403 challenge retry in [`headers`];
//! reading answers in [`status`]; server-sent events as JSON-RPC messages
//! in [`sse_frame`]. The error answers a transport makes up for a request
//! whose real answer is lost are [`crate::failure`]'s.
//!
//! Header values are secrets: they are never logged and never appear in an
//! error message.

// Each remote kind uses its own part of this module; with some of them
// compiled out, the rest goes unused.
#![cfg_attr(
    not(all(feature = "streamable-http", feature = "sse", feature = "ws")),
    allow(dead_code)
)]

#[cfg(feature = "remote")]
#[cfg(feature = "remote")]
mod headers;
#[cfg(feature = "remote")]
mod sse_frame;
#[cfg(feature = "remote")]
mod status;

#[cfg(feature = "remote")]
use std::collections::BTreeMap;
#[cfg(feature = "oauth")]
use std::sync::Arc;
#[cfg(feature = "remote")]
use std::time::Duration;

#[cfg(feature = "oauth")]
use mcp_oauth::AuthProvider;

// Each remote kind uses its own part of these; with some of them
// compiled out, the rest go unused.
#[cfg(feature = "remote")]
#[allow(unused_imports)]
pub(crate) use headers::{RequestHeaders, to_header_map};
#[cfg(all(fuzzing, feature = "remote"))]
pub use sse_frame::decode_sse_body;
#[cfg(feature = "remote")]
#[allow(unused_imports)]
pub(crate) use sse_frame::{decode_payload, is_message_event, sse_events, too_large_answers};
#[cfg(feature = "remote")]
#[allow(unused_imports)]
pub(crate) use status::{
    excerpt, is_gateway_failure, media_type, read_body_capped, read_refusal, unexpected_status,
};

#[cfg(feature = "remote")]
use crate::codec::Codec;
#[cfg(feature = "remote")]
use crate::error::TransportError;
#[cfg(feature = "remote")]
use crate::error::{HttpFailure, TransportErrorKind};
#[cfg(feature = "remote")]
use crate::message::JsonRpcMessage;

#[cfg(feature = "remote")]
/// Everything an HTTP-based transport needs to reach one server.
#[non_exhaustive]
#[derive(Clone)]
pub struct HttpOptions {
    /// The server's configured name, used in every error.
    pub server: String,
    /// The MCP endpoint (streamable HTTP) or the SSE url (legacy SSE).
    pub url: String,
    /// Static headers sent with every request; values are secrets.
    pub headers: BTreeMap<String, String>,
    /// A command whose stdout is a JSON object of extra headers.
    pub headers_helper: Option<String>,
    /// Supplies `Authorization` and handles 401/403 challenges.
    pub auth: Option<Arc<dyn AuthProvider>>,
    /// Limit for establishing a connection (TCP + TLS) and, for legacy SSE,
    /// for the `endpoint` event.
    pub connect_timeout: Duration,
}

#[cfg(feature = "remote")]
impl HttpOptions {
    /// Options with no headers, no helper, no auth and the default connect
    /// timeout.
    pub fn new(server: impl Into<String>, url: impl Into<String>) -> Self {
        HttpOptions {
            server: server.into(),
            url: url.into(),
            headers: BTreeMap::new(),
            headers_helper: None,
            auth: None,
            connect_timeout: mcp_config::limits::DEFAULT_CONNECT_TIMEOUT,
        }
    }

    /// Sets the static headers sent with every request.
    #[must_use]
    pub fn with_headers(mut self, headers: BTreeMap<String, String>) -> Self {
        self.headers = headers;
        self
    }

    /// Sets the command whose stdout is a JSON object of extra headers.
    #[must_use]
    pub fn with_headers_helper(mut self, headers_helper: impl Into<String>) -> Self {
        self.headers_helper = Some(headers_helper.into());
        self
    }

    /// Sets who supplies `Authorization` and answers 401/403 challenges.
    #[must_use]
    pub fn with_auth(mut self, auth: Arc<dyn AuthProvider>) -> Self {
        self.auth = Some(auth);
        self
    }

    /// Sets the limit for establishing a connection.
    #[must_use]
    pub fn with_connect_timeout(mut self, connect_timeout: Duration) -> Self {
        self.connect_timeout = connect_timeout;
        self
    }
}

#[cfg(feature = "remote")]
impl std::fmt::Debug for HttpOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        // Header values never reach a log: only the names.
        f.debug_struct("HttpOptions")
            .field("server", &self.server)
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("headers_helper", &self.headers_helper.is_some())
            .field("auth", &self.auth.is_some())
            .field("connect_timeout", &self.connect_timeout)
            .finish()
    }
}

#[cfg(feature = "oauth")]
/// Chooses the credentials for each remote server the host connects to
/// (typically an OAuth client keyed by server name and url).
pub trait AuthProviders: Send + Sync + std::fmt::Debug {
    /// The provider for `server`, or `None` to send no `Authorization`.
    fn provider_for(&self, server: &mcp_config::ServerConfig) -> Option<Arc<dyn AuthProvider>>;
}

#[cfg(feature = "remote")]
pub(crate) fn io_error(server: &str, message: impl Into<String>) -> TransportError {
    TransportError::io(server, message)
}

#[cfg(feature = "remote")]
/// Builds the HTTP client: rustls, connect timeout, no overall timeout (SSE
/// streams live as long as the session), and redirects followed only within
/// the server's origin, so headers never travel to another one.
pub(crate) fn build_client(options: &HttpOptions) -> Result<reqwest::Client, TransportError> {
    reqwest::Client::builder()
        .connect_timeout(options.connect_timeout)
        .redirect(mcp_oauth::protocol::same_origin_only())
        .build()
        .map_err(|e| {
            io_error(
                &options.server,
                format!("cannot build the HTTP client: {e}"),
            )
            .with_source(e)
        })
}

#[cfg(feature = "remote")]
/// Whether hyper, underneath reqwest, saw the connection end before a
/// complete answer.
fn closed_unanswered(e: &(dyn std::error::Error + 'static)) -> bool {
    let mut source = Some(e);
    while let Some(s) = source {
        let hung_up = s
            .downcast_ref::<hyper::Error>()
            .is_some_and(|h| h.is_incomplete_message() || h.is_closed() || h.is_canceled());
        if hung_up {
            return true;
        }
        source = s.source();
    }
    false
}

#[cfg(feature = "remote")]
/// The text of the innermost cause of `e` (empty when it has none): the
/// outer layers name the url, whose query may hold a token.
fn innermost_cause(e: &(dyn std::error::Error + 'static)) -> String {
    let mut source = e.source();
    let mut detail = String::new();
    while let Some(s) = source {
        detail = s.to_string();
        source = s.source();
    }
    detail
}

#[cfg(feature = "remote")]
/// A reqwest error as a transport error, without the url (whose query may
/// hold a token): its [`HttpFailure`] and the innermost cause's text.
pub(crate) fn reqwest_error(server: &str, e: reqwest::Error) -> TransportError {
    let failure = if e.is_connect() {
        HttpFailure::CannotConnect
    } else if closed_unanswered(&e) {
        HttpFailure::ClosedUnanswered
    } else if e.is_redirect() {
        HttpFailure::Redirect
    } else if e.is_timeout() {
        HttpFailure::Timeout
    } else if e.is_body() || e.is_decode() {
        HttpFailure::Body
    } else {
        HttpFailure::Request
    };
    let detail = innermost_cause(&e);
    TransportError::new(server, TransportErrorKind::Http { failure, detail })
}

#[cfg(feature = "remote")]
/// Encodes a message as its JSON text.
pub(crate) fn encode(message: &JsonRpcMessage) -> String {
    encode_serialized(message)
}

#[cfg(feature = "remote")]
/// Encodes anything that serialises as one message (a request written
/// from borrows) as its JSON text.
pub(crate) fn encode_serialized<T: serde::Serialize>(message: &T) -> String {
    // Room for a modern request with its `_meta` (about 400 bytes), so
    // the buffer is not moved twice on the way.
    let mut out = Vec::with_capacity(512);
    Codec::encode_serialized_into(message, &mut out);
    // serde_json writes UTF-8, so this takes the buffer without a copy.
    String::from_utf8(out).unwrap_or_else(|e| String::from_utf8_lossy(e.as_bytes()).into_owned())
}

#[cfg(feature = "remote")]
/// Runs `exchange`, failing with an error naming `what` when it takes
/// longer than `limit`: a server that takes nothing must not hold the
/// session's driver forever.
pub(crate) async fn within<T>(
    server: &str,
    what: &str,
    limit: Duration,
    exchange: impl std::future::Future<Output = Result<T, TransportError>>,
) -> Result<T, TransportError> {
    tokio::time::timeout(limit, exchange)
        .await
        .unwrap_or_else(|_| {
            Err(io_error(
                server,
                format!("{what}: no answer within {} ms", limit.as_millis()),
            ))
        })
}
