//! From an entry's `oauth` block to [`OAuthSettings`]: the grant, the
//! client secret from the named environment variable (or the block's
//! literal), the private key file read and checked, and the assertion
//! sources of workload identity and cross-app access.
//!
//! The library reads no environment itself: the host passes a lookup. An
//! error names the server and the setting (`oauth.clientSecretEnv: MY_VAR
//! is not set`), never a value. Commands are not run here: a
//! [`CommandAssertion`] runs each time a token is needed.

use std::collections::BTreeMap;
use std::io::Read;
use std::path::Path;
use std::sync::Arc;

use mcp_config::limits::DEFAULT_SIGNING_ALGORITHM;
use mcp_config::{CredentialSource, McpOAuthConfig, OAuthGrantKind};

use crate::assertion::AssertionSource;
use crate::assertion::{CommandAssertion, EnvAssertion, EnvLookup};
use crate::dpop::DpopMode;
use crate::{AuthError, Secret};

use super::settings::{CrossAppAccess, Grant, OAuthSettings, PrivateKey};

/// The largest private key file read (a PEM RSA-4096 key is about 3 KiB).
const MAX_KEY_FILE_BYTES: u64 = 64 * 1024;

/// The settings for server `name` at `url` from its `oauth` block, with
/// `env` as the environment (the process environment in a CLI).
///
/// Secrets and the variables of [`CredentialSource::Env`] are read once,
/// now; use [`settings_from_config_live`] to read an assertion variable
/// each time a token is needed.
pub fn settings_from_config(
    name: &str,
    url: &str,
    config: &McpOAuthConfig,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<OAuthSettings, AuthError> {
    // Only the variables the block names are kept.
    let names = [
        config.client_secret_env.as_deref(),
        config
            .idp
            .as_ref()
            .and_then(|i| i.client_secret_env.as_deref()),
        match &config.assertion {
            Some(CredentialSource::Env { name }) => Some(name.as_str()),
            _ => None,
        },
    ];
    let snapshot: BTreeMap<String, String> = names
        .into_iter()
        .flatten()
        .filter_map(|n| Some((n.to_owned(), env(n)?)))
        .collect();
    settings_from_config_live(
        name,
        url,
        config,
        Arc::new(move |n: &str| snapshot.get(n).cloned()),
    )
}

/// [`settings_from_config`] with a lookup the settings keep: an assertion
/// from a variable is read through it each time a token is needed.
pub fn settings_from_config_live(
    name: &str,
    url: &str,
    config: &McpOAuthConfig,
    env: EnvLookup,
) -> Result<OAuthSettings, AuthError> {
    if let Some((field, message)) = config.grant_problem() {
        return Err(AuthError::config(name, field, message));
    }
    let kind = config.grant();
    let mut block = config.clone();
    // The provider reads `xaa` as "cross-app access"; `grant` may have said
    // it instead.
    block.xaa = kind == OAuthGrantKind::CrossAppAccess;
    let mut settings = OAuthSettings::new(name, url, block);
    settings.client_secret = client_secret(name, config, &env)?;
    settings.client_metadata_url = config.client_metadata_url.clone();
    settings.dpop = dpop_mode(config);
    settings.grant = match kind {
        OAuthGrantKind::AuthorizationCode => Grant::AuthorizationCode,
        OAuthGrantKind::ClientCredentials => Grant::ClientCredentials {
            private_key: match &config.private_key_file {
                Some(path) => Some(private_key(
                    name,
                    path,
                    config.signing_algorithm.as_deref(),
                )?),
                None => None,
            },
        },
        OAuthGrantKind::JwtBearer => Grant::JwtBearer {
            assertion: assertion_source(name, config, &env)?,
        },
        OAuthGrantKind::CrossAppAccess => {
            let Some(idp) = &config.idp else {
                return Err(AuthError::config(name, "oauth.idp", "missing"));
            };
            let idp_client_secret = match &idp.client_secret_env {
                Some(var) => Some(required_var(name, "oauth.idp.clientSecretEnv", var, &env)?),
                None => None,
            };
            Grant::CrossAppAccess(CrossAppAccess {
                idp_token_endpoint: idp.token_endpoint.clone(),
                idp_client_id: idp.client_id.clone(),
                idp_client_secret,
                id_token: assertion_source(name, config, &env)?,
            })
        }
        // A grant the config crate learned after this one was written.
        other => {
            return Err(AuthError::config(
                name,
                "oauth.grant",
                format!("`{}` is not supported", other.as_str()),
            ));
        }
    };
    Ok(settings)
}

/// The DPoP setting of a block: `oauth.dpop` absent is automatic (when
/// the authorization server advertises DPoP or the resource challenges
/// with it), `true` always, `false` never.
pub fn dpop_mode(config: &McpOAuthConfig) -> DpopMode {
    match config.dpop {
        None => DpopMode::Auto,
        Some(true) => DpopMode::Always,
        Some(false) => DpopMode::Never,
    }
}

fn required_var(
    server: &str,
    field: &str,
    var: &str,
    env: &EnvLookup,
) -> Result<Secret, AuthError> {
    match env(var) {
        Some(value) if !value.is_empty() => Ok(Secret::new(value)),
        Some(_) => Err(AuthError::config(server, field, format!("{var} is empty"))),
        None => Err(AuthError::config(
            server,
            field,
            format!("{var} is not set"),
        )),
    }
}

fn client_secret(
    server: &str,
    config: &McpOAuthConfig,
    env: &EnvLookup,
) -> Result<Option<Secret>, AuthError> {
    if let Some(var) = &config.client_secret_env {
        return required_var(server, "oauth.clientSecretEnv", var, env).map(Some);
    }
    Ok(config
        .client_secret
        .as_ref()
        .map(|s| Secret::new(s.expose())))
}

fn assertion_source(
    server: &str,
    config: &McpOAuthConfig,
    env: &EnvLookup,
) -> Result<Arc<dyn AssertionSource>, AuthError> {
    match &config.assertion {
        None => Err(AuthError::config(server, "oauth.assertion", "missing")),
        Some(CredentialSource::Env { name }) => {
            // Said now, not at the first token request.
            required_var(server, "oauth.assertion.env", name, env)?;
            Ok(Arc::new(EnvAssertion::new(
                name.clone(),
                "oauth.assertion.env",
                env.clone(),
            )))
        }
        Some(CredentialSource::Command { argv, timeout }) => {
            let command = CommandAssertion::new(argv.clone(), "oauth.assertion.command");
            Ok(Arc::new(match timeout {
                Some(timeout) => command.with_timeout(*timeout),
                None => command,
            }))
        }
        // A source the config crate learned after this one was written.
        Some(_) => Err(AuthError::config(
            server,
            "oauth.assertion",
            "this kind of source is not supported",
        )),
    }
}

/// Reads and checks a PEM private key: a regular file of at most
/// [`MAX_KEY_FILE_BYTES`], whose key fits the algorithm.
fn private_key(
    server: &str,
    path: &Path,
    algorithm: Option<&str>,
) -> Result<PrivateKey, AuthError> {
    let shown = path.display();
    let field = "oauth.privateKeyFile";
    let fail = |message: String| AuthError::config(server, field, message);
    let io = |e: std::io::Error| fail(format!("cannot read {shown}: {e}")).with_source(e);
    // Checked before opening: a FIFO would block the open, a device never end.
    let meta = std::fs::metadata(path).map_err(io)?;
    if !meta.is_file() {
        return Err(fail(format!("{shown} is not a regular file")));
    }
    let mut pem = String::new();
    std::fs::File::open(path)
        .map_err(io)?
        .take(MAX_KEY_FILE_BYTES + 1)
        .read_to_string(&mut pem)
        .map_err(io)?;
    if pem.len() as u64 > MAX_KEY_FILE_BYTES {
        return Err(fail(format!(
            "{shown} is larger than {MAX_KEY_FILE_BYTES} bytes; it is not a PEM key"
        )));
    }
    let algorithm = algorithm.unwrap_or(DEFAULT_SIGNING_ALGORITHM);
    check_key(&pem, algorithm).map_err(|message| {
        fail(format!(
            "{shown} does not hold a {algorithm} private key (PKCS#8 PEM): {message}"
        ))
    })?;
    Ok(PrivateKey {
        pem: Secret::new(pem),
        algorithm: algorithm.to_owned(),
    })
}

/// Whether `pem` is a key `algorithm` can sign with (the same parse the
/// client assertion makes, done early for a clear error).
fn check_key(pem: &str, algorithm: &str) -> Result<(), String> {
    crate::token::signing_key(pem, algorithm).map(|_| ())
}

#[cfg(test)]
mod tests {
    use std::path::PathBuf;

    use mcp_config::{ConfigSecret, IdpConfig};

    use super::*;
    use crate::AuthErrorKind;

    /// The throwaway P-256 key of the client assertion test in `token.rs`.
    const EC_KEY: &str = "-----BEGIN PRIVATE KEY-----\nMIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQgY3fav5rHIyvceAtp\neEf6jz0IeKFE1GosIfYm/QrROnShRANCAASJEpQwpi927PzriH0YIom8gLnSLG/8\n8r3veVXPWp+uY6a3UIhkKSk6W1jK3JiMdKhtYFbdIx4crJ0in0MQGZZ7\n-----END PRIVATE KEY-----\n";

    fn env(vars: &[(&str, &str)]) -> impl Fn(&str) -> Option<String> {
        let vars: BTreeMap<String, String> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
            .collect();
        move |name| vars.get(name).cloned()
    }

    fn build(config: &McpOAuthConfig, vars: &[(&str, &str)]) -> Result<OAuthSettings, AuthError> {
        settings_from_config("srv", "https://x.example/mcp", config, &env(vars))
    }

    fn config_error(result: Result<OAuthSettings, AuthError>) -> (String, String) {
        let err = result.expect_err("an error");
        assert_eq!(err.server(), "srv");
        match err.kind() {
            AuthErrorKind::Config { field, message } => (field.clone(), message.clone()),
            other => panic!("not a config error: {other:?}"),
        }
    }

    fn key_file(text: &str) -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("key.pem");
        std::fs::write(&path, text).expect("write");
        (dir, path)
    }

    #[test]
    fn authorization_code_with_a_secret_from_the_environment() {
        let config = McpOAuthConfig::default()
            .with_client_id("c")
            .with_client_secret_env("MY_VAR")
            .with_client_metadata_url("https://app.example/client.json");
        let settings = build(&config, &[("MY_VAR", "s3cret")]).expect("settings");
        assert!(matches!(settings.grant, Grant::AuthorizationCode));
        assert!(settings.requires_user_auth());
        assert_eq!(
            settings.client_secret.as_ref().map(Secret::expose),
            Some("s3cret")
        );
        assert_eq!(
            settings.client_metadata_url.as_deref(),
            Some("https://app.example/client.json")
        );
        assert!(!format!("{settings:?}").contains("s3cret"));
        assert_eq!(
            config_error(build(&config, &[])),
            ("oauth.clientSecretEnv".into(), "MY_VAR is not set".into())
        );
        assert_eq!(
            build(&config, &[]).expect_err("unset").to_string(),
            "oauth settings for srv: oauth.clientSecretEnv: MY_VAR is not set"
        );
        assert_eq!(
            config_error(build(&config, &[("MY_VAR", "")])),
            ("oauth.clientSecretEnv".into(), "MY_VAR is empty".into())
        );
    }

    #[test]
    fn client_credentials_with_a_secret_or_a_private_key() {
        let mut config = McpOAuthConfig::default()
            .with_grant(OAuthGrantKind::ClientCredentials)
            .with_client_id("c")
            .with_client_secret(ConfigSecret::new("literal"));
        let settings = build(&config, &[]).expect("settings");
        assert!(matches!(
            settings.grant,
            Grant::ClientCredentials { private_key: None }
        ));
        assert!(!settings.requires_user_auth());
        assert_eq!(
            settings.client_secret.as_ref().map(Secret::expose),
            Some("literal")
        );

        let (_dir, path) = key_file(EC_KEY);
        config.client_secret = None;
        config.private_key_file = Some(path.clone());
        let settings = build(&config, &[]).expect("settings");
        let Grant::ClientCredentials {
            private_key: Some(key),
        } = &settings.grant
        else {
            panic!("no key: {:?}", settings.grant);
        };
        assert_eq!(key.algorithm, "ES256");
        assert_eq!(key.pem.expose(), EC_KEY);

        // The wrong algorithm for the key, a missing file, a directory.
        config.signing_algorithm = Some("RS256".into());
        let (field, message) = config_error(build(&config, &[]));
        assert_eq!(field, "oauth.privateKeyFile");
        assert!(
            message.contains("does not hold a RS256 private key"),
            "{message}"
        );
        assert!(message.contains(&path.display().to_string()), "{message}");
        config.signing_algorithm = None;
        config.private_key_file = Some(path.with_file_name("absent.pem"));
        let (_, message) = config_error(build(&config, &[]));
        assert!(
            message.starts_with("cannot read ") && message.contains("absent.pem"),
            "{message}"
        );
        config.private_key_file = path.parent().map(Path::to_owned);
        let (_, message) = config_error(build(&config, &[]));
        assert!(message.ends_with("is not a regular file"), "{message}");

        // Neither secret nor key; no client id.
        config.private_key_file = None;
        assert_eq!(config_error(build(&config, &[])).0, "oauth.clientSecretEnv");
        config.client_id = None;
        assert_eq!(config_error(build(&config, &[])).0, "oauth.clientId");
    }

    #[test]
    fn a_huge_key_file_is_refused_without_reading_it_all() {
        let (_dir, path) = key_file(&"A".repeat(200 * 1024));
        let config = McpOAuthConfig::default()
            .with_grant(OAuthGrantKind::ClientCredentials)
            .with_client_id("c")
            .with_private_key_file(path);
        let (_, message) = config_error(build(&config, &[]));
        assert!(message.contains("is larger than 65536 bytes"), "{message}");
    }

    #[tokio::test]
    async fn workload_identity_from_a_variable_or_a_command() {
        let mut config = McpOAuthConfig::default()
            .with_grant(OAuthGrantKind::JwtBearer)
            .with_assertion(CredentialSource::Env {
                name: "WORKLOAD_JWT".into(),
            });
        let settings = build(&config, &[("WORKLOAD_JWT", "jwt.1")]).expect("settings");
        let Grant::JwtBearer { assertion } = &settings.grant else {
            panic!("{:?}", settings.grant);
        };
        let got = assertion.assertion("srv").await.expect("assertion");
        assert_eq!(got.expose(), "jwt.1");
        assert_eq!(
            config_error(build(&config, &[])),
            (
                "oauth.assertion.env".into(),
                "WORKLOAD_JWT is not set".into()
            )
        );

        config.assertion = Some(CredentialSource::Command {
            argv: vec!["echo".into(), "jwt.2".into()],
            timeout: None,
        });
        let settings = build(&config, &[]).expect("settings");
        let Grant::JwtBearer { assertion } = &settings.grant else {
            panic!("{:?}", settings.grant);
        };
        assert_eq!(
            assertion.assertion("srv").await.expect("ran").expose(),
            "jwt.2"
        );

        config.assertion = None;
        assert_eq!(config_error(build(&config, &[])).0, "oauth.assertion");
    }

    #[tokio::test]
    async fn cross_app_access_from_the_grant_or_from_xaa() {
        let idp =
            IdpConfig::new("https://idp.example/token", "app").with_client_secret_env("IDP_SECRET");
        let mut config = McpOAuthConfig::default()
            .with_grant(OAuthGrantKind::CrossAppAccess)
            .with_client_id("c")
            .with_idp(idp)
            .with_assertion(CredentialSource::Env {
                name: "ID_TOKEN".into(),
            });
        let vars = [("IDP_SECRET", "idp-s"), ("ID_TOKEN", "id.t")];
        let settings = build(&config, &vars).expect("settings");
        // The provider's own check reads `xaa`.
        assert!(settings.config.xaa);
        let Grant::CrossAppAccess(xaa) = &settings.grant else {
            panic!("{:?}", settings.grant);
        };
        assert_eq!(xaa.idp_token_endpoint, "https://idp.example/token");
        assert_eq!(xaa.idp_client_id, "app");
        assert_eq!(
            xaa.idp_client_secret.as_ref().map(Secret::expose),
            Some("idp-s")
        );
        assert_eq!(
            xaa.id_token.assertion("srv").await.expect("token").expose(),
            "id.t"
        );
        assert_eq!(
            config_error(build(&config, &[("ID_TOKEN", "id.t")])),
            (
                "oauth.idp.clientSecretEnv".into(),
                "IDP_SECRET is not set".into()
            )
        );
        // `xaa: true` alone means the same grant, and says what it lacks.
        config.grant = None;
        config.xaa = true;
        assert!(matches!(
            build(&config, &vars).expect("settings").grant,
            Grant::CrossAppAccess(_)
        ));
        config.idp = None;
        assert_eq!(config_error(build(&config, &vars)).0, "oauth.idp");
    }

    #[test]
    fn every_settings_value_is_accepted_by_the_provider() {
        let config = McpOAuthConfig::default()
            .with_grant(OAuthGrantKind::CrossAppAccess)
            .with_client_id("c")
            .with_idp(IdpConfig::new("https://idp.example/token", "app"))
            .with_assertion(CredentialSource::Command {
                argv: vec!["true".into()],
                timeout: None,
            });
        let settings = build(&config, &[]).expect("settings");
        let provider = crate::OAuthProvider::new(
            settings,
            Arc::new(crate::MemoryCredentialStore::new()),
            Arc::new(crate::HeadlessPrompt::new().expect("prompt")),
        );
        assert!(provider.is_ok(), "{provider:?}");
    }

    #[test]
    fn dpop_maps_true_false_and_absent() {
        let mut config = McpOAuthConfig::default();
        assert_eq!(dpop_mode(&config), DpopMode::Auto);
        config.dpop = Some(true);
        assert_eq!(dpop_mode(&config), DpopMode::Always);
        config.dpop = Some(false);
        assert_eq!(dpop_mode(&config), DpopMode::Never);
    }
}
