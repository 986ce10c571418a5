//! Plugin bundles (REFERENCE §1.4).
//!
//! A plugin is a folder with one of three manifests
//! (`.claude-plugin/plugin.json`, `.codex-plugin/plugin.json`,
//! `.cursor-plugin/plugin.json`, looked for in that order); a folder with
//! none is a Claude-format plugin without a manifest. Its servers come from,
//! in order: `<root>/.mcp.json` if it exists, the files the manifest's
//! `mcpServers` names (a relative path or a list of them, resolved against
//! the plugin root, deduplicated), and the manifest's inline `mcpServers`
//! object. These combine as an RFC 7396 merge patch: a later source's entry
//! patches the earlier one field by field and `null` deletes it.
//!
//! Paths resolve against the folder of the file that wrote them (the plugin
//! root for inline manifest entries): when a later file patches an entry,
//! the `command`, `args` and `cwd` each keep the folder of the file they
//! came from, and `cwd` defaults to the folder of the file that wrote
//! `command`.
//!
//! **Confinement.** Every relative path a plugin names must stay inside the
//! plugin root *as the system will resolve it*, symlinks and `..` included
//! (a hostile bundle ships `linkdir -> ../outside` and names
//! `linkdir/tool`):
//!
//! - `command`: a bare name (`node`) is a `PATH` lookup and stays as
//!   written; any other relative command (`./run`, `bin/run`,
//!   `linkdir/tool`) joins its file's folder, is checked, and is passed on
//!   absolute, so the child's working directory cannot change what runs.
//! - `args`: an explicitly relative arg (`./data`, `../x`) joins its file's
//!   folder and is passed on absolute; any other relative arg with a
//!   separator (`dist/index.js`), and the value of a `--flag=value`, is
//!   checked where the child will resolve it (its working directory) and
//!   passed on as written. Words without a separator are not paths.
//! - `cwd`: any relative `cwd` joins its file's folder and is checked.
//! - `headersHelper`: its program is judged like a `command` (it runs in
//!   the host's working directory, so a relative one would otherwise be
//!   looked up in the user's project).
//! - Anything that names `${CLAUDE_PLUGIN_ROOT}` is checked too. Absolute
//!   paths the plugin writes out in full are its author's explicit choice
//!   and are not confined.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use crate::entry::{PluginPaths, RootGuard, normalize};
use crate::file::{file_error, read_text};
use crate::json::{Document, child_pointer, escape_text};
use crate::parse::{ParseEnv, ParsedEntry, parse_one};
use crate::types::{Diagnostic, Level};

/// The manifest locations, in the order they are looked for.
pub(crate) const MANIFEST_PATHS: &[(&str, PluginFormat)] = &[
    (".claude-plugin/plugin.json", PluginFormat::Claude),
    (".codex-plugin/plugin.json", PluginFormat::Codex),
    (".cursor-plugin/plugin.json", PluginFormat::Cursor),
];

/// Which tool's plugin format a bundle uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum PluginFormat {
    /// `.claude-plugin/plugin.json`, or no manifest at all.
    Claude,
    /// `.codex-plugin/plugin.json`.
    Codex,
    /// `.cursor-plugin/plugin.json`.
    Cursor,
}

/// A plugin that was loaded.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct PluginInfo {
    /// The manifest's `name`, else the folder name.
    pub name: String,
    /// The plugin root (canonical when it exists).
    pub root: PathBuf,
    /// The manifest format.
    pub format: PluginFormat,
    /// The manifest file, if the plugin has one.
    pub manifest: Option<PathBuf>,
    /// The MCP files read, in merge order.
    pub mcp_files: Vec<PathBuf>,
}

/// The keys of the path fields whose file of origin is remembered through
/// a plugin's merge: `command`, `args`, `cwd` (with its aliases).
const PATH_FIELD_KEYS: [&[&str]; 4] = [
    &["command"],
    &["args"],
    &["cwd", "workingDirectory", "working_directory"],
    &["headersHelper", "headers_helper"],
];

/// One source of a plugin's servers: a document and where its map sits.
struct Source {
    doc: Document,
    pointer: String,
    base: PathBuf,
}

