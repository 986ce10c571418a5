//! `mcp-gateway` is the server side of this workspace: the servers a user
//! configured, through one [`mcp_catalog::SessionRuntime`], served as one
//! MCP server to any host. Upstream sessions are the runtime's (lazy,
//! shared by every downstream client, with backoff, TTL and reconcile);
//! tools are named as the catalog names them, resources and templates
//! get URIs that stay unique across servers and lead back to their owner
//! ([`Naming`]), prompts get their server's prefix, and completions and
//! subscriptions go to the server that owns what they name.
//!
//! Layers: [`Gateway`] answers one request over the runtime; a downstream
//! connection (`downstream`) answers the handshake at the revision the
//! client speaks, runs each request in its own task, passes cancellation
//! and progress through and announces catalog changes; [`serve_stdio`]
//! carries one connection over a pair of byte streams. The revision rules
//! are the transport's ([`mcp_transport::serving`]), shared with its
//! in-process router.
//!
//! The gateway never prints and never panics on a client's input: every
//! request gets an answer, and a failing upstream is the answer to the
//! request that met it.
//!
//! # Example
//!
//! A gateway over a runtime (here with no servers) answers a client
//! speaking 2026-07-28 over stdio-like streams:
//!
//! ```
//! use std::sync::Arc;
//!
//! use mcp_catalog::{McpConnector, NamingStyle, ServerSet, SessionRuntime};
//! use mcp_gateway::{Gateway, Naming, serve_stdio};
//! use mcp_transport::ConnectOptions;
//! use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
//!
//! # #[tokio::main(flavor = "current_thread")]
//! # async fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let connector = Arc::new(McpConnector::new(ConnectOptions::default()));
//! let runtime = SessionRuntime::builder("gateway", ServerSet::all([]), connector).build();
//! let gateway = Arc::new(Gateway::new(Arc::new(runtime), Naming::prefixed(NamingStyle::Claw)));
//!
//! let (client, server) = tokio::io::duplex(64 * 1024);
//! let (server_in, server_out) = tokio::io::split(server);
//! let serving = tokio::spawn(serve_stdio(gateway, server_in, server_out));
//!
//! let (client_in, mut client_out) = tokio::io::split(client);
//! client_out
//!     .write_all(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\"}}}\n")
//!     .await?;
//! let mut answer = String::new();
//! BufReader::new(client_in).read_line(&mut answer).await?;
//! let answer: serde_json::Value = serde_json::from_str(&answer)?;
//! assert_eq!(answer["result"]["tools"], serde_json::json!([]));
//! assert_eq!(answer["result"]["resultType"], "complete");
//!
//! drop(client_out);
//! serving.await??;
//! # Ok(())
//! # }
//! ```

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod downstream;
mod error;
mod gateway;
mod held;
#[cfg(feature = "http")]
mod http;
mod names;
mod observe;
mod relay;
#[cfg(feature = "reload")]
mod reload;
mod stdio;
#[cfg(feature = "http")]
mod token;

pub use downstream::{Downstream, Handled, News, Piece, Sink, serve_connection};
pub use error::{GatewayError, GatewayErrorKind};
pub use gateway::{Answer, Follower, GATEWAY_NAME, Gateway};
pub use held::{HELD_TTL, MAX_HELD};
#[cfg(feature = "http")]
pub use http::{
    DEFAULT_MAX_BODY_BYTES, DEFAULT_MAX_CONNECTIONS, DEFAULT_MAX_SESSIONS,
    DEFAULT_SESSION_IDLE_TTL, HttpOptions, is_loopback, serve_http,
};
pub use names::{GATEWAY_URI_SCHEME, Naming};
pub use relay::{Asker, Relay, ResourceUpdate};
#[cfg(feature = "reload")]
pub use reload::{ConfigWatch, RELOAD_QUIET_TIME, Reload, watch_config};
pub use stdio::serve_stdio;
#[cfg(feature = "http")]
pub use token::bearer_token;
