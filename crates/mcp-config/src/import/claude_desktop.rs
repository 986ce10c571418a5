//! Claude Desktop's `claude_desktop_config.json`: `mcpServers` with
//! `command`/`args`/`env`, the shape our own files use.

use super::shared::{Session, Vars, command_or_url};

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["mcpServers"], Vars::Plain, |b| command_or_url(b, "url"));
}
