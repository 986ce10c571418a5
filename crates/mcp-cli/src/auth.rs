//! `login`, `logout` and `auth-status`: OAuth for remote servers. The
//! flows, the token store and refresh are `mcp_oauth`'s; this module takes
//! the store `--token-store` chose ([`crate::token_store`]), shows the
//! authorization URL and reports.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use mcp_config::{
    LoadedConfig, McpOAuthConfig, OAuthGrantKind, ScopedServer, ServerConfig, TransportConfig, load,
};
use mcp_oauth::{
    AuthError, AuthProvider, AuthorizationPrompt, Challenge, ChallengeOutcome, ClientSource,
    CredentialStore, InteractivePrompt, OAuthProvider, OAuthSettings, Revocation, StoreKey,
    settings_from_config,
};
use mcp_transport::AuthProviders;
use serde_json::{Value, json};

use crate::cli::{LoginArgs, NameArgs};
use crate::connecting;
use crate::context::Context;
use crate::output::{self, Outcome, errln, outln, shown};
use crate::read::unknown_server;

/// The credential store `--token-store` chose.
pub(crate) fn store(context: &Context) -> anyhow::Result<Arc<dyn CredentialStore>> {
    crate::token_store::credential_store(context)
}

/// The url and OAuth settings of a server that signs in with OAuth, built
/// from its `oauth` block with the process environment: `None` for
/// servers that are not http or sse, an error naming the server and the
/// setting when the block cannot be used (a secret variable that is not
/// set, an unreadable key file).
pub(crate) fn oauth_settings(
    context: &Context,
    server: &ScopedServer,
) -> Option<Result<OAuthSettings, AuthError>> {
    settings_for(&server.config, &context.env)
}

fn settings_for(
    config: &ServerConfig,
    env: &BTreeMap<String, String>,
) -> Option<Result<OAuthSettings, AuthError>> {
    match &config.transport {
        TransportConfig::Http(remote) | TransportConfig::Sse(remote) => {
            let oauth = remote.oauth.clone().unwrap_or_default();
            Some(settings_from_config(
                &config.name,
                &remote.url,
                &oauth,
                &|name| env.get(name).cloned(),
            ))
        }
        _ => None,
    }
}

/// The grant of a server's `oauth` block (the authorization code grant
/// when it has none).
fn grant_of(config: &ServerConfig) -> OAuthGrantKind {
    match &config.transport {
        TransportConfig::Http(remote) | TransportConfig::Sse(remote) => remote
            .oauth
            .as_ref()
            .map_or(OAuthGrantKind::AuthorizationCode, McpOAuthConfig::grant),
        _ => OAuthGrantKind::AuthorizationCode,
    }
}

/// How a grant that needs no sign-in gets its tokens, for messages.
fn automatic(grant: OAuthGrantKind) -> &'static str {
    match grant {
        OAuthGrantKind::AuthorizationCode => "a person signs in with `mcp-cli login`",
        OAuthGrantKind::ClientCredentials => "client credentials are obtained automatically",
        OAuthGrantKind::JwtBearer => {
            "tokens are obtained automatically with the workload identity assertion"
        }
        OAuthGrantKind::CrossAppAccess => {
            "tokens are obtained automatically through the identity provider (cross-app access)"
        }
        _ => "tokens are obtained through the configured grant",
    }
}

/// Credentials for connecting verbs (`probe`, `tools`, `call`): every http
/// and sse server gets an OAuth provider over the stored credentials, which
/// sends a stored token, refreshes it, runs a grant that needs no person
/// (client credentials, workload identity, cross-app access) when the
/// server asks for a token, and never opens a browser: a server that needs
/// a new sign-in fails with a message saying how to sign in.
///
/// When the chosen store cannot be had (`secret-store` with none
/// available), a server's challenge fails with that reason.
#[derive(Debug)]
pub(crate) struct StoredCredentials {
    store: Result<Arc<dyn CredentialStore>, String>,
    env: BTreeMap<String, String>,
}

impl StoredCredentials {
    pub(crate) fn new(context: &Context) -> Self {
        StoredCredentials {
            store: store(context).map_err(|e| e.to_string()),
            env: context.env.clone(),
        }
    }
}

