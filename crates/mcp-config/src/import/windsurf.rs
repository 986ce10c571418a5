//! Windsurf's `~/.codeium/windsurf/mcp_config.json`: `mcpServers` with
//! `command`/`args`/`env`, or `serverUrl` (older files: `url`) and
//! `headers`; `disabled` and `disabledTools`; `${env:VAR}` in values.

use serde_json::Value;

use super::shared::{Session, Vars, command_or_url};

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["mcpServers"], Vars::Editor, |b| {
        let url_field = if b.has("serverUrl") {
            "serverUrl"
        } else {
            "url"
        };
        command_or_url(b, url_field);
        if url_field == "serverUrl" {
            b.drop_field("url", "`serverUrl` of the same entry is used");
        }
        if let Some(disabled) = b.boolean("disabled") {
            b.set("enabled", Value::Bool(!disabled));
        }
        b.tool_list("disabledTools", "exclude");
    });
}
