//! The `oauth` block of a remote entry: the client's identity, the grant
//! and where each of its credentials comes from (REFERENCE §4).
//!
//! Every value is checked where it is written, with a diagnostic that names
//! the server and the key (`oauth.clientSecretEnv`, `oauth.idp.tokenEndpoint`)
//! and never quotes a value that may be a secret: a variable *name* may
//! itself be a pasted secret, so a bad one is described, not shown. A
//! `clientSecret` written as plain text is a warning (it belongs in the
//! environment). Whether the fields fit the grant (client credentials need
//! a client id and a secret or key, ...) is [`McpOAuthConfig::grant_problem`],
//! checked when the settings are built, so a block that loaded before still
//! loads.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::{Map, Value};

use super::EntryParser;
use crate::env_safety::is_env_name;
use crate::expand::{expand_tilde, expand_vars};
use crate::json::child_pointer;
use crate::types::{
    ConfigSecret, CredentialSource, IdpConfig, Level, McpOAuthConfig, OAuthGrantKind,
    SIGNING_ALGORITHMS,
};

/// The longest `timeoutMs` of a command source: ten minutes.
const MAX_COMMAND_TIMEOUT_MS: u64 = 600_000;

impl McpOAuthConfig {
    /// What the block lacks for its grant, as `(key, message)`; `None` when
    /// the grant has what it needs.
    pub fn grant_problem(&self) -> Option<(&'static str, String)> {
        let secret = self.client_secret_env.is_some() || self.client_secret.is_some();
        match self.grant() {
            OAuthGrantKind::AuthorizationCode => None,
            OAuthGrantKind::ClientCredentials => {
                if self.client_id.is_none() {
                    Some((
                        "oauth.clientId",
                        "client credentials need the pre-registered client id".into(),
                    ))
                } else if !secret && self.private_key_file.is_none() {
                    Some((
                        "oauth.clientSecretEnv",
                        "client credentials need a client secret (clientSecretEnv or clientSecret) or a privateKeyFile".into(),
                    ))
                } else {
                    None
                }
            }
            OAuthGrantKind::JwtBearer => self.assertion.is_none().then(|| {
                (
                    "oauth.assertion",
                    "jwt_bearer needs an assertion source ({\"env\": \"VAR\"} or {\"command\": [...]})".into(),
                )
            }),
            OAuthGrantKind::CrossAppAccess => {
                if self.client_id.is_none() {
                    Some((
                        "oauth.clientId",
                        "cross-app access needs the client id registered at the MCP server's authorization server".into(),
                    ))
                } else if self.idp.is_none() {
                    Some((
                        "oauth.idp",
                        "cross-app access needs the identity provider (idp: {tokenEndpoint, clientId})".into(),
                    ))
                } else if self.assertion.is_none() {
                    Some((
                        "oauth.assertion",
                        "cross-app access needs the source of the identity provider's ID token ({\"env\": \"VAR\"} or {\"command\": [...]})".into(),
                    ))
                } else {
                    None
                }
            }
        }
    }
}

/// What a value of the block should have been, for the error message.
fn expected(key: &str) -> &'static str {
    match key {
        "callbackPort" | "callback_port" => "a port number (0-65535)",
        "xaa" | "dpop" => "true or false",
        "scopes" => "a string or an array of strings",
        "grant" => "one of authorization_code, client_credentials, jwt_bearer or cross_app_access",
        "assertion" | "idToken" | "id_token" => {
            "an object: {\"env\": \"VAR\"} or {\"command\": [\"program\", \"arg\", ...]}"
        }
        "idp" => "an object: {\"tokenEndpoint\", \"clientId\", \"clientSecretEnv\"}",
        _ => "a string",
    }
}

impl EntryParser<'_, '_> {
    fn oauth_error(&mut self, pointer: &str, message: String) {
        self.push_at(Level::Error, pointer, Some("oauth"), message);
    }

    fn oauth_warning(&mut self, pointer: &str, message: String) {
        self.push_at(Level::Warning, pointer, Some("oauth"), message);
    }

