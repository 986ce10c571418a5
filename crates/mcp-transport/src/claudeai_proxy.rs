//! claude.ai proxy: a server hosted by claude.ai, reached through the
//! proxy's streamable HTTP endpoint.
//!
//! Exactly what goes on the wire: streamable HTTP (see
//! [`crate::streamable_http`]) to the entry's `url`, unchanged, with on
//! every request
//!
//! - `X-Mcp-Server-Id: <id>`: the entry's `id`, naming the hosted server
//!   the proxy forwards to;
//! - `Authorization`: whatever the host's [`mcp_oauth::AuthProvider`]
//!   returns (the host's claude.ai credentials, typically
//!   `Bearer <token>`); a 401 asks that provider once, as for any HTTP
//!   server. Without a provider no `Authorization` is sent.
//!
//! No other header is added: the proxy needs nothing else, and the server's
//! own credentials stay with claude.ai.
//!
//! The proxy is plain streamable HTTP, so [`connect`] only configures a
//! [`StreamableHttpTransport`] (whose kind then reads `claudeai-proxy`).

use std::sync::Arc;
use std::time::Duration;

use mcp_oauth::AuthProvider;

use crate::error::TransportError;
use crate::http::HttpOptions;
use crate::streamable_http::StreamableHttpTransport;

/// The header naming the hosted server.
pub(crate) const SERVER_ID_HEADER: &str = "X-Mcp-Server-Id";

/// Prepares a connection to the claude.ai-hosted server `id` through the
/// proxy at `url`; `credentials` supplies the proxy's `Authorization`.
pub(crate) async fn connect(
    server: &str,
    url: &str,
    id: &str,
    credentials: Option<Arc<dyn AuthProvider>>,
    connect_timeout: Duration,
) -> Result<StreamableHttpTransport, TransportError> {
    let mut options = HttpOptions::new(server, url);
    options
        .headers
        .insert(SERVER_ID_HEADER.to_owned(), id.to_owned());
    options.auth = credentials;
    options.connect_timeout = connect_timeout;
    StreamableHttpTransport::connect_as(options, "claudeai-proxy").await
}
