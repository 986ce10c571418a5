//! `${secret:NAME}` in an entry: where a reference may stand, what it is
//! written as, and putting the values in when a connection opens.
//!
//! Decided here, once: a reference is the text `${secret:` up to the next
//! `}`; only `env` values (stdio) and `headers` values (remote kinds) are
//! resolved; [`resolve`] is the one function that reads values into an
//! entry, and every error it returns names the secret and the server,
//! never a value.

use std::collections::BTreeSet;

use super::{SecretName, SecretStore, SecretValue};
use crate::error::{EditError, EditErrorKind};
use crate::types::{ServerConfig, TransportConfig};

/// What opens a secret reference.
pub const SECRET_REFERENCE_PREFIX: &str = "${secret:";

/// One `${secret:…}` found in a text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Reference<'a> {
    /// A well-formed reference to a valid name.
    Name(SecretName),
    /// `${secret:` with a name that breaks the rule (the text between
    /// `:` and `}`), and why.
    Invalid(&'a str, &'static str),
    /// `${secret:` with no closing `}`.
    Unclosed,
}

/// Every `${secret:…}` in `text`, in order.
pub(crate) fn references(text: &str) -> Vec<Reference<'_>> {
    let mut out = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find(SECRET_REFERENCE_PREFIX) {
        let after = &rest[start + SECRET_REFERENCE_PREFIX.len()..];
        let Some(end) = after.find('}') else {
            out.push(Reference::Unclosed);
            break;
        };
        let name = &after[..end];
        out.push(match super::secret_name_problem(name) {
            None => Reference::Name(SecretName(name.to_owned())),
            Some(reason) => Reference::Invalid(name, reason),
        });
        rest = &after[end + 1..];
    }
    out
}

/// The values of an entry that are resolved: `(field, key, value)` for
/// each `env` value of a stdio entry and each `headers` value of a remote
/// one.
fn resolved_values(config: &ServerConfig) -> Vec<(&'static str, &str, &str)> {
    match &config.transport {
        TransportConfig::Stdio(stdio) => stdio
            .env
            .iter()
            .map(|(k, v)| ("env", k.as_str(), v.as_str()))
            .collect(),
        TransportConfig::Sse(remote)
        | TransportConfig::Http(remote)
        | TransportConfig::Ws(remote) => remote
            .headers
            .iter()
            .map(|(k, v)| ("headers", k.as_str(), v.as_str()))
            .collect(),
        TransportConfig::Sdk { .. } | TransportConfig::ClaudeAiProxy(_) => Vec::new(),
    }
}

/// The secrets `config` names in its `env` and `headers` values, sorted,
/// each once. An entry the loader accepted holds no malformed reference;
/// one built by hand that does is refused by [`resolve`].
pub fn referenced_secrets(config: &ServerConfig) -> Vec<SecretName> {
    let mut names = BTreeSet::new();
    for (_, _, value) in resolved_values(config) {
        for reference in references(value) {
            if let Reference::Name(name) = reference {
                names.insert(name);
            }
        }
    }
    names.into_iter().collect()
}

/// `config` with every `${secret:NAME}` in its `env` and `headers` values
/// replaced by the secret's value from `store`. An entry with no
/// reference comes back unchanged without asking the store.
///
/// Errors name the secret and the server and never hold a value: a
/// secret the store does not hold ([`EditErrorKind::MissingSecret`]), a
/// store that fails ([`EditErrorKind::SecretStore`]), a malformed
/// reference ([`EditErrorKind::InvalidEntry`]), and a value that cannot go
/// where it is put ([`EditErrorKind::UnusableSecret`]: a control character
/// other than tab in a header, a NUL in an environment variable).
pub fn resolve(config: &ServerConfig, store: &dyn SecretStore) -> Result<ServerConfig, EditError> {
    let mut resolved = config.clone();
    match &mut resolved.transport {
        TransportConfig::Stdio(stdio) => {
            for (key, value) in stdio.env.iter_mut() {
                *value = substitute(&config.name, "env", key, value, store)?;
            }
        }
        TransportConfig::Sse(remote)
        | TransportConfig::Http(remote)
        | TransportConfig::Ws(remote) => {
            for (key, value) in remote.headers.iter_mut() {
                *value = substitute(&config.name, "headers", key, value, store)?;
            }
        }
        TransportConfig::Sdk { .. } | TransportConfig::ClaudeAiProxy(_) => {}
    }
    Ok(resolved)
}

/// One value with its references replaced.
fn substitute(
    server: &str,
    field: &str,
    key: &str,
    text: &str,
    store: &dyn SecretStore,
) -> Result<String, EditError> {
    if !text.contains(SECRET_REFERENCE_PREFIX) {
        return Ok(text.to_owned());
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(start) = rest.find(SECRET_REFERENCE_PREFIX) {
        out.push_str(&rest[..start]);
        let after = &rest[start + SECRET_REFERENCE_PREFIX.len()..];
        let Some(end) = after.find('}') else {
            return Err(invalid(server, field, key, "a `${secret:` without its `}`"));
        };
        let name = SecretName::new(&after[..end]).map_err(|_| {
            invalid(
                server,
                field,
                key,
                "a `${secret:…}` whose name is not a secret name",
            )
        })?;
        let value = lookup(server, &name, store)?;
        check_value(server, field, key, &name, &value)?;
        out.push_str(value.expose());
        rest = &after[end + 1..];
    }
    out.push_str(rest);
    Ok(out)
}

fn lookup(
    server: &str,
    name: &SecretName,
    store: &dyn SecretStore,
) -> Result<SecretValue, EditError> {
    match store.get(name) {
        Ok(Some(value)) => Ok(value),
        Ok(None) => Err(EditError::new(EditErrorKind::MissingSecret {
            secret: name.to_string(),
            server: server.to_owned(),
            store: store.kind(),
        })),
        Err(error) => Err(EditError::new(EditErrorKind::SecretStore {
            store: store.kind(),
            secret: Some(name.to_string()),
            reason: format!("reading it for server `{server}` failed: {error}"),
        })),
    }
}

fn check_value(
    server: &str,
    field: &str,
    key: &str,
    name: &SecretName,
    value: &SecretValue,
) -> Result<(), EditError> {
    let bad = match field {
        // RFC 9110 field values: visible text, spaces and tabs.
        "headers" => value
            .expose()
            .chars()
            .any(|c| c.is_ascii_control() && c != '\t'),
        _ => value.expose().contains('\0'),
    };
    if !bad {
        return Ok(());
    }
    let reason = if field == "headers" {
        format!("holds a control character and cannot be the value of header `{key}`")
    } else {
        format!("holds a NUL character and cannot be the value of `env.{key}`")
    };
    Err(EditError::new(EditErrorKind::UnusableSecret {
        secret: name.to_string(),
        server: server.to_owned(),
        reason,
    }))
}

fn invalid(server: &str, field: &str, key: &str, what: &str) -> EditError {
    EditError::new(EditErrorKind::InvalidEntry {
        name: server.to_owned(),
        reason: format!("`{field}.{key}` holds {what}"),
    })
}
