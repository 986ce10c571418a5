//! DPoP for this provider: which key a grant or a refresh proves
//! possession of (the stored one, else a fresh one when the settings and
//! the servers call for DPoP), the nonces both servers gave, and the
//! credentials for one resource request.
//!
//! The key and the tokens travel together: `StoredCredentials.dpop_key` is
//! set exactly when the tokens are DPoP tokens, so the scheme of the
//! `Authorization` header follows from the stored credentials alone.

use std::sync::atomic::{AtomicBool, Ordering};

use crate::dpop::{ALGORITHM, DpopKey, DpopMode, DpopNonce, TokenDpop};
use crate::metadata::{AuthServerMetadata, has_scheme, parse_challenge};
use crate::store::{StoredCredentials, TokenSet};
use crate::{AuthError, Challenge, ChallengeOutcome, Credentials, RequestTarget, Secret};

use super::{OAuthProvider, State};

/// What the provider learnt about DPoP from the servers so far.
#[derive(Debug, Default)]
pub(super) struct DpopRuntime {
    /// The authorization server's latest nonce.
    as_nonce: DpopNonce,
    /// The resource server's latest nonce.
    rs_nonce: DpopNonce,
    /// Whether the resource challenged with the `DPoP` scheme.
    resource_asked: AtomicBool,
    /// Whether the last grant's token, requested with a proof, came back
    /// DPoP-bound (read by `authorize` right after the grant).
    grant_bound: AtomicBool,
}

impl OAuthProvider {
    /// The key a new grant at the server described by `md` proves
    /// possession of, or `None` for bearer tokens. A stored key is reused,
    /// so a new grant keeps the key the earlier tokens were bound to.
    pub(super) fn grant_key(
        &self,
        st: &mut State,
        md: &AuthServerMetadata,
    ) -> Result<Option<DpopKey>, AuthError> {
        let listed = md
            .dpop_signing_alg_values_supported
            .as_deref()
            .unwrap_or_default();
        let supported = listed.iter().any(|alg| alg == ALGORITHM);
        let unsupported = |why: &str| {
            AuthError::config(
                self.settings.server_name.clone(),
                "oauth.dpop",
                format!(
                    "{why}, but the authorization server {} does not accept {ALGORITHM} proofs (it lists: {})",
                    md.audience(),
                    if listed.is_empty() {
                        "none".to_owned()
                    } else {
                        listed.join(", ")
                    }
                ),
            )
        };
        let wanted = match self.settings.dpop {
            DpopMode::Never => false,
            DpopMode::Always if !supported => return Err(unsupported("DPoP is required")),
            DpopMode::Always => true,
            DpopMode::Auto if supported => true,
            DpopMode::Auto if self.dpop.resource_asked.load(Ordering::Relaxed) => {
                // The server may support DPoP without saying so; it may not
                // when it names only algorithms we cannot sign with.
                if !listed.is_empty() {
                    return Err(unsupported("the resource asks for DPoP"));
                }
                true
            }
            DpopMode::Auto => false,
        };
        if !wanted {
            return Ok(None);
        }
        match self.bound_key(st) {
            Ok(Some(key)) => return Ok(Some(key)),
            Ok(None) => {}
            Err(e) => {
                tracing::debug!(server = %self.settings.server_name, error = %e, "stored DPoP key unusable; using a new one")
            }
        }
        let key = DpopKey::generate(&self.settings.server_name)?;
        st.dpop_key = Some(key.clone());
        Ok(Some(key))
    }

    /// The key a refresh of `creds` proves possession of: the one its
    /// tokens are bound to, else a new one when DPoP is always on.
    pub(super) fn refresh_key(
        &self,
        st: &mut State,
        creds: &StoredCredentials,
    ) -> Result<Option<DpopKey>, AuthError> {
        if let Some(stored) = &creds.dpop_key {
            return self.key_for(st, stored).map(Some);
        }
        if self.settings.dpop == DpopMode::Always {
            return DpopKey::generate(&self.settings.server_name).map(Some);
        }
        Ok(None)
    }

