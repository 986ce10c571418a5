//! Codex's `config.toml` (`~/.codex/` or the project's `.codex/`):
//! `[mcp_servers.NAME]` tables. Stdio: `command`/`args`/`env`/`cwd` and
//! `env_vars` (names passed through from Codex's environment, our
//! `envPassthrough`). Streamable HTTP: `url`, `bearer_token_env_var`
//! (`Authorization: Bearer ${VAR}`), `http_headers`, `env_http_headers`
//! (header values read from variables, our `${VAR}`). Both: `enabled`,
//! `required`, `enabled_tools`/`disabled_tools` (our `toolFilter`),
//! `startup_timeout_sec` (or `_ms`) and `tool_timeout_sec`.

use serde_json::{Map, Value};

use super::shared::{EntryBuilder, Session, Vars, shown_name};
use crate::env_safety::is_env_name;

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["mcp_servers"], Vars::Plain, entry);
}

fn entry(b: &mut EntryBuilder<'_>) {
    if b.has("url") {
        remote(b);
    } else if b.has("command") {
        b.stdio("command", "args", "env");
        env_vars(b);
    } else {
        b.refuse(&[], "the table has neither `command` nor `url`");
        return;
    }
    if let Some(enabled) = b.boolean("enabled") {
        b.set("enabled", Value::Bool(enabled));
    }
    if let Some(required) = b.boolean("required") {
        b.set("required", Value::Bool(required));
    }
    b.tool_list("enabled_tools", "include");
    b.tool_list("disabled_tools", "exclude");
    if b.has("startup_timeout_sec") {
        b.duration("startup_timeout_sec", "connectionTimeoutMs", 1000.0);
        b.drop_field(
            "startup_timeout_ms",
            "`startup_timeout_sec` of the same entry is used",
        );
    } else {
        b.duration("startup_timeout_ms", "connectionTimeoutMs", 1.0);
    }
    b.duration("tool_timeout_sec", "toolCallTimeoutMs", 1000.0);
}

fn remote(b: &mut EntryBuilder<'_>) {
    b.set("type", Value::from("http"));
    if let Some(url) = b.string("url") {
        b.set("url", Value::String(url));
    }
    let mut headers = b.string_map("http_headers").unwrap_or_default();
    if let Some(value) = b.field("env_http_headers")
        && let Some(map) = b.map_at(&["env_http_headers"], value)
    {
        for (header, var) in map {
            match var.as_str() {
                Some(var) if is_env_name(var) => {
                    headers.insert(header, Value::String(format!("${{{var}}}")));
                }
                _ => b.untranslated(
                    &["env_http_headers", &header],
                    "not an environment variable name; left out",
                ),
            }
        }
    }
    if let Some(value) = b.field("bearer_token_env_var") {
        match value.as_str() {
            Some(var) if is_env_name(var) => {
                headers.insert(
                    "Authorization".to_owned(),
                    Value::String(format!("Bearer ${{{var}}}")),
                );
            }
            _ => b.untranslated(
                &["bearer_token_env_var"],
                "not an environment variable name; left out",
            ),
        }
    }
    if !headers.is_empty() {
        b.set("headers", Value::Object(headers));
    }
    let mut oauth = Map::new();
    if let Some(scopes) = b.field("scopes") {
        match scopes.as_array().and_then(|items| {
            items
                .iter()
                .map(|s| s.as_str().map(Value::from))
                .collect::<Option<Vec<Value>>>()
        }) {
            Some(scopes) => {
                oauth.insert("scopes".to_owned(), Value::Array(scopes));
            }
            None => b.untranslated(&["scopes"], "not an array of scope names; left out"),
        }
    }
    if let Some(table) = b.field("oauth") {
        match table.as_object() {
            Some(table) => {
                for (key, value) in table {
                    match (key.as_str(), value.as_str()) {
                        ("client_id", Some(id)) => {
                            oauth.insert("clientId".to_owned(), Value::from(id));
                        }
                        _ => b.untranslated(
                            &["oauth", key],
                            "not carried over; `mcp-cli login` discovers the authorization server",
                        ),
                    }
                }
            }
            None => b.untranslated(&["oauth"], "not a table; left out"),
        }
    }
    if !oauth.is_empty() {
        b.set("oauth", Value::Object(oauth));
    }
}

/// `env_vars`: names (or `{ name = … }` tables) whose values Codex passes
/// from its own environment.
fn env_vars(b: &mut EntryBuilder<'_>) {
    let Some(value) = b.field("env_vars") else {
        return;
    };
    let Some(items) = value.as_array() else {
        b.untranslated(&["env_vars"], "not an array of variable names; left out");
        return;
    };
    let mut names = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let name = item
            .as_str()
            .or_else(|| item.get("name").and_then(Value::as_str));
        match name {
            Some(name) if is_env_name(name) => names.push(Value::from(name)),
            Some(name) => b.untranslated(
                &["env_vars", &i.to_string()],
                format!("`{}` is not a variable name; left out", shown_name(name)),
            ),
            None => b.untranslated(
                &["env_vars", &i.to_string()],
                "not a variable name; left out",
            ),
        }
    }
    if !names.is_empty() {
        b.set("envPassthrough", Value::Array(names));
    }
}
