//! `mcp-transport` owns the wire: JSON-RPC 2.0 messages, the MCP client
//! session (initialize and version negotiation, request correlation,
//! timeouts, cancellation, progress, pagination, server→client requests)
//! and a small [`Transport`] trait with one implementation per kind, each in
//! its own module.
//!
//! It sits on `mcp-config` (server entries, the inherited-env allow-list) and
//! `mcp-oauth` (the [`mcp_oauth::AuthProvider`] seam for bearer tokens). It
//! must not depend on `mcp-catalog` or `mcp-cli`, and it never prints.

pub mod codec;
pub mod connect;
pub mod event_stream;
pub mod message;
pub mod protocol;
pub mod session;
pub mod task;
pub mod transport;

pub mod claudeai_proxy;
pub mod headers_helper;
pub mod http;
pub mod param_headers;
pub mod sdk;
pub mod sse;
pub mod stderr_tail;
pub mod stdio;
pub mod streamable_http;
pub mod ws;

mod inbox;
mod outbox;
pub mod scan;

pub use codec::{Codec, MAX_DEPTH, Undecodable};
pub use connect::{ConnectOptions, connect, open_transport};
pub use message::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId, Response};
pub use sdk::{SdkRegistry, SdkServer, SdkServerConnection};
pub use session::{
    CallOptions, ClientHandler, ClientSession, ListKind, ListLimits, Progress, ServerEvent,
    SessionOptions, Typed, TypedClientHandler,
};
pub use transport::{
    HttpFailure, MessageSender, StderrTail, Transport, TransportError, TransportErrorKind,
};