    pub(super) fn oauth(&mut self) -> Option<McpOAuthConfig> {
        let value = self.get("oauth")?;
        let pointer = self.pointer(Some("oauth"));
        let Some(map) = value.as_object() else {
            self.error(Some("oauth"), "`oauth` must be an object".into());
            return None;
        };
        let mut oauth = McpOAuthConfig::default();
        let mut xaa_written = None;
        for (key, value) in map {
            let p = child_pointer(&pointer, key);
            let ok = match key.as_str() {
                "clientId" | "client_id" => {
                    value.as_str().map(|s| oauth.client_id = Some(s.to_owned()))
                }
                "callbackPort" | "callback_port" => value
                    .as_u64()
                    .and_then(|n| u16::try_from(n).ok())
                    .map(|n| oauth.callback_port = Some(n)),
                "authServerMetadataUrl" | "auth_server_metadata_url" => value
                    .as_str()
                    .map(|s| oauth.auth_server_metadata_url = Some(s.to_owned())),
                "xaa" => value.as_bool().map(|b| {
                    oauth.xaa = b;
                    xaa_written = Some(b);
                }),
                "scopes" => match value {
                    Value::String(s) => {
                        oauth.scopes = s.split_whitespace().map(str::to_owned).collect();
                        Some(())
                    }
                    Value::Array(items) if items.iter().all(Value::is_string) => {
                        oauth.scopes = items
                            .iter()
                            .filter_map(Value::as_str)
                            .map(str::to_owned)
                            .collect();
                        Some(())
                    }
                    _ => None,
                },
                "grant" => value
                    .as_str()
                    .and_then(OAuthGrantKind::parse)
                    .map(|g| oauth.grant = Some(g)),
                "clientSecretEnv" | "client_secret_env" => value.as_str().map(|name| {
                    oauth.client_secret_env = self.env_name("oauth.clientSecretEnv", &p, name);
                }),
                "clientSecret" | "client_secret" => value.as_str().map(|raw| {
                    if !raw.contains("${") {
                        self.oauth_warning(
                            &p,
                            "`oauth.clientSecret` is written as plain text; keep it in an environment variable (`clientSecretEnv`) or write `${VAR}`".into(),
                        );
                    }
                    let secret = self.oauth_expand("oauth.clientSecret", &p, raw);
                    oauth.client_secret = Some(ConfigSecret::new(secret));
                }),
                "clientMetadataUrl" | "client_metadata_url" => value.as_str().map(|raw| {
                    oauth.client_metadata_url = self.oauth_url("oauth.clientMetadataUrl", &p, raw);
                }),
                "privateKeyFile" | "private_key_file" => value.as_str().map(|raw| {
                    oauth.private_key_file = self.oauth_path("oauth.privateKeyFile", &p, raw);
                }),
                "signingAlgorithm" | "signing_algorithm" => value.as_str().map(|alg| {
                    if SIGNING_ALGORITHMS.contains(&alg) {
                        oauth.signing_algorithm = Some(alg.to_owned());
                    } else {
                        self.oauth_error(
                            &p,
                            format!(
                                "`oauth.signingAlgorithm` must be one of {}",
                                SIGNING_ALGORITHMS.join(", ")
                            ),
                        );
                    }
                }),
                "assertion" | "idToken" | "id_token" => value.as_object().map(|source| {
                    oauth.assertion = self.credential_source(&format!("oauth.{key}"), &p, source);
                }),
                "idp" => value.as_object().map(|idp| {
                    oauth.idp = self.idp(&p, idp);
                }),
                "dpop" => value.as_bool().map(|b| oauth.dpop = Some(b)),
                _ => {
                    self.oauth_warning(&p, format!("unknown field `oauth.{key}`"));
                    Some(())
                }
            };
            if ok.is_none() {
                self.oauth_error(&p, format!("`oauth.{key}` must be {}", expected(key)));
            }
        }
        match (oauth.grant, xaa_written) {
            (Some(grant), Some(xaa)) if xaa != (grant == OAuthGrantKind::CrossAppAccess) => {
                let p = child_pointer(&pointer, "grant");
                self.oauth_error(
                    &p,
                    format!("`oauth.grant` is {grant} but `oauth.xaa` is {xaa}; write one of them"),
                );
            }
            (Some(OAuthGrantKind::CrossAppAccess), _) => oauth.xaa = true,
            _ => {}
        }
        Some(oauth)
    }

