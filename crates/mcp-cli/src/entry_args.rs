//! `add`'s arguments turned into one server entry: `KEY=VALUE` env pairs,
//! `Name: value` headers, the command after `--` (or after the name, as
//! `claude mcp add` takes it) or the url and its flags, and the fields every
//! kind shares (`cwd`, timeouts, `toolFilter`). Checking the entry is
//! `mcp_config::edit::validate_entry`'s; this module only builds the JSON a
//! person described on the command line. [`stdio_entry`] and
//! [`remote_entry`] are the building blocks other verbs reuse for servers
//! given on the command line instead of in config.

use mcp_config::TransportKind;
use serde_json::{Map, Value};

use crate::cli::{AddArgs, TransportArg};
use crate::output::usage;

/// The entry `add`'s arguments describe: a command (after `--`, or after
/// the name) makes a stdio entry, a url (`--url`, or after the name with a
/// remote `--transport`, or alone after the name) a remote one; flags that
/// belong to the other kind are usage errors.
pub(crate) fn entry_from_args(args: &AddArgs) -> anyhow::Result<Value> {
    let env = args
        .env
        .iter()
        .map(|pair| parse_env_pair(pair))
        .collect::<Result<Vec<_>, _>>()?;
    let headers = args
        .headers
        .iter()
        .map(|pair| parse_header_pair(pair))
        .collect::<Result<Vec<_>, _>>()?;
    let mut entry = match target(args)? {
        Target::Stdio(argv) => {
            let Some((command, rest)) = argv.split_first() else {
                return Err(usage(format!(
                    "server `{}` needs a command after `--` (stdio) or --url URL (remote)",
                    args.name
                )));
            };
            if !matches!(args.transport, None | Some(TransportArg::Stdio)) {
                return Err(usage(
                    "--transport http, sse and ws need --url, not a command",
                ));
            }
            if !headers.is_empty() || has_oauth_flags(args) {
                return Err(usage(
                    "--header and the OAuth flags (--client-id, --grant, ...) are for remote servers (--url)",
                ));
            }
            let mut entry = stdio_entry(command, rest, &env);
            if let Some(cwd) = &args.cwd {
                entry["cwd"] = Value::from(cwd_value(cwd)?);
            }
            entry
        }
        Target::Remote(url) => {
            let kind = match args.transport {
                None | Some(TransportArg::Http) => TransportKind::Http,
                Some(TransportArg::Sse) => TransportKind::Sse,
                Some(TransportArg::Ws) => TransportKind::Ws,
                Some(TransportArg::Stdio) => {
                    return Err(usage(
                        "--transport stdio takes a command after `--`, not --url",
                    ));
                }
            };
            if !env.is_empty() {
                return Err(usage(
                    "--env is for stdio servers; remote servers take --header",
                ));
            }
            if args.cwd.is_some() {
                return Err(usage(
                    "--cwd is for stdio servers; a remote server has no working directory",
                ));
            }
            if kind == TransportKind::Ws && has_oauth_flags(args) {
                return Err(usage(
                    "ws servers have no OAuth: drop --client-id, --grant and the other OAuth flags",
                ));
            }
            let mut entry = remote_entry(kind, url, &headers);
            let oauth = oauth_block(args)?;
            if !oauth.is_empty() {
                entry["oauth"] = Value::Object(oauth);
            }
            entry
        }
    };
    add_common_fields(args, &mut entry);
    Ok(entry)
}

/// What `add` was given to reach the server.
enum Target<'a> {
    /// The command and its arguments (possibly none: an error later).
    Stdio(Vec<String>),
    Remote(&'a str),
}

