//! The auth side of the conformance client: builds an
//! [`mcp_oauth::OAuthProvider`] for an `auth/*` scenario from the scenario
//! name and `MCP_CONFORMANCE_CONTEXT` (pre-registered client id and secret,
//! a private key, an identity provider's ID token).
//!
//! Authorization is headless: the suite's `/authorize` answers at once with
//! a redirect, which [`mcp_oauth::HeadlessPrompt`] follows. Credentials live
//! in memory for the one run.

use std::sync::Arc;

use mcp_config::McpOAuthConfig;
use mcp_oauth::protocol::PrivateKey;
use mcp_oauth::{
    AuthProvider, CrossAppAccess, Grant, HeadlessPrompt, MemoryCredentialStore, OAuthProvider,
    OAuthSettings, Secret,
};
use serde_json::Value;

/// The client ID metadata document URL the suite expects a client to use
/// where the authorization server supports such documents.
pub const CLIENT_METADATA_URL: &str = "https://conformance-test.local/client-metadata.json";

/// An auth provider for `scenario` against `server_url`, or `None` for the
/// scenarios without authorization. `context` is the raw
/// `MCP_CONFORMANCE_CONTEXT`, if the suite sent one.
pub fn auth_provider(
    scenario: &str,
    server_url: &str,
    context: Option<&str>,
) -> Result<Option<Arc<dyn AuthProvider>>, String> {
    if !scenario.starts_with("auth/") {
        return Ok(None);
    }
    let context: Value = match context {
        Some(text) => serde_json::from_str(text)
            .map_err(|e| format!("MCP_CONFORMANCE_CONTEXT is not json: {e}"))?,
        None => Value::Null,
    };
    let field = |name: &str| context.get(name).and_then(Value::as_str).map(str::to_owned);
    let required =
        |name: &str| field(name).ok_or_else(|| format!("MCP_CONFORMANCE_CONTEXT has no {name}"));

    let mut config = McpOAuthConfig::default();
    config.client_id = field("client_id");
    let grant = if scenario.starts_with("auth/client-credentials") {
        let private_key = field("private_key_pem").map(|pem| {
            PrivateKey::new(
                Secret::new(pem),
                field("signing_algorithm").unwrap_or_else(|| "ES256".into()),
            )
        });
        Grant::ClientCredentials { private_key }
    } else if field("idp_id_token").is_some() {
        config.xaa = true;
        let mut access = CrossAppAccess::new(
            required("idp_token_endpoint")?,
            required("idp_client_id")?,
            Arc::new(Secret::new(required("idp_id_token")?)),
        );
        access.idp_client_secret = field("idp_client_secret").map(Secret::new);
        Grant::CrossAppAccess(access)
    } else if let Some(jwt) = field("valid_jwt") {
        // Workload identity federation: the suite hands the workload's JWT.
        Grant::JwtBearer {
            assertion: Arc::new(Secret::new(jwt)),
        }
    } else {
        Grant::AuthorizationCode
    };
    let mut settings = OAuthSettings::new("conformance", server_url, config);
    settings.client_secret = field("client_secret").map(Secret::new);
    settings.client_metadata_url = Some(CLIENT_METADATA_URL.to_owned());
    settings.client_name = "mcp-conformance-client".into();
    settings.grant = grant;
    let prompt = HeadlessPrompt::new().map_err(|e| e.to_string())?;
    let provider = OAuthProvider::new(
        settings,
        Arc::new(MemoryCredentialStore::new()),
        Arc::new(prompt),
    )
    .map_err(|e| e.to_string())?;
    Ok(Some(Arc::new(provider)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scenarios_map_to_grants() {
        let url = "http://localhost:1/mcp";
        assert!(auth_provider("tools_call", url, None).unwrap().is_none());
        let debug = |scenario: &str, context: &str| {
            format!(
                "{:?}",
                auth_provider(scenario, url, Some(context))
                    .unwrap()
                    .unwrap()
            )
        };
        assert!(debug("auth/metadata-default", "{}").contains("AuthorizationCode"));
        let basic = debug(
            "auth/client-credentials-basic",
            r#"{"client_id":"c","client_secret":"top-secret"}"#,
        );
        assert!(
            basic.contains("ClientCredentials { private_key: None }"),
            "{basic}"
        );
        assert!(!basic.contains("top-secret"), "{basic}");
        let xaa = debug(
            "auth/cross-app-access-complete-flow",
            r#"{"client_id":"c","client_secret":"s","idp_client_id":"i","idp_id_token":"jwt-secret","idp_issuer":"http://idp","idp_token_endpoint":"http://idp/token"}"#,
        );
        assert!(xaa.contains("CrossAppAccess"), "{xaa}");
        assert!(!xaa.contains("jwt-secret"), "{xaa}");
        let wif = debug(
            "auth/wif-jwt-bearer",
            r#"{"client_id":"w","valid_jwt":"workload-jwt-secret"}"#,
        );
        assert!(wif.contains("JwtBearer"), "{wif}");
        assert!(!wif.contains("workload-jwt-secret"), "{wif}");
        let err = auth_provider(
            "auth/cross-app-access-complete-flow",
            url,
            Some(r#"{"client_id":"c","idp_id_token":"t"}"#),
        )
        .unwrap_err();
        assert_eq!(err, "MCP_CONFORMANCE_CONTEXT has no idp_token_endpoint");
    }
}
