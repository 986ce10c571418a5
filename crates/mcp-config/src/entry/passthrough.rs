//! `envPassthrough` of a stdio entry: the further host variables its child
//! inherits (REFERENCE §1.6, Decision 2026-12; Codex calls them
//! `env_vars`).
//!
//! The field is a list of variable names. A list of another shape, or an
//! item that is not a string, makes the entry invalid, as a malformed `env`
//! does. An item that is not a name, or a name env safety refuses
//! (`LD_PRELOAD`, `NODE_OPTIONS`, ...), is an error diagnostic and is
//! dropped, so it never reaches a child; the rest of the entry stays
//! usable, as with a refused `env` key. An item that is not a name may be a
//! pasted `NAME=secret`, so its message describes it and never quotes it.
//! A repeated name is a warning and is kept once.

use serde_json::Value;

use super::EntryParser;
use crate::env_safety::{is_dangerous_env_key, is_env_name};
use crate::json::escape_text;
use crate::types::Level;

const FIELD: &str = "envPassthrough";

impl EntryParser<'_, '_> {
    /// The names of `envPassthrough`, checked; empty when the field is absent.
    pub(super) fn env_passthrough(&mut self) -> Vec<String> {
        let mut names: Vec<String> = Vec::new();
        let Some(value) = self.get(FIELD) else {
            return names;
        };
        let pointer = self.pointer(Some(FIELD));
        let Some(items) = value.as_array() else {
            self.error(
                Some(FIELD),
                format!("`{FIELD}` must be an array of variable names"),
            );
            return names;
        };
        for (i, item) in items.iter().enumerate() {
            let at = format!("{pointer}/{i}");
            let Value::String(name) = item else {
                self.push_at(
                    Level::Error,
                    &at,
                    Some(FIELD),
                    format!("`{FIELD}[{i}]` must be a string"),
                );
                continue;
            };
            if !is_env_name(name) {
                self.refuse(
                    &at,
                    format!(
                        "`{FIELD}[{i}]` is not a variable name (letters, digits and `_`, not starting with a digit) and is refused"
                    ),
                );
                continue;
            }
            if is_dangerous_env_key(name) {
                self.refuse(
                    &at,
                    format!(
                        "`{FIELD}` names `{}`, which can change how the server's interpreter starts, and is refused",
                        escape_text(name)
                    ),
                );
                continue;
            }
            if names.contains(name) {
                self.push_at(
                    Level::Warning,
                    &at,
                    Some(FIELD),
                    format!("`{FIELD}` repeats `{name}`"),
                );
                continue;
            }
            names.push(name.clone());
        }
        names
    }

    /// An error that drops one item but leaves the entry usable (as a
    /// refused `env` key does).
    fn refuse(&mut self, pointer: &str, message: String) {
        let message = format!("server `{}`: {message}", escape_text(self.cx.name));
        let diagnostic = self.cx.doc.diagnostic(
            Level::Error,
            pointer,
            message,
            Some(self.cx.name),
            Some(FIELD),
        );
        self.diagnostics.push(diagnostic);
    }
}
