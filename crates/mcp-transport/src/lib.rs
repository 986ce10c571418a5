//! `mcp-transport` owns the wire: JSON-RPC 2.0 messages, the MCP client
//! session (initialize and version negotiation, request correlation,
//! timeouts, cancellation, progress, pagination, server→client requests)
//! and a small [`Transport`] trait with one implementation per kind.
//!
//! It sits on `mcp-config` (server entries, the inherited-env allow-list) and
//! `mcp-oauth` (the `AuthProvider` seam for bearer tokens). It must not
//! depend on `mcp-catalog` or `mcp-cli`, and it never prints.
//!
//! # Map
//!
//! Every item has one path, at the crate root; only the two lists of
//! constants, [`error_codes`] and [`param_headers`], are namespaces.
//!
//! | you want | use |
//! |---|---|
//! | a session from a config entry | [`connect()`] with [`ConnectOptions`] |
//! | a session over a transport you built | [`ClientSession::initialize`] with [`SessionOptions`] |
//! | to answer sampling, elicitation, roots | [`handler::TypedClientHandler`] wrapped in [`handler::Typed`] (or the untyped [`ClientHandler`]) |
//! | per-call timeout and progress | [`CallOptions`] |
//! | notifications the server sends on its own | [`ClientSession::events`] ([`ServerEvent`]) |
//! | to branch on a failure | [`TransportError::kind`] ([`TransportErrorKind`]) |
//!
//! | kind | feature | transport |
//! |---|---|---|
//! | child process, newline-delimited JSON | `stdio` | `StdioTransport` |
//! | streamable HTTP (2025-03-26 on) | `streamable-http` | `StreamableHttpTransport` |
//! | legacy HTTP+SSE | `sse` | `SseTransport` |
//! | WebSocket, `mcp` subprotocol | `ws` | `WsTransport` |
//! | in-process server of the host | `sdk` | `SdkTransport` (`SdkServer`, `SdkRegistry`) |
//! | claude.ai-hosted server through its proxy | `claudeai-proxy` | `StreamableHttpTransport` |
//!
//! Each transport kind is a cargo feature, all on by default, `oauth`
//! is the credential seam (the remote kinds turn it on) and `tls` reaches
//! `https` and `wss` servers. The session, the codec and the [`Transport`]
//! trait are always there; [`connect()`] refuses a kind compiled out, and
//! an `https` or `wss` entry without `tls`, with
//! [`TransportErrorKind::KindNotCompiled`].
//! A stdio-only build (`default-features = false, features = ["stdio"]`)
//! compiles no HTTP, TLS, WebSocket or JWT crate.
//!
//! # Examples
//!
//! Connect to the server of a config entry (one that `mcp_config::load`
//! returned, say), list its tools and call one. [`connect()`] spawns a
//! stdio server, or reaches a remote one, and runs the handshake within
//! the entry's connect timeout; a stdio child gets only the allow-listed
//! variables of `env` plus its entry's own.
//!
//! ```no_run
//! use mcp_config::ServerConfig;
//! use mcp_transport::{ConnectOptions, TransportError, TransportErrorKind, connect};
//! use serde_json::json;
//!
//! async fn echo(config: &ServerConfig) -> Result<(), TransportError> {
//!     let options = ConnectOptions::new().with_env(std::env::vars().collect());
//!     let session = connect(config, &options).await?;
//!     for tool in session.list_tools().await? {
//!         println!("{}: {}", tool.name, tool.description.unwrap_or_default());
//!     }
//!     match session.call_tool("echo", Some(json!({"message": "hi"}))).await {
//!         Ok(result) => println!("{:?}", result.content),
//!         // The server refused the call: the session is still usable.
//!         Err(error) if matches!(error.kind(), TransportErrorKind::Rpc { .. }) => {
//!             println!("refused: {error}")
//!         }
//!         Err(error) => return Err(error),
//!     }
//!     session.close().await
//! }
//! ```
//!
//! A whole session that runs as it is: an in-process server of the host
//! (one tool, `add`, written by hand over the `sdk` transport's channels),
//! initialized, listed and called.
//!
//! ```
//! # #[cfg(feature = "sdk")]
//! # mod example {
//! use std::sync::Arc;
//!
//! use mcp_transport::kinds::{SdkOptions, SdkServer, SdkServerConnection, SdkTransport};
//! use mcp_transport::{
//!     ClientSession, ErrorObject, JsonRpcMessage, Response, SessionOptions, TransportError,
//! };
//! use serde_json::{Value, json};
//!
//! /// A server living in the host: `add` sums two numbers.
//! struct Adder;
//!
//! #[async_trait::async_trait]
//! impl SdkServer for Adder {
//!     async fn serve(self: Arc<Self>, mut connection: SdkServerConnection) {
//!         while let Some(message) = connection.incoming.recv().await {
//!             // Notifications (`notifications/initialized`) need no answer.
//!             let JsonRpcMessage::Request(request) = message else {
//!                 continue;
//!             };
//!             let params = request.params.unwrap_or(Value::Null);
//!             let outcome = match request.method.as_str() {
//!                 "initialize" => Ok(json!({
//!                     "protocolVersion": params["protocolVersion"],
//!                     "capabilities": {"tools": {}},
//!                     "serverInfo": {"name": "adder", "version": "1.0.0"},
//!                 })),
//!                 "tools/list" => Ok(json!({"tools": [{
//!                     "name": "add",
//!                     "description": "Adds two numbers.",
//!                     "inputSchema": {
//!                         "type": "object",
//!                         "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!                         "required": ["a", "b"],
//!                     },
//!                 }]})),
//!                 "tools/call" => {
//!                     let arguments = &params["arguments"];
//!                     let sum = arguments["a"].as_f64().unwrap_or(0.0)
//!                         + arguments["b"].as_f64().unwrap_or(0.0);
//!                     Ok(json!({"content": [{"type": "text", "text": sum.to_string()}]}))
//!                 }
//!                 // `server/discover` too: this server predates 2026-07-28,
//!                 // and the session falls back to `initialize`.
//!                 other => Err(ErrorObject::method_not_found(other)),
//!             };
//!             let answer = JsonRpcMessage::Response(Response {
//!                 id: Some(request.id),
//!                 outcome,
//!             });
//!             if connection.outgoing.send(answer).await.is_err() {
//!                 return; // the client went away
//!             }
//!         }
//!     }
//! }
//!
//! pub async fn run() -> Result<(), TransportError> {
//!     let transport = SdkTransport::connect("adder", Arc::new(Adder), SdkOptions::new());
//!     let session =
//!         ClientSession::initialize(Box::new(transport), "adder", SessionOptions::new()).await?;
//!     assert_eq!(session.server_info().name, "adder");
//!
//!     let tools = session.list_tools().await?;
//!     assert_eq!(tools[0].name, "add");
//!     let result = session.call_tool("add", Some(json!({"a": 2, "b": 3}))).await?;
//!     assert_eq!(result.content[0].as_text(), Some("5"));
//!     session.close().await
//! }
//! # }
//! # #[cfg(feature = "sdk")]
//! # fn main() -> Result<(), mcp_transport::TransportError> {
//! #     let runtime = tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap();
//! #     runtime.block_on(example::run())
//! # }
//! # #[cfg(not(feature = "sdk"))]
//! # fn main() {}
//! ```