    /// An environment variable name, or `None` (and an error) when `name`
    /// is not one. The text is not quoted: it may be a pasted secret.
    fn env_name(&mut self, key: &str, pointer: &str, name: &str) -> Option<String> {
        if is_env_name(name) {
            Some(name.to_owned())
        } else {
            self.oauth_error(
                pointer,
                format!(
                    "`{key}` must be the name of an environment variable (letters, digits and `_`, not starting with a digit), not its value"
                ),
            );
            None
        }
    }

    /// `${VAR}` expansion with an unset variable reported under `key`.
    fn oauth_expand(&mut self, key: &str, pointer: &str, raw: &str) -> String {
        let env = self.cx.env;
        let expanded = expand_vars(raw, |name| env.get(name).cloned());
        for var in &expanded.unset {
            self.oauth_warning(
                pointer,
                format!("`{key}` uses `${{{var}}}`, which is not set; the text is kept as written"),
            );
        }
        expanded.value
    }

    /// An https url (http only to a loopback host, for tests and local
    /// identity providers).
    fn oauth_url(&mut self, key: &str, pointer: &str, raw: &str) -> Option<String> {
        let expanded = self.oauth_expand(key, pointer, raw);
        let problem = match url::Url::parse(&expanded) {
            Ok(u) if u.scheme() == "https" => return Some(expanded),
            Ok(u) if u.scheme() == "http" && is_loopback(&u) => return Some(expanded),
            Ok(_) => "must be an https url".to_owned(),
            Err(e) => format!("is not a valid url: {e}"),
        };
        self.oauth_error(pointer, format!("`{key}` {problem}"));
        None
    }

    /// A file path: `${VAR}` and `~` expanded, relative to the folder of the
    /// file that names it.
    fn oauth_path(&mut self, key: &str, pointer: &str, raw: &str) -> Option<PathBuf> {
        let expanded = self.oauth_expand(key, pointer, raw);
        let expanded = expand_tilde(&expanded, self.cx.home);
        if expanded.is_empty() || expanded.contains('\0') {
            self.oauth_error(
                pointer,
                format!("`{key}` must be a file path (non-empty, no NUL)"),
            );
            return None;
        }
        // A plugin's key file stays inside the plugin, as its paths do.
        let expanded = self.plugin_path(
            crate::entry::PathField::File {
                field: "oauth.privateKeyFile",
            },
            pointer,
            raw,
            expanded,
        );
        let path = Path::new(&expanded);
        if path.is_absolute() {
            return Some(path.to_owned());
        }
        let base = self.cx.doc.path.parent().unwrap_or(Path::new(""));
        Some(super::normalize(&base.join(path)))
    }

    fn credential_source(
        &mut self,
        key: &str,
        pointer: &str,
        source: &Map<String, Value>,
    ) -> Option<CredentialSource> {
        let mut env = None;
        let mut argv = None;
        let mut timeout = None;
        let mut bad = false;
        for (field, value) in source {
            let p = child_pointer(pointer, field);
            match field.as_str() {
                "env" => match value.as_str() {
                    Some(name) => env = self.env_name(&format!("{key}.env"), &p, name),
                    None => {
                        bad = true;
                        self.oauth_error(&p, format!("`{key}.env` must be a string"));
                    }
                },
                "command" => argv = self.command_argv(&format!("{key}.command"), &p, value),
                "timeoutMs" | "timeout_ms" => match value.as_u64() {
                    Some(ms) if (1..=MAX_COMMAND_TIMEOUT_MS).contains(&ms) => {
                        timeout = Some(Duration::from_millis(ms));
                    }
                    _ => self.oauth_error(
                        &p,
                        format!(
                            "`{key}.timeoutMs` must be a number of milliseconds from 1 to {MAX_COMMAND_TIMEOUT_MS}"
                        ),
                    ),
                },
                _ => self.oauth_warning(&p, format!("unknown field `{key}.{field}`")),
            }
        }
        let command_given = source.contains_key("command");
        let env_given = source.contains_key("env");
        match (env_given, command_given) {
            (true, true) => {
                self.oauth_error(
                    pointer,
                    format!("`{key}` takes `env` or `command`, not both"),
                );
                None
            }
            (false, false) => {
                self.oauth_error(pointer, format!("`{key}` needs `env` or `command`"));
                None
            }
            _ if bad => None,
            (true, false) => env.map(|name| CredentialSource::Env { name }),
            (false, true) => argv.map(|argv| CredentialSource::Command { argv, timeout }),
        }
    }

