//! `mcp-transport` owns the wire: JSON-RPC 2.0 messages, the MCP client
//! session (initialize and version negotiation, request correlation,
//! timeouts, cancellation, progress, pagination, server→client requests)
//! and a small [`Transport`] trait with one implementation per kind, each in
//! its own module.
//!
//! It sits on `mcp-config` (server entries, the inherited-env allow-list) and
//! `mcp-oauth` (the [`mcp_oauth::AuthProvider`] seam for bearer tokens). It
//! must not depend on `mcp-catalog` or `mcp-cli`, and it never prints.
//!
//! Each transport kind is a cargo feature, all on by default: `stdio`,
//! `streamable-http`, `sse`, `ws`, `sdk`, `claudeai-proxy`, and `oauth` for
//! the credential seam (the remote kinds turn it on). The session, the
//! codec and the [`Transport`] trait are always there; [`connect`] refuses
//! a kind compiled out with [`TransportErrorKind::KindNotCompiled`]. A
//! stdio-only build (`default-features = false, features = ["stdio"]`)
//! compiles no HTTP, TLS, WebSocket or JWT crate.

pub mod codec;
pub mod connect;
pub mod event_stream;
pub mod message;
pub mod protocol;
pub mod session;
pub mod task;
pub mod transport;

#[cfg(feature = "claudeai-proxy")]
pub mod claudeai_proxy;
#[cfg(feature = "remote")]
pub mod headers_helper;
pub mod http;
pub mod param_headers;
#[cfg(feature = "sdk")]
mod router;
#[cfg(feature = "sdk")]
pub mod sdk;
#[cfg(feature = "sse")]
pub mod sse;
pub mod stderr_tail;
#[cfg(feature = "stdio")]
pub mod stdio;
#[cfg(feature = "streamable-http")]
pub mod streamable_http;
#[cfg(feature = "ws")]
pub mod ws;

#[cfg(feature = "remote")]
mod inbox;
#[cfg(feature = "stdio")]
mod outbox;
pub mod scan;

pub use codec::{Codec, MAX_DEPTH, Undecodable};
pub use connect::{ConnectOptions, connect, open_transport};
pub use message::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId, Response};
#[cfg(feature = "sdk")]
pub use router::{ToolOutput, ToolRouter, ToolSpec};
#[cfg(feature = "sdk")]
pub use sdk::{SdkRegistry, SdkServer, SdkServerConnection};
pub use session::{
    CallOptions, ClientHandler, ClientSession, ListKind, ListLimits, Progress, ServerEvent,
    SessionOptions, Typed, TypedClientHandler,
};
pub use transport::{
    HttpFailure, MessageSender, StderrTail, Transport, TransportError, TransportErrorKind,
};
