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

#![warn(missing_docs)]

mod codec;
mod connect;
pub mod error_codes;
#[cfg(feature = "remote")]
mod event_stream;
mod http;
mod message;
pub mod param_headers;
mod protocol;
mod scan;
mod session;
mod stderr_tail;
mod task;
mod transport;

#[cfg(feature = "claudeai-proxy")]
mod claudeai_proxy;
#[cfg(feature = "remote")]
mod headers_helper;
#[cfg(feature = "remote")]
mod inbox;
#[cfg(feature = "stdio")]
mod outbox;
#[cfg(feature = "sdk")]
mod sdk;
#[cfg(feature = "sse")]
mod sse;
#[cfg(feature = "stdio")]
mod stdio;
#[cfg(feature = "streamable-http")]
mod streamable_http;
#[cfg(feature = "ws")]
mod ws;

pub use codec::{Codec, DEFAULT_MAX_MESSAGE_BYTES, Decoded, DecodedIter, MAX_DEPTH, Undecodable};
pub use connect::{ConnectOptions, connect, open_transport};
#[cfg(feature = "remote")]
pub use headers_helper::{
    HEADERS_HELPER_TIMEOUT, run_headers_helper, run_headers_helper_with_timeout,
};
#[cfg(feature = "oauth")]
pub use http::AuthProviders;
#[cfg(feature = "remote")]
pub use http::{HttpOptions, decode_sse_body};
pub use http::{TRANSPORT_ERROR_CODE, TRANSPORT_FAILURE_KEY};
pub use message::{ErrorObject, JsonRpcMessage, Notification, Request, RequestId, Response};
pub use protocol::{
    CallToolResult, DiscoverResult, FIRST_MODERN_VERSION, GetPromptResult, Implementation,
    InitializeResult, KNOWN_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES,
    META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION, META_SERVER_INFO,
    META_SUBSCRIPTION_ID, Prompt, ReadResourceResult, Resource, ResourceTemplate, TASKS_EXTENSION,
    Tool, is_modern,
};
#[doc(hidden)]
pub use scan::AnswerScan;
#[cfg(feature = "sdk")]
pub use sdk::{SdkOptions, SdkRegistry, SdkServer, SdkServerConnection, SdkTransport};
pub use session::{
    CacheScope, CallOptions, ClientHandler, ClientSession, CreateMessageParams,
    CreateMessageResult, ElicitAction, ElicitParams, ElicitResult, ElicitValue, ElicitationHandler,
    IncludeContext, ListKind, ListLimits, ListRootsResult, Listing, Progress, ProgressCallback,
    RejectedTool, RequestContext, Role, Root, RootsProvider, SamplingContent, SamplingHandler,
    SamplingMessage, ServerEvent, SessionOptions, Typed, TypedClientHandler,
};
#[cfg(feature = "sse")]
pub use sse::SseTransport;
pub use stderr_tail::{STDERR_TAIL_BYTES, StderrTail, stderr_excerpt};
#[cfg(feature = "stdio")]
pub use stdio::{StdioOptions, StdioTransport};
#[cfg(feature = "streamable-http")]
pub use streamable_http::StreamableHttpTransport;
pub use task::{RELATED_TASK_META, Task, TaskGeneration, TaskStatus, TaskSupport, task_generation};
pub use transport::{HttpFailure, MessageSender, Transport, TransportError, TransportErrorKind};
#[cfg(feature = "ws")]
pub use ws::WsTransport;
