//! The [`Transport`] trait every kind implements.
//!
//! A transport only moves [`JsonRpcMessage`] values; everything MCP-specific
//! (initialize, correlation, timeouts, cancellation) lives in the session so
//! each kind stays small and the same behaviour suite runs against all of them.

use std::sync::Arc;

use async_trait::async_trait;

use crate::codec::Codec;
use crate::error::TransportError;
use crate::message::{Incoming, JsonRpcMessage, RequestId};
use crate::request_meta::RequestMeta;
use crate::stderr_tail::StderrTail;

/// Moves JSON-RPC messages between the client session and one server.
///
/// Four methods: `send`, `receive`, `close`, and [`Transport::info`], what
/// the kind is and what it offers, as data the session reads once.
/// `receive` must be cancel-safe: the session drives a transport from one
/// task and polls `receive` inside a `select!` alongside outgoing messages.
/// `send` should return quickly (hand the message to a writer) so a slow
/// wire never stops the session from reading.
#[async_trait]
pub trait Transport: Send {
    /// Sends one message. Returns once the message is handed to the wire; it
    /// does not wait for the answer.
    async fn send(&mut self, message: JsonRpcMessage) -> Result<(), TransportError>;

    /// Appends the next messages from the server to `out` and returns
    /// `true`, or returns `false` once the server closed. A transport that
    /// has several messages at hand appends them all, so a burst of
    /// answers costs the driver one wake-up, and may leave successful
    /// results undecoded ([`Incoming::Answer`]) for their callers to decode
    /// into the type they asked for. An error ends the connection (the
    /// session fails every request in flight with it). Cancel-safe:
    /// nothing is appended unless the call completes.
    async fn receive(&mut self, out: &mut Vec<Incoming>) -> Result<bool, TransportError>;

    /// Closes the connection gracefully (for stdio: the whole shutdown
    /// sequence; for HTTP: the session DELETE).
    async fn close(&mut self) -> Result<(), TransportError>;

    /// What the kind is and what it offers the session.
    fn info(&self) -> TransportInfo;
}

/// What a transport is and offers, read by the session once when it
/// starts: made with [`TransportInfo::new`] and the `with_*` methods.
#[non_exhaustive]
#[derive(Debug, Clone)]
pub struct TransportInfo {
    /// Short name of the kind, for errors and logs.
    pub kind: &'static str,
    /// The child's stderr tail, for transports that run a process; the
    /// session puts it into connect errors.
    pub stderr_tail: Option<StderrTail>,
    /// A handle onto the transport's outgoing queue, for transports whose
    /// `send` only queues: the session sends requests through it from the
    /// caller's task, saving a hop through its driver task on every call.
    /// Messages sent through it after [`Transport::close`] began are
    /// dropped, and it reports the connection closed once the writer has
    /// stopped. `None`: every message goes through [`Transport::send`].
    pub sender: Option<MessageSender>,
    /// A handle that sends each request of a session at 2026-07-28 or
    /// later straight from the caller's task, written from borrows with
    /// the session's `_meta` spliced in, for transports on which such a
    /// request stands alone (streamable HTTP posts each on its own).
    pub modern_sender: Option<ModernSender>,
    /// The table of each tool's `x-mcp-header` parameters (and which tools
    /// are safe to re-issue) the transport reads on every `tools/call`, for
    /// transports that mirror parameters into headers. The session fills
    /// it after each `tools/list` and then leaves out the tools whose
    /// annotations are invalid.
    pub tool_headers: Option<crate::param_headers::ToolHeaderTable>,
    /// Whether the transport reports its own failures of one request (a
    /// refused HTTP status, a broken stream) as marked error answers, and
    /// strips that mark from every error a server sends. Only then does the
    /// session read the mark; from any other transport it is a server's
    /// `data`, which a server could otherwise use to disguise its errors.
    pub marks_own_failures: bool,
    /// Reads the session id the server gave the connection, for
    /// transports that have one (streamable HTTP's `Mcp-Session-Id`).
    pub session_id: Option<SessionIdReader>,
}

/// Reads the session id a server gave a connection as it is now: the
/// transport may open a new session after the server forgot the old one.
#[derive(Clone)]
pub struct SessionIdReader(Arc<dyn Fn() -> Option<String> + Send + Sync>);

impl SessionIdReader {
    /// A reader that calls `read`.
    pub fn new(read: impl Fn() -> Option<String> + Send + Sync + 'static) -> Self {
        SessionIdReader(Arc::new(read))
    }

    /// The session id now, if there is one.
    pub fn read(&self) -> Option<String> {
        (self.0)()
    }
}

impl std::fmt::Debug for SessionIdReader {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionIdReader")
    }
}

impl TransportInfo {
    /// A kind that offers nothing beyond the four methods.
    pub fn new(kind: &'static str) -> Self {
        TransportInfo {
            kind,
            stderr_tail: None,
            sender: None,
            modern_sender: None,
            tool_headers: None,
            marks_own_failures: false,
            session_id: None,
        }
    }

    /// With the child's stderr tail.
    pub fn with_stderr_tail(mut self, tail: StderrTail) -> Self {
        self.stderr_tail = Some(tail);
        self
    }

    /// With a handle onto the outgoing queue.
    pub fn with_sender(mut self, sender: Option<MessageSender>) -> Self {
        self.sender = sender;
        self
    }

    /// With a sender of modern requests.
    pub fn with_modern_sender(mut self, sender: ModernSender) -> Self {
        self.modern_sender = Some(sender);
        self
    }

