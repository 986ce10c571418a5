//! Deep and hostile JSON through the real configuration loader
//! (`mcp_config::load` via the `check-config` report), in every config
//! file of a tree at once.
//!
//! Input: up to eight documents, each a slot byte (which file of
//! [`SLOTS`] it becomes) and a program of `mcp_fuzz` (header, frame,
//! values) over [`CONFIG`], whose frames put the generated value where a
//! loader looks: a server entry, its `args`, `env`, `headers` or `url`, a
//! project's local servers, the approval lists, plugin switches, a second
//! `mcpServers` key. Chains nest `mcpServers`, `args` and `projects`
//! thousands of levels deep; strings carry BOMs, surrogate-pair escapes,
//! ESC, newlines and bidi overrides.
//!
//! Checks: nothing panics or overflows the stack; servers come out sorted
//! by unique name, each with its raw entry; the report renders.

#![no_main]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use mcp_config::{CheckReport, LoadOptions};
use mcp_fuzz::grammars::CONFIG;
use mcp_fuzz::{Input, document};

/// The files a document can become, relative to the tree's root.
const SLOTS: &[&str] = &[
    "home/.claude.json",
    "home/.claude/settings.json",
    "project/.claude.json",
    "project/.claude/settings.json",
    "project/.mcp.json",
    "project/.claude/settings.local.json",
    "openclaw/openclaw.json",
    "plugin/.mcp.json",
    "plugin/.claude-plugin/plugin.json",
    "plugin/.codex-plugin/plugin.json",
    "plugin/.cursor-plugin/plugin.json",
    "home/.claude/plugins/installed/.claude-plugin/plugin.json",
    "home/.claude/plugins/installed/.mcp.json",
];

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    options: LoadOptions,
    written: Vec<PathBuf>,
}

impl Tree {
    fn new() -> Tree {
        let dir = tempfile::tempdir().expect("cannot create a temporary folder");
        let root = dir
            .path()
            .canonicalize()
            .expect("cannot resolve the temporary folder");
        for slot in SLOTS {
            if let Some(parent) = root.join(slot).parent().map(Path::to_path_buf) {
                std::fs::create_dir_all(parent).expect("cannot create the tree");
            }
        }
        let options = LoadOptions::default()
            .with_home(root.join("home"))
            .with_project(root.join("project"))
            .with_openclaw_home(root.join("openclaw"))
            .with_plugin_roots(vec![root.join("plugin")])
            .with_env(BTreeMap::from([(
                "TOKEN".to_owned(),
                "sekrit0value".to_owned(),
            )]));
        Tree {
            _dir: dir,
            root,
            options,
            written: Vec::new(),
        }
    }

    fn fill(&mut self, data: &[u8]) {
        for path in self.written.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        let project = self.root.join("project").to_string_lossy().into_owned();
        let mut input = Input::new(data);
        for _ in 0..8 {
            if input.is_empty() {
                break;
            }
            let slot = SLOTS[usize::from(input.byte()) % SLOTS.len()];
            let text = document(&mut input, &CONFIG).to_text();
            let text = replace(&text, b"@PROJECT@", project.as_bytes());
            let path = self.root.join(slot);
            std::fs::write(&path, text).expect("cannot write a tree file");
            self.written.push(path);
        }
    }
}

fn replace(haystack: &[u8], needle: &[u8], with: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(haystack.len());
    let mut rest = haystack;
    while let Some(at) = rest.windows(needle.len()).position(|w| w == needle) {
        out.extend_from_slice(&rest[..at]);
        out.extend_from_slice(with);
        rest = &rest[at + needle.len()..];
    }
    out.extend_from_slice(rest);
    out
}

thread_local! {
    static TREE: RefCell<Tree> = RefCell::new(Tree::new());
}

fuzz_target!(|data: &[u8]| {
    TREE.with_borrow_mut(|tree| {
        tree.fill(data);
        tree.options.trust_project_servers = data.len() % 2 == 1;
        let report = CheckReport::run(&tree.options);
        let config = &report.config;
        for pair in config.servers.windows(2) {
            assert!(
                pair[0].config.name < pair[1].config.name,
                "servers are not sorted by unique name: {:?} then {:?}",
                pair[0].config.name,
                pair[1].config.name
            );
        }
        for server in &config.servers {
            assert!(
                config.raw_entries.contains_key(&server.config.name),
                "server {:?} has no raw entry",
                server.config.name
            );
        }
        let _ = report.human_lines();
        let _ = report.to_json().to_string();
    });
});