/// Sorts out the positional values after the name, `--url` and the
/// command after `--`. After the name, `claude mcp add` takes a url when
/// the transport is remote and a command otherwise; a lone url with no
/// transport is taken as a remote server too, as a url-only entry is
/// (REFERENCE §1.1), rather than as a command that cannot run.
fn target(args: &AddArgs) -> anyhow::Result<Target<'_>> {
    let remote = matches!(
        args.transport,
        Some(TransportArg::Http | TransportArg::Sse | TransportArg::Ws)
    );
    let url_after_name = match args.target.first() {
        Some(first) if args.transport.is_none() => looks_like_url(first),
        _ => remote,
    };
    match (&args.url, url_after_name) {
        (Some(_), _) if !args.target.is_empty() => Err(usage(format!(
            "give the url either after the name or as --url, not both (after `{}` came `{}`)",
            args.name,
            args.target.join(" ")
        ))),
        (Some(_), _) if !args.command.is_empty() => Err(usage(
            "give either a command after `--` (stdio) or --url (remote), not both",
        )),
        (Some(url), _) => Ok(Target::Remote(url)),
        (None, true) => match (args.target.as_slice(), args.command.is_empty()) {
            ([url], true) => Ok(Target::Remote(url)),
            ([], _) => Ok(Target::Stdio(args.command.clone())),
            (_, false) => Err(usage(
                "give either a command after `--` (stdio) or a url (remote), not both",
            )),
            (values, true) => Err(usage(format!(
                "a remote server takes one url after its name, not {} values",
                values.len()
            ))),
        },
        (None, false) => Ok(Target::Stdio(
            args.target.iter().chain(&args.command).cloned().collect(),
        )),
    }
}

fn looks_like_url(text: &str) -> bool {
    ["http://", "https://", "ws://", "wss://"]
        .iter()
        .any(|scheme| {
            text.len() > scheme.len() && text[..scheme.len()].eq_ignore_ascii_case(scheme)
        })
}

/// `--cwd` as written to the entry: `~` and `${VAR}` forms are kept for the
/// loader to expand; any other relative path is made absolute here, since
/// the loader would otherwise resolve it against whatever directory the
/// host runs in.
fn cwd_value(cwd: &str) -> anyhow::Result<String> {
    if cwd.is_empty() {
        return Err(usage("--cwd is empty"));
    }
    if cwd.starts_with('~') || cwd.starts_with('$') {
        return Ok(cwd.to_owned());
    }
    let path = std::path::absolute(cwd)
        .map_err(|err| usage(format!("cannot resolve --cwd {cwd}: {err}")))?;
    path.to_str()
        .map(str::to_owned)
        .ok_or_else(|| usage(format!("--cwd {} is not UTF-8", path.display())))
}

/// The timeouts and the tool filter, which every kind of entry takes.
fn add_common_fields(args: &AddArgs, entry: &mut Value) {
    let millis = |seconds: f64| {
        // `seconds` is positive and bounded (the parser checks), so this
        // fits; at least 1 ms, as 0 would mean "no time at all".
        #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
        let ms = (seconds * 1000.0).round() as u64;
        Value::from(ms.max(1))
    };
    let connect = args.connect_timeout.or(args.timeout);
    let tool_call = args.tool_timeout.or(args.timeout);
    for (field, seconds) in [
        ("connectionTimeoutMs", connect),
        ("requestTimeoutMs", args.timeout),
        ("toolCallTimeoutMs", tool_call),
    ] {
        if let Some(seconds) = seconds {
            entry[field] = millis(seconds);
        }
    }
    let patterns = |list: &[String]| -> Vec<Value> {
        list.iter()
            .map(|pattern| pattern.trim())
            .filter(|pattern| !pattern.is_empty())
            .map(Value::from)
            .collect()
    };
    let (hidden, offered): (Vec<&String>, Vec<&String>) = args
        .tool_filter
        .iter()
        .partition(|pattern| pattern.trim_start().starts_with('!'));
    let hidden: Vec<String> = hidden
        .into_iter()
        .map(|pattern| pattern.trim_start().trim_start_matches('!').to_owned())
        .collect();
    let offered: Vec<String> = offered.into_iter().cloned().collect();
    let mut include = patterns(&args.include_tools);
    include.extend(patterns(&offered));
    let mut exclude = patterns(&args.exclude_tools);
    exclude.extend(patterns(&hidden));
    if !include.is_empty() || !exclude.is_empty() {
        let mut filter = Map::new();
        if !include.is_empty() {
            filter.insert("include".to_owned(), Value::Array(include));
        }
        if !exclude.is_empty() {
            filter.insert("exclude".to_owned(), Value::Array(exclude));
        }
        entry["toolFilter"] = Value::Object(filter);
    }
}

