//! Gemini CLI's `settings.json` (`~/.gemini/` or the project's
//! `.gemini/`): `mcpServers` with `command`/`args`/`env`/`cwd`, `url` (SSE,
//! or streamable HTTP with `type: "http"`), `httpUrl` (streamable HTTP),
//! `headers`, `timeout` (milliseconds, per request), `includeTools`/
//! `excludeTools`, `trust`; `$VAR` and `${VAR}` in values; `mcp.allowed` and
//! `mcp.excluded` switch servers off (`enabled: false`).

use serde_json::{Map, Value};

use super::shared::{EntryBuilder, Session, Vars, shown_name};

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["mcpServers"], Vars::Shell, entry);
    // Gemini CLI's lists of servers to run (`mcp.allowed`) or not to run
    // (`mcp.excluded`; `allowMCPServers`/`excludeMCPServers` in older
    // files): a server they switch off is imported switched off.
    let tree = session.tree;
    let list = |pointer: &str| -> Option<Vec<String>> {
        let items = tree.value.pointer(pointer)?.as_array()?;
        Some(
            items
                .iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect(),
        )
    };
    let allowed = list("/mcp/allowed").or_else(|| list("/allowMCPServers"));
    let excluded = list("/mcp/excluded").or_else(|| list("/excludeMCPServers"));
    for server in &mut session.out.servers {
        let off = allowed.as_ref().is_some_and(|a| !a.contains(&server.name))
            || excluded.as_ref().is_some_and(|e| e.contains(&server.name));
        if off && let Some(entry) = server.entry.as_object_mut() {
            entry.insert("enabled".to_owned(), Value::Bool(false));
        }
    }
}

fn entry(b: &mut EntryBuilder<'_>) {
    let kind = match b.field("type") {
        None => None,
        Some(Value::String(t)) => Some(t.clone()),
        Some(_) => {
            b.refuse(&["type"], "`type` is not a string");
            return;
        }
    };
    if b.has("httpUrl") {
        b.remote("http", "httpUrl");
        for field in ["url", "command"] {
            b.drop_field(
                field,
                "`httpUrl` of the same entry is used, as Gemini CLI does",
            );
        }
    } else if b.has("url") {
        let transport = match kind.as_deref() {
            None | Some("sse") => "sse",
            Some("http") => "http",
            Some(other) => {
                b.refuse(&["type"], format!("unknown type `{}`", shown_name(other)));
                return;
            }
        };
        b.remote(transport, "url");
        b.drop_field(
            "command",
            "`url` of the same entry is used, as Gemini CLI does",
        );
    } else if b.has("command") {
        b.stdio("command", "args", "env");
    } else {
        b.refuse(&[], "the entry has none of `command`, `url`, `httpUrl`");
        return;
    }
    b.duration("timeout", "requestTimeoutMs", 1.0);
    b.tool_list("includeTools", "include");
    b.tool_list("excludeTools", "exclude");
    b.drop_field(
        "trust",
        "Gemini CLI's `trust` skips its tool-call confirmations; mcp-cli asks for none, so there is nothing to carry over",
    );
    b.drop_field(
        "description",
        "a description only; not needed to run the server",
    );
    oauth(b);
}

/// `oauth`: the client id and scopes carry over; the rest of Gemini's
/// OAuth settings is discovered by `mcp-cli login` or has no counterpart.
fn oauth(b: &mut EntryBuilder<'_>) {
    let Some(value) = b.field("oauth") else {
        return;
    };
    let Some(settings) = value.as_object() else {
        b.untranslated(&["oauth"], "not an object; left out");
        return;
    };
    let mut oauth = Map::new();
    for (key, v) in settings {
        match (key.as_str(), v) {
            ("enabled", Value::Bool(_)) => {}
            ("clientId", Value::String(id)) => {
                oauth.insert("clientId".to_owned(), Value::String(id.clone()));
            }
            ("scopes", Value::Array(_)) => {
                oauth.insert("scopes".to_owned(), v.clone());
            }
            _ => b.untranslated(
                &["oauth", key],
                "not carried over; `mcp-cli login` discovers the authorization server",
            ),
        }
    }
    if b.entry.get("type").and_then(Value::as_str) != Some("stdio") {
        b.set("oauth", Value::Object(oauth));
    }
}
