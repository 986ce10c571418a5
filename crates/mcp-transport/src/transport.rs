//! The [`Transport`] trait every kind implements, and [`TransportError`], the
//! crate's one error type.
//!
//! A transport only moves [`JsonRpcMessage`] values; everything MCP-specific
//! (initialize, correlation, timeouts, cancellation) lives in the session so
//! each kind stays small and the same behaviour suite runs against all of them.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use async_trait::async_trait;

use crate::message::JsonRpcMessage;

/// Errors raised by transports and the session. Every variant names the
/// server it concerns; messages are lowercase.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum TransportError {
    /// The connection is gone (closed by us, or the peer went away cleanly).
    #[error("{server}: connection closed")]
    Closed { server: String },
    /// An I/O failure on the wire.
    #[error("{server}: {message}")]
    Io { server: String, message: String },
    /// A request got no answer in time (progress notifications reset the clock).
    #[error("{server}: {method} timed out after {}", fmt_duration(*after))]
    Timeout {
        server: String,
        method: String,
        after: Duration,
    },
    /// Connecting (spawn + initialize) did not finish in time.
    #[error("{server}: connect timed out after {}{}", fmt_duration(*after), fmt_tail(stderr_tail))]
    ConnectTimeout {
        server: String,
        after: Duration,
        /// The last bytes of the child's stderr (stdio only, else empty).
        stderr_tail: String,
    },
    /// The server answered with a JSON-RPC error.
    #[error("{server}: {method} failed: {message} (code {code})")]
    Rpc {
        server: String,
        method: String,
        code: i64,
        message: String,
        data: Option<Box<serde_json::Value>>,
    },
    /// The server broke the protocol (invalid message, bad result shape,
    /// a repeated pagination cursor, a list past its limits...).
    #[error("{server}: protocol error: {message}")]
    Protocol { server: String, message: String },
    /// The server's process could not be started.
    #[error("{server}: failed to start `{command}`: {message}")]
    Spawn {
        server: String,
        command: String,
        message: String,
    },
    /// The server's process exited (or closed its stdout).
    #[error("{server}: server exited ({status}){}", fmt_tail(stderr_tail))]
    ServerExited {
        server: String,
        /// The exit status as text (`exit status: 1`, `signal: 9`), or
        /// `stdout closed` when the process was still running.
        status: String,
        /// The last bytes of the child's stderr.
        stderr_tail: String,
    },
    /// A message exceeded the configured maximum size.
    #[error("{server}: message too large: more than {max} bytes")]
    MessageTooLarge { server: String, max: usize },
    /// The server answered `initialize` with a protocol version we do not know.
    #[error(
        "{server}: unsupported protocol version {version:?} (this client knows {})",
        crate::protocol::KNOWN_PROTOCOL_VERSIONS.join(", ")
    )]
    UnsupportedVersion { server: String, version: String },
    /// The transport kind is not available in this build.
    #[error("{server}: transport kind {kind} is not supported")]
    Unsupported { server: String, kind: String },
    /// An `sdk` entry names an in-process server the host did not register.
    #[error("{server}: no in-process server is registered as {name:?}")]
    SdkServerNotRegistered { server: String, name: String },
}

impl TransportError {
    /// The server this error concerns.
    pub fn server(&self) -> &str {
        match self {
            TransportError::Closed { server }
            | TransportError::Io { server, .. }
            | TransportError::Timeout { server, .. }
            | TransportError::ConnectTimeout { server, .. }
            | TransportError::Rpc { server, .. }
            | TransportError::Protocol { server, .. }
            | TransportError::Spawn { server, .. }
            | TransportError::ServerExited { server, .. }
            | TransportError::MessageTooLarge { server, .. }
            | TransportError::UnsupportedVersion { server, .. }
            | TransportError::Unsupported { server, .. }
            | TransportError::SdkServerNotRegistered { server, .. } => server,
        }
    }

    /// The child's stderr tail, when the error carries one.
    pub fn stderr_tail(&self) -> Option<&str> {
        match self {
            TransportError::ServerExited { stderr_tail, .. }
            | TransportError::ConnectTimeout { stderr_tail, .. } => Some(stderr_tail),
            _ => None,
        }
    }

    /// Whether the connection is unusable after this error (as opposed to
    /// one failed request on a healthy connection).
    pub fn is_fatal(&self) -> bool {
        !matches!(
            self,
            TransportError::Timeout { .. }
                | TransportError::Rpc { .. }
                | TransportError::Protocol { .. }
        )
    }
}

/// How much of a stderr tail goes into an error's message; the full tail
/// (up to [`STDERR_TAIL_BYTES`]) stays in the error's field.
const DISPLAYED_TAIL_CHARS: usize = 2000;

fn fmt_tail(tail: &str) -> String {
    let tail = tail.trim_end();
    if tail.is_empty() {
        return String::new();
    }
    let start = tail
        .char_indices()
        .rev()
        .nth(DISPLAYED_TAIL_CHARS)
        .map_or(0, |(index, _)| index);
    let cut = if start > 0 { "..." } else { "" };
    format!("; stderr: {cut}{}", &tail[start..])
}