/// Builds a stdio entry: `{"type":"stdio","command","args","env"}`, leaving
/// out `env` when it is empty.
pub(crate) fn stdio_entry(command: &str, args: &[String], env: &[(String, String)]) -> Value {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from("stdio"));
    entry.insert("command".to_owned(), Value::from(command));
    entry.insert("args".to_owned(), Value::from(args.to_vec()));
    if !env.is_empty() {
        entry.insert("env".to_owned(), pairs_object(env));
    }
    Value::Object(entry)
}

/// Builds a remote entry of `kind` (`http`, `sse` or `ws`):
/// `{"type","url","headers"}`, leaving out `headers` when there are none.
pub(crate) fn remote_entry(kind: TransportKind, url: &str, headers: &[(String, String)]) -> Value {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from(kind.as_str()));
    entry.insert("url".to_owned(), Value::from(url));
    if !headers.is_empty() {
        entry.insert("headers".to_owned(), pairs_object(headers));
    }
    Value::Object(entry)
}

fn has_oauth_flags(args: &AddArgs) -> bool {
    args.client_id.is_some()
        || args.callback_port.is_some()
        || args.grant.is_some()
        || args.client_secret_env.is_some()
        || args.client_metadata_url.is_some()
        || args.private_key_file.is_some()
        || args.signing_algorithm.is_some()
        || args.assertion_env.is_some()
        || args.assertion_command.is_some()
        || args.idp_token_endpoint.is_some()
        || args.idp_client_id.is_some()
        || args.idp_client_secret_env.is_some()
}

/// The `oauth` block the OAuth flags describe. The values are checked by
/// the config's own parser afterwards; this only refuses combinations the
/// chosen grant cannot use, so `add` never writes a server that fails on
/// first use.
fn oauth_block(args: &AddArgs) -> anyhow::Result<Map<String, Value>> {
    let mut oauth = Map::new();
    let mut put = |key: &str, value: Option<Value>| {
        if let Some(value) = value {
            oauth.insert(key.to_owned(), value);
        }
    };
    put("clientId", args.client_id.clone().map(Value::from));
    put("callbackPort", args.callback_port.map(Value::from));
    put("grant", args.grant.map(|g| Value::from(g.grant().as_str())));
    put(
        "clientSecretEnv",
        args.client_secret_env.clone().map(Value::from),
    );
    put(
        "clientMetadataUrl",
        args.client_metadata_url.clone().map(Value::from),
    );
    put(
        "privateKeyFile",
        args.private_key_file.clone().map(Value::from),
    );
    put(
        "signingAlgorithm",
        args.signing_algorithm.clone().map(Value::from),
    );
    let assertion = match (&args.assertion_env, &args.assertion_command) {
        (Some(name), _) => Some(serde_json::json!({ "env": name })),
        (None, Some(line)) => {
            let argv = shell_words::split(line).map_err(|err| {
                usage(format!(
                    "--assertion-command cannot be split into arguments: {err}"
                ))
            })?;
            if argv.is_empty() {
                return Err(usage("--assertion-command is empty"));
            }
            Some(serde_json::json!({ "command": argv }))
        }
        (None, None) => None,
    };
    put("assertion", assertion);
    let idp_given = args.idp_token_endpoint.is_some()
        || args.idp_client_id.is_some()
        || args.idp_client_secret_env.is_some();
    if idp_given {
        let mut idp = Map::new();
        for (key, value) in [
            ("tokenEndpoint", &args.idp_token_endpoint),
            ("clientId", &args.idp_client_id),
            ("clientSecretEnv", &args.idp_client_secret_env),
        ] {
            if let Some(value) = value {
                idp.insert(key.to_owned(), Value::from(value.as_str()));
            }
        }
        put("idp", Some(Value::Object(idp)));
    }
    check_grant(args)?;
    Ok(oauth)
}

