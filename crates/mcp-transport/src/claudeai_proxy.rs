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

use std::sync::Arc;

use async_trait::async_trait;
use mcp_oauth::AuthProvider;

use crate::http::HttpOptions;
use crate::message::JsonRpcMessage;
use crate::streamable_http::StreamableHttpTransport;
use crate::transport::{Transport, TransportError};

/// The header naming the hosted server.
pub const SERVER_ID_HEADER: &str = "X-Mcp-Server-Id";

/// A connection to a claude.ai-hosted server through the proxy.
#[derive(Debug)]
pub struct ClaudeAiProxyTransport {
    inner: StreamableHttpTransport,
}

impl ClaudeAiProxyTransport {
    /// Prepares the connection; `credentials` supplies the proxy's
    /// `Authorization`.
    pub async fn connect(
        server: &str,
        url: &str,
        id: &str,
        credentials: Option<Arc<dyn AuthProvider>>,
        connect_timeout: std::time::Duration,
    ) -> Result<Self, TransportError> {
        let mut options = HttpOptions::new(server, url);
        options
            .headers
            .insert(SERVER_ID_HEADER.to_owned(), id.to_owned());
        options.auth = credentials;
        options.connect_timeout = connect_timeout;
        let inner = StreamableHttpTransport::connect_as(options, "claudeai-proxy").await?;
        Ok(ClaudeAiProxyTransport { inner })
    }
}

#[async_trait]
impl Transport for ClaudeAiProxyTransport {
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError> {
        self.inner.send(message).await
    }

    async fn receive(&mut self) -> Result<Option<JsonRpcMessage>, TransportError> {
        self.inner.receive().await
    }

    async fn close(&mut self) -> Result<(), TransportError> {
        self.inner.close().await
    }

    fn kind(&self) -> &'static str {
        "claudeai-proxy"
    }
}
