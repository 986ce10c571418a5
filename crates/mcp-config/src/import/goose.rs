//! Goose's `config.yaml` (`~/.config/goose/`): `extensions`, each with a
//! `type`: `stdio` (`cmd`/`args`/`envs`), `sse` (`uri`) or
//! `streamable_http` (`uri`/`headers`); `enabled`; `timeout` in seconds
//! (Goose's limit on every request, tool calls included). Built-in and
//! platform extensions run inside Goose and have nothing to import.

use serde_json::Value;

use super::shared::{EntryBuilder, Session, Vars, shown_name};

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["extensions"], Vars::Plain, entry);
}

fn entry(b: &mut EntryBuilder<'_>) {
    let kind = match b.field("type") {
        Some(Value::String(t)) => t.clone(),
        Some(_) => {
            b.refuse(&["type"], "`type` is not a string");
            return;
        }
        None => {
            b.refuse(&[], "the extension has no `type`");
            return;
        }
    };
    match kind.as_str() {
        "stdio" => b.stdio("cmd", "args", "envs"),
        "sse" => b.remote("sse", "uri"),
        "streamable_http" => b.remote("http", "uri"),
        "builtin" | "platform" | "frontend" | "inline_python" => {
            b.skip(format!(
                "a Goose `{kind}` extension runs inside Goose, not as an MCP server"
            ));
            return;
        }
        other => {
            b.refuse(&["type"], format!("unknown type `{}`", shown_name(other)));
            return;
        }
    }
    if kind != "stdio"
        && let Some(envs) = b.field("envs")
        && envs.as_object().is_none_or(|e| !e.is_empty())
    {
        b.untranslated(
            &["envs"],
            "a remote extension has no process to give an environment to",
        );
    }
    if let Some(enabled) = b.boolean("enabled") {
        b.set("enabled", Value::Bool(enabled));
    }
    if b.has("timeout") {
        b.duration("timeout", "requestTimeoutMs", 1000.0);
        let request = b.entry.get("requestTimeoutMs").cloned();
        if let Some(ms) = request {
            b.set("toolCallTimeoutMs", ms);
        }
    }
    // An empty list is Goose's "every tool"; a non-empty one its allow-list.
    let every = b
        .field("available_tools")
        .and_then(Value::as_array)
        .is_some_and(Vec::is_empty);
    if !every {
        b.tool_list("available_tools", "include");
    }
    b.drop_field(
        "env_keys",
        "names of secrets Goose keeps in its keyring; their values are not in the file: set them in `env`",
    );
    for field in ["name", "display_name", "description", "bundled"] {
        b.drop_field(field, "a description only; not needed to run the server");
    }
}
