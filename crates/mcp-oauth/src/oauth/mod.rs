//! [`OAuthProvider`]: the [`AuthProvider`] that signs in to an MCP server
//! with OAuth, keeps its tokens in a [`CredentialStore`] and refreshes them.
//!
//! The provider is split by step: `settings` is what the host configures,
//! `discovery` finds the authorization server, `registration` settles the
//! client identity, `grant` runs the chosen grant, and `refresh` renews
//! tokens under the store's lock. This file holds the provider's state and
//! the [`AuthProvider`] seam that drives the steps.

mod discovery;
mod from_config;
mod grant;
mod refresh;
mod registration;
mod settings;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use url::Url;

use crate::metadata::{
    AuthServerMetadata, BearerChallenge, check_metadata_override, parse_www_authenticate,
};
use crate::store::{CredentialStore, StoreKey, StoredCredentials, TokenSet};
use crate::token::now_secs;
use crate::user_agent::AuthorizationPrompt;
use crate::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, Secret, authorization_fingerprint,
};

pub use from_config::{DpopChoice, dpop_choice, settings_from_config, settings_from_config_live};
pub use settings::{
    AssertionSource, CrossAppAccess, Grant, OAuthConfigExt, OAuthSettings, PrivateKey,
};

/// By default, refresh this long before the access token expires.
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// Step-up re-authorizations allowed for one scope set before a 403 is
/// surfaced, so a server that never accepts any scope cannot loop us
/// forever; a challenge for new scopes starts a fresh count.
pub const MAX_STEP_UPS: u32 = 2;
/// How long an interactive login may take.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// What discovery found for a server.
#[derive(Debug, Clone)]
struct Discovery {
    resource: String,
    metadata: AuthServerMetadata,
    resource_scopes: Option<Vec<String>>,
}

#[derive(Debug, Default)]
struct State {
    loaded: bool,
    creds: StoredCredentials,
    discovery: Option<Discovery>,
    /// The scope set of the last step-up and how often it was tried.
    step_up: Option<(String, u32)>,
    /// The token already refreshed after a 401, so a second 401 for the same
    /// token goes straight to a new authorization.
    refreshed_after_401: Option<Secret>,
}

/// Signs in to one MCP server with OAuth and supplies its bearer token to
/// the transports.
pub struct OAuthProvider {
    settings: OAuthSettings,
    server_url: Url,
    key: StoreKey,
    http: reqwest::Client,
    store: Arc<dyn CredentialStore>,
    prompt: Arc<dyn AuthorizationPrompt>,
    state: tokio::sync::Mutex<State>,
}

impl std::fmt::Debug for OAuthProvider {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuthProvider")
            .field("server", &self.settings.server_name)
            .field("url", &self.settings.server_url)
            .field("grant", &self.settings.grant)
            .finish_non_exhaustive()
    }
}

impl OAuthProvider {
    /// A provider for `settings`, keeping credentials in `store` and asking
    /// the user through `prompt`.
    pub fn new(
        settings: OAuthSettings,
        store: Arc<dyn CredentialStore>,
        prompt: Arc<dyn AuthorizationPrompt>,
    ) -> Result<Self, AuthError> {
        let server = settings.server_name.clone();
        let config_error =
            |field: &str, message: String| AuthError::config(server.clone(), field, message);
        let server_url = Url::parse(&settings.server_url)
            .map_err(|e| config_error("url", format!("not a url: {e}")))?;
        if let Some(raw) = &settings.config.auth_server_metadata_url {
            check_metadata_override(&server, raw)?;
        }
        match (&settings.grant, settings.config.xaa) {
            (Grant::CrossAppAccess(_), false) => {
                return Err(config_error(
                    "oauth.xaa",
                    "cross-app access credentials were given but xaa is off".into(),
                ));
            }
            (Grant::CrossAppAccess(_), true) => {}
            (_, true) => {
                return Err(config_error(
                    "oauth.xaa",
                    "xaa is on but no identity provider token was given".into(),
                ));
            }
            _ => {}
        }
        if !matches!(
            settings.grant,
            Grant::AuthorizationCode | Grant::JwtBearer { .. }
        ) && settings.config.client_id.is_none()
        {
            return Err(config_error(
                "oauth.clientId",
                "this grant needs a pre-registered client id".into(),
            ));
        }
        let http = reqwest::Client::builder()
            .timeout(Duration::from_secs(30))
            .redirect(crate::redirect::same_origin_only())
            .build()
            .map_err(|e| {
                AuthError::failed(server.clone(), format!("cannot build http client: {e}"))
            })?;
        let key = StoreKey::new(&settings.server_name, &settings.server_url);
        Ok(Self {
            settings,
            server_url,
            key,
            http,
            store,
            prompt,
            state: tokio::sync::Mutex::new(State::default()),
        })
    }

