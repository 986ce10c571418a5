//! Tidy: ARCHITECTURE.md's code map names every source file of the
//! workspace, and nothing else.
//!
//! In the map, each `### folder` heading names a workspace member's folder
//! and each bullet ``- `path` — …`` a file relative to that member's
//! `src/`. A source file the map does not name fails, naming the file; so
//! does an entry that names no file, or a member folder whose `src/` is
//! not mapped at all.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(Path::to_path_buf)
        .unwrap_or_default()
}

/// The entries of the map's `## Code map` section, as `folder/src/path`.
fn mapped(architecture: &str) -> BTreeSet<String> {
    let mut entries = BTreeSet::new();
    let mut folder: Option<String> = None;
    let mut in_map = false;
    for line in architecture.lines() {
        if let Some(heading) = line.strip_prefix("## ") {
            in_map = heading.trim() == "Code map";
            folder = None;
            continue;
        }
        if !in_map {
            continue;
        }
        if let Some(heading) = line.strip_prefix("### ") {
            folder = Some(heading.trim().to_owned());
            continue;
        }
        let (Some(folder), Some(rest)) = (&folder, line.strip_prefix("- `")) else {
            continue;
        };
        if let Some((path, _)) = rest.split_once('`') {
            entries.insert(format!("{folder}/src/{path}"));
        }
    }
    entries
}

/// Every `.rs` file under `dir`, as a path relative to `root`.
fn rust_files(root: &Path, dir: &Path, out: &mut BTreeSet<String>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(root, &path, out);
        } else if path.extension().is_some_and(|ext| ext == "rs")
            && let Ok(relative) = path.strip_prefix(root)
        {
            out.insert(relative.display().to_string());
        }
    }
}

/// The folders of the workspace members that have a `src/`.
fn members(root: &Path) -> Vec<String> {
    let manifest = std::fs::read_to_string(root.join("Cargo.toml")).unwrap_or_default();
    let Some(start) = manifest.find("members") else {
        return Vec::new();
    };
    let list = &manifest[start..];
    let list = &list[..list.find(']').unwrap_or(list.len())];
    list.split('"')
        .skip(1)
        .step_by(2)
        .filter(|member| root.join(member).join("src").is_dir())
        .map(str::to_owned)
        .collect()
}

#[test]
fn every_source_file_is_on_the_code_map() {
    let root = workspace_root();
    let architecture = std::fs::read_to_string(root.join("ARCHITECTURE.md")).unwrap_or_default();
    let entries = mapped(&architecture);
    assert!(!entries.is_empty(), "ARCHITECTURE.md has no code map");
    let members = members(&root);
    assert!(!members.is_empty(), "no workspace members found");
    let mut files = BTreeSet::new();
    for member in &members {
        rust_files(&root, &root.join(member).join("src"), &mut files);
    }
    let mut problems: Vec<String> = files
        .difference(&entries)
        .map(|file| format!("{file}: not on ARCHITECTURE.md's code map"))
        .collect();
    problems.extend(
        entries
            .difference(&files)
            .map(|entry| format!("{entry}: on the code map, but no such file")),
    );
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_map_is_read_by_heading_and_bullet() {
    let text = "## Code map\n\n### crates/a\n\n- `lib.rs` — root.\n- `x/y.rs` — y.\n\
                not a bullet `z.rs`\n\n## Invariants\n\n- `w.rs` — elsewhere.\n";
    let entries: Vec<String> = mapped(text).into_iter().collect();
    assert_eq!(entries, ["crates/a/src/lib.rs", "crates/a/src/x/y.rs"]);
}
