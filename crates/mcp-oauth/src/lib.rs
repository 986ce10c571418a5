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
//! protected-resource metadata (RFC 9728), which names the authorization
//! server, whose metadata (RFC 8414, its `issuer` checked against the one
//! looked up) says how to register ([`ClientSource`]: configured client,
//! client ID metadata document, a registration made with that same issuer,
//! or a new dynamic registration) and which client authentication to use
//! ([`protocol::ClientAuth`]). The grant is chosen by the host ([`Grant`]):
//! authorization code + PKCE ([`protocol::Pkce`]) through an [`AuthorizationPrompt`]
//! and the [`CallbackListener`] (whose response is checked for `state` and
//! the RFC 9207 `iss`), client credentials, workload identity (a JWT bearer
//! assertion) or enterprise cross-app access; [`settings_from_config`]
//! builds the settings from a server's `oauth` block. Tokens go to a
//! [`CredentialStore`] (0600 files, [`FileCredentialStore`]; or one secret
//! per server in an `mcp_config` secret store, [`SecretCredentialStore`]);
//! a refresh takes the store's lock and re-reads it first, so processes
//! sharing a store never spend a rotating refresh token twice, and it falls due no earlier than a quarter of the token's
//! lifetime before expiry. Tokens may be DPoP-bound ([`protocol::DpopKey`],
//! [`DpopMode`]): the proof key is kept with them, and every token and
//! resource request then carries a fresh proof. A logout revokes (RFC 7009)
//! where the server offers it.
//!
//! Every URL a server or an authorization server names (the metadata
//! locations, every endpoint, the page the browser is sent to) passes one
//! [`UrlPolicy`] before anything is sent to it; a sign-in the user did not
//! ask for (a server's 401) contacts nothing until the host's prompt allows
//! it ([`AuthorizationPrompt::allow_unrequested`]).
//!
//! Every item has one path, at the crate root. The `tls` feature (on by
//! default) lets it reach https endpoints; without it only plain-http ones
//! (loopback, a local proxy) are reachable.
//!
//! ```
//! use std::sync::Arc;
//! use mcp_config::McpOAuthConfig;
//! use mcp_oauth::{
//!     AuthProvider, Grant, HeadlessPrompt, MemoryCredentialStore, OAuthProvider,
//!     OAuthSettings, Secret,
//! };
//!
//! # tokio::runtime::Runtime::new().unwrap().block_on(async {
//! // A workload signing in with its platform's JWT: no person, no browser.
//! let mut settings = OAuthSettings::new(
//!     "billing",
//!     "https://billing.example/mcp",
//!     McpOAuthConfig::default(),
//! );
//! settings.grant = Grant::JwtBearer {
//!     assertion: Arc::new(Secret::new("eyJ...")),
//! };
//! let provider = OAuthProvider::new(
//!     settings,
//!     Arc::new(MemoryCredentialStore::new()),
//!     Arc::new(HeadlessPrompt::new().unwrap()),
//! )
//! .unwrap();
//! // Nothing is fetched until the server first answers 401.
//! assert_eq!(provider.authorization().await.unwrap(), None);
//! # });
//! ```
//!
//! Invariants: the library never prints and never opens a browser itself
//! (the host's prompt does); it reads no environment variable (the caller
//! passes a lookup) and no home directory (the store's directory comes from
//! the caller); the only files it reads are the ones a config names (a
//! private key file) and the only programs it runs are the ones a config
//! names as an assertion source, without a shell; every secret is a
//! [`Secret`], whose `Debug` is `***` and which has no `Display`, so no log
//! line or error message can carry one.
//!
//! # Example
//!
//! The pieces of a sign-in that need no network: a PKCE pair for the
//! authorization request, and tokens kept in a file store in a directory
//! the host chooses, where a later process finds them:
//!
//! ```
//! use mcp_oauth::protocol::{Pkce, now_secs, s256_challenge};
//! use mcp_oauth::{
//!     CredentialStore, FileCredentialStore, Secret, StoreKey, StoredCredentials, TokenSet,
//! };
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! // The challenge goes in the authorization url, the verifier only in the
//! // token request.
//! let pkce = Pkce::generate();
//! assert_eq!(pkce.challenge, s256_challenge(pkce.verifier.expose()));
//!
//! let dir = tempfile::tempdir()?;
//! let store = FileCredentialStore::new(dir.path().join("credentials"));
//! let key = StoreKey::new("billing", "https://billing.example/mcp");
//! let mut credentials = StoredCredentials::default();
//! credentials.tokens = Some(TokenSet {
//!     access_token: Secret::new("at-1"),
//!     refresh_token: Some(Secret::new("rt-1")),
//!     expires_at: Some(now_secs() + 3600),
//!     scope: None,
//!     lifetime: Some(3600),
//! });
//! store.save(&key, &credentials)?;
//!
//! let loaded = store.load(&key)?.expect("saved above");
//! let tokens = loaded.tokens.expect("saved with tokens");
//! assert!(!tokens.expired(now_secs()));
//! // A secret's `Debug` never shows it.
//! assert_eq!(format!("{:?}", tokens.access_token), "***");
//! # Ok(())
//! # }
//! ```

