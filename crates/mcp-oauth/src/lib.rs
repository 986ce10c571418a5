//! `mcp-oauth` owns MCP authorization for remote servers: protected-resource
//! and authorization-server metadata discovery, client registration, the
//! authorization-code + PKCE flow with its loopback callback, other grants,
//! the credential store and token refresh.
//!
//! It sits on `mcp-config` (for `McpOAuthConfig`) and must not depend on the
//! transport, catalog or CLI crates. It also defines [`AuthProvider`], the
//! small seam through which the HTTP-based transports ask for credentials,
//! so that the transport crate depends on this one and never the reverse.

pub mod provider;

pub use provider::{AuthError, AuthProvider, Challenge, ChallengeOutcome};
