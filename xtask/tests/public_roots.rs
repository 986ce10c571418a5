//! Tidy: each library crate's root names what a host needs first, and no
//! more than [`MAX_ROOT_ITEMS`] of it; the rest sits in named public
//! modules. No library crate re-exports with a glob, so every public item
//! has one path a reader can find by name.
//!
//! An item is one name a `pub use` at the root brings in, or one `pub`
//! constant, function or type the root defines; a `pub mod` is a module,
//! not an item (its own items are counted nowhere, being one path down).

use std::path::{Path, PathBuf};

/// The most items a library crate's root may name.
const MAX_ROOT_ITEMS: usize = 40;

/// The library crates whose roots are curated.
const LIBRARIES: [&str; 5] = [
    "mcp-config",
    "mcp-oauth",
    "mcp-transport",
    "mcp-catalog",
    "mcp-gateway",
];

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The names a root brings in or defines publicly, and its glob re-exports.
fn root_items(source: &str) -> (Vec<String>, Vec<String>) {
    let mut names = Vec::new();
    let mut globs = Vec::new();
    let statements = collect_statements(source);
    for statement in statements {
        let statement = statement.split_whitespace().collect::<Vec<_>>().join(" ");
        if let Some(path) = statement.strip_prefix("pub use ") {
            let path = path.trim_end_matches(';');
            if path.ends_with('*') {
                globs.push(path.to_owned());
                continue;
            }
            let list = match (path.find('{'), path.rfind('}')) {
                (Some(open), Some(close)) if open < close => &path[open + 1..close],
                _ => path.rsplit("::").next().unwrap_or_default(),
            };
            for item in list.split(',').map(str::trim).filter(|i| !i.is_empty()) {
                if item.ends_with('*') {
                    globs.push(format!("{path} ({item})"));
                    continue;
                }
                let name = item.rsplit(" as ").next().unwrap_or(item);
                names.push(name.rsplit("::").next().unwrap_or(name).to_owned());
            }
        } else {
            for keyword in [
                "pub const ",
                "pub static ",
                "pub fn ",
                "pub struct ",
                "pub enum ",
                "pub trait ",
                "pub type ",
            ] {
                if let Some(rest) = statement.strip_prefix(keyword) {
                    let name: String = rest
                        .chars()
                        .take_while(|c| c.is_alphanumeric() || *c == '_')
                        .collect();
                    names.push(name);
                }
            }
        }
    }
    (names, globs)
}

/// The root's top-level statements: a `pub use` runs to its `;`, anything
/// else is one line; the bodies of inline modules are skipped.
fn collect_statements(source: &str) -> Vec<String> {
    let mut statements = Vec::new();
    let mut depth = 0usize;
    let mut open_use: Option<String> = None;
    for line in source.lines() {
        let code = line.split("//").next().unwrap_or_default();
        if let Some(statement) = open_use.as_mut() {
            statement.push(' ');
            statement.push_str(code);
            if code.contains(';') {
                statements.extend(open_use.take());
            }
            continue;
        }
        if depth == 0 {
            let trimmed = code.trim();
            if trimmed.starts_with("pub use ") && !trimmed.contains(';') {
                open_use = Some(trimmed.to_owned());
                continue;
            }
            statements.push(trimmed.to_owned());
        }
        for ch in code.chars() {
            match ch {
                '{' => depth += 1,
                '}' => depth = depth.saturating_sub(1),
                _ => {}
            }
        }
    }
    statements
}

#[test]
fn every_library_root_names_few_items_and_no_glob() {
    let root = workspace_root();
    let mut problems = Vec::new();
    for library in LIBRARIES {
        let path = root.join("crates").join(library).join("src/lib.rs");
        let source = std::fs::read_to_string(&path)
            .unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
        let (names, globs) = root_items(&source);
        if names.len() > MAX_ROOT_ITEMS {
            problems.push(format!(
                "{library}: the root names {} items (at most {MAX_ROOT_ITEMS}); move the rest \
                 into a named module: {}",
                names.len(),
                names.join(", ")
            ));
        }
        for glob in globs {
            problems.push(format!("{library}: glob re-export `{glob}`"));
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_count_sees_lists_definitions_and_globs_but_not_module_bodies() {
    let source = "\
//! docs {
pub use a::{One, Two as Three,
    Four};
#[cfg(feature = \"x\")]
pub use b::Five;
pub use c::*;
pub const SIX: u8 = 6;
pub fn seven() {}
pub mod extra {
    pub use crate::d::{Eight, Nine};
}
mod private;
";
    let (names, globs) = root_items(source);
    assert_eq!(names, ["One", "Three", "Four", "Five", "SIX", "seven"]);
    assert_eq!(globs, ["c::*"]);
}
