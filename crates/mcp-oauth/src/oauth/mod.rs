//! [`OAuthProvider`]: the [`AuthProvider`] that signs in to an MCP server
//! with OAuth, keeps its tokens in a [`CredentialStore`] and refreshes them.
//!
//! The provider is split by step: `settings` is what the host configures,
//! `discovery` finds the authorization server, `registration` settles the
//! client identity, `grant` runs the chosen grant, and `refresh` renews
//! tokens under the store's lock, and `binding` keeps the DPoP key and
//! nonces. This file holds the provider's state and
//! the [`AuthProvider`] seam that drives the steps.

mod binding;
mod discovery;
mod from_config;
mod grant;
mod refresh;
mod registration;
mod revoke;
mod settings;

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use url::Url;

use crate::clock::now_secs;
use crate::dpop::DpopKey;
use crate::metadata::{
    AuthServerMetadata, BearerChallenge, check_metadata_override, parse_www_authenticate,
};
use crate::store::{CredentialStore, StoreKey, StoredCredentials, TokenSet};
use crate::user_agent::AuthorizationPrompt;
use crate::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, Credentials, RequestTarget, Secret,
    UrlPolicy, authorization_fingerprint,
};

pub use from_config::{dpop_mode, settings_from_config, settings_from_config_live};
pub use settings::{CrossAppAccess, Grant, OAuthConfigExt, OAuthSettings, PrivateKey};

/// By default, refresh this long before the access token expires.
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// Step-up re-authorizations allowed for one scope set before a 403 is
/// surfaced, so a server that never accepts any scope cannot loop us
/// forever; a challenge for new scopes starts a fresh count.
pub const MAX_STEP_UPS: u32 = 2;
/// How long an interactive login may take.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether the user asked for a sign-in (`login`) or a server's refusal
/// of a request started it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Trigger {
    Requested,
    Unrequested,
}

/// What discovery found for a server.
#[derive(Debug, Clone)]
struct Discovery {
    resource: String,
    metadata: AuthServerMetadata,
    /// The issuer of a metadata document that passed validation, recorded
    /// before the user is sent away so the response's `iss` is compared
    /// with an authentic value; `None` for the 2025-03-26 default endpoints.
    recorded_issuer: Option<String>,
    resource_scopes: Option<Vec<String>>,
    /// The DPoP key of the grant under way (set by `authorize`).
    dpop: Option<DpopKey>,
}

/// What a sign-in did, so a host can tell the user (a new registration
/// because the authorization server changed, the scopes granted).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignIn {
    /// The authorization server's issuer, when its metadata named one.
    pub issuer: Option<String>,
    /// Where the client identity came from.
    pub client: ClientSource,
    /// The scopes granted (or requested, when the server did not say).
    pub scope: Option<String>,
}

/// Where the client identity of a sign-in came from.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ClientSource {
    /// `oauth.clientId` (or the grant's own client).
    Configured,
    /// A client ID metadata document URL.
    MetadataDocument,
    /// A registration made earlier with this same authorization server.
    Stored,
    /// A new dynamic registration; `previous` names the authorization
    /// server the earlier credentials belonged to when it changed.
    Registered {
        /// The issuer the server used before, if it changed.
        previous: Option<String>,
    },
}

/// What a logout did.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct SignOut {
    /// Whether anything was stored for the server.
    pub had_credentials: bool,
    /// What revocation did.
    pub revocation: Revocation,
}