fn fmt_duration(d: Duration) -> String {
    if d.subsec_millis() == 0 {
        format!("{}s", d.as_secs())
    } else {
        format!("{}ms", d.as_millis())
    }
}

/// How many bytes of a child's stderr are kept.
pub const STDERR_TAIL_BYTES: usize = 64 * 1024;

/// A bounded ring buffer of the last [`STDERR_TAIL_BYTES`] a child wrote to
/// stderr, shared between the reader task and whoever builds an error.
#[derive(Debug, Clone, Default)]
pub struct StderrTail {
    buffer: Arc<Mutex<VecDeque<u8>>>,
}

impl StderrTail {
    /// Appends bytes, dropping the oldest past the cap.
    pub fn push(&self, bytes: &[u8]) {
        let Ok(mut buffer) = self.buffer.lock() else {
            return;
        };
        let bytes = if bytes.len() > STDERR_TAIL_BYTES {
            &bytes[bytes.len() - STDERR_TAIL_BYTES..]
        } else {
            bytes
        };
        let overflow = (buffer.len() + bytes.len()).saturating_sub(STDERR_TAIL_BYTES);
        buffer.drain(..overflow);
        buffer.extend(bytes);
    }

    /// The tail as text (invalid UTF-8 replaced).
    pub fn snapshot(&self) -> String {
        let Ok(buffer) = self.buffer.lock() else {
            return String::new();
        };
        let (a, b) = buffer.as_slices();
        let mut bytes = Vec::with_capacity(a.len() + b.len());
        bytes.extend_from_slice(a);
        bytes.extend_from_slice(b);
        String::from_utf8_lossy(&bytes).into_owned()
    }
}

/// Moves JSON-RPC messages between the client session and one server.
///
/// `receive` must be cancel-safe: the session drives a transport from one
/// task and polls `receive` inside a `select!` alongside outgoing messages.
/// `send` should return quickly (hand the message to a writer) so a slow
/// wire never stops the session from reading.
#[async_trait]
pub trait Transport: Send {
    /// Sends one message. Returns once the message is handed to the wire; it
    /// does not wait for the answer.
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError>;

    /// The next message from the server; `Ok(None)` once the server closed.
    /// An error here ends the connection (the session fails every request
    /// in flight with it).
    async fn receive(&mut self) -> Result<Option<JsonRpcMessage>, TransportError>;

    /// Closes the connection gracefully (for stdio: the whole shutdown
    /// sequence; for HTTP: the session DELETE).
    async fn close(&mut self) -> Result<(), TransportError>;

    /// Short name of the kind, for errors and logs.
    fn kind(&self) -> &'static str;

    /// The child's stderr tail, for transports that run a process; the
    /// session puts it into connect errors.
    fn stderr_tail(&self) -> Option<StderrTail> {
        None
    }

    /// A handle that hands messages straight to the transport's writer, for
    /// transports whose `send` only queues onto a channel. The session sends
    /// requests through it from the caller's task, saving a hop through its
    /// driver task on every call; `None` (the default) routes every message
    /// through [`Transport::send`]. Messages sent through the handle after
    /// [`Transport::close`] began are dropped, and the handle reports the
    /// connection closed once the writer has stopped.
    fn sender(&self) -> Option<MessageSender> {
        None
    }
}

/// A cloneable handle onto a transport's outgoing queue (see
/// [`Transport::sender`]).
#[derive(Debug, Clone)]
pub struct MessageSender {
    queue: Queue,
}

#[derive(Debug, Clone)]
enum Queue {
    Channel(tokio::sync::mpsc::UnboundedSender<JsonRpcMessage>),
    Stdio(Arc<crate::outbox::Outbox>),
}

impl MessageSender {
    /// A handle onto the queue a transport's writer drains.
    pub fn new(outgoing: tokio::sync::mpsc::UnboundedSender<JsonRpcMessage>) -> Self {
        MessageSender {
            queue: Queue::Channel(outgoing),
        }
    }

    pub(crate) fn stdio(outbox: Arc<crate::outbox::Outbox>) -> Self {
        MessageSender {
            queue: Queue::Stdio(outbox),
        }
    }

    /// Queues one message; fails (handing it back) once the writer stopped.
    #[allow(clippy::result_large_err)]
    pub fn send(&self, message: JsonRpcMessage) -> Result<(), JsonRpcMessage> {
        self.send_hinted(message, true)
    }

    /// [`MessageSender::send`] with a hint: `alone` is false when other
    /// requests are in flight, so the message may wait a moment to share a
    /// write with theirs.
    #[allow(clippy::result_large_err)]
    pub(crate) fn send_hinted(
        &self,
        message: JsonRpcMessage,
        alone: bool,
    ) -> Result<(), JsonRpcMessage> {
        match &self.queue {
            Queue::Channel(outgoing) => outgoing.send(message).map_err(|e| e.0),
            Queue::Stdio(outbox) => outbox.send(message, alone),
        }
    }
}