/// Refuses flags that do not fit the grant, and a grant that lacks what
/// it needs, as usage errors.
fn check_grant(args: &AddArgs) -> anyhow::Result<()> {
    use mcp_config::OAuthGrantKind as G;
    let grant = args.grant.map_or(G::AuthorizationCode, |g| g.grant());
    let assertion = args.assertion_env.is_some() || args.assertion_command.is_some();
    let idp = args.idp_token_endpoint.is_some()
        || args.idp_client_id.is_some()
        || args.idp_client_secret_env.is_some();
    if assertion && !matches!(grant, G::JwtBearer | G::CrossAppAccess) {
        return Err(usage(
            "--assertion-env and --assertion-command are for --grant jwt_bearer or cross_app_access",
        ));
    }
    if idp && grant != G::CrossAppAccess {
        return Err(usage("the --idp-* flags are for --grant cross_app_access"));
    }
    if args.private_key_file.is_some() && grant != G::ClientCredentials {
        return Err(usage(
            "--private-key-file is for --grant client_credentials",
        ));
    }
    let missing = match grant {
        G::AuthorizationCode => None,
        G::ClientCredentials if args.client_id.is_none() => Some("--client-id"),
        G::ClientCredentials
            if args.client_secret_env.is_none() && args.private_key_file.is_none() =>
        {
            Some("--client-secret-env VAR or --private-key-file PATH")
        }
        G::ClientCredentials => None,
        G::JwtBearer if !assertion => {
            Some("--assertion-env VAR or --assertion-command 'PROGRAM ARGS'")
        }
        G::JwtBearer => None,
        G::CrossAppAccess if args.client_id.is_none() => Some("--client-id"),
        G::CrossAppAccess if args.idp_token_endpoint.is_none() || args.idp_client_id.is_none() => {
            Some("--idp-token-endpoint URL and --idp-client-id ID")
        }
        G::CrossAppAccess if !assertion => {
            Some("--assertion-env VAR or --assertion-command 'PROGRAM ARGS' (the ID token)")
        }
        G::CrossAppAccess => None,
        _ => None,
    };
    match missing {
        Some(flags) => Err(usage(format!("--grant {grant} needs {flags}"))),
        None => Ok(()),
    }
}

fn pairs_object(pairs: &[(String, String)]) -> Value {
    Value::Object(
        pairs
            .iter()
            .map(|(key, value)| (key.clone(), Value::from(value.as_str())))
            .collect(),
    )
}

/// Splits `KEY=VALUE` (an `--env` argument). The key must be non-empty.
pub(crate) fn parse_env_pair(text: &str) -> anyhow::Result<(String, String)> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(invalid_pair("env", &redact_pair(text, '='), "KEY=VALUE")),
    }
}

/// Splits `Name: value` (a `--header` argument). The name must be a valid
/// HTTP header name.
pub(crate) fn parse_header_pair(text: &str) -> anyhow::Result<(String, String)> {
    let invalid = || invalid_pair("header", &redact_pair(text, ':'), "'Name: value'");
    let (name, value) = text.split_once(':').ok_or_else(invalid)?;
    let name = name.trim();
    let token = |c: char| c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c);
    if name.is_empty() || !name.chars().all(token) {
        return Err(invalid());
    }
    Ok((name.to_owned(), value.trim().to_owned()))
}

/// A `K=V` or `K: V` argument that could not be split: a usage error.
fn invalid_pair(what: &str, text: &str, expected: &str) -> anyhow::Error {
    usage(format!("invalid {what} `{text}`: expected {expected}"))
}

/// Keeps the part before `separator` so an error never echoes a secret value.
fn redact_pair(text: &str, separator: char) -> String {
    match text.split_once(separator) {
        Some((key, _)) => format!("{key}{separator}***"),
        None if text.len() > 24 => "***".to_owned(),
        None => text.to_owned(),
    }
}

