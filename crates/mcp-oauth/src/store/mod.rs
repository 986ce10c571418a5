//! Where credentials live between runs: the [`CredentialStore`] trait and
//! its stores, one job per file: `file` (one 0600 file per server, atomic
//! replace), `secret` (one secret per server in a
//! [`mcp_config::secret::SecretStore`]), `memory` (this process only) and
//! `lock`, the one cross-process refresh lock the file and secret stores
//! share (a lock file per server in a private folder).

mod file;
mod lock;
mod memory;
mod secret;

use serde::{Deserialize, Serialize};
use sha2::{Digest as _, Sha256};

use crate::{AuthError, AuthErrorKind, Secret};

pub use file::FileCredentialStore;
pub use memory::MemoryCredentialStore;
pub use secret::SecretCredentialStore;

/// Identifies one server's credentials: its configured name plus its url,
/// so a renamed or repointed server never receives another's tokens.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct StoreKey {
    /// The configured server name.
    pub server_name: String,
    /// The server url.
    pub server_url: String,
}

impl StoreKey {
    /// A key for `server_name` at `server_url`.
    pub fn new(server_name: impl Into<String>, server_url: impl Into<String>) -> Self {
        Self {
            server_name: server_name.into(),
            server_url: server_url.into(),
        }
    }

    /// The file stem: the name reduced to `[A-Za-z0-9_-]` plus the first
    /// 16 hex digits of SHA-256 of the url.
    pub fn file_stem(&self) -> String {
        let name: String = self
            .server_name
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                    c
                } else {
                    '_'
                }
            })
            .take(64)
            .collect();
        let digest = Sha256::digest(self.server_url.as_bytes());
        let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
        format!("{name}-{hex}")
    }
}

/// A client identity obtained by registration or configuration.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ClientRegistration {
    /// The `client_id` (a URL for client ID metadata documents).
    pub client_id: String,
    /// The secret, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<Secret>,
    /// `none`, `client_secret_basic` or `client_secret_post`.
    pub token_endpoint_auth_method: String,
    /// The redirect uri registered with the client, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub redirect_uri: Option<String>,
}

/// Tokens granted to a client.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TokenSet {
    /// The bearer token.
    pub access_token: Secret,
    /// The refresh token, when one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<Secret>,
    /// Expiry in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (space separated), else the scopes requested.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub scope: Option<String>,
    /// The lifetime the server gave the access token (`expires_in`), so the
    /// refresh margin can be bounded by it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lifetime: Option<u64>,
}

impl TokenSet {
    /// Whether the access token expires within `margin_secs` of `now`.
    pub fn expires_within(&self, now: u64, margin_secs: u64) -> bool {
        self.expires_at
            .is_some_and(|at| now.saturating_add(margin_secs) >= at)
    }

    /// Whether the token is due for a refresh: within `margin_secs` of its
    /// expiry, with the margin never more than a quarter of the token's
    /// lifetime, so a token living a minute or less is refreshed about once
    /// per lifetime rather than before every request.
    pub fn refresh_due(&self, now: u64, margin_secs: u64) -> bool {
        let margin = match self.lifetime {
            Some(lifetime) => margin_secs.min(lifetime / 4),
            None => margin_secs,
        };
        self.expires_within(now, margin)
    }

    /// Whether the access token has expired at `now`.
    pub fn expired(&self, now: u64) -> bool {
        self.expires_within(now, 0)
    }
}

/// Everything stored for one server.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct StoredCredentials {
    /// The authorization server's issuer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub issuer: Option<String>,
    /// The token endpoint, so a refresh needs no discovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token_endpoint: Option<String>,
    /// The RFC 8707 resource the tokens are for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource: Option<String>,
    /// The client identity the current tokens were issued to.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<ClientRegistration>,
    /// Dynamic registrations by the issuer that made them: a registration
    /// is only ever used with its own authorization server, and one kept
    /// here is reused if the server moves back.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub registrations: std::collections::BTreeMap<String, ClientRegistration>,
    /// The authorization server's RFC 7009 revocation endpoint, so a
    /// logout can revoke without discovery.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub revocation_endpoint: Option<String>,

    /// The current tokens.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<TokenSet>,
    /// The DPoP proof key (base64url PKCS#8) the tokens are bound to; set
    /// exactly when they are DPoP tokens, so every refresh and every later
    /// process proves possession of the same key.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dpop_key: Option<Secret>,
}

/// Held while one process refreshes a server's tokens; dropping it lets the
/// next one in.
pub type StoreLock = Box<dyn Send>;

/// Loads, saves and clears one server's credentials. Calls block (file I/O
/// and lock waits); async callers run them on a blocking thread.
pub trait CredentialStore: Send + Sync + std::fmt::Debug {
    /// The stored credentials, or `None` when there are none.
    fn load(&self, key: &StoreKey) -> Result<Option<StoredCredentials>, AuthError>;
    /// Replaces the stored credentials.
    fn save(&self, key: &StoreKey, credentials: &StoredCredentials) -> Result<(), AuthError>;
    /// Removes the stored credentials (logout). Clearing nothing is fine.
    fn clear(&self, key: &StoreKey) -> Result<(), AuthError>;
    /// Takes the exclusive refresh lock for `key`, waiting for other holders
    /// (in this or another process).
    fn lock(&self, key: &StoreKey) -> Result<StoreLock, AuthError>;
    /// Where `key`'s credentials are kept, for messages (a file's path, a
    /// secret's name); never their content.
    fn location(&self, key: &StoreKey) -> String;
}

/// A store failure caused by `e`, kept as the source. `place` names the
/// file, folder or secret; `e` must not carry stored text (an I/O or
/// secret-store error does not).
fn store_error<E>(key: &StoreKey, place: &str, e: E) -> AuthError
where
    E: std::error::Error + Send + Sync + 'static,
{
    store_failure(key, place, e.to_string()).with_source(e)
}

fn store_failure(key: &StoreKey, place: &str, message: String) -> AuthError {
    AuthError::new(
        key.server_name.clone(),
        AuthErrorKind::Store {
            path: place.to_owned(),
            message,
        },
    )
}

/// Stored text that is not credentials JSON. serde_json's message can
/// quote the text it read (a token among it), so the error says only
/// where the text goes wrong, and keeps no source.
fn not_credentials(key: &StoreKey, place: &str, e: &serde_json::Error) -> AuthError {
    let what = match e.classify() {
        serde_json::error::Category::Io => "unreadable",
        serde_json::error::Category::Syntax => "a syntax error",
        serde_json::error::Category::Data => "a value of the wrong shape",
        serde_json::error::Category::Eof => "cut short",
    };
    store_failure(
        key,
        place,
        format!(
            "not valid credentials json ({what} at line {} column {})",
            e.line(),
            e.column()
        ),
    )
}

/// `credentials` parsed from stored `text`.
fn parse(key: &StoreKey, place: &str, text: &str) -> Result<StoredCredentials, AuthError> {
    serde_json::from_str(text).map_err(|e| not_credentials(key, place, &e))
}

#[cfg(test)]
mod tests;