impl AuthProviders for StoredCredentials {
    fn provider_for(&self, server: &ServerConfig) -> Option<Arc<dyn AuthProvider>> {
        let provider = settings_for(server, &self.env)?.and_then(|settings| {
            let prompt = SignInFirst {
                server: server.name.clone(),
            };
            let store = self
                .store
                .clone()
                .map_err(|reason| AuthError::failed(server.name.clone(), reason))?;
            OAuthProvider::new(settings, store, Arc::new(prompt))
        });
        match provider {
            Ok(provider) => Some(Arc::new(provider)),
            // Sending no credentials would end in a bare 401; the server's
            // challenge gets this error instead, naming server and setting.
            Err(error) => Some(Arc::new(Unusable { error })),
        }
    }
}

/// The provider of a server whose OAuth settings cannot be used: requests
/// go out without credentials (a server that needs none still works), and
/// a challenge fails with the settings error.
#[derive(Debug)]
struct Unusable {
    error: AuthError,
}

#[async_trait::async_trait]
impl AuthProvider for Unusable {
    async fn authorization(&self) -> Result<Option<String>, AuthError> {
        Ok(None)
    }

    async fn on_challenge(&self, _: &Challenge) -> Result<ChallengeOutcome, AuthError> {
        Err(self.error.clone())
    }
}

/// A server's url and plain settings, as `logout` needs them: no secret
/// is read, so a block that cannot be used can still be signed out of.
fn oauth_server<'a>(
    config: &'a LoadedConfig,
    name: &str,
) -> anyhow::Result<(&'a ScopedServer, OAuthSettings)> {
    let server = remote_server(config, name)?;
    let (TransportConfig::Http(remote) | TransportConfig::Sse(remote)) = &server.config.transport
    else {
        unreachable_kind(server)?
    };
    let settings = OAuthSettings::new(
        server.config.name.clone(),
        remote.url.clone(),
        remote.oauth.clone().unwrap_or_default(),
    );
    Ok((server, settings))
}

/// A server's settings from its `oauth` block, as signing in needs them.
fn configured_server<'a>(
    context: &Context,
    config: &'a LoadedConfig,
    name: &str,
) -> anyhow::Result<(&'a ScopedServer, OAuthSettings)> {
    let server = remote_server(config, name)?;
    let settings = match oauth_settings(context, server) {
        Some(settings) => settings?,
        None => unreachable_kind(server)?,
    };
    Ok((server, settings))
}

/// The http or sse server named `name`.
fn remote_server<'a>(config: &'a LoadedConfig, name: &str) -> anyhow::Result<&'a ScopedServer> {
    let server = config
        .server(name)
        .ok_or_else(|| anyhow::anyhow!("{}", unknown_server(config, name)))?;
    match server.config.transport {
        TransportConfig::Http(_) | TransportConfig::Sse(_) => Ok(server),
        _ => unreachable_kind(server),
    }
}

fn unreachable_kind<T>(server: &ScopedServer) -> anyhow::Result<T> {
    anyhow::bail!(
        "server `{}` is a {} server; only http and sse servers sign in with OAuth",
        server.config.name,
        server.config.transport.kind()
    )
}

/// The prompt of connecting verbs: a sign-in needs `mcp-cli login`, so a
/// server's refusal stops before anything is sent to its metadata or its
/// authorization server.
#[derive(Debug)]
struct SignInFirst {
    server: String,
}

impl SignInFirst {
    fn needed(&self) -> AuthError {
        AuthError::failed(
            self.server.clone(),
            format!(
                "the server needs a sign-in; run `mcp-cli login {}`",
                self.server
            ),
        )
    }
}

#[async_trait::async_trait]
impl AuthorizationPrompt for SignInFirst {
    async fn present(&self, _: &url::Url) -> Result<Option<url::Url>, AuthError> {
        Err(self.needed())
    }

    fn allow_unrequested(&self) -> Result<(), AuthError> {
        Err(self.needed())
    }
}

