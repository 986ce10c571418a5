//! VS Code's `mcp.json` (the project's `.vscode/mcp.json` or the user
//! profile's): `servers` with `type` (`stdio`, `http`, `sse`),
//! `command`/`args`/`env`/`envFile`/`cwd` or `url`/`headers`; `inputs`
//! (values VS Code asks for, used as `${input:ID}`); its variables
//! (`${workspaceFolder}` is the project, `${env:VAR}` ours `${VAR}`).

use serde_json::Value;

use super::InputPrompt;
use super::shared::{Session, Vars, command_or_url, env_file};
use crate::json::child_pointer;
use crate::types::Level;

pub(super) fn translate(session: &mut Session<'_>) {
    session.servers(&["servers"], Vars::Editor, |b| {
        command_or_url(b, "url");
        env_file(b);
        b.drop_field(
            "dev",
            "VS Code's development mode (watch and debug) has no counterpart",
        );
        for field in ["gallery", "version"] {
            b.drop_field(
                field,
                "where VS Code installed the server from; not needed to run it",
            );
        }
    });
    inputs(session);
}

/// The `inputs` the imported servers use: `promptString` (and
/// `pickString`, whose options are left to the person asked).
fn inputs(session: &mut Session<'_>) {
    let used: Vec<String> = session
        .out
        .servers
        .iter()
        .flat_map(|s| s.inputs.iter().cloned())
        .collect();
    let declared = session.tree.value.get("inputs").and_then(Value::as_array);
    for (i, input) in declared.into_iter().flatten().enumerate() {
        let Some(id) = input.get("id").and_then(Value::as_str) else {
            let pointer = child_pointer("/inputs", &i.to_string());
            session.out.diagnostics.push(session.tree.diagnostic(
                Level::Warning,
                &pointer,
                "an input without a string `id` is ignored".into(),
                None,
            ));
            continue;
        };
        if !used.iter().any(|u| u == id) || session.out.inputs.iter().any(|p| p.id == id) {
            continue;
        }
        session.out.inputs.push(InputPrompt {
            id: id.to_owned(),
            description: input
                .get("description")
                .and_then(Value::as_str)
                .map(str::to_owned),
            password: input.get("password").and_then(Value::as_bool) == Some(true),
        });
    }
    // An id used but never declared is still asked for, with no
    // description, and without echo: nothing says it is not a secret.
    for id in used {
        if !session.out.inputs.iter().any(|p| p.id == id) {
            session.out.inputs.push(InputPrompt {
                id,
                description: None,
                password: true,
            });
        }
    }
}
