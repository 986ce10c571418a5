//! Token revocation at logout (RFC 7009): the refresh token first (which
//! revokes its access tokens at most servers), then the access token.

use crate::store::StoredCredentials;
use crate::token::ClientAuth;

use super::{OAuthProvider, Revocation};

impl OAuthProvider {
    /// Revokes the stored tokens where the authorization server offers a
    /// revocation endpoint. Never fails: the outcome is reported.
    pub(super) async fn revoke(&self, creds: &StoredCredentials) -> Revocation {
        let Some(tokens) = &creds.tokens else {
            return Revocation::NothingToRevoke;
        };
        let Some(endpoint) = creds.revocation_endpoint.clone() else {
            return Revocation::NotOffered;
        };
        if let Err(refused) = self.allowed_endpoint("revocation endpoint", &endpoint) {
            return Revocation::Failed {
                message: refused.to_string(),
            };
        }
        let auth = match &creds.client {
            Some(client) => ClientAuth::choose(
                &client.client_id,
                client.client_secret.as_ref(),
                Some(&client.token_endpoint_auth_method),
                |_| true,
            ),
            None => ClientAuth::Anonymous,
        };
        let mut revoked = Vec::new();
        let mut candidates = Vec::new();
        if let Some(refresh) = &tokens.refresh_token {
            candidates.push(("refresh token", "refresh_token", refresh));
        }
        candidates.push(("access token", "access_token", &tokens.access_token));
        for (what, hint, token) in candidates {
            let params = vec![
                ("token", token.expose().to_owned()),
                ("token_type_hint", hint.to_owned()),
            ];
            match crate::token::post_form(
                &self.http,
                &self.settings.server_name,
                &endpoint,
                &auth,
                params,
            )
            .await
            {
                // RFC 7009 section 2.2: 200 whether or not the token was valid.
                Ok(Ok(())) => revoked.push(what),
                Ok(Err(refused)) => {
                    return Revocation::Failed {
                        message: format!("{endpoint} refused the {what}: {refused}"),
                    };
                }
                Err(e) => {
                    return Revocation::Failed {
                        message: e.to_string(),
                    };
                }
            }
        }
        tracing::debug!(server = %self.settings.server_name, ?revoked, "tokens revoked");
        Revocation::Revoked {
            endpoint,
            tokens: revoked,
        }
    }
}