/// `login NAME [--no-browser]`.
///
/// Only the authorization code grant signs in here. The other grants need
/// no person: `login` checks their settings (a missing secret variable or
/// key file is an error) and says that tokens come when connecting, without
/// running an assertion command or asking for a token.
pub(crate) fn login(context: &Context, args: &LoginArgs) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    let (server, settings) = configured_server(context, &config, &args.name)?;
    if !settings.requires_user_auth() {
        let grant = grant_of(&server.config);
        if context.json {
            output::print_json(&json!({
                "action": "login",
                "name": args.name,
                "grant": grant,
                "signInNeeded": false,
            }))?;
        } else {
            let line = format!(
                "no sign-in needed for `{}` ({grant}): {}; `mcp-cli probe {}` connects",
                args.name,
                automatic(grant),
                args.name
            );
            outln!("{}", shown(&line));
        }
        return Ok(Outcome::Ok);
    }
    let store = store(context)?;
    let key = StoreKey::new(&settings.server_name, &settings.server_url);
    let open_browser = !args.no_browser;
    let name = args.name.clone();
    let prompt = InteractivePrompt::new(move |url| {
        errln!(
            "to sign in to `{}`, open this url:\n\n  {}\n",
            shown(&name),
            shown(url.as_str())
        );
        if !open_browser {
            errln!(
                "after approving, your browser is sent to a 127.0.0.1 address; if that page does not load, paste its url here:"
            );
        } else if open_in_browser(url.as_str()) {
            errln!("(opened in your browser; waiting for the redirect)");
        } else {
            errln!("(could not open a browser; open the url yourself)");
        }
        Ok(())
    });
    let prompt = if args.no_browser {
        prompt.with_pasted_input(tokio::io::BufReader::new(tokio::io::stdin()))
    } else {
        prompt
    };
    let provider = OAuthProvider::new(settings, store.clone(), Arc::new(prompt))?;
    let signed_in = connecting::Connecting::new()?.run(provider.login())??;
    let location = store.location(&key);
    let registration = match &signed_in.client {
        ClientSource::Registered {
            previous: Some(before),
        } => Some(format!(
            "the authorization server changed from {before}; registered a new client with it"
        )),
        ClientSource::Registered { previous: None } => Some("registered a new client".into()),
        _ => None,
    };
    if context.json {
        output::print_json(&json!({
            "action": "login",
            "name": args.name,
            "issuer": signed_in.issuer,
            "scope": signed_in.scope,
            "registration": registration,
            "credentials": location,
        }))?;
    } else {
        if let Some(note) = &registration {
            outln!("{}", shown(note));
        }
        let line = format!(
            "signed in to `{}`{}; credentials saved in {}",
            args.name,
            signed_in
                .issuer
                .as_deref()
                .map(|i| format!(" at {i}"))
                .unwrap_or_default(),
            location
        );
        outln!("{}", shown(&line));
    }
    Ok(Outcome::Ok)
}

