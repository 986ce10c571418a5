//! What may be written: a server name by the loader's naming rule, and an
//! entry by the loader's own entry parser, so no verb writes something
//! that would not load.

use std::collections::BTreeMap;
use std::path::Path;

use serde_json::Value;

use crate::entry::{EntryContext, EntryOutcome, parse_entry};
use crate::json::{Document, escape_text};
use crate::name::server_name_problem;
use crate::policy::Policy;
use crate::types::{Level, Scope};

use crate::error::{EditError, EditErrorKind};

/// Checks a server name for writing: the loader's own rule
/// ([`crate::name::server_name_problem`]), so every name that loads can be
/// managed by every verb and no verb writes a name that would not load.
pub fn validate_name(name: &str) -> Result<(), EditError> {
    match server_name_problem(name) {
        None => Ok(()),
        Some(reason) => Err(EditError::new(EditErrorKind::InvalidName {
            name: escape_text(name).into_owned(),
            reason: reason
                .strip_prefix("a server name ")
                .unwrap_or(&reason)
                .to_owned(),
        })),
    }
}

/// A server entry that passed [`validate_entry`]: the only kind of entry
/// [`ConfigDocument::upsert`](super::ConfigDocument::upsert) and
/// [`ConfigDocument::insert_new`](super::ConfigDocument::insert_new) accept.
#[derive(Debug, Clone, PartialEq)]
pub struct ValidEntry(pub(super) Value);

impl ValidEntry {
    /// The entry's JSON.
    pub fn as_value(&self) -> &Value {
        &self.0
    }
}

/// Checks that `entry` is a server entry the loader accepts, by running the
/// loader's own entry parser (the one [`parse_file`](crate::parse_file) runs) over it with
/// `vars` for `${VAR}` expansion. Any error-level diagnostic refuses the
/// entry; warnings (an unknown key, an unset variable) do not. An entry
/// that `policy` would block in `scope` is refused naming the rule, so no
/// verb writes a server that could never run.
pub fn validate_entry(
    name: &str,
    entry: Value,
    vars: &BTreeMap<String, String>,
    policy: &Policy,
    scope: Scope,
) -> Result<ValidEntry, EditError> {
    validate_name(name)?;
    let invalid = |reason: String| {
        EditError::new(EditErrorKind::InvalidEntry {
            name: name.to_owned(),
            reason,
        })
    };
    if !entry.is_object() {
        return Err(invalid(format!(
            "expected a JSON object, got {}",
            json_type(&entry)
        )));
    }
    let text = serde_json::to_string(&entry).map_err(|err| invalid(err.to_string()))?;
    let document = Document::parse(&text, Path::new(name)).map_err(|d| invalid(d.message))?;
    let context = EntryContext {
        doc: &document,
        pointer: "",
        name,
        env: vars,
        home: None,
        plugin: None,
    };
    let mut diagnostics = Vec::new();
    let outcome = parse_entry(&document.value, &context, &mut diagnostics);
    let errors: Vec<String> = diagnostics
        .into_iter()
        .filter(|d| d.level == Level::Error)
        .map(|d| {
            // The error already names the server; keep its message bare.
            let prefix = format!("server `{name}`: ");
            d.message
                .strip_prefix(&prefix)
                .map(str::to_owned)
                .unwrap_or(d.message)
        })
        .collect();
    if !errors.is_empty() || outcome == EntryOutcome::Invalid {
        return Err(invalid(if errors.is_empty() {
            "not a valid server entry".to_owned()
        } else {
            errors.join("; ")
        }));
    }
    if let EntryOutcome::Server(config) = &outcome
        && let Some(block) = policy.check(config, scope, Some(&entry))
    {
        return Err(EditError::new(EditErrorKind::Blocked {
            name: name.to_owned(),
            block: Box::new(block),
        }));
    }
    Ok(ValidEntry(entry))
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
