//! `add`'s arguments turned into one server entry: `KEY=VALUE` env pairs,
//! `Name: value` headers, the command after `--` or the url and its flags.
//! Checking the entry is `mcp_config::edit::validate_entry`'s; this module
//! only builds the JSON a person described on the command line.

use mcp_config::TransportKind;
use serde_json::{Map, Value};

use crate::cli::{AddArgs, TransportArg};
use crate::output::usage;

/// The entry `add`'s arguments describe: a command after `--` makes a
/// stdio entry, `--url` a remote one; flags that belong to the other kind
/// are usage errors.
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
    match (&args.url, args.command.split_first()) {
        (Some(_), Some(_)) => Err(usage(
            "give either a command after `--` (stdio) or --url (remote), not both",
        )),
        (None, None) => Err(usage(format!(
            "server `{}` needs a command after `--` (stdio) or --url URL (remote)",
            args.name
        ))),
        (None, Some((command, rest))) => {
            if !matches!(args.transport, None | Some(TransportArg::Stdio)) {
                return Err(usage(
                    "--transport http, sse and ws need --url, not a command",
                ));
            }
            if !headers.is_empty() || args.client_id.is_some() || args.callback_port.is_some() {
                return Err(usage(
                    "--header, --client-id and --callback-port are for remote servers (--url)",
                ));
            }
            Ok(stdio_entry(command, rest, &env))
        }
        (Some(url), None) => {
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
            if kind == TransportKind::Ws
                && (args.client_id.is_some() || args.callback_port.is_some())
            {
                return Err(usage(
                    "ws servers have no OAuth: drop --client-id and --callback-port",
                ));
            }
            Ok(remote_entry(&RemoteEntry {
                kind,
                url,
                headers: &headers,
                client_id: args.client_id.as_deref(),
                callback_port: args.callback_port,
            }))
        }
    }
}

/// Builds a stdio entry: `{"type":"stdio","command","args","env"}`, leaving
/// out `env` when it is empty.
fn stdio_entry(command: &str, args: &[String], env: &[(String, String)]) -> Value {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from("stdio"));
    entry.insert("command".to_owned(), Value::from(command));
    entry.insert("args".to_owned(), Value::from(args.to_vec()));
    if !env.is_empty() {
        entry.insert("env".to_owned(), pairs_object(env));
    }
    Value::Object(entry)
}

/// What a remote entry built by [`remote_entry`] contains.
#[derive(Debug, Clone, PartialEq, Eq)]
struct RemoteEntry<'a> {
    /// `http`, `sse` or `ws`.
    kind: TransportKind,
    url: &'a str,
    headers: &'a [(String, String)],
    client_id: Option<&'a str>,
    callback_port: Option<u16>,
}

/// Builds a remote entry: `{"type","url","headers","oauth":{clientId,callbackPort}}`,
/// leaving out empty parts.
fn remote_entry(remote: &RemoteEntry<'_>) -> Value {
    let mut entry = Map::new();
    entry.insert("type".to_owned(), Value::from(remote.kind.as_str()));
    entry.insert("url".to_owned(), Value::from(remote.url));
    if !remote.headers.is_empty() {
        entry.insert("headers".to_owned(), pairs_object(remote.headers));
    }
    let mut oauth = Map::new();
    if let Some(client_id) = remote.client_id {
        oauth.insert("clientId".to_owned(), Value::from(client_id));
    }
    if let Some(port) = remote.callback_port {
        oauth.insert("callbackPort".to_owned(), Value::from(port));
    }
    if !oauth.is_empty() {
        entry.insert("oauth".to_owned(), Value::Object(oauth));
    }
    Value::Object(entry)
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
fn parse_env_pair(text: &str) -> anyhow::Result<(String, String)> {
    match text.split_once('=') {
        Some((key, value)) if !key.trim().is_empty() => {
            Ok((key.trim().to_owned(), value.to_owned()))
        }
        _ => Err(invalid_pair("env", &redact_pair(text, '='), "KEY=VALUE")),
    }
}

/// Splits `Name: value` (a `--header` argument). The name must be a valid
/// HTTP header name.
fn parse_header_pair(text: &str) -> anyhow::Result<(String, String)> {
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

#[cfg(test)]
mod tests {
    use super::*;

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