    /// The store key of this server's credentials.
    pub fn store_key(&self) -> &StoreKey {
        &self.key
    }

    /// Signs in now, replacing any stored tokens. The server is asked once
    /// without credentials so its 401 can name its metadata, as it would on
    /// first use.
    pub async fn login(&self) -> Result<(), AuthError> {
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        st.discovery = None;
        let challenge = self.probe().await;
        self.authorize(&mut st, &challenge, None).await
    }

    /// The server's `Bearer` challenge to an unauthenticated request, or
    /// the empty challenge when it sends none (or cannot be reached: the
    /// well-known locations are tried next anyway).
    async fn probe(&self) -> BearerChallenge {
        let answer = self
            .http
            .post(self.server_url.clone())
            .header(
                reqwest::header::ACCEPT,
                "application/json, text/event-stream",
            )
            .json(&serde_json::json!({"jsonrpc": "2.0", "id": 0, "method": "ping"}))
            .send()
            .await;
        match answer {
            Ok(response) if response.status().as_u16() == 401 => response
                .headers()
                .get(reqwest::header::WWW_AUTHENTICATE)
                .and_then(|v| v.to_str().ok())
                .map(parse_www_authenticate)
                .unwrap_or_default(),
            _ => BearerChallenge::default(),
        }
    }

    /// Removes this server's stored credentials and forgets them here.
    pub async fn logout(&self) -> Result<(), AuthError> {
        let mut st = self.state.lock().await;
        let store = self.store.clone();
        let key = self.key.clone();
        self.blocking(move || store.clear(&key)).await?;
        *st = State {
            loaded: true,
            ..State::default()
        };
        Ok(())
    }

    /// The current tokens (for status displays; secrets stay wrapped).
    pub async fn tokens(&self) -> Result<Option<TokenSet>, AuthError> {
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        Ok(st.creds.tokens.clone())
    }

    fn margin(&self) -> u64 {
        self.settings.refresh_margin.as_secs()
    }

    fn fail(&self, message: impl Into<String>) -> AuthError {
        AuthError::failed(self.settings.server_name.clone(), message)
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, AuthError> + Send + 'static,
    ) -> Result<T, AuthError> {
        tokio::task::spawn_blocking(f)
            .await
            .map_err(|e| self.fail(format!("credential store task failed: {e}")))?
    }

    async fn ensure_loaded(&self, st: &mut State) -> Result<(), AuthError> {
        if !st.loaded {
            let store = self.store.clone();
            let key = self.key.clone();
            st.creds = self
                .blocking(move || store.load(&key))
                .await?
                .unwrap_or_default();
            st.loaded = true;
        }
        Ok(())
    }

