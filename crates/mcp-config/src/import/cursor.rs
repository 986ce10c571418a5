//! Cursor's `mcp.json` (user-wide in `~/.cursor`, or the project's
//! `.cursor/`): `mcpServers` with `command`/`args`/`env`/`envFile` or
//! `url`/`headers` (streamable HTTP, Cursor falls back to SSE itself), and
//! VS Code's variables (`${env:VAR}`, `${workspaceFolder}`, `${userHome}`).

use super::shared::{Session, Vars, command_or_url, env_file};

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["mcpServers"], Vars::Editor, |b| {
        command_or_url(b, "url");
        env_file(b);
        b.drop_field(
            "auth",
            "Cursor's static OAuth client settings are not copied; sign in with `mcp-cli login`",
        );
    });
}