/// Loads one plugin bundle rooted at `root`.
pub(crate) fn load_plugin(
    root: &Path,
    env: ParseEnv<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> Option<(PluginInfo, Vec<ParsedEntry>)> {
    match root.canonicalize() {
        Ok(real) if real.is_dir() => Some(load_canonical_plugin(real, env, diagnostics)),
        _ => {
            diagnostics.push(file_error(
                root,
                "plugin root does not exist or is not a folder".into(),
            ));
            None
        }
    }
}

/// [`load_plugin`] for a root that is already canonical and a folder.
pub(crate) fn load_canonical_plugin(
    root: PathBuf,
    env: ParseEnv<'_>,
    diagnostics: &mut Vec<Diagnostic>,
) -> (PluginInfo, Vec<ParsedEntry>) {
    let guard = RootGuard::new(root.clone());
    let mut info = PluginInfo {
        name: root
            .file_name()
            .map_or_else(|| "plugin".into(), |n| n.to_string_lossy().into_owned()),
        root: root.clone(),
        format: PluginFormat::Claude,
        manifest: None,
        mcp_files: Vec::new(),
    };
    let mut manifest = None;
    for (rel, format) in MANIFEST_PATHS {
        let path = root.join(rel);
        if path.symlink_metadata().is_err() {
            continue;
        }
        if !guard.contains(&path) {
            diagnostics.push(file_error(
                &path,
                "plugin manifest leaves the plugin root".into(),
            ));
            break;
        }
        match read_text(&path) {
            Ok(None) => continue,
            Ok(Some(text)) => {
                info.format = *format;
                info.manifest = Some(path.clone());
                match Document::parse(&text, &path) {
                    Ok(doc) if doc.value.is_object() => manifest = Some(doc),
                    Ok(doc) => diagnostics.push(doc.diagnostic(
                        Level::Error,
                        "",
                        "plugin manifest must hold a JSON object".into(),
                        None,
                        None,
                    )),
                    Err(d) => diagnostics.push(d),
                }
            }
            Err(d) => diagnostics.push(d),
        }
        break;
    }
    if let Some(name) = manifest
        .as_ref()
        .and_then(|m| m.value.get("name"))
        .and_then(Value::as_str)
        && !name.trim().is_empty()
    {
        info.name = name.to_owned();
    }

    let mut sources = Vec::new();
    let auto = root.join(".mcp.json");
    let mut listed: Vec<PathBuf> = Vec::new();
    if auto.symlink_metadata().is_ok() {
        if guard.contains(&auto) {
            listed.push(auto);
        } else {
            diagnostics.push(file_error(
                &auto,
                "plugin MCP file leaves the plugin root".into(),
            ));
        }
    }
    let mut inline = false;
    if let Some(doc) = &manifest {
        match doc.value.get("mcpServers") {
            None => {}
            Some(Value::String(rel)) => {
                listed_path(doc, &guard, rel, "/mcpServers", &mut listed, diagnostics);
            }
            Some(Value::Array(items)) => {
                for (i, item) in items.iter().enumerate() {
                    let pointer = format!("/mcpServers/{i}");
                    match item.as_str() {
                        Some(rel) => {
                            listed_path(doc, &guard, rel, &pointer, &mut listed, diagnostics)
                        }
                        None => diagnostics.push(doc.diagnostic(
                            Level::Error,
                            &pointer,
                            format!("`mcpServers[{i}]` must be a relative path"),
                            None,
                            Some("mcpServers"),
                        )),
                    }
                }
            }
            Some(Value::Object(_)) => inline = true,
            Some(_) => diagnostics.push(
                doc.diagnostic(
                    Level::Error,
                    "/mcpServers",
                    "`mcpServers` must be a path, a list of paths or an object of server entries"
                        .into(),
                    None,
                    Some("mcpServers"),
                ),
            ),
        }
    }
    for path in listed {
        let text = match read_text(&path) {
            Ok(Some(text)) => text,
            Ok(None) => {
                diagnostics.push(file_error(&path, "plugin MCP file does not exist".into()));
                continue;
            }
            Err(d) => {
                diagnostics.push(d);
                continue;
            }
        };
        let doc = match Document::parse(&text, &path) {
            Ok(doc) => doc,
            Err(d) => {
                diagnostics.push(d);
                continue;
            }
        };
        let pointer = if doc.value.get("mcpServers").is_some() {
            "/mcpServers"
        } else if doc.value.get("servers").is_some() {
            "/servers"
        } else {
            ""
        };
        info.mcp_files.push(path.clone());
        let base = path
            .parent()
            .map_or_else(|| root.clone(), Path::to_path_buf);
        sources.push(Source {
            doc,
            pointer: pointer.to_owned(),
            base,
        });
    }
    for source in &sources {
        diagnostics.extend(source.doc.file_findings(&[source.pointer.as_str()]));
    }
    if let Some(doc) = &manifest
        && !inline
    {
        // `mcpServers` names the files that hold servers: repeating it
        // hides a set of them just as a repeated server map does.
        diagnostics.extend(doc.file_findings(&["/mcpServers"]));
    }
    if let Some(doc) = manifest.filter(|_| inline) {
        sources.push(Source {
            doc,
            pointer: "/mcpServers".into(),
            base: root.clone(),
        });
    }

    // RFC 7396 merge across sources; remember which source last touched
    // each server so diagnostics point at it, and which source wrote each
    // path field, so each path resolves against its own file's folder.
    let mut merged: Map<String, Value> = Map::new();
    let mut origin: std::collections::HashMap<String, usize> = Default::default();
    let mut path_origins: HashMap<String, [Option<usize>; 4]> = HashMap::new();
    for (index, source) in sources.iter().enumerate() {
        let Some(value) = source.doc.get(&source.pointer) else {
            continue;
        };
        let Some(map) = value.as_object() else {
            diagnostics.push(source.doc.diagnostic(
                Level::Error,
                &source.pointer,
                "plugin MCP file must hold an object of server entries".into(),
                None,
                None,
            ));
            continue;
        };
        for (name, patch) in map {
            if patch.is_null() {
                merged.remove(name);
                origin.remove(name);
                path_origins.remove(name);
                continue;
            }
            let target = merged.remove(name).unwrap_or(Value::Null);
            let origins = path_origins.entry(name.clone()).or_default();
            if !target.is_object() {
                *origins = [None; 4];
            }
            for (slot, keys) in origins.iter_mut().zip(PATH_FIELD_KEYS) {
                let set = match patch.as_object() {
                    Some(patch) => keys.iter().find_map(|k| patch.get(*k)),
                    None => None,
                };
                match set {
                    Some(Value::Null) => *slot = None,
                    Some(_) => *slot = Some(index),
                    None => {}
                }
            }
            merged.insert(name.clone(), merge_patch(target, patch));
            origin.insert(name.clone(), index);
        }
    }
    let mut entries = Vec::with_capacity(merged.len());
    for (name, value) in merged {
        let Some(source) = origin.get(&name).and_then(|&i| sources.get(i)) else {
            continue;
        };
        let pointer = child_pointer(&source.pointer, &name);
        let base_of = |slot: usize| {
            path_origins
                .get(&name)
                .and_then(|origins| origins[slot])
                .and_then(|i| sources.get(i))
                .map_or(source.base.as_path(), |s| s.base.as_path())
        };
        let paths = PluginPaths {
            guard: &guard,
            command_base: base_of(0),
            args_base: base_of(1),
            cwd_base: base_of(2),
            helper_base: base_of(3),
        };
        let mut entry = parse_one(
            &source.doc,
            &pointer,
            &name,
            value,
            env,
            Some((&info.name, paths)),
            diagnostics,
        );
        // Earlier files patched this entry too: a repeated key there is in
        // the merged entry as much as one in the last file.
        for other in sources.iter().filter(|s| !std::ptr::eq(*s, source)) {
            let at = child_pointer(&other.pointer, &name);
            for finding in other.doc.findings_within(&at) {
                diagnostics.push(other.doc.finding_diagnostic(
                    finding,
                    Level::Error,
                    format!("server `{}`: {}", escape_text(&name), finding.message),
                    Some(&name),
                    None,
                ));
                entry.outcome = crate::entry::EntryOutcome::Invalid;
            }
        }
        entries.push(entry);
    }
    (info, entries)
}

fn listed_path(
    doc: &Document,
    guard: &RootGuard,
    rel: &str,
    pointer: &str,
    listed: &mut Vec<PathBuf>,
    diagnostics: &mut Vec<Diagnostic>,
) {
    let path = normalize(&guard.root().join(rel));
    if Path::new(rel).is_absolute() || !guard.contains(&path) {
        diagnostics.push(doc.diagnostic(
            Level::Error,
            pointer,
            format!("plugin MCP file `{rel}` leaves the plugin root"),
            None,
            Some("mcpServers"),
        ));
        return;
    }
    if !listed.contains(&path) {
        listed.push(path);
    }
}

/// RFC 7396 JSON merge patch of `patch` onto `target`.
pub(crate) fn merge_patch(target: Value, patch: &Value) -> Value {
    let Value::Object(patch) = patch else {
        return patch.clone();
    };
    let mut target = match target {
        Value::Object(map) => map,
        // Onto nothing, a patch without `null` members is itself: clone it
        // whole instead of rebuilding it member by member.
        _ if !has_null_member(patch) => return Value::Object(patch.clone()),
        _ => Map::new(),
    };
    for (key, value) in patch {
        if value.is_null() {
            target.remove(key);
        } else {
            let old = target.remove(key).unwrap_or(Value::Null);
            target.insert(key.clone(), merge_patch(old, value));
        }
    }
    Value::Object(target)
}

/// Whether a merge patch deletes anything: a `null` member at any depth
/// of nested objects (arrays are replaced whole, so their nulls stay).
fn has_null_member(patch: &Map<String, Value>) -> bool {
    patch
        .values()
        .any(|v| v.is_null() || v.as_object().is_some_and(has_null_member))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[cfg(unix)]
    #[test]
    fn root_guard_follows_symlinks() {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("plugin");
        std::fs::create_dir_all(root.join("bin")).unwrap();
        std::fs::create_dir_all(base.join("outside")).unwrap();
        std::os::unix::fs::symlink(root.join("bin"), root.join("inner-link")).unwrap();
        std::os::unix::fs::symlink(base.join("outside"), root.join("outer-link")).unwrap();
        let guard = RootGuard::new(root.clone());
        let check = |rel: &str, inside: bool| {
            assert_eq!(guard.contains(&normalize(&root.join(rel))), inside, "{rel}");
        };
        check("bin/server", true);
        check("not/yet/there", true);
        check("inner-link/server", true);
        check("outer-link", false);
        check("outer-link/not-there", false);
        check("../plugin/bin", true);
        check("../outside", false);
        // answers come from the cache the second time too
        check("outer-link/not-there", false);
        check("bin/server", true);
    }

    #[test]
    fn merge_patch_follows_rfc_7396_examples() {
        let check = |target: Value, patch: Value, expect: Value| {
            assert_eq!(merge_patch(target, &patch), expect);
        };
        check(json!({"a": "b"}), json!({"a": "c"}), json!({"a": "c"}));
        check(
            json!({"a": "b"}),
            json!({"b": "c"}),
            json!({"a": "b", "b": "c"}),
        );
        check(json!({"a": "b"}), json!({"a": null}), json!({}));
        check(
            json!({"a": "b", "b": "c"}),
            json!({"a": null}),
            json!({"b": "c"}),
        );
        check(json!({"a": ["b"]}), json!({"a": "c"}), json!({"a": "c"}));
        check(json!({"a": "c"}), json!({"a": ["b"]}), json!({"a": ["b"]}));
        check(
            json!({"a": {"b": "c"}}),
            json!({"a": {"b": "d", "c": null}}),
            json!({"a": {"b": "d"}}),
        );
        check(
            json!({"a": [{"b": "c"}]}),
            json!({"a": [1]}),
            json!({"a": [1]}),
        );
        check(json!(["a", "b"]), json!(["c", "d"]), json!(["c", "d"]));
        check(json!({"a": "b"}), json!(["c"]), json!(["c"]));
        check(json!({"a": "foo"}), json!(null), json!(null));
        check(
            json!({"e": null}),
            json!({"a": 1}),
            json!({"e": null, "a": 1}),
        );
        check(
            json!([1, 2]),
            json!({"a": "b", "c": null}),
            json!({"a": "b"}),
        );
        check(
            json!({}),
            json!({"a": {"bb": {"ccc": null}}}),
            json!({"a": {"bb": {}}}),
        );
        // onto a non-object: nested nulls delete, nulls inside arrays stay
        check(
            json!(null),
            json!({"a": {"b": null, "c": 1}, "d": [null]}),
            json!({"a": {"c": 1}, "d": [null]}),
        );
        check(
            json!("x"),
            json!({"d": [null], "e": {"f": 2}}),
            json!({"d": [null], "e": {"f": 2}}),
        );
    }
}