#![warn(missing_docs)]
// One function allows it: `stdio::launch::die_with_parent`, the
// parent-death signal.
#![deny(unsafe_code)]

mod codec;
mod connect;
mod content;
mod depth;
mod era;
mod error;
pub mod error_codes;
#[cfg(feature = "remote")]
mod event_stream;
mod failure;
mod http;
mod message;
pub mod param_headers;
mod params;
mod protocol;
mod request_meta;
mod scan;
pub mod serving;
mod session;
mod stderr_tail;
mod task;
#[cfg(feature = "otel")]
pub mod telemetry;
pub mod time;
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
mod router;
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

/// Locks `mutex`, taking the data over from a holder that panicked: each
/// mutex here guards bookkeeping that is whole between statements, and a
/// panic elsewhere must not take the session down with it.
fn lock<T>(mutex: &std::sync::Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

// What a host needs first; the rest sits in the named modules below.
pub use connect::{ConnectOptions, connect, open_transport};
pub use content::ContentBlock;
pub use era::EraMemory;
pub use error::{HttpFailure, TimeoutLimit, TransportError, TransportErrorKind};
#[cfg(feature = "oauth")]
pub use http::AuthProviders;
#[cfg(feature = "remote")]
pub use http::HttpOptions;
pub use message::{
    ErrorObject, Incoming, JsonRpcMessage, Notification, Request, RequestId, Response,
};
pub use protocol::{
    CallToolResult, Implementation, KNOWN_PROTOCOL_VERSIONS, LATEST_PROTOCOL_VERSION, Prompt,
    Resource, ResourceTemplate, Tool,
};
pub use session::{
    CacheScope, CallOptions, ClientHandler, ClientSession, ListKind, Listing, Progress,
    ProgressCallback, ServerEvent, SessionOptions,
};
#[cfg(feature = "stdio")]
pub use stdio::StdioOptions;
pub use transport::{SessionIdReader, Transport, TransportInfo};

/// JSON-RPC framing: the codec, the raw forms a message passes through in,
/// the wire's bounds and the made-up answer a failed transport gives.
pub mod wire {
    pub use crate::codec::{Codec, DEFAULT_MAX_MESSAGE_BYTES, Decoded, DecodedIter, Undecodable};
    pub use crate::depth::MAX_DEPTH;
    pub use crate::failure::{TRANSPORT_ERROR_CODE, TRANSPORT_FAILURE_KEY};
    // The SSE decoder and the structural scan are public to the fuzz
    // targets alone (`cargo fuzz` builds with `--cfg fuzzing`).
    #[cfg(all(fuzzing, feature = "remote"))]
    pub use crate::http::decode_sse_body;
    pub use crate::message::{RawAnswer, RawJson};
    #[cfg(fuzzing)]
    pub use crate::scan::AnswerScan;
}

/// MCP types beyond the root's: the other results, `_meta` keys, revision
/// helpers, content kinds, tasks and the notes a listing carries.
pub mod types {
    pub use crate::content::{MediaContent, TextContent};
    pub use crate::protocol::{
        DiscoverResult, FIRST_MODERN_VERSION, GetPromptResult, InitializeResult,
        META_CLIENT_CAPABILITIES, META_CLIENT_INFO, META_LOG_LEVEL, META_PROTOCOL_VERSION,
        META_SERVER_INFO, META_SUBSCRIPTION_ID, REQUEST_STATED_META, ReadResourceResult,
        TASKS_EXTENSION, is_modern,
    };
    pub use crate::session::{
        INVALID_ENTRIES_SHOWN, InvalidEntry, ListLimits, ListingNote, RejectedTool,
    };
    pub use crate::task::{
        RELATED_TASK_META, Task, TaskGeneration, TaskStatus, TaskSupport, states_tasks,
        task_generation,
    };
}

/// What a server may ask of the client (elicitation, sampling, roots), and
/// the typed handler that answers it.
pub mod handler {
    pub use crate::session::{
        CreateMessageParams, CreateMessageResult, ElicitAction, ElicitParams, ElicitResult,
        ElicitValue, ElicitationHandler, IncludeContext, ListRootsResult, RequestContext, Role,
        Root, RootsProvider, SamplingContent, SamplingHandler, SamplingMessage, Typed,
        TypedClientHandler,
    };
}

/// One transport per kind, for hosts that open one themselves instead of
/// through [`connect`], and the pieces the kinds share.
pub mod kinds {
    #[cfg(feature = "remote")]
    pub use crate::headers_helper::{
        HEADERS_HELPER_TIMEOUT, run_headers_helper, run_headers_helper_with_timeout,
    };
    #[doc(hidden)]
    #[cfg(feature = "sdk")]
    pub use crate::router::{ToolOutput, ToolRouter, ToolSpec};
    #[cfg(feature = "sdk")]
    pub use crate::sdk::{SdkOptions, SdkRegistry, SdkServer, SdkServerConnection, SdkTransport};
    #[cfg(feature = "sse")]
    pub use crate::sse::SseTransport;
    pub use crate::stderr_tail::{STDERR_TAIL_BYTES, StderrTail, stderr_excerpt};
    #[cfg(feature = "stdio")]
    pub use crate::stdio::StdioTransport;
    #[cfg(feature = "streamable-http")]
    pub use crate::streamable_http::StreamableHttpTransport;
    pub use crate::transport::{MessageSender, ModernSender};
    #[cfg(feature = "ws")]
    pub use crate::ws::WsTransport;
}

// The crate's README examples compile (and run where they can) with the
// doctests, so the page a reader sees first never goes stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
