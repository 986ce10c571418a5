//! The one error type of this crate.

use std::time::Duration;

/// Why a catalog could not be built or a call could not be made. Clone, so
/// one failed in-flight build can answer every caller that shared it.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CatalogError {
    /// A server marked `required` failed, which fails the whole catalog.
    #[error("required server {server:?} failed: {reason}")]
    RequiredServerFailed { server: String, reason: String },
    /// Connecting to a server failed or timed out.
    #[error("server {server:?}: connect failed: {reason}")]
    Connect { server: String, reason: String },
    /// A request to a connected server failed or timed out.
    #[error("server {server:?}: {operation} failed: {reason}")]
    Request {
        server: String,
        operation: String,
        reason: String,
    },
    /// The server is paused after consecutive failures.
    #[error(
        "server {server:?} is paused after {failures} consecutive failures; next try at {retry_at} (in {} s)",
        retry_in.as_secs().max(1)
    )]
    Paused {
        server: String,
        failures: u32,
        /// Wall-clock time of the next try, RFC 3339 UTC.
        retry_at: String,
        retry_in: Duration,
    },
    /// No tool of that name is in the catalog.
    #[error("unknown tool {name:?}")]
    UnknownTool { name: String },
    /// The arguments do not match the tool's input schema.
    #[error("invalid arguments for tool {tool:?} at {path}: {message}")]
    InvalidArguments {
        tool: String,
        /// JSON pointer of the failing value (`/` for the whole object).
        path: String,
        message: String,
    },
    /// The server is not configured (or was removed) in this session.
    #[error("server {server:?} is not configured in this session")]
    UnknownServer { server: String },
    /// The runtime was shut down.
    #[error("session runtime {session:?} is shut down")]
    ShutDown { session: String },
}
