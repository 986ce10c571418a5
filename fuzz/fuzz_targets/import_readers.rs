//! Other hosts' files through `import_text`: Codex's TOML, Goose's YAML
//! and the JSONC of Claude Desktop, Cursor, VS Code, Gemini CLI, Windsurf
//! and Zed, one format picked by the first byte (see
//! `mcp_fuzz::import_input` for how a short input repeats a piece into a
//! long line, many keys or deep nesting).
//!
//! Besides "never panics" and, through `cargo xtask fuzz`'s per-input time
//! limit, "never slow" (work linear in the text), it checks what import
//! promises: every position of a diagnostic or an untranslated field lies
//! inside the text (a line it has, a column within that line), and every
//! entry that comes out passes the loader's own entry check.

#![no_main]

use std::collections::BTreeMap;
use std::path::Path;

use libfuzzer_sys::fuzz_target;
use mcp_config::import::{ImportContext, fill_inputs, import_text};
use mcp_fuzz::import_input::import_input;

fuzz_target!(|data: &[u8]| {
    let Some((host, text)) = import_input(data) else {
        return;
    };
    let cx = ImportContext::default()
        .with_home(Path::new("/home/u"))
        .with_project(Path::new("/work/project"));
    let imported = import_text(host, &text, Path::new("f"), &cx);

    // Characters per line, a byte order mark not counted (as editors show it).
    let shown = text.strip_prefix('\u{feff}').unwrap_or(&text);
    let widths: Vec<usize> = shown.split('\n').map(|l| l.chars().count()).collect();
    let inside = |line: u32, column: u32, what: &str| {
        let width = usize::try_from(line)
            .ok()
            .and_then(|l| l.checked_sub(1))
            .and_then(|l| widths.get(l));
        let Some(&width) = width else {
            panic!("{what}: line {line} of {}", widths.len());
        };
        assert!(
            column >= 1 && usize::try_from(column).is_ok_and(|c| c <= width + 1),
            "{what}: column {column} of a line of {width} characters"
        );
    };
    for d in &imported.diagnostics {
        if let (Some(line), Some(column)) = (d.line, d.column) {
            inside(line, column, &d.message);
        }
    }
    for server in &imported.servers {
        inside(server.line, server.column, &server.name);
        for u in &server.untranslated {
            inside(u.line, u.column, &u.field);
        }
        let mut entry = server.entry.clone();
        let stand_ins: BTreeMap<String, String> = server
            .inputs
            .iter()
            .map(|id| (id.clone(), "x".to_owned()))
            .collect();
        fill_inputs(&mut entry, &stand_ins);
        if let Err(err) = mcp_config::edit::validate_entry(
            &server.name,
            entry,
            &BTreeMap::new(),
            &mcp_config::policy::Policy::default(),
            mcp_config::Scope::User,
        ) {
            panic!("{host}: server `{}` was imported but fails the entry check: {err}", server.name);
        }
    }
});