    /// Re-reads the store when no tokens are held here: another process
    /// (a `login` command) may have signed in since. Returns whether tokens
    /// were found.
    async fn adopt_stored_login(&self, st: &mut State) -> Result<bool, AuthError> {
        if st.creds.tokens.is_some() {
            return Ok(false);
        }
        let store = self.store.clone();
        let key = self.key.clone();
        let stored = self.blocking(move || store.load(&key)).await?;
        match stored {
            Some(creds) if creds.tokens.is_some() => {
                st.creds = creds;
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn save(&self, creds: &StoredCredentials) -> Result<(), AuthError> {
        let store = self.store.clone();
        let key = self.key.clone();
        let creds = creds.clone();
        self.blocking(move || store.save(&key, &creds)).await
    }
}

fn scope_union(current: Option<&str>, wanted: Option<&str>) -> Option<String> {
    let mut out: Vec<&str> = Vec::new();
    for s in current
        .into_iter()
        .chain(wanted)
        .flat_map(str::split_whitespace)
    {
        if !out.contains(&s) {
            out.push(s);
        }
    }
    (!out.is_empty()).then(|| out.join(" "))
}

#[async_trait]
impl AuthProvider for OAuthProvider {
    async fn authorization(&self) -> Result<Option<String>, AuthError> {
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        self.adopt_stored_login(&mut st).await?;
        let Some(tokens) = st.creds.tokens.clone() else {
            return Ok(None);
        };
        if tokens.expires_within(now_secs(), self.margin())
            && !self.refresh(&mut st, &tokens.access_token).await?
        {
            return Ok(None);
        }
        Ok(st
            .creds
            .tokens
            .as_ref()
            .map(|t| format!("Bearer {}", t.access_token.expose())))
    }

    async fn on_challenge(&self, challenge: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        let bearer = challenge
            .www_authenticate
            .as_deref()
            .map(parse_www_authenticate)
            .unwrap_or_default();
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        match challenge.status {
            401 => {
                // Signed in elsewhere (a `login` command) since: use that.
                if self.adopt_stored_login(&mut st).await? {
                    return Ok(ChallengeOutcome::Retry);
                }
                // A concurrent request already replaced the refused token:
                // retry with the current one instead of refreshing again.
                if let (Some(refused), Some(tokens)) =
                    (&challenge.refused_authorization, &st.creds.tokens)
                    && *refused
                        != authorization_fingerprint(&format!(
                            "Bearer {}",
                            tokens.access_token.expose()
                        ))
                {
                    return Ok(ChallengeOutcome::Retry);
                }
                if let Some(tokens) = st.creds.tokens.clone()
                    && st.refreshed_after_401.as_ref() != Some(&tokens.access_token)
                {
                    st.refreshed_after_401 = Some(tokens.access_token.clone());
                    if self.refresh(&mut st, &tokens.access_token).await? {
                        return Ok(ChallengeOutcome::Retry);
                    }
                }
                self.authorize(&mut st, &bearer, None).await?;
                Ok(ChallengeOutcome::Retry)
            }
            403 if bearer.error.as_deref() == Some("insufficient_scope") => {
                let current = st.creds.tokens.as_ref().and_then(|t| t.scope.clone());
                let wanted = scope_union(current.as_deref(), bearer.scope.as_deref());
                let key = wanted.clone().unwrap_or_default();
                match &mut st.step_up {
                    Some((scopes, tries)) if *scopes == key => {
                        if *tries >= MAX_STEP_UPS {
                            tracing::debug!(server = %self.settings.server_name, "step-up limit reached");
                            return Ok(ChallengeOutcome::GiveUp);
                        }
                        *tries += 1;
                    }
                    _ => st.step_up = Some((key, 1)),
                }
                self.authorize(&mut st, &bearer, wanted).await?;
                Ok(ChallengeOutcome::Retry)
            }
            _ => Ok(ChallengeOutcome::GiveUp),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scope_union_keeps_order_and_drops_duplicates() {
        assert_eq!(
            scope_union(Some("mcp:basic"), Some("mcp:basic mcp:write")).as_deref(),
            Some("mcp:basic mcp:write")
        );
        assert_eq!(scope_union(None, None), None);
        assert_eq!(scope_union(None, Some("a")).as_deref(), Some("a"));
    }
}
