//! The grants: authorization code with PKCE through the host's prompt,
//! client credentials, and enterprise cross-app access.

use url::Url;

use crate::AuthError;
use crate::dpop::DpopKey;
use crate::metadata::BearerChallenge;
use crate::pkce::{Pkce, random_urlsafe};
use crate::store::{ClientRegistration, TokenSet};
use crate::token::{ClientAuth, TokenResponse, method_name, request_token_with};
use crate::user_agent::{CallbackListener, ExpectedResponse, code_from_redirect};

use super::registration::client_auth_for;
use super::settings::{CrossAppAccess, Grant, PrivateKey};
use super::{ClientSource, Discovery, LOGIN_TIMEOUT, OAuthProvider, SignIn, State, Trigger};

impl OAuthProvider {
    /// Full authorization: discovery, client identity, the grant, storage.
    /// Returns what the sign-in did, for the host to tell the user.
    pub(super) async fn authorize(
        &self,
        st: &mut State,
        challenge: &BearerChallenge,
        scope_override: Option<String>,
        trigger: Trigger,
    ) -> Result<SignIn, AuthError> {
        // A sign-in nobody asked for contacts nothing until the host's
        // prompt allows it: not the metadata a refusing server names, and
        // not the authorization server, where it would register a client.
        if trigger == Trigger::Unrequested && self.settings.requires_user_auth() {
            self.prompt
                .allow_unrequested()
                .map_err(|e| e.for_server(self.settings.server_name.clone()))?;
        }
        let mut discovery = match (&st.discovery, &challenge.resource_metadata) {
            (Some(d), None) => d.clone(),
            _ => {
                let d = self.discover(challenge).await?;
                st.discovery = Some(d.clone());
                d
            }
        };
        let scope = self.select_scope(challenge, &discovery, scope_override);
        discovery.dpop = self.grant_key(st, &discovery.metadata)?;
        self.record_grant_binding(false);
        let (client, tokens, source) = match &self.settings.grant {
            Grant::AuthorizationCode => {
                self.authorization_code(st, &discovery, scope.clone())
                    .await?
            }
            Grant::ClientCredentials { private_key } => {
                let (client, tokens) = self
                    .client_credentials(&discovery, private_key.as_ref(), scope.clone())
                    .await?;
                (client, tokens, ClientSource::Configured)
            }
            Grant::CrossAppAccess(xaa) => {
                let (client, tokens) = self
                    .cross_app_access(&discovery, xaa, scope.clone())
                    .await?;
                (client, tokens, ClientSource::Configured)
            }
            Grant::JwtBearer { assertion } => {
                let (client, tokens) = self
                    .jwt_bearer(&discovery, assertion.as_ref(), scope.clone())
                    .await?;
                (client, tokens, ClientSource::Configured)
            }
        };
        let issuer = discovery.metadata.issuer.clone();
        if let (ClientSource::Registered { .. }, Some(issuer)) = (&source, &issuer) {
            st.creds
                .registrations
                .insert(issuer.clone(), client.clone());
        }
        let signed_in = SignIn {
            issuer: issuer.clone(),
            client: source,
            scope: tokens.scope.clone(),
        };
        // Keep the key exactly when the tokens are bound to it.
        st.creds.dpop_key = discovery
            .dpop
            .filter(|_| self.take_grant_binding())
            .map(|k| k.pkcs8().clone());
        st.creds.issuer = issuer;
        st.creds.token_endpoint = Some(discovery.metadata.token_endpoint.clone());
        st.creds.revocation_endpoint = discovery.metadata.revocation_endpoint.clone();
        st.creds.resource = Some(discovery.resource.clone());
        st.creds.client = Some(client);
        st.creds.tokens = Some(tokens);
        st.refreshed_after_401 = None;
        self.save(&st.creds).await?;
        tracing::info!(server = %self.settings.server_name, client = ?signed_in.client, "signed in");
        st.last_sign_in = Some(signed_in.clone());
        Ok(signed_in)
    }

    pub(super) async fn authorization_code(
        &self,
        st: &State,
        discovery: &Discovery,
        scope: Option<String>,
    ) -> Result<(ClientRegistration, TokenSet, ClientSource), AuthError> {
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
        let (client, source) = self
            .ensure_client(st, discovery, &redirect_uri, scope.as_deref())
            .await?;
        let pkce = Pkce::generate();
        let state = random_urlsafe(24);
        let mut url =
            self.allowed_endpoint("authorization endpoint", &md.authorization_endpoint)?;
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
        let expected = ExpectedResponse {
            state: &state,
            issuer: discovery.recorded_issuer.as_deref(),
            iss_required: md.authorization_response_iss_parameter_supported,
        };
        let validate = |redirect: &Url| code_from_redirect(server, redirect, &expected);
        let wait = async {
            tokio::select! {
                presented = self.prompt.present(&url) => {
                    match presented.map_err(|e| e.for_server(server.clone()))? {
                        Some(redirect) => validate(&redirect),
                        None => listener.wait_for(server, validate).await,
                    }
                }
                arrived = listener.wait_for(server, validate) => arrived,
            }
        };
        let code = tokio::time::timeout(LOGIN_TIMEOUT, wait)
            .await
            .map_err(|_| self.fail("timed out waiting for the authorization redirect"))??;
        let auth = client_auth_for(&client, md);
        let params = vec![
            ("grant_type", "authorization_code".to_owned()),
            ("code", code.expose().to_owned()),
            ("redirect_uri", redirect_uri.clone()),
            ("code_verifier", pkce.verifier.expose().to_owned()),
            ("resource", discovery.resource.clone()),
        ];
        let endpoint = self.allowed_endpoint("token endpoint", &md.token_endpoint)?;
        let response = self
            .token(&endpoint, &auth, params, "code", discovery.dpop.as_ref())
            .await?;
        Ok((client, response.into_token_set(None, scope), source))
    }

