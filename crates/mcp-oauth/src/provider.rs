//! The seam between HTTP transports and whatever supplies credentials:
//! the transports ask for [`Credentials`] for every request (method and
//! url, so a DPoP proof can be bound to them), hand over every refusal as a
//! [`Challenge`], and pass on each `DPoP-Nonce` a server sends.

use async_trait::async_trait;

use crate::error::AuthError;

/// What the server said when it refused a request.
///
/// A transport builds one with [`Challenge::new`] and sets the optional
/// parts it saw, so parts added later do not break it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct Challenge {
    /// 401 or 403.
    pub status: u16,
    /// The raw `WWW-Authenticate` header, if the server sent one.
    pub www_authenticate: Option<String>,
    /// The MCP endpoint that answered.
    pub url: String,
    /// [`authorization_fingerprint`] of the `Authorization` value the server
    /// refused (`None` when the request carried none). A provider compares
    /// it with its current token to tell a stale token from one a concurrent
    /// request already replaced, without the secret itself travelling here.
    pub refused_authorization: Option<String>,
    /// The response's `DPoP-Nonce` header (RFC 9449 section 9), if any.
    pub dpop_nonce: Option<String>,
}

impl Challenge {
    /// A refusal with `status` (401 or 403) from the MCP endpoint `url`,
    /// with no header seen and no `Authorization` sent.
    pub fn new(status: u16, url: impl Into<String>) -> Self {
        Challenge {
            status,
            www_authenticate: None,
            url: url.into(),
            refused_authorization: None,
            dpop_nonce: None,
        }
    }

    /// Sets the raw `WWW-Authenticate` header.
    pub fn with_www_authenticate(mut self, header: impl Into<String>) -> Self {
        self.www_authenticate = Some(header.into());
        self
    }

    /// Sets the [`authorization_fingerprint`] of the refused `Authorization` value.
    pub fn with_refused_authorization(mut self, fingerprint: impl Into<String>) -> Self {
        self.refused_authorization = Some(fingerprint.into());
        self
    }

    /// Sets the response's `DPoP-Nonce` header.
    pub fn with_dpop_nonce(mut self, nonce: impl Into<String>) -> Self {
        self.dpop_nonce = Some(nonce.into());
        self
    }
}

/// The request credentials are wanted for: a DPoP proof is bound to its
/// method and url.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RequestTarget<'a> {
    /// The HTTP method, e.g. `POST`.
    pub method: &'a str,
    /// The request url without query and fragment.
    pub url: &'a str,
}

/// What to attach to one request.
#[derive(Clone, PartialEq, Eq)]
pub struct Credentials {
    /// The `Authorization` header value (`Bearer <token>` or `DPoP <token>`).
    pub authorization: String,
    /// The `DPoP` header value: a proof for this one request.
    pub dpop: Option<String>,
}

impl std::fmt::Debug for Credentials {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Credentials")
            .field("authorization", &"***")
            .field("dpop", &self.dpop.as_ref().map(|_| "***"))
            .finish()
    }
}

/// A short, non-reversible fingerprint of an `Authorization` header value
/// (hex of the first 16 bytes of its SHA-256), safe to keep and compare.
pub fn authorization_fingerprint(value: &str) -> String {
    use sha2::{Digest, Sha256};
    use std::fmt::Write;
    let digest = Sha256::digest(value.as_bytes());
    digest[..16]
        .iter()
        .fold(String::with_capacity(32), |mut out, byte| {
            let _ = write!(out, "{byte:02x}");
            out
        })
}

/// What the transport should do after a challenge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ChallengeOutcome {
    /// New credentials are available: retry the request once.
    Retry,
    /// Nothing more can be done: surface the refusal.
    GiveUp,
}

/// Supplies bearer tokens to the HTTP, SSE and proxy transports.
#[async_trait]
pub trait AuthProvider: Send + Sync + std::fmt::Debug {
    /// The `Authorization` header value to attach to the next request, if any
    /// (for example `Bearer <token>`). Refreshes ahead of expiry.
    async fn authorization(&self) -> Result<Option<String>, AuthError>;

    /// The credentials for one request to `target`: the `Authorization`
    /// value and, for DPoP-bound tokens, a fresh proof. The default wraps
    /// [`AuthProvider::authorization`] without a proof.
    async fn credentials(
        &self,
        target: &RequestTarget<'_>,
    ) -> Result<Option<Credentials>, AuthError> {
        let _ = target;
        Ok(self
            .authorization()
            .await?
            .map(|authorization| Credentials {
                authorization,
                dpop: None,
            }))
    }

    /// A response's `DPoP-Nonce` header: the nonce the server wants in the
    /// next proof (RFC 9449 section 9). The default ignores it.
    fn observe_dpop_nonce(&self, nonce: &str) {
        let _ = nonce;
    }

    /// Called once per request on a 401, or a 403 `insufficient_scope`.
    async fn on_challenge(&self, challenge: &Challenge) -> Result<ChallengeOutcome, AuthError>;
}