    /// A command as argv: a non-empty array of strings, each expanded
    /// (`${VAR}`, leading `~`). Never a shell line.
    fn command_argv(&mut self, key: &str, pointer: &str, value: &Value) -> Option<Vec<String>> {
        let Some(items) = value.as_array().filter(|items| !items.is_empty()) else {
            self.oauth_error(
                pointer,
                format!(
                    "`{key}` must be a non-empty array of strings: the program and its arguments (it is run without a shell)"
                ),
            );
            return None;
        };
        let mut argv = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let p = format!("{pointer}/{i}");
            let Some(text) = item.as_str() else {
                self.oauth_error(&p, format!("`{key}[{i}]` must be a string"));
                return None;
            };
            let expanded = self.oauth_expand(key, &p, text);
            let expanded = expand_tilde(&expanded, self.cx.home);
            if expanded.contains('\0') || (i == 0 && expanded.is_empty()) {
                self.oauth_error(
                    &p,
                    format!("`{key}[{i}]` is empty or holds a NUL character"),
                );
                return None;
            }
            // A plugin's program is confined like its `command`.
            let expanded = if i == 0 {
                self.plugin_path(
                    crate::entry::PathField::Program {
                        field: "oauth.assertion.command",
                    },
                    &p,
                    text,
                    expanded,
                )
            } else {
                expanded
            };
            argv.push(expanded);
        }
        Some(argv)
    }

    fn idp(&mut self, pointer: &str, idp: &Map<String, Value>) -> Option<IdpConfig> {
        let mut token_endpoint = None;
        let mut client_id = None;
        let mut client_secret_env = None;
        for (field, value) in idp {
            let p = child_pointer(pointer, field);
            let Some(text) = value.as_str() else {
                if matches!(
                    field.as_str(),
                    "tokenEndpoint"
                        | "token_endpoint"
                        | "clientId"
                        | "client_id"
                        | "clientSecretEnv"
                        | "client_secret_env"
                ) {
                    self.oauth_error(&p, format!("`oauth.idp.{field}` must be a string"));
                } else {
                    self.oauth_warning(&p, format!("unknown field `oauth.idp.{field}`"));
                }
                continue;
            };
            match field.as_str() {
                "tokenEndpoint" | "token_endpoint" => {
                    token_endpoint = self.oauth_url("oauth.idp.tokenEndpoint", &p, text);
                }
                "clientId" | "client_id" => client_id = Some(text.to_owned()),
                "clientSecretEnv" | "client_secret_env" => {
                    client_secret_env = self.env_name("oauth.idp.clientSecretEnv", &p, text);
                }
                _ => self.oauth_warning(&p, format!("unknown field `oauth.idp.{field}`")),
            }
        }
        let written = |names: [&str; 2]| names.iter().any(|n| idp.contains_key(*n));
        for (names, key) in [
            (["tokenEndpoint", "token_endpoint"], "tokenEndpoint"),
            (["clientId", "client_id"], "clientId"),
        ] {
            if !written(names) {
                self.oauth_error(pointer, format!("`oauth.idp` needs `{key}`"));
            }
        }
        Some(IdpConfig {
            token_endpoint: token_endpoint?,
            client_id: client_id?,
            client_secret_env,
        })
    }
}

fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Domain(d)) => d.eq_ignore_ascii_case("localhost"),
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        None => false,
    }
}
