//! `mcp-oauth` owns MCP authorization for remote servers: protected-resource
//! and authorization-server metadata discovery, client registration, the
//! authorization-code + PKCE flow with its loopback callback, other grants,
//! the credential store and token refresh.
//!
//! It sits on `mcp-config` (for `McpOAuthConfig`) and must not depend on the
//! transport, catalog or CLI crates. It also defines [`AuthProvider`], the
//! small seam through which the HTTP-based transports ask for credentials,
//! so that the transport crate depends on this one and never the reverse.
//!
//! # Design
//!
//! [`OAuthProvider`] is the one implementation of the seam. It does nothing
//! until a server refuses a request: the 401's `WWW-Authenticate` names the
//! protected-resource metadata ([`metadata`]), which names the authorization
//! server, whose metadata says how to register ([`oauth`]: configured
//! client, client ID metadata document, stored or dynamic registration) and
//! which client authentication to use ([`token`]). The grant is chosen by the
//! host ([`Grant`]): authorization code + PKCE through an
//! [`AuthorizationPrompt`] and the [`CallbackListener`], client credentials,
//! or enterprise cross-app access. Tokens go to a [`CredentialStore`]; a
//! refresh takes the store's lock and re-reads it first, so processes
//! sharing a file store never spend a rotating refresh token twice.
//! Tokens may be DPoP-bound ([`dpop`]): the proof key is kept with them,
//! and every token and resource request then carries a fresh proof.
//!
//! Invariants: the library never prints and never opens a browser itself
//! (the host's prompt does); it reads no environment variable and no home
//! directory (the store's directory and every secret come from the caller);
//! every secret is a [`Secret`], whose `Debug` is `***` and which has no
//! `Display`, so no log line or error message can carry one.

// Nothing here needs `unsafe`; forbid it so no module can opt back in.
#![forbid(unsafe_code)]

pub mod assertion;
mod body;
pub mod dpop;
mod error;
pub mod metadata;
pub mod oauth;
pub mod pkce;
pub mod provider;
pub mod redirect;
pub mod secret;
pub mod store;
pub mod token;
pub mod user_agent;

pub use assertion::{CommandAssertion, EnvAssertion, EnvLookup};
pub use dpop::{DpopKey, DpopMode};
pub use oauth::{
    AssertionSource, ClientSource, CrossAppAccess, DEFAULT_REFRESH_MARGIN, Grant, MAX_STEP_UPS,
    OAuthConfigExt, OAuthProvider, OAuthSettings, PrivateKey, Revocation, SignIn, SignOut,
    dpop_mode, settings_from_config, settings_from_config_live,
};
pub use provider::{
    AuthError, AuthErrorKind, AuthProvider, Challenge, ChallengeOutcome, Credentials,
    RequestTarget, authorization_fingerprint,
};
pub use secret::Secret;
pub use store::{
    ClientRegistration, CredentialStore, FileCredentialStore, MemoryCredentialStore, StoreKey,
    StoredCredentials, TokenSet,
};
pub use user_agent::{AuthorizationPrompt, CallbackListener, HeadlessPrompt, InteractivePrompt};