/// `logout NAME`: revokes the tokens where the authorization server
/// offers revocation, removes the stored credentials and lock file, and
/// says what it did.
pub(crate) fn logout(context: &Context, args: &NameArgs) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    let (_, settings) = oauth_server(&config, &args.name)?;
    let store = store(context)?;
    let key = StoreKey::new(&settings.server_name, &settings.server_url);
    let prompt = SignInFirst {
        server: args.name.clone(),
    };
    let provider = OAuthProvider::new(settings, store.clone(), Arc::new(prompt))?;
    let signed_out = connecting::Connecting::new()?.run(provider.logout())??;
    let (revoked, revocation) = match &signed_out.revocation {
        Revocation::NothingToRevoke => (false, "no tokens to revoke".to_owned()),
        Revocation::NotOffered => (
            false,
            "the authorization server offers no revocation; the tokens stay valid until they expire".to_owned(),
        ),
        Revocation::Revoked { endpoint, tokens } => {
            (true, format!("revoked the {} at {endpoint}", tokens.join(" and ")))
        }
        Revocation::Failed { message } => (false, format!("revocation failed: {message}")),
        _ => (false, "revocation outcome unknown".to_owned()),
    };
    let failed = matches!(signed_out.revocation, Revocation::Failed { .. });
    if context.json {
        output::print_json(&json!({
            "action": "logout",
            "name": args.name,
            "removed": signed_out.had_credentials,
            "revoked": revoked,
            "revocation": revocation,
        }))?;
    } else if signed_out.had_credentials {
        let line = format!(
            "signed out of `{}`: {revocation}; removed {}",
            args.name,
            store.location(&key)
        );
        outln!("{}", shown(&line));
    } else {
        outln!("no stored credentials for `{}`", shown(&args.name));
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

/// `auth-status`: every http and sse server with its grant and the state
/// of its stored credentials. Tokens are never shown; a server whose
/// `oauth` block cannot be used (a secret variable not set) is an error.
pub(crate) fn auth_status(context: &Context) -> anyhow::Result<Outcome> {
    let config = load(&context.load_options());
    let store = store(context)?;
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |elapsed| elapsed.as_secs());
    let mut rows = Vec::new();
    let mut failed = false;
    for server in &config.servers {
        let Some(settings) = oauth_settings(context, server) else {
            continue;
        };
        let grant = grant_of(&server.config);
        let interactive = grant.needs_sign_in();
        let (name, url) = match &server.config.transport {
            TransportConfig::Http(remote) | TransportConfig::Sse(remote) => {
                (server.config.name.as_str(), remote.url.as_str())
            }
            _ => continue,
        };
        let key = StoreKey::new(name, url);
        let (status, expires_at, detail) = match (settings, store.load(&key)) {
            (Err(err), _) => {
                failed = true;
                ("error", None, err.to_string())
            }
            (_, Err(err)) => {
                failed = true;
                ("error", None, err.to_string())
            }
            (Ok(_), Ok(None)) if !interactive => {
                ("no token yet", None, "obtained on first use".to_owned())
            }
            (Ok(_), Ok(None)) => ("signed out", None, String::new()),
            (Ok(_), Ok(Some(credentials))) => match credentials.tokens {
                None if !interactive => ("no token yet", None, "obtained on first use".to_owned()),
                None => (
                    "signed out",
                    None,
                    "client registered, no tokens".to_owned(),
                ),
                Some(tokens) => {
                    let refreshable = tokens.refresh_token.is_some();
                    match tokens.expires_at {
                        Some(at) if at <= now && refreshable => {
                            ("expired", Some(at), "refreshes on next use".to_owned())
                        }
                        Some(at) if at <= now && !interactive => {
                            ("expired", Some(at), "obtained again on next use".to_owned())
                        }
                        Some(at) if at <= now => {
                            ("expired", Some(at), "run `mcp-cli login`".to_owned())
                        }
                        Some(at) => (
                            "signed in",
                            Some(at),
                            format!("expires in {}", span(at - now)),
                        ),
                        None => ("signed in", None, "no expiry given".to_owned()),
                    }
                }
            },
        };
        // Printed, so shown without credentials.
        let url = mcp_config::redaction::redacted_remote_url(
            url,
            config.raw_entries.get(&server.config.name),
        );
        rows.push((server, grant, url, status, expires_at, detail));
    }
    if context.json {
        let servers: Vec<Value> = rows
            .iter()
            .map(|(server, grant, url, status, expires_at, detail)| {
                json!({
                    "name": server.config.name,
                    "kind": server.config.transport.kind(),
                    "grant": grant,
                    "signInNeeded": grant.needs_sign_in(),
                    "url": url,
                    "status": status,
                    "expiresAt": expires_at,
                    "detail": detail,
                })
            })
            .collect();
        output::print_json(&json!({ "servers": servers }))?;
    } else if rows.is_empty() {
        outln!("no http or sse servers configured");
    } else {
        let table: Vec<[String; 5]> = rows
            .iter()
            .map(|(server, grant, url, status, _, detail)| {
                [
                    server.config.name.clone(),
                    (*status).to_owned(),
                    grant.to_string(),
                    url.clone(),
                    detail.clone(),
                ]
            })
            .collect();
        crate::read::print_table(["NAME", "STATUS", "GRANT", "URL", "DETAIL"], &table);
    }
    Ok(if failed { Outcome::Failed } else { Outcome::Ok })
}

fn span(seconds: u64) -> String {
    match seconds {
        0..=119 => format!("{seconds} s"),
        120..=7199 => format!("{} min", seconds / 60),
        7200..=172_799 => format!("{} h", seconds / 3600),
        _ => format!("{} days", seconds / 86_400),
    }
}

/// Starts `$BROWSER` or else the platform's url opener (never a shell).
/// `$BROWSER` is one program path given the url as its only argument: it
/// is not split or expanded, so no part of the url or the variable can
/// become a shell command.
pub(crate) fn open_in_browser(url: &str) -> bool {
    if let Some(browser) = std::env::var_os("BROWSER").filter(|value| !value.is_empty()) {
        return std::process::Command::new(browser)
            .arg(url)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .is_ok();
    }
    let (program, args): (&str, &[&str]) = if cfg!(target_os = "macos") {
        ("open", &[])
    } else if cfg!(windows) {
        ("rundll32", &["url.dll,FileProtocolHandler"])
    } else {
        ("xdg-open", &[])
    };
    std::process::Command::new(program)
        .args(args)
        .arg(url)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .is_ok()
}
