//! Discovery: from a server's challenge to its protected-resource and
//! authorization-server metadata, and the scope to ask for.

use serde::de::DeserializeOwned;
use url::Url;

use crate::metadata::{
    AuthServerMetadata, BearerChallenge, ProtectedResourceMetadata, auth_server_candidates,
    canonical_resource, check_metadata_override, protected_resource_candidates, resource_matches,
};
use crate::{AuthError, AuthErrorKind};

use super::settings::Grant;
use super::{Discovery, OAuthProvider};

impl OAuthProvider {
    pub(super) async fn get_json<T: DeserializeOwned>(
        &self,
        url: &Url,
    ) -> Result<Option<T>, AuthError> {
        let response = self
            .http
            .get(url.clone())
            .header(reqwest::header::ACCEPT, "application/json")
            .send()
            .await
            .map_err(|e| {
                let e = e.without_url();
                AuthError::http(
                    self.settings.server_name.clone(),
                    url.to_string(),
                    e.to_string(),
                )
                .with_source(e)
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

    pub(super) async fn discover(
        &self,
        challenge: &BearerChallenge,
    ) -> Result<Discovery, AuthError> {
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
                    return Err(AuthError::new(
                        self.settings.server_name.clone(),
                        AuthErrorKind::ResourceMismatch {
                            resource: named,
                            url: self.settings.server_url.clone(),
                        },
                    ));
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
            self.get_json(&url).await?.ok_or_else(|| {
                AuthError::http(
                    self.settings.server_name.clone(),
                    url.to_string(),
                    "no authorization server metadata at oauth.authServerMetadataUrl",
                )
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
            dpop: None,
        })
    }

    /// Configured scopes, else the challenge's, else the resource's
    /// `scopes_supported`, else none; `offline_access` is added for grants
    /// with refresh tokens when the authorization server offers it.
    pub(super) fn select_scope(
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
}