/// The entry of a server described for one run (a connecting verb's
/// `--url` or command after `--`): a remote entry of `kind` with
/// `headers` (`Name: value`), or a stdio entry with `env` (`KEY=VALUE`).
pub(crate) fn adhoc_entry(
    remote: Option<(TransportKind, &str)>,
    headers: &[String],
    command: &[String],
    env: &[String],
) -> anyhow::Result<Value> {
    match (remote, command.split_first()) {
        (Some((kind, url)), None) => {
            let headers = headers
                .iter()
                .map(|pair| parse_header_pair(pair))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(remote_entry(kind, url, &headers))
        }
        (None, Some((program, args))) => {
            let env = env
                .iter()
                .map(|pair| parse_env_pair(pair))
                .collect::<Result<Vec<_>, _>>()?;
            Ok(stdio_entry(program, args, &env))
        }
        _ => Err(usage(
            "give either --url URL or a command after `--`, not both",
        )),
    }
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    fn add(flags: &[&str]) -> anyhow::Result<Value> {
        let argv = ["mcp-cli", "add", "s", "--url", "https://x.example/mcp"];
        let cli = crate::cli::Cli::try_parse_from(argv.iter().chain(flags))?;
        let crate::cli::Command::Add(args) = cli.command else {
            anyhow::bail!("not add");
        };
        entry_from_args(&args)
    }

    #[test]
    fn oauth_flags_make_the_oauth_block() {
        let entry = add(&[
            "--grant",
            "client_credentials",
            "--client-id",
            "svc",
            "--client-secret-env",
            "SVC_SECRET",
        ])
        .expect("entry");
        assert_eq!(
            entry["oauth"],
            serde_json::json!({"grant": "client_credentials", "clientId": "svc", "clientSecretEnv": "SVC_SECRET"})
        );
        let entry = add(&[
            "--grant",
            "jwt_bearer",
            "--assertion-command",
            "token-tool --audience 'https://x.example' $HOME",
        ])
        .expect("entry");
        assert_eq!(
            entry["oauth"]["assertion"],
            serde_json::json!({"command": ["token-tool", "--audience", "https://x.example", "$HOME"]})
        );
        let entry = add(&[
            "--grant",
            "cross_app_access",
            "--client-id",
            "c",
            "--idp-token-endpoint",
            "https://idp.example/t",
            "--idp-client-id",
            "app",
            "--assertion-env",
            "ID_TOKEN",
        ])
        .expect("entry");
        assert_eq!(entry["oauth"]["idp"]["clientId"], "app");
        assert_eq!(
            entry["oauth"]["assertion"],
            serde_json::json!({"env": "ID_TOKEN"})
        );
    }

    #[test]
    fn a_grant_without_what_it_needs_is_a_usage_error() {
        for (flags, message) in [
            (
                &["--grant", "client_credentials"][..],
                "--grant client_credentials needs --client-id",
            ),
            (
                &["--grant", "client_credentials", "--client-id", "c"],
                "--grant client_credentials needs --client-secret-env VAR or --private-key-file PATH",
            ),
            (
                &["--grant", "jwt_bearer"],
                "--grant jwt_bearer needs --assertion-env VAR",
            ),
            (
                &["--assertion-env", "T"],
                "--assertion-env and --assertion-command are for",
            ),
            (
                &["--private-key-file", "k.pem"],
                "--private-key-file is for --grant client_credentials",
            ),
            (
                &["--idp-client-id", "a"],
                "the --idp-* flags are for --grant cross_app_access",
            ),
        ] {
            let err = add(flags).expect_err("usage error").to_string();
            assert!(err.starts_with(message), "{flags:?}: {err}");
        }
    }

    #[test]
    fn pairs() {
        assert_eq!(
            parse_env_pair("A=b=c").expect("ok"),
            ("A".to_owned(), "b=c".to_owned())
        );
        assert_eq!(
            parse_header_pair("Authorization: Bearer x").expect("ok"),
            ("Authorization".to_owned(), "Bearer x".to_owned())
        );
        assert_eq!(
            parse_env_pair("=secret").expect_err("bad").to_string(),
            "invalid env `=***`: expected KEY=VALUE"
        );
        assert_eq!(
            parse_header_pair("Bad Name: secret")
                .expect_err("bad")
                .to_string(),
            "invalid header `Bad Name:***`: expected 'Name: value'"
        );
    }
}
