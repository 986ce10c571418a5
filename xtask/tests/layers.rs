//! Tidy: each library crate (and the CLI) is a stack of layers, and a
//! module uses only the modules of the layers below its own.
//!
//! The table below names every top-level module of every crate, lowest
//! layer first. An edge is a `crate::name` path (in a `use` or inline) in a
//! file of module `from` naming top-level module `to`; test modules,
//! `tests.rs` files and comments are left out, and `lib.rs` / `main.rs`
//! (which only declare and re-export) are no module's. An edge to a module
//! of the same layer or a higher one fails, naming the file and line, and
//! so does a module the table does not place (a new file must be given a
//! layer).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// A crate's top-level modules, lowest layer first.
type Layers = &'static [&'static [&'static str]];

const CRATES: &[(&str, Layers)] = &[
    (
        "crates/mcp-config",
        &[
            &["types", "lines"],
            &["json", "env_safety", "error", "file"],
            &["name", "expand", "sources", "tree", "secret"],
            &["identity"],
            &["consent"],
            &["entry"],
            &["parse"],
            &["merge"],
            &["plugin"],
            &["policy"],
            &["load"],
            &["check"],
            &["edit"],
            &["import"],
        ],
    ),
    (
        "crates/mcp-oauth",
        &[
            &[
                "error",
                "clock",
                "body",
                "pkce",
                "process",
                "redirect",
                "secret",
                "url_policy",
            ],
            &["store", "assertion", "metadata", "provider"],
            &["dpop"],
            &["token", "user_agent"],
            &["telemetry"],
            &["oauth"],
        ],
    ),
    (
        "crates/mcp-transport",
        &[
            // the wire
            &[
                "time",
                "error_codes",
                "param_headers",
                "stderr_tail",
                "era",
                "content",
                "params",
            ],
            &["protocol", "depth"],
            &["error"],
            &["message", "task", "telemetry"],
            &["scan", "request_meta", "failure"],
            &["codec", "serving"],
            // the trait
            &["transport"],
            // the parts the kinds share
            &["event_stream", "headers_helper", "outbox"],
            &["http"],
            &["inbox"],
            // one module per kind
            &["stdio", "streamable_http", "sse", "ws", "sdk"],
            &["claudeai_proxy"],
            // the session, then the only module that names every kind
            &["session", "router"],
            &["connect"],
        ],
    ),
    (
        "crates/mcp-catalog",
        &[
            &["error", "clock", "backoff", "deep", "naming", "filter"],
            &["schema"],
            &["tool", "result"],
            &["search"],
            &["catalog"],
            &["servers", "skills"],
            &["runtime"],
            &["mcp_connector"],
        ],
    ),
    (
        "crates/mcp-gateway",
        &[
            &["error", "names", "relay", "observe"],
            &["token", "reload", "held"],
            &["gateway"],
            &["downstream"],
            &["stdio", "http"],
        ],
    ),
    (
        "crates/mcp-cli",
        &[
            &["cli", "telemetry"],
            &["context", "connecting"],
            &["output"],
            &["diagnostics", "wait", "entry_args", "token_store", "secret"],
            &["approve"],
            &["import"],
            &["read"],
            &["target"],
            &["auth"],
            &["host"],
            &["session"],
            &["probe", "tools", "write"],
            &["browse", "serve"],
        ],
    ),
];

/// Every `.rs` file under `dir`, test files left out.
fn sources(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if path.file_name().is_some_and(|name| name != "tests") {
                sources(&path, out);
            }
        } else if path.extension().is_some_and(|ext| ext == "rs")
            && path.file_name().is_some_and(|name| name != "tests.rs")
        {
            out.push(path);
        }
    }
}

/// The source without its inline test module (by convention the last item
/// of a file), with comment lines blanked so line numbers stay.
fn code(source: &str) -> String {
    let mut kept = String::with_capacity(source.len());
    let lines: Vec<&str> = source.lines().collect();
    for (index, line) in lines.iter().enumerate() {
        let trimmed = line.trim_start();
        // `#[cfg(test)]`, any more attributes, then `mod tests {`.
        let opens_tests = trimmed.starts_with("#[cfg(test)]")
            && lines[index + 1..]
                .iter()
                .map(|next| next.trim_start())
                .find(|next| !next.starts_with("#["))
                .is_some_and(|next| next.starts_with("mod tests {"));
        if opens_tests {
            break;
        }
        if !trimmed.starts_with("//") {
            kept.push_str(line);
        }
        kept.push('\n');
    }
    kept
}

/// The first identifier of each path `crate::` starts, with the byte
/// offset of the path: `crate::a::b` gives `a`, `crate::{a::b, c}` (over
/// any number of lines) gives `a` and `c`.
fn named_after_crate(code: &str) -> Vec<(usize, String)> {
    let mut names = Vec::new();
    let mut from = 0;
    while let Some(found) = code[from..].find("crate::") {
        let at = from + found;
        from = at + "crate::".len();
        let before = code[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_') {
            continue; // `mcp_crate::`, not `crate::`
        }
        let rest = &code[from..];
        if let Some(group) = rest.strip_prefix('{') {
            let mut depth = 0usize;
            let mut item = String::new();
            let mut items = Vec::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => items.push(std::mem::take(&mut item)),
                    _ if depth == 0 => item.push(c),
                    _ => {}
                }
            }
            items.push(item);
            names.extend(items.iter().map(|item| (at, first_ident(item))));
        } else {
            names.push((at, first_ident(rest)));
        }
    }
    names.retain(|(_, name)| !name.is_empty());
    names
}

