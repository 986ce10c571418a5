//! Zed's `settings.json` (JSONC; `~/.config/zed/` or the project's
//! `.zed/`): `context_servers`, each `{command, args, env}` (current
//! files, `source: "custom"`), `{command: {path, args, env}}` (older
//! files) or `{url, headers}`, with `enabled`. A server that a Zed
//! extension provides (`source: "extension"`) has no command in the file.

use serde_json::Value;

use super::shared::{EntryBuilder, Session, Vars, shown_name};

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["context_servers"], Vars::Plain, entry);
}

fn entry(b: &mut EntryBuilder<'_>) {
    match b.field("source").map(|v| v.as_str()) {
        None | Some(Some("custom")) => {}
        Some(Some("extension")) => {
            b.skip("provided by a Zed extension, whose command only Zed knows");
            return;
        }
        Some(Some(other)) => {
            b.refuse(
                &["source"],
                format!("unknown source `{}`", shown_name(other)),
            );
            return;
        }
        Some(None) => {
            b.refuse(&["source"], "`source` is not a string");
            return;
        }
    }
    match b.field("command") {
        Some(Value::Object(command)) => {
            b.set("type", Value::from("stdio"));
            for (key, value) in command {
                match key.as_str() {
                    "path" => {
                        if let Some(path) = b.string_at(&["command", "path"], value) {
                            b.set("command", Value::String(path));
                        }
                    }
                    "args" => {
                        if let Some(args) = b.list_at(&["command", "args"], value) {
                            b.set("args", args.into_iter().map(Value::String).collect());
                        }
                    }
                    "env" => {
                        if !value.is_null()
                            && let Some(env) = b.map_at(&["command", "env"], value)
                        {
                            b.set("env", Value::Object(env));
                        }
                    }
                    _ => b.untranslated(&["command", key], "not a field Zed import knows"),
                }
            }
            if !command.contains_key("path") {
                b.refuse(&["command"], "`command` has no `path`");
            }
        }
        Some(Value::String(command)) => {
            b.set("type", Value::from("stdio"));
            let command = command.clone();
            b.set("command", Value::String(command));
            if let Some(args) = b.string_list("args") {
                b.set("args", args.into_iter().map(Value::String).collect());
            }
            if let Some(value) = b.field("env")
                && !value.is_null()
                && let Some(env) = b.map_at(&["env"], value)
            {
                b.set("env", Value::Object(env));
            }
        }
        Some(_) => b.refuse(&["command"], "`command` is neither a string nor an object"),
        None if b.has("url") => b.remote("http", "url"),
        None => b.refuse(&[], "the entry has neither `command` nor `url`"),
    }
    if let Some(enabled) = b.boolean("enabled") {
        b.set("enabled", Value::Bool(enabled));
    }
    if let Some(settings) = b.field("settings")
        && settings.as_object().is_none_or(|s| !s.is_empty())
    {
        b.untranslated(
            &["settings"],
            "settings for a Zed extension; not used by a custom server",
        );
    }
}