    /// DPoP for a token request at the authorization server with `key`.
    pub(super) fn token_dpop<'a>(&'a self, key: Option<&'a DpopKey>) -> Option<TokenDpop<'a>> {
        key.map(|key| TokenDpop {
            key,
            nonce: &self.dpop.as_nonce,
        })
    }

    /// Records whether the grant's token response was DPoP-bound.
    pub(super) fn record_grant_binding(&self, bound: bool) {
        self.dpop.grant_bound.store(bound, Ordering::Relaxed);
    }

    /// Whether the last grant's token was DPoP-bound; resets the mark.
    pub(super) fn take_grant_binding(&self) -> bool {
        self.dpop.grant_bound.swap(false, Ordering::Relaxed)
    }

    /// The key the current tokens are bound to, if they are DPoP tokens.
    fn bound_key(&self, st: &mut State) -> Result<Option<DpopKey>, AuthError> {
        match st.creds.dpop_key.clone() {
            Some(stored) => self.key_for(st, &stored).map(Some),
            None => Ok(None),
        }
    }

    /// The parsed form of `stored`, cached so a request does not parse the
    /// key again.
    fn key_for(&self, st: &mut State, stored: &Secret) -> Result<DpopKey, AuthError> {
        if let Some(key) = &st.dpop_key
            && key.pkcs8() == stored
        {
            return Ok(key.clone());
        }
        let key = DpopKey::from_pkcs8(&self.settings.server_name, stored)?;
        st.dpop_key = Some(key.clone());
        Ok(key)
    }

    /// The `Authorization` value for `token`: `DPoP` for bound tokens.
    pub(super) fn authorization_value(&self, st: &State, token: &Secret) -> String {
        let scheme = if st.creds.dpop_key.is_some() {
            "DPoP"
        } else {
            "Bearer"
        };
        format!("{scheme} {}", token.expose())
    }

    /// The credentials for one request to `target` with `tokens`: a fresh
    /// proof with `ath` and the resource's latest nonce for DPoP tokens.
    pub(super) fn resource_credentials(
        &self,
        st: &mut State,
        tokens: &TokenSet,
        target: &RequestTarget<'_>,
    ) -> Result<Credentials, AuthError> {
        let authorization = self.authorization_value(st, &tokens.access_token);
        let dpop = match self.bound_key(st)? {
            Some(key) => Some(key.proof(
                &self.settings.server_name,
                target.method,
                target.url,
                Some(&tokens.access_token),
                self.dpop.rs_nonce.get().as_deref(),
            )?),
            None => None,
        };
        Ok(Credentials {
            authorization,
            dpop,
        })
    }

    /// Keeps a nonce the resource sent with any response.
    pub(super) fn observe_resource_nonce(&self, nonce: &str) {
        self.dpop.rs_nonce.observe(nonce);
    }

    /// Notes a resource challenge's `DPoP` scheme (for [`DpopMode::Auto`]).
    pub(super) fn note_resource_challenge(&self, www_authenticate: &str) {
        if has_scheme(www_authenticate, "dpop") {
            self.dpop.resource_asked.store(true, Ordering::Relaxed);
        }
    }

    /// The answer to a resource's `use_dpop_nonce` challenge (RFC 9449
    /// section 9): retry with its nonce, without refreshing or signing in
    /// again; give up when the nonce is missing or unusable. `None` for
    /// every other challenge, and when the tokens are not DPoP tokens (a
    /// new grant has to bind them first).
    pub(super) fn dpop_nonce_challenge(
        &self,
        st: &State,
        challenge: &Challenge,
    ) -> Option<ChallengeOutcome> {
        let header = challenge.www_authenticate.as_deref()?;
        self.note_resource_challenge(header);
        if challenge.status != 401
            || st.creds.dpop_key.is_none()
            || parse_challenge(header, "dpop").error.as_deref() != Some("use_dpop_nonce")
        {
            return None;
        }
        let fresh = challenge
            .dpop_nonce
            .as_deref()
            .is_some_and(|nonce| self.dpop.rs_nonce.observe(nonce));
        if !fresh {
            tracing::debug!(server = %self.settings.server_name, "use_dpop_nonce without a usable nonce");
        }
        Some(if fresh {
            ChallengeOutcome::Retry
        } else {
            ChallengeOutcome::GiveUp
        })
    }
}