fn first_ident(text: &str) -> String {
    text.trim_start()
        .chars()
        .take_while(|c| c.is_alphanumeric() || *c == '_')
        .collect()
}

/// The top-level module a file belongs to (`None` for the crate root).
fn module_of(src: &Path, file: &Path) -> Option<String> {
    let relative = file.strip_prefix(src).ok()?;
    let first = relative.components().next()?.as_os_str().to_str()?;
    let name = first.strip_suffix(".rs").unwrap_or(first);
    (!matches!(name, "lib" | "main")).then(|| name.to_owned())
}

/// Every edge between two top-level modules of `krate`, as `(from, to,
/// where)`.
fn edges(root: &Path, krate: &str) -> Vec<(String, String, String)> {
    let src = root.join(krate).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files.sort();
    let mut found = Vec::new();
    for file in &files {
        let Some(from) = module_of(&src, file) else {
            continue;
        };
        let text = code(&std::fs::read_to_string(file).unwrap_or_default());
        for (at, to) in named_after_crate(&text) {
            let is_module = src.join(format!("{to}.rs")).is_file() || src.join(&to).is_dir();
            if is_module && to != from {
                let line = text[..at].matches('\n').count() + 1;
                let shown = file.strip_prefix(root).unwrap_or(file).display();
                found.push((from.clone(), to, format!("{shown}:{line}")));
            }
        }
    }
    found
}

/// Every top-level module of `krate` (the crate root left out).
fn modules(root: &Path, krate: &str) -> BTreeSet<String> {
    let src = root.join(krate).join("src");
    let mut files = Vec::new();
    sources(&src, &mut files);
    files
        .iter()
        .filter_map(|file| module_of(&src, file))
        .collect()
}

/// Every edge that is not downward, and the modules the table does not
/// place.
fn check(root: &Path, krate: &str, layers: Layers) -> (Vec<(String, String, String)>, Vec<String>) {
    let layer_of: BTreeMap<&str, usize> = layers
        .iter()
        .enumerate()
        .flat_map(|(layer, modules)| modules.iter().map(move |module| (*module, layer)))
        .collect();
    let unplaced = modules(root, krate)
        .into_iter()
        .filter(|module| !layer_of.contains_key(module.as_str()))
        .collect();
    let bad = edges(root, krate)
        .into_iter()
        .filter(
            |(from, to, _)| match (layer_of.get(from.as_str()), layer_of.get(to.as_str())) {
                (Some(from), Some(to)) => to >= from,
                _ => false,
            },
        )
        .collect();
    (bad, unplaced)
}

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

#[test]
fn every_module_uses_only_the_layers_below_its_own() {
    let root = workspace_root();
    let mut failures = Vec::new();
    for (krate, layers) in CRATES {
        let (bad, unplaced) = check(&root, krate, layers);
        for module in unplaced {
            failures.push(format!(
                "{krate}: module `{module}` has no layer in the table"
            ));
        }
        for (from, to, at) in bad {
            failures.push(format!(
                "{at}: `{from}` uses `{to}`, which is not in a layer below it ({krate})"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The transport kinds, and the modules that may name them: `connect`,
/// which chooses one per entry, the proxy, which is streamable HTTP with
/// its own endpoint, and the tool router, which serves over the in-process
/// kind.
const KINDS: &[&str] = &[
    "stdio",
    "streamable_http",
    "sse",
    "ws",
    "sdk",
    "claudeai_proxy",
];
const NAME_KINDS: &[&str] = &["connect", "claudeai_proxy", "router"];

#[test]
fn only_connect_names_the_transport_kinds() {
    let root = workspace_root();
    let naming: Vec<String> = edges(&root, "crates/mcp-transport")
        .into_iter()
        .filter(|(from, to, _)| {
            KINDS.contains(&to.as_str()) && !NAME_KINDS.contains(&from.as_str())
        })
        .map(|(from, to, at)| format!("{at}: `{from}` names the kind `{to}`"))
        .collect();
    assert!(naming.is_empty(), "{}", naming.join("\n"));
    let present = modules(&root, "crates/mcp-transport");
    for kind in KINDS {
        assert!(present.contains(*kind), "no module `{kind}`: update KINDS");
    }
}

#[test]
fn paths_after_crate_are_read_as_their_first_module() {
    let cases: [(&str, &[&str]); 6] = [
        (
            "use crate::message::{Incoming, JsonRpcMessage};",
            &["message"],
        ),
        (
            "use crate::{codec::Codec, message::{A, B}, lock};",
            &["codec", "message", "lock"],
        ),
        (
            "let x = crate::time::later(now, d) + crate::scan::depth(b);",
            &["time", "scan"],
        ),
        ("use mcp_crate::thing;", &[]),
        ("pub(crate) fn f() {}", &[]),
        (
            "use crate::{\n    codec::Codec,\n    message::{\n        A,\n    },\n};",
            &["codec", "message"],
        ),
    ];
    for (code, expect) in cases {
        let names: Vec<String> = named_after_crate(code)
            .into_iter()
            .map(|(_, name)| name)
            .collect();
        assert_eq!(names, expect, "{code}");
    }
}
