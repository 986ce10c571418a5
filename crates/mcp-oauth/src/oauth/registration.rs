//! The client identity: a configured client, a client ID metadata
//! document, a stored registration, or dynamic registration.

use url::Url;

use crate::metadata::AuthServerMetadata;
use crate::store::ClientRegistration;
use crate::token::{ClientAuth, method_name};
use crate::{AuthError, Secret};

use super::{ClientSource, Discovery, OAuthProvider, State};

impl OAuthProvider {
    /// The client identity for the authorization-code grant: configured,
    /// a metadata document URL, a registration made with this same
    /// authorization server, or a new registration. A registration is never
    /// presented to another authorization server (2026-07-28 "Authorization
    /// Server Binding"); a pre-registered client last used with another
    /// server is refused with an error saying what changed.
    pub(super) async fn ensure_client(
        &self,
        st: &State,
        discovery: &Discovery,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<(ClientRegistration, ClientSource), AuthError> {
        let md = &discovery.metadata;
        let previous_issuer = st.creds.issuer.as_deref();
        let moved = |now: &Option<String>| match (previous_issuer, now.as_deref()) {
            (Some(before), Some(now)) if before != now => Some(before.to_owned()),
            _ => None,
        };
        if let Some(client_id) = &self.settings.config.client_id {
            let used_before = st
                .creds
                .client
                .as_ref()
                .is_some_and(|c| &c.client_id == client_id);
            if used_before && let Some(before) = moved(&md.issuer) {
                return Err(AuthError::config(
                    self.settings.server_name.clone(),
                    "oauth.clientId",
                    format!(
                        "the pre-registered client `{client_id}` was issued by authorization server `{before}`, but the server now names `{}`; register a client there and set oauth.clientId, or log out to use this one with the new server",
                        md.issuer.as_deref().unwrap_or("(unnamed)")
                    ),
                ));
            }
            let auth =
                ClientAuth::choose(client_id, self.settings.client_secret.as_ref(), None, |m| {
                    md.supports_auth_method(m)
                });
            return Ok((
                ClientRegistration {
                    client_id: client_id.clone(),
                    client_secret: self.settings.client_secret.clone(),
                    token_endpoint_auth_method: method_name(&auth).into(),
                    redirect_uri: Some(redirect_uri.into()),
                },
                ClientSource::Configured,
            ));
        }
        if md.client_id_metadata_document_supported
            && let Some(url) = &self.settings.client_metadata_url
        {
            // A metadata document is portable across authorization servers.
            return Ok((
                ClientRegistration {
                    client_id: url.clone(),
                    client_secret: None,
                    token_endpoint_auth_method: "none".into(),
                    redirect_uri: Some(redirect_uri.into()),
                },
                ClientSource::MetadataDocument,
            ));
        }
        if let Some(issuer) = &md.issuer
            && let Some(client) = st.creds.registrations.get(issuer)
            && client.redirect_uri.as_deref() == Some(redirect_uri)
        {
            return Ok((client.clone(), ClientSource::Stored));
        }
        let Some(endpoint) = &md.registration_endpoint else {
            return Err(AuthError::config(
                self.settings.server_name.clone(),
                "oauth.clientId",
                "the authorization server offers no dynamic client registration; configure a pre-registered client id",
            ));
        };
        let previous = moved(&md.issuer);
        if let Some(before) = &previous {
            tracing::info!(server = %self.settings.server_name, %before, "authorization server changed; registering a new client");
        }
        let endpoint = self.allowed_endpoint("registration endpoint", endpoint)?;
        let client = self.register(&endpoint, md, redirect_uri, scope).await?;
        Ok((client, ClientSource::Registered { previous }))
    }

    /// RFC 7591 dynamic client registration at `endpoint`, a URL the
    /// policy allowed.
    pub(super) async fn register(
        &self,
        endpoint: &Url,
        md: &AuthServerMetadata,
        redirect_uri: &str,
        scope: Option<&str>,
    ) -> Result<ClientRegistration, AuthError> {
        let explicit = |m: &str| {
            md.token_endpoint_auth_methods_supported
                .as_ref()
                .is_some_and(|l| l.iter().any(|x| x == m))
        };
        // The form is asked for where it is listed: servers that list both
        // secret methods accept it at every endpoint, while some (the Python
        // MCP SDK) accept Basic at the token endpoint but not at revocation.
        let requested = if explicit("none") {
            "none"
        } else if explicit("client_secret_post") {
            "client_secret_post"
        } else if md.supports_auth_method("client_secret_basic") {
            "client_secret_basic"
        } else {
            "none"
        };
        // SEP-837: our redirect is a loopback listener, so the client is a
        // native application; an OpenID server would otherwise assume "web"
        // and refuse the loopback redirect.
        let application_type = match Url::parse(redirect_uri) {
            Ok(u) if matches!(u.host_str(), Some("127.0.0.1" | "localhost" | "[::1]")) => "native",
            _ => "web",
        };
        let mut body = serde_json::json!({
            "client_name": self.settings.client_name,
            "application_type": application_type,
            "redirect_uris": [redirect_uri],
            "grant_types": ["authorization_code", "refresh_token"],
            "response_types": ["code"],
            "token_endpoint_auth_method": requested,
        });
        if let Some(scope) = scope {
            body["scope"] = scope.into();
        }
        let http_error = |message: String| {
            AuthError::http(
                self.settings.server_name.clone(),
                endpoint.to_string(),
                message,
            )
        };
        let response = self
            .http
            .post(endpoint.clone())
            .json(&body)
            .send()
            .await
            .map_err(|e| {
                let e = e.without_url();
                http_error(e.to_string()).with_source(e)
            })?;
        let status = response.status();
        let bytes = crate::body::read_capped(response)
            .await
            .map_err(|e| http_error(e.to_string()).with_source(e))?;
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
        let registered: Registered = serde_json::from_slice(&bytes).map_err(|e| {
            http_error(format!("registration response is not valid json: {e}")).with_source(e)
        })?;
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

    pub(super) fn configured_client(&self) -> Result<String, AuthError> {
        self.settings.config.client_id.clone().ok_or_else(|| {
            AuthError::config(
                self.settings.server_name.clone(),
                "oauth.clientId",
                "this grant needs a pre-registered client id",
            )
        })
    }
}

pub(super) fn client_auth_for(client: &ClientRegistration, md: &AuthServerMetadata) -> ClientAuth {
    ClientAuth::choose(
        &client.client_id,
        client.client_secret.as_ref(),
        Some(&client.token_endpoint_auth_method),
        |m| md.supports_auth_method(m),
    )
}