    /// With the table of `x-mcp-header` parameters.
    pub fn with_tool_headers(mut self, table: crate::param_headers::ToolHeaderTable) -> Self {
        self.tool_headers = Some(table);
        self
    }

    /// Marking its own failures of one request.
    pub fn marking_own_failures(mut self) -> Self {
        self.marks_own_failures = true;
        self
    }

    /// With a reader of the connection's session id.
    pub fn with_session_id(mut self, reader: SessionIdReader) -> Self {
        self.session_id = Some(reader);
        self
    }
}

/// Where a transport hands the answer to a request sent through a
/// [`ModernSender`] straight to its waiting caller, without a hop through
/// the session's driver task (see [`ModernSender::route_answers`]).
// Only streamable HTTP routes answers so far.
#[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
pub(crate) trait AnswerRoute: Send + Sync {
    fn answer(&self, answer: crate::message::RawAnswer);
}

/// A modern transport's way to send a session's requests from the caller's
/// task, written from the caller's borrows (see [`ModernSender`]).
#[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
pub(crate) trait ModernRoute: Send + Sync {
    /// Sends the request `id` of `method` with `params` and the session's
    /// `meta`; `Err` once the transport is closing.
    fn send_request(
        &self,
        id: &RequestId,
        method: &str,
        params: crate::params::ParamsRef<'_>,
        meta: &RequestMeta,
    ) -> Result<(), ()>;

    /// Where answers go when nothing else came with them; the first route
    /// set stays.
    fn route_answers(&self, route: std::sync::Weak<dyn AnswerRoute>);
}

/// A cloneable handle that sends a modern session's requests from the
/// caller's task (see [`TransportInfo::modern_sender`](crate::TransportInfo::modern_sender)).
#[derive(Clone)]
pub struct ModernSender {
    route: Arc<dyn ModernRoute>,
}

impl std::fmt::Debug for ModernSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ModernSender").finish_non_exhaustive()
    }
}

impl ModernSender {
    #[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
    pub(crate) fn new(route: Arc<dyn ModernRoute>) -> Self {
        ModernSender { route }
    }

    /// Routes the answers to the requests sent through this handle (or a
    /// clone) to `route` when nothing else came with them, so they reach
    /// their callers in the order they came; the first route set stays.
    pub(crate) fn route_answers(&self, route: std::sync::Weak<dyn AnswerRoute>) {
        self.route.route_answers(route);
    }

    /// Sends the request `id` of `method` with the caller's `params` and
    /// the session's `meta`, neither copied; fails once the transport is
    /// closing (the request is then dropped).
    pub(crate) fn send(
        &self,
        id: &RequestId,
        method: &str,
        params: crate::params::ParamsRef<'_>,
        meta: &RequestMeta,
    ) -> Result<(), ()> {
        self.route.send_request(id, method, params, meta)
    }
}

/// A transport's outgoing queue that encodes at once, from a borrow.
#[cfg_attr(not(feature = "stdio"), allow(dead_code))]
pub(crate) trait EncodingQueue: Send + Sync + std::fmt::Debug {
    /// Appends one message, written by `encode`, to the queue; `alone`
    /// says no other request is in flight (so it need not wait to share a
    /// write). `Err` once the writer stopped.
    fn push(&self, encode: &mut dyn FnMut(&mut Vec<u8>), alone: bool) -> Result<(), ()>;
}

/// A cloneable handle onto a transport's outgoing queue (see
/// [`TransportInfo::sender`](crate::TransportInfo::sender)).
#[derive(Debug, Clone)]
pub struct MessageSender {
    queue: Queue,
}

#[derive(Debug, Clone)]
enum Queue {
    Channel(tokio::sync::mpsc::UnboundedSender<JsonRpcMessage>),
    Encoding(Arc<dyn EncodingQueue>),
}

impl MessageSender {
    /// A handle onto the queue a transport's writer drains.
    pub fn new(outgoing: tokio::sync::mpsc::UnboundedSender<JsonRpcMessage>) -> Self {
        MessageSender {
            queue: Queue::Channel(outgoing),
        }
    }

    /// A handle onto a queue that encodes at once.
    #[cfg_attr(not(feature = "stdio"), allow(dead_code))]
    pub(crate) fn encoding(queue: Arc<dyn EncodingQueue>) -> Self {
        MessageSender {
            queue: Queue::Encoding(queue),
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
            Queue::Encoding(queue) => queue
                .push(
                    &mut |out| Codec::encode_serialized_into(&message, out),
                    alone,
                )
                .map_err(|()| message),
        }
    }

    /// Whether [`MessageSender::send_serialized`] works: the queue encodes
    /// at once, so the caller keeps what it wrote from.
    pub(crate) fn sends_by_reference(&self) -> bool {
        matches!(self.queue, Queue::Encoding(_))
    }

    /// Queues anything that serialises as one JSON-RPC message, encoded at
    /// once from a borrow (a request whose parts the caller keeps encoded
    /// elsewhere). `None` when this queue takes messages only by value;
    /// `Some(Err)` once the writer stopped.
    pub(crate) fn send_serialized<T: serde::Serialize>(
        &self,
        message: &T,
        alone: bool,
    ) -> Option<Result<(), ()>> {
        match &self.queue {
            Queue::Channel(_) => None,
            Queue::Encoding(queue) => Some(queue.push(
                &mut |out| Codec::encode_serialized_into(message, out),
                alone,
            )),
        }
    }
}
