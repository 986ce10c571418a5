//! The [`Transport`] trait every kind implements.

use async_trait::async_trait;

use crate::message::JsonRpcMessage;

/// Errors raised by transports and the session.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    #[error("{server}: connection closed")]
    Closed { server: String },
    #[error("{server}: {message}")]
    Io { server: String, message: String },
}

/// Moves JSON-RPC messages between the client session and one server.
///
/// `receive` must be cancel-safe: the session drives a transport from one
/// task and polls `receive` inside a `select!` alongside outgoing messages.
#[async_trait]
pub trait Transport: Send {
    /// Sends one message. Returns once the message is handed to the wire; it
    /// does not wait for the answer.
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError>;

    /// The next message from the server; `Ok(None)` once the server closed.
    async fn receive(&mut self) -> Result<Option<JsonRpcMessage>, TransportError>;

    /// Closes the connection gracefully (for stdio: the whole shutdown
    /// sequence; for HTTP: the session DELETE).
    async fn close(&mut self) -> Result<(), TransportError>;

    /// Short name of the kind, for errors and logs.
    fn kind(&self) -> &'static str;
}