// Nothing here needs `unsafe`; forbid it so no module can opt back in.
#![forbid(unsafe_code)]
// Every public item says what it is for; `cargo doc` is part of CI.
#![warn(missing_docs)]

mod assertion;
mod body;
mod clock;
mod dpop;
mod error;
mod metadata;
mod oauth;
mod pkce;
mod process;
mod provider;
mod redirect;
mod secret;
mod store;
#[cfg(feature = "otel")]
mod telemetry;
mod token;
mod url_policy;
mod user_agent;

// What a host needs first; the protocol pieces below the provider sit in
// [`protocol`].
pub use dpop::DpopMode;
pub use error::{AuthError, AuthErrorKind};
pub use oauth::{
    ClientSource, CrossAppAccess, Grant, OAuthConfigExt, OAuthProvider, OAuthSettings, Revocation,
    SignIn, SignOut, settings_from_config, settings_from_config_live,
};
pub use provider::{
    AuthProvider, Challenge, ChallengeOutcome, Credentials, RequestTarget,
    authorization_fingerprint,
};
pub use secret::Secret;
pub use store::{
    ClientRegistration, CredentialStore, FileCredentialStore, MemoryCredentialStore,
    SecretCredentialStore, StoreKey, StoredCredentials, TokenSet,
};
pub use url_policy::{HostClass, Refusal, UrlPolicy};
pub use user_agent::{AuthorizationPrompt, CallbackListener, HeadlessPrompt, InteractivePrompt};

/// The OAuth pieces below the provider: token requests, PKCE, DPoP keys,
/// client assertions, the redirect rule, the store's lock and the clock.
pub mod protocol {
    pub use crate::assertion::{
        AssertionSource, CommandAssertion, DEFAULT_ASSERTION_TIMEOUT, EnvAssertion, EnvLookup,
        MAX_ASSERTION_BYTES,
    };
    pub use crate::clock::now_secs;
    pub use crate::dpop::DpopKey;
    pub use crate::oauth::{DEFAULT_REFRESH_MARGIN, MAX_STEP_UPS, PrivateKey, dpop_mode};
    pub use crate::pkce::{Pkce, s256_challenge};
    pub use crate::redirect::{MAX_REDIRECTS, same_origin_only};
    pub use crate::store::StoreLock;
    pub use crate::token::{
        ClientAuth, TokenErrorResponse, TokenResponse, TokenResult, request_token,
    };
}

// The process-group guard is shared with the transport crate's
// `headersHelper` runner, so both kill a helper's grandchildren the same
// way; it is plumbing, not part of the authorization API.
#[doc(hidden)]
pub use process::GroupGuard;

// The crate's README examples compile (and run where they can) with the
// doctests, so the page a reader sees first never goes stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