    /// Asks `endpoint`, a URL the policy allowed, for a token.
    pub(super) async fn token(
        &self,
        endpoint: &Url,
        auth: &ClientAuth,
        params: Vec<(&'static str, String)>,
        what: &str,
        dpop: Option<&DpopKey>,
    ) -> Result<TokenResponse, AuthError> {
        let response = request_token_with(
            &self.http,
            &self.settings.server_name,
            endpoint.as_str(),
            auth,
            params,
            self.token_dpop(dpop),
        )
        .await?
        .map_err(|refused| {
            self.fail(format!(
                "token endpoint {endpoint} refused the {what}: {refused}"
            ))
        })?;
        if dpop.is_some() {
            self.record_grant_binding(response.is_dpop());
        }
        Ok(response)
    }

    pub(super) async fn client_credentials(
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
                    return Err(AuthError::config(
                        self.settings.server_name.clone(),
                        "client secret",
                        "client credentials need a client secret or a private key",
                    ));
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
            discovery,
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
    pub(super) async fn direct_grant(
        &self,
        discovery: &Discovery,
        auth: &ClientAuth,
        client_id: String,
        mut params: Vec<(&'static str, String)>,
        scope: Option<String>,
        what: &str,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        if let Some(scope) = &scope {
            params.push(("scope", scope.clone()));
        }
        let endpoint =
            self.allowed_endpoint("token endpoint", &discovery.metadata.token_endpoint)?;
        let response = self
            .token(&endpoint, auth, params, what, discovery.dpop.as_ref())
            .await?;
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
    pub(super) async fn cross_app_access(
        &self,
        discovery: &Discovery,
        xaa: &CrossAppAccess,
        scope: Option<String>,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        let md = &discovery.metadata;
        let client_id = self.configured_client()?;
        let id_token = xaa.id_token.assertion(&self.settings.server_name).await?;
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
            ("subject_token", id_token.expose().to_owned()),
            (
                "subject_token_type",
                "urn:ietf:params:oauth:token-type:id_token".to_owned(),
            ),
        ];
        if let Some(scope) = &scope {
            exchange.push(("scope", scope.clone()));
        }
        // The identity provider is the user's, named in their config.
        let idp = self.judged(
            crate::UrlPolicy::user(),
            "identity provider token endpoint",
            &xaa.idp_token_endpoint,
        )?;
        let jag = self
            .token(
                &idp,
                &idp_auth,
                exchange,
                "token exchange",
                // The identity provider is another server: no proof there.
                None,
            )
            .await?;
        self.jwt_bearer_grant(
            discovery,
            client_id,
            &jag.access_token,
            scope,
            "identity assertion grant",
        )
        .await
    }

    /// Workload identity federation (RFC 7523 section 2.1): the workload's
    /// JWT is the grant. A refusal is final: the same assertion would be
    /// refused again, and falling back to another grant would ask a person
    /// to sign in for a workload.
    pub(super) async fn jwt_bearer(
        &self,
        discovery: &Discovery,
        source: &dyn crate::assertion::AssertionSource,
        scope: Option<String>,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        let assertion = source.assertion(&self.settings.server_name).await?;
        let client_id = self.settings.config.client_id.clone().unwrap_or_default();
        self.jwt_bearer_grant(
            discovery,
            client_id,
            &assertion,
            scope,
            "workload identity assertion",
        )
        .await
    }

    /// The RFC 7523 JWT bearer grant with `assertion`, made as `client_id`
    /// (no client authentication at all when it is empty).
    async fn jwt_bearer_grant(
        &self,
        discovery: &Discovery,
        client_id: String,
        assertion: &crate::Secret,
        scope: Option<String>,
        what: &str,
    ) -> Result<(ClientRegistration, TokenSet), AuthError> {
        let md = &discovery.metadata;
        let auth = if client_id.is_empty() {
            ClientAuth::Anonymous
        } else {
            ClientAuth::choose(
                &client_id,
                self.settings.client_secret.as_ref(),
                None,
                |m| md.supports_auth_method(m),
            )
        };
        let params = vec![
            (
                "grant_type",
                "urn:ietf:params:oauth:grant-type:jwt-bearer".to_owned(),
            ),
            ("assertion", assertion.expose().to_owned()),
            ("resource", discovery.resource.clone()),
        ];
        self.direct_grant(discovery, &auth, client_id, params, scope, what)
            .await
    }
}
