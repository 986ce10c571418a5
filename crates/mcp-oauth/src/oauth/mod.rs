//! [`OAuthProvider`]: the [`AuthProvider`] that signs in to an MCP server
//! with OAuth, keeps its tokens in a [`CredentialStore`] and refreshes them.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use mcp_config::McpOAuthConfig;
use serde::de::DeserializeOwned;
use url::Url;

use crate::metadata::{
    AuthServerMetadata, BearerChallenge, ProtectedResourceMetadata, auth_server_candidates,
    canonical_resource, check_metadata_override, parse_www_authenticate,
    protected_resource_candidates, resource_matches,
};
use crate::pkce::{Pkce, random_urlsafe};
use crate::store::{ClientRegistration, CredentialStore, StoreKey, StoredCredentials, TokenSet};
use crate::token::{ClientAuth, TokenResponse, method_name, now_secs, request_token};
use crate::user_agent::{AuthorizationPrompt, CallbackListener, code_from_redirect};
use crate::{
    AuthError, AuthProvider, Challenge, ChallengeOutcome, Secret, authorization_fingerprint,
};

/// By default, refresh this long before the access token expires.
pub const DEFAULT_REFRESH_MARGIN: Duration = Duration::from_secs(60);
/// Step-up re-authorizations allowed for one scope set before a 403 is
/// surfaced, so a server that never accepts any scope cannot loop us
/// forever; a challenge for new scopes starts a fresh count.
pub const MAX_STEP_UPS: u32 = 2;
/// How long an interactive login may take.
const LOGIN_TIMEOUT: Duration = Duration::from_secs(300);

/// Whether signing in to a server with this `oauth` block needs a person at
/// a browser. The enterprise cross-app-access grant (`xaa`) does not.
pub trait OAuthConfigExt {
    /// `true` unless the grant runs without user interaction.
    fn requires_user_auth(&self) -> bool;
}

impl OAuthConfigExt for McpOAuthConfig {
    fn requires_user_auth(&self) -> bool {
        !self.xaa
    }
}

/// A private key for `private_key_jwt` client authentication.
#[derive(Debug, Clone)]
pub struct PrivateKey {
    /// PKCS#8 PEM.
    pub pem: Secret,
    /// JWS algorithm, e.g. `ES256` or `RS256`.
    pub algorithm: String,
}

/// The enterprise identity provider's side of cross-app access (SEP-990):
/// an ID token to exchange for an identity assertion grant (ID-JAG).
#[derive(Debug, Clone)]
pub struct CrossAppAccess {
    /// The IdP's token endpoint (RFC 8693 token exchange).
    pub idp_token_endpoint: String,
    /// This application's client id at the IdP.
    pub idp_client_id: String,
    /// This application's secret at the IdP, if it is confidential.
    pub idp_client_secret: Option<Secret>,
    /// The user's OpenID Connect ID token from the IdP.
    pub id_token: Secret,
}

/// How tokens are obtained.
#[derive(Debug, Clone, Default)]
pub enum Grant {
    /// Authorization code + PKCE with a person approving in a browser.
    #[default]
    AuthorizationCode,
    /// Client credentials: `client_id` with the client secret, or with a
    /// private key when one is given.
    ClientCredentials {
        /// Signs a `private_key_jwt` assertion instead of sending a secret.
        private_key: Option<PrivateKey>,
    },
    /// Token exchange at the IdP, then a JWT bearer grant (selected by `xaa`).
    CrossAppAccess(CrossAppAccess),
}

/// Everything the provider needs to know about one server.
#[derive(Debug, Clone)]
pub struct OAuthSettings {
    /// The configured server name (keys the credential store, names errors).
    pub server_name: String,
    /// The MCP endpoint.
    pub server_url: String,
    /// The entry's `oauth` block.
    pub config: McpOAuthConfig,
    /// A pre-registered client's secret (from the environment or a secret
    /// store; never from the config file).
    pub client_secret: Option<Secret>,
    /// A client ID metadata document URL to use as `client_id` where the
    /// authorization server supports it.
    pub client_metadata_url: Option<String>,
    /// `client_name` for dynamic registration.
    pub client_name: String,
    /// How tokens are obtained.
    pub grant: Grant,
    /// Refresh this long before the access token expires.
    pub refresh_margin: Duration,
}

