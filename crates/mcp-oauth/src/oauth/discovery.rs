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
        let Ok(bytes) = crate::body::read_capped(response).await else {
            tracing::debug!(url = %url, "metadata unreadable or too large");
            return Ok(None);
        };
        Ok(serde_json::from_slice(&bytes).ok())
    }

    pub(super) async fn discover(
        &self,
        challenge: &BearerChallenge,
    ) -> Result<Discovery, AuthError> {
        let mut prm: Option<(Url, ProtectedResourceMetadata)> = None;
        for candidate in
            protected_resource_candidates(&self.server_url, challenge.resource_metadata.as_deref())
        {
            // The well-known locations are the server's own; a location the
            // challenge names elsewhere is a URL the server named.
            if candidate.origin() != self.server_url.origin() {
                self.allowed("protected resource metadata", candidate.as_str())?;
            }
            if let Some(found) = self.get_json(&candidate).await? {
                prm = Some((candidate, found));
                break;
            }
        }
        let mut resource = canonical_resource(&self.server_url);
        let mut issuer: Option<String> = None;
        let mut resource_scopes = None;
        if let Some((at, prm)) = prm {
            // RFC 9728 section 3.2: `resource` is REQUIRED, and it is what
            // ties the document to this server.
            let Some(named) = prm.resource else {
                return Err(AuthError::http(
                    self.settings.server_name.clone(),
                    at.to_string(),
                    "the protected resource metadata has no `resource`, so it was not used",
                ));
            };
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
            issuer = prm.authorization_servers.into_iter().next();
            resource_scopes = prm.scopes_supported;
        }
        let (metadata, recorded_issuer) = if let Some(raw) =
            &self.settings.config.auth_server_metadata_url
        {
            // The user named this document: its issuer is the one recorded.
            let url = check_metadata_override(&self.settings.server_name, raw)?;
            let metadata: AuthServerMetadata = self.get_json(&url).await?.ok_or_else(|| {
                AuthError::http(
                    self.settings.server_name.clone(),
                    url.to_string(),
                    "no authorization server metadata at oauth.authServerMetadataUrl",
                )
            })?;
            let recorded = metadata.issuer.clone();
            (metadata, recorded)
        } else if let Some(issuer) = issuer {
            self.issuer_metadata(&issuer).await?
        } else {
            // Without protected-resource metadata (2025-03-26 servers) the
            // server's own origin is the authorization server, and its
            // document, if any, is taken as it is: that revision did not
            // tie the issuer to the lookup.
            let mut base = self.server_url.clone();
            base.set_path("/");
            base.set_query(None);
            base.set_fragment(None);
            let base = self.allowed("authorization server", base.as_str())?;
            let mut found = None;
            for candidate in auth_server_candidates(&base) {
                if let Some(m) = self.get_json::<AuthServerMetadata>(&candidate).await? {
                    found = Some(m);
                    break;
                }
            }
            match found {
                Some(m) => {
                    let recorded = m.issuer.clone();
                    (m, recorded)
                }
                None => {
                    tracing::debug!(server = %self.settings.server_name, "no authorization server metadata; using default endpoints");
                    (AuthServerMetadata::fallback_for(&base), None)
                }
            }
        };
        // Every endpoint is judged before any is used, so an authorization
        // server naming one it may not gets nothing, not even a registration.
        for (what, url) in metadata.endpoints() {
            self.allowed_endpoint(what, url)?;
        }
        Ok(Discovery {
            resource,
            metadata,
            recorded_issuer,
            resource_scopes,
            dpop: None,
        })
    }

    /// The metadata of the authorization server `issuer` (as the
    /// protected-resource metadata spells it). A document whose `issuer` is
    /// not identical to it is never used (RFC 8414 section 3.3): the next
    /// well-known location is tried, and if none holds a matching document
    /// the sign-in fails naming both issuers.
    async fn issuer_metadata(
        &self,
        issuer: &str,
    ) -> Result<(AuthServerMetadata, Option<String>), AuthError> {
        let server = &self.settings.server_name;
        let base = self.allowed("authorization server", issuer)?;
        let mut mismatch = None;
        for candidate in auth_server_candidates(&base) {
            let Some(m) = self.get_json::<AuthServerMetadata>(&candidate).await? else {
                continue;
            };
            if m.issuer.as_deref() == Some(issuer) {
                return Ok((m, Some(issuer.to_owned())));
            }
            tracing::debug!(server = %server, url = %candidate, "authorization server metadata names another issuer; not used");
            mismatch.get_or_insert((candidate, m.issuer));
        }
        match mismatch {
            Some((url, named)) => Err(AuthError::http(
                server.clone(),
                url.to_string(),
                format!(
                    "the authorization server metadata names issuer `{}` instead of `{issuer}`, so it was not used",
                    named.as_deref().unwrap_or("(none)")
                ),
            )),
            None => {
                tracing::debug!(server = %server, "no authorization server metadata; using default endpoints");
                Ok((AuthServerMetadata::fallback_for(&base), None))
            }
        }
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
