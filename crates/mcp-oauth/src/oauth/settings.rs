//! What the host configures for one server's OAuth: its identity, the
//! grant to use, and the client's keys.

use std::fmt::Debug;
use std::sync::Arc;
use std::time::Duration;

use mcp_config::McpOAuthConfig;

use crate::assertion::AssertionSource;
use crate::{DpopMode, HostClass, Secret, UrlPolicy};

use super::DEFAULT_REFRESH_MARGIN;

/// Whether signing in to a server with this `oauth` block needs a person at
/// a browser: only the authorization code grant does (client credentials,
/// workload identity and cross-app access, `xaa`, run without one).
pub trait OAuthConfigExt {
    /// `true` unless the grant runs without user interaction.
    fn requires_user_auth(&self) -> bool;
}

impl OAuthConfigExt for McpOAuthConfig {
    fn requires_user_auth(&self) -> bool {
        self.grant().needs_sign_in()
    }
}

/// A private key for `private_key_jwt` client authentication.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct PrivateKey {
    /// PKCS#8 PEM.
    pub pem: Secret,
    /// JWS algorithm, e.g. `ES256` or `RS256`.
    pub algorithm: String,
}

impl PrivateKey {
    /// A PKCS#8 PEM key signing with the JWS `algorithm` (`ES256`, `RS256`).
    pub fn new(pem: Secret, algorithm: impl Into<String>) -> Self {
        PrivateKey {
            pem,
            algorithm: algorithm.into(),
        }
    }
}

/// The enterprise identity provider's side of cross-app access (SEP-990):
/// an ID token to exchange for an identity assertion grant (ID-JAG).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct CrossAppAccess {
    /// The IdP's token endpoint (RFC 8693 token exchange).
    pub idp_token_endpoint: String,
    /// This application's client id at the IdP.
    pub idp_client_id: String,
    /// This application's secret at the IdP, if it is confidential.
    pub idp_client_secret: Option<Secret>,
    /// The user's OpenID Connect ID token from the IdP.
    pub id_token: Arc<dyn AssertionSource>,
}

impl CrossAppAccess {
    /// Cross-app access through the IdP token endpoint `idp_token_endpoint`
    /// as the public client `idp_client_id`, exchanging the ID token that
    /// `id_token` supplies.
    pub fn new(
        idp_token_endpoint: impl Into<String>,
        idp_client_id: impl Into<String>,
        id_token: Arc<dyn AssertionSource>,
    ) -> Self {
        CrossAppAccess {
            idp_token_endpoint: idp_token_endpoint.into(),
            idp_client_id: idp_client_id.into(),
            idp_client_secret: None,
            id_token,
        }
    }

    /// Sets the application's secret at the IdP, for a confidential client.
    pub fn with_idp_client_secret(mut self, secret: Secret) -> Self {
        self.idp_client_secret = Some(secret);
        self
    }
}

/// How tokens are obtained.
#[derive(Debug, Clone, Default)]
#[non_exhaustive]
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
    /// Workload identity federation: the workload's own JWT (from its
    /// platform) presented directly as an RFC 7523 JWT bearer grant. The
    /// client id is optional; a failure is final (no retry, no other grant).
    JwtBearer {
        /// Where the workload JWT comes from.
        assertion: Arc<dyn AssertionSource>,
    },
}

/// Everything the provider needs to know about one server.
///
/// Built with [`OAuthSettings::new`] and the `with_*` methods (or
/// [`settings_from_config`](crate::settings_from_config) from a server's
/// `oauth` block), so new settings can be added without breaking callers.
#[derive(Debug, Clone)]
#[non_exhaustive]
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
    /// When to bind tokens to a DPoP key (RFC 9449).
    pub dpop: DpopMode,
    /// Where the MCP server is when its URL is on loopback but the server
    /// is not (a port forward or tunnel to a remote server), so the URLs
    /// it names are judged as a remote server's are. Ignored for a URL
    /// that is not on loopback, whose host says where the server is.
    pub server_location: Option<HostClass>,
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
            dpop: DpopMode::default(),
            server_location: None,
        }
    }

    /// Sets a pre-registered client's secret.
    pub fn with_client_secret(mut self, secret: Secret) -> Self {
        self.client_secret = Some(secret);
        self
    }

    /// Sets the client ID metadata document URL.
    pub fn with_client_metadata_url(mut self, url: impl Into<String>) -> Self {
        self.client_metadata_url = Some(url.into());
        self
    }

    /// Sets the `client_name` sent with a dynamic registration.
    pub fn with_client_name(mut self, name: impl Into<String>) -> Self {
        self.client_name = name.into();
        self
    }

    /// Sets how tokens are obtained.
    pub fn with_grant(mut self, grant: Grant) -> Self {
        self.grant = grant;
        self
    }

    /// Sets how long before expiry the access token is refreshed.
    pub fn with_refresh_margin(mut self, margin: Duration) -> Self {
        self.refresh_margin = margin;
        self
    }

    /// Sets when tokens are bound to a DPoP key.
    pub fn with_dpop(mut self, dpop: DpopMode) -> Self {
        self.dpop = dpop;
        self
    }

    /// Declares where a server reached on loopback really is (see
    /// [`OAuthSettings::server_location`]).
    pub fn with_server_location(mut self, location: HostClass) -> Self {
        self.server_location = Some(location);
        self
    }

    /// The policy for the URLs this server names: from its URL's host, or
    /// the declared location when the URL is on loopback.
    pub(crate) fn url_policy(&self, server_url: &url::Url) -> UrlPolicy {
        match (HostClass::of(server_url), self.server_location) {
            (HostClass::Loopback, Some(declared)) => UrlPolicy::new(declared),
            (class, _) => UrlPolicy::new(class),
        }
    }

    /// Whether obtaining a token needs a person at a browser.
    pub fn requires_user_auth(&self) -> bool {
        matches!(self.grant, Grant::AuthorizationCode)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn xaa_needs_no_user() {
        let mut config = McpOAuthConfig::default();
        assert!(config.requires_user_auth());
        config.xaa = true;
        assert!(!config.requires_user_auth());
    }
}