impl OAuthSettings {
    /// Settings for the authorization-code grant.
    pub fn new(
        server_name: impl Into<String>,
        server_url: impl Into<String>,
        config: McpOAuthConfig,
    ) -> Self {
        Self {
            server_name: server_name.into(),
            server_url: server_url.into(),
            config,
            client_secret: None,
            client_metadata_url: None,
            client_name: "mcp-client-toolkit".into(),
            grant: Grant::AuthorizationCode,
            refresh_margin: DEFAULT_REFRESH_MARGIN,
        }
    }

    /// Whether obtaining a token needs a person at a browser.
    pub fn requires_user_auth(&self) -> bool {
        matches!(self.grant, Grant::AuthorizationCode)
    }
}

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
        let config_error = |field: &str, message: String| AuthError::Config {
            server: server.clone(),
            field: field.into(),
            message,
        };
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
        if !matches!(settings.grant, Grant::AuthorizationCode)
            && settings.config.client_id.is_none()
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
            .map_err(|e| AuthError::Failed {
                server: server.clone(),
                message: format!("cannot build http client: {e}"),
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
        AuthError::Failed {
            server: self.settings.server_name.clone(),
            message: message.into(),
        }
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

    /// Refreshes the tokens under the store's cross-process lock. Another
    /// process may have refreshed first: the store is re-read after taking
    /// the lock and its token adopted, so a rotating refresh token is used
    /// once. Returns whether a usable token is now held.
    async fn refresh(&self, st: &mut State, stale: &Secret) -> Result<bool, AuthError> {
        let store = self.store.clone();
        let key = self.key.clone();
        let guard = self.blocking(move || store.lock(&key)).await?;
        let store = self.store.clone();
        let key = self.key.clone();
        let mut creds = self
            .blocking(move || store.load(&key))
            .await?
            .unwrap_or_default();
        let now = now_secs();
        let Some(tokens) = creds.tokens.clone() else {
            st.creds = creds;
            return Ok(false);
        };
        if &tokens.access_token != stale && !tokens.expires_within(now, self.margin()) {
            tracing::debug!(server = %self.settings.server_name, "adopted tokens refreshed elsewhere");
            st.creds = creds;
            return Ok(true);
        }
        let (Some(refresh_token), Some(client)) =
            (tokens.refresh_token.clone(), creds.client.clone())
        else {
            st.creds = creds;
            return Ok(false);
        };
        let token_endpoint = match (&creds.token_endpoint, &st.discovery) {
            (Some(endpoint), _) => endpoint.clone(),
            (None, Some(d)) => d.metadata.token_endpoint.clone(),
            (None, None) => {
                st.creds = creds;
                return Ok(false);
            }
        };
        let metadata = st.discovery.as_ref().map(|d| d.metadata.clone());
        let auth = ClientAuth::choose(
            &client.client_id,
            client.client_secret.as_ref(),
            Some(&client.token_endpoint_auth_method),
            |m| {
                metadata
                    .as_ref()
                    .is_none_or(|md| md.supports_auth_method(m))
            },
        );
        let mut params = vec![
            ("grant_type", "refresh_token".to_owned()),
            ("refresh_token", refresh_token.expose().to_owned()),
        ];
        if let Some(resource) = &creds.resource {
            params.push(("resource", resource.clone()));
        }
        tracing::debug!(server = %self.settings.server_name, "refreshing access token");
        let answer = request_token(
            &self.http,
            &self.settings.server_name,
            &token_endpoint,
            &auth,
            params,
        )
        .await?;
        let ok = match answer {
            Ok(response) => {
                creds.tokens = Some(response.into_token_set(Some(refresh_token), tokens.scope));
                true
            }
            Err(refused) if refused.status < 500 => {
                tracing::debug!(server = %self.settings.server_name, %refused, "refresh refused; tokens dropped");
                creds.tokens = None;
                if refused.error.as_deref() == Some("invalid_client") {
                    // The registration itself is gone: register again at the
                    // next login (a configured client is rebuilt from config).
                    creds.client = None;
                }
                false
            }
            Err(refused) => {
                return Err(self.fail(format!("token refresh failed: {refused}")));
            }
        };
        self.save(&creds).await?;
        drop(guard);
        st.creds = creds;
        Ok(ok)
    }

    /// Full authorization: discovery, client identity, the grant, storage.
    async fn authorize(
        &self,
        st: &mut State,
        challenge: &BearerChallenge,
        scope_override: Option<String>,
    ) -> Result<(), AuthError> {
        let discovery = match (&st.discovery, &challenge.resource_metadata) {
            (Some(d), None) => d.clone(),
            _ => {
                let d = self.discover(challenge).await?;
                st.discovery = Some(d.clone());
                d
            }
        };
        let scope = self.select_scope(challenge, &discovery, scope_override);
        let (client, tokens) = match &self.settings.grant {
            Grant::AuthorizationCode => {
                self.authorization_code(st, &discovery, scope.clone())
                    .await?
            }
            Grant::ClientCredentials { private_key } => {
                self.client_credentials(&discovery, private_key.as_ref(), scope.clone())
                    .await?
            }
            Grant::CrossAppAccess(xaa) => {
                self.cross_app_access(&discovery, xaa, scope.clone())
                    .await?
            }
        };
        st.creds = StoredCredentials {
            issuer: discovery.metadata.issuer.clone(),
            token_endpoint: Some(discovery.metadata.token_endpoint.clone()),
            resource: Some(discovery.resource.clone()),
            client: Some(client),
            tokens: Some(tokens),
        };
        st.refreshed_after_401 = None;
        self.save(&st.creds).await
    }

    async fn get_json<T: DeserializeOwned>(&self, url: &Url) -> Result<Option<T>, AuthError> {
        let response = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| AuthError::Http {
                server: self.settings.server_name.clone(),
                url: url.to_string(),
                message: e.without_url().to_string(),
            })?;
        if !response.status().is_success() {
            tracing::debug!(url = %url, status = response.status().as_u16(), "metadata not found here");
            return Ok(None);
        }
        let Ok(bytes) = response.bytes().await else {
            return Ok(None);
        };
        Ok(serde_json::from_slice(&bytes).ok())
    }

    async fn discover(&self, challenge: &BearerChallenge) -> Result<Discovery, AuthError> {
        let mut prm: Option<ProtectedResourceMetadata> = None;
        for candidate in
            protected_resource_candidates(&self.server_url, challenge.resource_metadata.as_deref())
        {
            if let Some(found) = self.get_json(&candidate).await? {
                prm = Some(found);
                break;
            }
        }
        let mut resource = canonical_resource(&self.server_url);
        let mut issuer = None;
        let mut resource_scopes = None;
        if let Some(prm) = prm {
            if let Some(named) = prm.resource {
                if !resource_matches(&named, &self.server_url) {
                    return Err(AuthError::ResourceMismatch {
                        server: self.settings.server_name.clone(),
                        resource: named,
                        url: self.settings.server_url.clone(),
                    });
                }
                resource = named;
            }
            issuer = prm
                .authorization_servers
                .first()
                .and_then(|s| Url::parse(s).ok());
            resource_scopes = prm.scopes_supported;
        }
        let metadata = if let Some(raw) = &self.settings.config.auth_server_metadata_url {
            let url = check_metadata_override(&self.settings.server_name, raw)?;
            self.get_json(&url).await?.ok_or_else(|| AuthError::Http {
                server: self.settings.server_name.clone(),
                url: url.to_string(),
                message: "no authorization server metadata at oauth.authServerMetadataUrl".into(),
            })?
        } else {
            // Without protected-resource metadata (2025-03-26 servers) the
            // server's own origin is the authorization server.
            let base = issuer.clone().unwrap_or_else(|| {
                let mut origin = self.server_url.clone();
                origin.set_path("/");
                origin.set_query(None);
                origin
            });
            let mut found = None;
            for candidate in auth_server_candidates(&base) {
                if let Some(m) = self.get_json::<AuthServerMetadata>(&candidate).await? {
                    found = Some(m);
                    break;
                }
            }
            match found {
                Some(m) => m,
                None => {
                    tracing::debug!(server = %self.settings.server_name, "no authorization server metadata; using default endpoints");
                    AuthServerMetadata::fallback_for(&base)
                }
            }
        };
        Ok(Discovery {
            resource,
            metadata,
            resource_scopes,
        })
    }

    /// Configured scopes, else the challenge's, else the resource's
    /// `scopes_supported`, else none; `offline_access` is added for grants
    /// with refresh tokens when the authorization server offers it.
    fn select_scope(
        &self,
        challenge: &BearerChallenge,
        discovery: &Discovery,
        scope_override: Option<String>,
    ) -> Option<String> {
        let mut scopes: Vec<String> = if let Some(s) = scope_override {
            s.split_whitespace().map(str::to_owned).collect()
        } else if !self.settings.config.scopes.is_empty() {
            self.settings.config.scopes.clone()
        } else if let Some(s) = &challenge.scope {
            s.split_whitespace().map(str::to_owned).collect()
        } else {
            discovery.resource_scopes.clone().unwrap_or_default()
        };
        let md = &discovery.metadata;
        let offers_offline = md
            .scopes_supported
            .as_ref()
            .is_some_and(|s| s.iter().any(|x| x == "offline_access"));
        let refreshes = md
            .grant_types_supported
            .as_ref()
            .is_none_or(|g| g.iter().any(|x| x == "refresh_token"));
        if matches!(self.settings.grant, Grant::AuthorizationCode)
            && offers_offline
            && refreshes
            && !scopes.is_empty()
            && !scopes.iter().any(|s| s == "offline_access")
        {
            scopes.push("offline_access".into());
        }
        (!scopes.is_empty()).then(|| scopes.join(" "))
    }

    async fn authorization_code(
        &self,
        st: &State,
        discovery: &Discovery,
        scope: Option<String>,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        let md = &discovery.metadata;
        if let Some(methods) = &md.code_challenge_methods_supported
            && !methods.iter().any(|m| m == "S256")
        {
            return Err(self.fail("the authorization server does not support PKCE S256"));
        }
        let server = &self.settings.server_name;
        // Reuse the port of a stored registration so a dynamic client's
        // redirect uri stays valid across logins.
        let stored_port = st
            .creds
            .client
            .as_ref()
            .and_then(|c| c.redirect_uri.as_deref())
            .and_then(|u| Url::parse(u).ok())
            .and_then(|u| u.port());
        let listener = match self.settings.config.callback_port {
            Some(port) => CallbackListener::bind(server, Some(port)).await?,
            None => match stored_port {
                Some(port) => match CallbackListener::bind(server, Some(port)).await {
                    Ok(l) => l,
                    Err(_) => CallbackListener::bind(server, None).await?,
                },
                None => CallbackListener::bind(server, None).await?,
            },
        };
        let redirect_uri = listener.redirect_uri().to_string();
        let client = self
            .ensure_client(st, discovery, &redirect_uri, scope.as_deref())
            .await?;
        let pkce = Pkce::generate();
        let state = random_urlsafe(24);
        let mut url = Url::parse(&md.authorization_endpoint).map_err(|e| {
            self.fail(format!(
                "authorization endpoint {} is not a url: {e}",
                md.authorization_endpoint
            ))
        })?;
        {
            let mut q = url.query_pairs_mut();
            q.append_pair("response_type", "code");
            q.append_pair("client_id", &client.client_id);
            q.append_pair("redirect_uri", &redirect_uri);
            q.append_pair("code_challenge", &pkce.challenge);
            q.append_pair("code_challenge_method", "S256");
            q.append_pair("state", &state);
            if let Some(scope) = &scope {
                q.append_pair("scope", scope);
            }
            q.append_pair("resource", &discovery.resource);
        }
        tracing::debug!(server = %server, endpoint = %md.authorization_endpoint, "authorization request");
        let wait = async {
            tokio::select! {
                presented = self.prompt.present(&url) => match presented? {
                    Some(redirect) => Ok(redirect),
                    None => listener.wait().await,
                },
                arrived = listener.wait() => arrived,
            }
        };
        let redirect = tokio::time::timeout(LOGIN_TIMEOUT, wait)
            .await
            .map_err(|_| self.fail("timed out waiting for the authorization redirect"))??;
        let code = code_from_redirect(server, &redirect, &state)?;
        let auth = client_auth_for(&client, md);
        let params = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.expose().to_owned()),
            ("redirect_uri", redirect_uri.clone()),
            ("code_verifier", pkce.verifier.expose().to_owned()),
            ("resource", discovery.resource.clone()),
        ];
        let response = self
            .token(&md.token_endpoint, &auth, params, "code")
            .await?;
        Ok((client, response.into_token_set(None, scope)))
    }

    async fn token(
        &self,
        endpoint: &str,
        auth: &ClientAuth,
        params: Vec<(&'static str, String)>,
        what: &str,
    ) -> Result<TokenResponse, AuthError> {
        request_token(
            &self.http,
            &self.settings.server_name,
            endpoint,
            auth,
            params,
        )
        .await?
        .map_err(|refused| {
            self.fail(format!(
                "token endpoint {endpoint} refused the {what}: {refused}"
            ))
        })
    }

    /// The client identity for the authorization-code grant: configured,
    /// a metadata document URL, a stored registration, or a new one.
    async fn ensure_client(
        &self,
        st: &State,
        discovery: &Discovery,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<ClientRegistration, AuthError> {
        let md = &discovery.metadata;
        if let Some(client_id) = &self.settings.config.client_id {
            let auth =
                ClientAuth::choose(client_id, self.settings.client_secret.as_ref(), None, |m| {
                    md.supports_auth_method(m)
                });
            return Ok(ClientRegistration {
                client_id: client_id.clone(),
                client_secret: self.settings.client_secret.clone(),
                token_endpoint_auth_method: method_name(&auth).into(),
                redirect_uri: Some(redirect_uri.into()),
            });
        }
        if md.client_id_metadata_document_supported
            && let Some(url) = &self.settings.client_metadata_url
        {
            return Ok(ClientRegistration {
                client_id: url.clone(),
                client_secret: None,
                token_endpoint_auth_method: "none".into(),
                redirect_uri: Some(redirect_uri.into()),
            });
        }
        if let Some(client) = &st.creds.client
            && st.creds.issuer == md.issuer
            && client.redirect_uri.as_deref() == Some(redirect_uri)
        {
            return Ok(client.clone());
        }
        let Some(endpoint) = &md.registration_endpoint else {
            return Err(AuthError::Config {
                server: self.settings.server_name.clone(),
                field: "oauth.clientId".into(),
                message: "the authorization server offers no dynamic client registration; configure a pre-registered client id".into(),
            });
        };
        self.register(endpoint, md, redirect_uri, scope).await
    }

    /// RFC 7591 dynamic client registration.
    async fn register(
        &self,
        endpoint: &str,
        md: &AuthServerMetadata,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<ClientRegistration, AuthError> {
        let explicit = |m: &str| {
            md.token_endpoint_auth_methods_supported
                .as_ref()
                .is_some_and(|l| l.iter().any(|x| x == m))
        };
        let requested = if explicit("none") {
            "none"
        } else if md.supports_auth_method("client_secret_basic") {
            "client_secret_basic"
        } else if md.supports_auth_method("client_secret_post") {
            "client_secret_post"
        } else {
            "none"
        };
        let mut body = serde_json::json!({
            "client_name": self.settings.client_name,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": requested,
        });
        if let Some(scope) = scope {
            body["scope"] = scope.into();
        }
        let http_error = |message: String| AuthError::Http {
            server: self.settings.server_name.clone(),
            url: endpoint.to_owned(),
            message,
        };
        let response = self
            .http
            .post(endpoint)
            .json(&body)
            .send()
            .await
            .map_err(|e| http_error(e.without_url().to_string()))?;
        let status = response.status();
        let bytes = response
            .bytes()
            .await
            .map_err(|e| http_error(e.without_url().to_string()))?;
        #[derive(serde::Deserialize)]
        struct Registered {
            client_id: String,
            #[serde(default)]
            client_secret: Option<Secret>,
            #[serde(default)]
            token_endpoint_auth_method: Option<String>,
        }
        if !status.is_success() {
            let detail = serde_json::from_slice::<serde_json::Value>(&bytes)
                .ok()
                .and_then(|v| {
                    let error = v.get("error")?.as_str()?.to_owned();
                    let desc = v
                        .get("error_description")
                        .and_then(|d| d.as_str())
                        .map(|d| format!(": {d}"))
                        .unwrap_or_default();
                    Some(format!(", {error}{desc}"))
                })
                .unwrap_or_default();
            return Err(http_error(format!(
                "client registration refused: status {}{detail}",
                status.as_u16()
            )));
        }
        let registered: Registered = serde_json::from_slice(&bytes)
            .map_err(|e| http_error(format!("registration response is not valid json: {e}")))?;
        let method = match (
            &registered.token_endpoint_auth_method,
            &registered.client_secret,
        ) {
            (Some(m), _) => m.clone(),
            (None, None) => "none".into(),
            (None, Some(secret)) => method_name(&ClientAuth::choose(
                &registered.client_id,
                Some(secret),
                None,
                |m| md.supports_auth_method(m),
            ))
            .into(),
        };
        Ok(ClientRegistration {
            client_id: registered.client_id,
            client_secret: registered.client_secret,
            token_endpoint_auth_method: method,
            redirect_uri: Some(redirect_uri.into()),
        })
    }

    fn configured_client(&self) -> Result<String, AuthError> {
        self.settings
            .config
            .client_id
            .clone()
            .ok_or_else(|| AuthError::Config {
                server: self.settings.server_name.clone(),
                field: "oauth.clientId".into(),
                message: "this grant needs a pre-registered client id".into(),
            })
    }

    async fn client_credentials(
        &self,
        discovery: &Discovery,
        private_key: Option<&PrivateKey>,
        scope: Option<String>,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        let md = &discovery.metadata;
        let client_id = self.configured_client()?;
        let auth = match private_key {
            Some(key) => ClientAuth::PrivateKeyJwt {
                client_id: client_id.clone(),
                private_key_pem: key.pem.clone(),
                algorithm: key.algorithm.clone(),
                audience: md.audience(),
            },
            None => {
                let Some(secret) = &self.settings.client_secret else {
                    return Err(AuthError::Config {
                        server: self.settings.server_name.clone(),
                        field: "client secret".into(),
                        message: "client credentials need a client secret or a private key".into(),
                    });
                };
                ClientAuth::choose(&client_id, Some(secret), None, |m| {
                    md.supports_auth_method(m)
                })
            }
        };
        let params = vec![
            ("grant_type", "client_credentials".to_owned()),
            ("resource", discovery.resource.clone()),
        ];
        self.direct_grant(
            &md.token_endpoint,
            &auth,
            client_id,
            params,
            scope,
            "client credentials",
        )
        .await
    }

    /// Posts a grant that needs no browser (client credentials, the
    /// identity assertion grant) with the chosen scope, and records the
    /// client it was made as.
    async fn direct_grant(
        &self,
        token_endpoint: &str,
        auth: &ClientAuth,
        client_id: String,
        mut params: Vec<(&'static str, String)>,
        scope: Option<String>,
        what: &str,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        if let Some(scope) = &scope {
            params.push(("scope", scope.clone()));
        }
        let response = self.token(token_endpoint, auth, params, what).await?;
        let client = ClientRegistration {
            client_id,
            client_secret: self.settings.client_secret.clone(),
            token_endpoint_auth_method: method_name(auth).into(),
            redirect_uri: None,
        };
        Ok((client, response.into_token_set(None, scope)))
    }

    /// SEP-990: exchange the IdP ID token for an ID-JAG (RFC 8693), then
    /// the ID-JAG for an access token (RFC 7523 JWT bearer grant).
    async fn cross_app_access(
        &self,
        discovery: &Discovery,
        xaa: &CrossAppAccess,
        scope: Option<String>,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        let md = &discovery.metadata;
        let client_id = self.configured_client()?;
        let idp_auth = match &xaa.idp_client_secret {
            Some(secret) => ClientAuth::Basic {
                client_id: xaa.idp_client_id.clone(),
                client_secret: secret.clone(),
            },
            None => ClientAuth::None {
                client_id: xaa.idp_client_id.clone(),
            },
        };
        let mut exchange = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:token-exchange".to_owned(),
            ),
            (
                "requested_token_type",
                "urn:ietf:params:oauth:token-type:id-jag".to_owned(),
            ),
            ("audience", md.audience()),
            ("resource", discovery.resource.clone()),
            ("subject_token", xaa.id_token.expose().to_owned()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
        ];
        if let Some(scope) = &scope {
            exchange.push(("scope", scope.clone()));
        }
        let jag = self
            .token(
                &xaa.idp_token_endpoint,
                &idp_auth,
                exchange,
                "token exchange",
            )
            .await?;
        let auth = ClientAuth::choose(
            &client_id,
            self.settings.client_secret.as_ref(),
            None,
            |m| md.supports_auth_method(m),
        );
        let grant = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
            ),
            ("assertion", jag.access_token.expose().to_owned()),
            ("resource", discovery.resource.clone()),
        ];
        self.direct_grant(
            &md.token_endpoint,
            &auth,
            client_id,
            grant,
            scope,
            "identity assertion grant",
        )
        .await
    }
}

fn client_auth_for(client: &ClientRegistration, md: &AuthServerMetadata) -> ClientAuth {
    ClientAuth::choose(
        &client.client_id,
        client.client_secret.as_ref(),
        Some(&client.token_endpoint_auth_method),
        |m| md.supports_auth_method(m),
    )
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

    #[test]
    fn xaa_needs_no_user() {
        let mut config = McpOAuthConfig::default();
        assert!(config.requires_user_auth());
        config.xaa = true;
        assert!(!config.requires_user_auth());
    }
}