/// The outcome of revoking a server's tokens at logout (RFC 7009).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Revocation {
    /// No tokens were held.
    NothingToRevoke,
    /// The authorization server offers no revocation endpoint.
    NotOffered,
    /// The tokens named were revoked at `endpoint`.
    Revoked {
        /// The revocation endpoint.
        endpoint: String,
        /// `refresh token`, `access token`.
        tokens: Vec<&'static str>,
    },
    /// The endpoint refused or could not be reached; local credentials
    /// are removed anyway.
    Failed {
        /// Why, without secrets.
        message: String,
    },
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
    /// What the last sign-in of this provider did.
    last_sign_in: Option<SignIn>,
    /// The parsed DPoP key (of `creds.dpop_key`, or made for a grant).
    dpop_key: Option<DpopKey>,
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
    dpop: binding::DpopRuntime,
    /// Judges the URLs the server names.
    policy: UrlPolicy,
    /// Judges the endpoints of the authorization server: the server's
    /// policy, or, when the user named the metadata document, the policy
    /// of where that document is.
    as_policy: UrlPolicy,
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
            .map_err(|e| config_error("url", format!("not a url: {e}")).with_source(e))?;
        let policy = settings.url_policy(&server_url);
        let as_policy = match &settings.config.auth_server_metadata_url {
            Some(raw) => UrlPolicy::for_server(&check_metadata_override(&server, raw)?),
            None => policy,
        };
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
                    .with_source(e)
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
            dpop: binding::DpopRuntime::default(),
            policy,
            as_policy,
        })
    }

    /// The store key of this server's credentials.
    pub fn store_key(&self) -> &StoreKey {
        &self.key
    }

    /// Signs in now, replacing any stored tokens. The server is asked once
    /// without credentials so its 401 can name its metadata, as it would on
    /// first use.
    pub async fn login(&self) -> Result<SignIn, AuthError> {
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        st.discovery = None;
        let challenge = self.probe().await;
        self.authorize(&mut st, &challenge, None, Trigger::Requested)
            .await
    }

    /// Obtains new tokens without a person when the grant needs none
    /// (client credentials, workload identity, cross-app access); `false`
    /// for the authorization-code grant, which needs a sign-in.
    async fn renew_without_user(&self, st: &mut State) -> Result<bool, AuthError> {
        // Without a discovery from this run the server's challenge is
        // needed to find its metadata: let the request draw it.
        if self.settings.requires_user_auth() || st.discovery.is_none() {
            return Ok(false);
        }
        self.authorize(st, &BearerChallenge::default(), None, Trigger::Unrequested)
            .await?;
        Ok(true)
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
                .map(|header| {
                    self.note_resource_challenge(header);
                    parse_www_authenticate(header)
                })
                .unwrap_or_default(),
            _ => BearerChallenge::default(),
        }
    }

    /// Revokes this server's tokens where the authorization server offers
    /// revocation (RFC 7009), then removes its stored credentials and lock
    /// file and forgets them here. A failed revocation is reported, and
    /// the local credentials are removed all the same.
    pub async fn logout(&self) -> Result<SignOut, AuthError> {
        let mut st = self.state.lock().await;
        let store = self.store.clone();
        let key = self.key.clone();
        let stored = self.blocking(move || store.load(&key)).await?;
        let had_credentials = stored.is_some();
        let revocation = match &stored {
            Some(creds) => self.revoke(creds).await,
            None => Revocation::NothingToRevoke,
        };
        let store = self.store.clone();
        let key = self.key.clone();
        self.blocking(move || store.clear(&key)).await?;
        *st = State {
            loaded: true,
            ..State::default()
        };
        Ok(SignOut {
            had_credentials,
            revocation,
        })
    }

    /// What this provider's last sign-in did, if it signed in.
    pub async fn last_sign_in(&self) -> Option<SignIn> {
        self.state.lock().await.last_sign_in.clone()
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

    /// `raw`, named by the server, if the server's URL policy allows it.
    fn allowed(&self, what: &str, raw: &str) -> Result<Url, AuthError> {
        self.judged(self.policy, what, raw)
    }

    /// `raw`, an endpoint of the authorization server, if its policy
    /// allows it.
    fn allowed_endpoint(&self, what: &str, raw: &str) -> Result<Url, AuthError> {
        self.judged(self.as_policy, what, raw)
    }

    fn judged(&self, policy: UrlPolicy, what: &str, raw: &str) -> Result<Url, AuthError> {
        policy.check(raw).map_err(|reason| {
            tracing::debug!(server = %self.settings.server_name, what, url = raw, %reason, "url refused");
            AuthError::refused_url(self.settings.server_name.clone(), what, raw, reason)
        })
    }

    fn fail(&self, message: impl Into<String>) -> AuthError {
        AuthError::failed(self.settings.server_name.clone(), message)
    }

    async fn blocking<T: Send + 'static>(
        &self,
        f: impl FnOnce() -> Result<T, AuthError> + Send + 'static,
    ) -> Result<T, AuthError> {
        tokio::task::spawn_blocking(f).await.map_err(|e| {
            self.fail(format!("credential store task failed: {e}"))
                .with_source(e)
        })?
    }

    async fn ensure_loaded(&self, st: &mut State) -> Result<(), AuthError> {
        if !st.loaded {
            let store = self.store.clone();
            let key = self.key.clone();
            st.creds = self
                .blocking(move || store.load(&key))
                .await?
                .unwrap_or_default();
            adopt_registration(&mut st.creds);
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

    /// The tokens to present, refreshed ahead of expiry; `None` when there
    /// are none (or the refresh could not renew them).
    async fn current_tokens(&self, st: &mut State) -> Result<Option<TokenSet>, AuthError> {
        self.ensure_loaded(st).await?;
        self.adopt_stored_login(st).await?;
        let Some(tokens) = st.creds.tokens.clone() else {
            // A grant without a person signs in again on its own instead of
            // sending a request it knows will be refused.
            self.renew_without_user(st).await?;
            return Ok(st.creds.tokens.clone());
        };
        let now = now_secs();
        if tokens.refresh_due(now, self.margin()) {
            match self.refresh(st, &tokens.access_token).await {
                Ok(true) => {}
                Ok(false) => {
                    if !self.renew_without_user(st).await? && tokens.expired(now) {
                        return Ok(None);
                    }
                }
                // A transient failure (network, 5xx) keeps what is stored:
                // the current token serves until it expires.
                Err(e) if !tokens.expired(now) => {
                    tracing::debug!(server = %self.settings.server_name, %e, "refresh failed; the current token is still valid");
                }
                Err(e) => return Err(e),
            }
        }
        Ok(st.creds.tokens.clone())
    }

    async fn save(&self, creds: &StoredCredentials) -> Result<(), AuthError> {
        let store = self.store.clone();
        let key = self.key.clone();
        let creds = creds.clone();
        self.blocking(move || store.save(&key, &creds)).await
    }
}

/// Credentials saved before registrations were kept by issuer hold their
/// dynamic registration as the current client only: file it under its
/// issuer so it is reused with that server, and only with it.
fn adopt_registration(creds: &mut StoredCredentials) {
    if !creds.registrations.is_empty() {
        return;
    }
    if let (Some(issuer), Some(client)) = (&creds.issuer, &creds.client)
        && client.redirect_uri.is_some()
        && !client.client_id.starts_with("https://")
    {
        creds.registrations.insert(issuer.clone(), client.clone());
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
        Ok(self
            .current_tokens(&mut st)
            .await?
            .map(|t| self.authorization_value(&st, &t.access_token)))
    }

    async fn credentials(
        &self,
        target: &RequestTarget<'_>,
    ) -> Result<Option<Credentials>, AuthError> {
        let mut st = self.state.lock().await;
        match self.current_tokens(&mut st).await? {
            Some(tokens) => self
                .resource_credentials(&mut st, &tokens, target)
                .map(Some),
            None => Ok(None),
        }
    }

    fn observe_dpop_nonce(&self, nonce: &str) {
        self.observe_resource_nonce(nonce);
    }

    async fn on_challenge(&self, challenge: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        let bearer = challenge
            .www_authenticate
            .as_deref()
            .map(parse_www_authenticate)
            .unwrap_or_default();
        let mut st = self.state.lock().await;
        self.ensure_loaded(&mut st).await?;
        if let Some(outcome) = self.dpop_nonce_challenge(&st, challenge) {
            return Ok(outcome);
        }
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
                        != authorization_fingerprint(
                            &self.authorization_value(&st, &tokens.access_token),
                        )
                {
                    return Ok(ChallengeOutcome::Retry);
                }
                if let Some(tokens) = st.creds.tokens.clone()
                    && st.refreshed_after_401.as_ref() != Some(&tokens.access_token)
                {
                    // Marked only once the refresh was answered: after a
                    // passing failure the next 401 tries the refresh again.
                    let refreshed = self.refresh(&mut st, &tokens.access_token).await?;
                    st.refreshed_after_401 = Some(tokens.access_token.clone());
                    if refreshed {
                        return Ok(ChallengeOutcome::Retry);
                    }
                }
                self.authorize(&mut st, &bearer, None, Trigger::Unrequested)
                    .await?;
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
                self.authorize(&mut st, &bearer, wanted, Trigger::Unrequested)
                    .await?;
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
    fn a_file_from_before_registrations_were_kept_by_issuer_files_its_client_under_its_issuer() {
        let client = |id: &str, redirect: Option<&str>| crate::store::ClientRegistration {
            client_id: id.into(),
            client_secret: None,
            token_endpoint_auth_method: "none".into(),
            redirect_uri: redirect.map(str::to_owned),
        };
        let old = |c| StoredCredentials {
            issuer: Some("https://as.example".into()),
            client: Some(c),
            ..StoredCredentials::default()
        };
        // A dynamic registration: reused with its own issuer only.
        let mut creds = old(client("dyn-1", Some("http://127.0.0.1:5/callback")));
        adopt_registration(&mut creds);
        assert_eq!(
            creds
                .registrations
                .get("https://as.example")
                .map(|c| c.client_id.as_str()),
            Some("dyn-1")
        );
        // A metadata document url, or a client without a redirect (client
        // credentials), is no registration.
        for c in [
            client(
                "https://app.example/client.json",
                Some("http://127.0.0.1:5/callback"),
            ),
            client("svc", None),
        ] {
            let mut creds = old(c);
            adopt_registration(&mut creds);
            assert!(creds.registrations.is_empty());
        }
    }

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
