//! Token refresh under the credential store's cross-process lock.

use crate::clock::now_secs;
use crate::token::{ClientAuth, request_token_with};
use crate::{AuthError, Secret};

use super::{OAuthProvider, State};

impl OAuthProvider {
    /// Refreshes the tokens under the store's cross-process lock. Another
    /// process may have refreshed first: the store is re-read after taking
    /// the lock and its token adopted, so a rotating refresh token is used
    /// once. Returns whether a usable token is now held.
    pub(super) async fn refresh(&self, st: &mut State, stale: &Secret) -> Result<bool, AuthError> {
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
        if &tokens.access_token != stale && !tokens.refresh_due(now, self.margin()) {
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
        // A stored endpoint is judged again: the file may predate the
        // policy, or have been written by another program.
        let token_endpoint = self.allowed_endpoint("token endpoint", &token_endpoint)?;
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
        let key = self.refresh_key(st, &creds)?;
        #[cfg(feature = "otel")]
        let span = crate::telemetry::refreshing(&token_endpoint);
        let answer = request_token_with(
            &self.http,
            &self.settings.server_name,
            token_endpoint.as_str(),
            &auth,
            params,
            self.token_dpop(key.as_ref()),
        )
        .await;
        #[cfg(feature = "otel")]
        match &answer {
            Ok(Ok(_)) => span.finish(None, false),
            Ok(Err(refused)) => span.finish(Some(refused), false),
            Err(_) => span.finish(None, true),
        }
        let answer = answer?;
        let ok = match answer {
            Ok(response) => {
                // The key stays exactly as long as the tokens are bound to it.
                creds.dpop_key = key
                    .filter(|_| response.is_dpop())
                    .map(|k| k.pkcs8().clone());
                creds.tokens = Some(response.into_token_set(Some(refresh_token), tokens.scope));
                true
            }
            // Only a refusal of the grant itself ends the tokens; anything
            // else (a 5xx, 429, a proxy's 4xx page) may pass, so what is
            // stored stays for the next try.
            Err(refused) if refused_for_good(&refused) => {
                tracing::debug!(server = %self.settings.server_name, %refused, "refresh refused; tokens dropped");
                creds.tokens = None;
                if refused.error.as_deref() == Some("invalid_client") {
                    // The registration itself is gone: register again at the
                    // next login (a configured client is rebuilt from config).
                    if let Some(issuer) = &creds.issuer {
                        creds.registrations.remove(issuer);
                    }
                    creds.client = None;
                }
                false
            }
            Err(refused) => {
                return Err(self.fail(format!(
                    "token refresh failed: {refused} (stored credentials kept)"
                )));
            }
        };
        self.save(&creds).await?;
        drop(guard);
        st.creds = creds;
        Ok(ok)
    }
}

/// Whether a token endpoint's refusal of a refresh is final: the refresh
/// token or the client is no longer valid (RFC 6749 section 5.2).
fn refused_for_good(refused: &crate::token::TokenErrorResponse) -> bool {
    matches!(refused.status, 400 | 401)
        && matches!(
            refused.error.as_deref(),
            Some("invalid_grant" | "invalid_client" | "unauthorized_client")
        )
}
