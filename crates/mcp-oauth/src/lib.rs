//! `mcp-oauth` owns MCP authorization for remote servers: protected-resource
//! and authorization-server metadata discovery, client registration, the
//! authorization-code + PKCE flow with its loopback callback, other grants,
//! the credential store and token refresh.
//!
//! It sits on `mcp-config` (for `McpOAuthConfig`) and must not depend on the
//! transport, catalog or CLI crates. It also defines [`AuthProvider`], the
//! small seam through which the HTTP-based transports ask for credentials,
//! so that the transport crate depends on this one and never the reverse.

pub mod metadata;
pub mod oauth;
pub mod pkce;
pub mod provider;
pub mod secret;
pub mod store;
pub mod token;
pub mod user_agent;

pub use oauth::{
    CrossAppAccess, DEFAULT_REFRESH_MARGIN, Grant, MAX_STEP_UPS, OAuthConfigExt, OAuthProvider,
    OAuthSettings, PrivateKey,
};
pub use provider::{AuthError, AuthProvider, Challenge, ChallengeOutcome};
pub use secret::Secret;
pub use store::{
    ClientRegistration, CredentialStore, FileCredentialStore, MemoryCredentialStore, StoreKey,
    StoredCredentials, TokenSet,
};
pub use user_agent::{AuthorizationPrompt, CallbackListener, HeadlessPrompt, InteractivePrompt};
