//! Feeds bytes as the files of one configuration tree through the real
//! loader (`mcp_config::load`, so parsing, plugin discovery and the
//! layered merge) and the `check-config` report.
//!
//! Input: sections separated by a NUL byte. The first byte of a section
//! picks the file it becomes (`a` is the first of [`SLOTS`], `b` the
//! second, …, wrapping around); the rest is the file's content, written
//! as is (so invalid UTF-8 is fed too). The text `@PROJECT@` becomes the
//! project folder's path, so `projects["@PROJECT@"]` in the home
//! `.claude.json` reaches the local layer. Files no section names do not
//! exist.
//!
//! Besides "never panics", it checks what the loader promises: servers
//! sorted by unique name, each with its raw entry; identities that render;
//! no refused env key and no key that is not a name on a stdio server; no
//! loaded server name the write verbs would refuse; no expanded variable
//! value in the check's JSON (signatures are shown redacted); no plugin
//! loaded from outside
//! the explicit plugin root or the installed-plugins folder; and no
//! expanded variable value inside a diagnostic unless the input itself
//! spells it.

#![no_main]

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use libfuzzer_sys::fuzz_target;
use mcp_config::{CheckReport, LoadOptions, TransportConfig, config_hash, signature};
use mcp_config::env::{is_dangerous_env_key, is_env_name};
use mcp_config::limits::server_name_problem;

/// The files a section can become, relative to the tree's root.
const SLOTS: &[&str] = &[
    "home/.claude.json",
    "home/.claude/settings.json",
    "project/.claude.json",
    "project/.claude/settings.json",
    "project/.mcp.json",
    "project/.claude/settings.local.json",
    "openclaw/openclaw.json",
    "plugin/.mcp.json",
    "plugin/.codex-plugin/plugin.json",
    "plugin/mcp/a.json",
    "plugin/mcp/b.json",
    "home/.claude/plugins/installed/.claude-plugin/plugin.json",
    "home/.claude/plugins/installed/servers.json",
    "home/.claude/plugins/installed/.mcp.json",
    "plugin/.cursor-plugin/plugin.json",
];

/// A variable whose value must never surface in a diagnostic.
const SECRET_NAME: &str = "TOKEN";
const SECRET_VALUE: &str = "sekrit0value";

struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    options: LoadOptions,
    /// Canonical folders a plugin may be loaded from.
    plugin_homes: Vec<PathBuf>,
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
            let parent = root.join(slot).parent().map(Path::to_path_buf);
            if let Some(parent) = parent {
                std::fs::create_dir_all(parent).expect("cannot create the tree");
            }
        }
        let env = BTreeMap::from([
            (SECRET_NAME.to_owned(), SECRET_VALUE.to_owned()),
            ("EMPTY".to_owned(), String::new()),
            ("PORT".to_owned(), "8080".to_owned()),
        ]);
        let options = LoadOptions::default()
            .with_home(root.join("home"))
            .with_project(root.join("project"))
            .with_openclaw_home(root.join("openclaw"))
            .with_plugin_roots(vec![root.join("plugin")])
            .with_env(env);
        let plugin_homes = vec![root.join("plugin"), root.join("home/.claude/plugins")];
        Tree {
            _dir: dir,
            root,
            options,
            plugin_homes,
            written: Vec::new(),
        }
    }

    /// Makes the tree hold exactly the files `data` names.
    fn fill(&mut self, data: &[u8]) {
        for path in self.written.drain(..) {
            let _ = std::fs::remove_file(path);
        }
        let project = self.root.join("project");
        let project = project.to_string_lossy();
        for section in data.split(|&b| b == 0) {
            let Some((&pick, content)) = section.split_first() else {
                continue;
            };
            let slot = SLOTS[usize::from(pick.wrapping_sub(b'a')) % SLOTS.len()];
            let path = self.root.join(slot);
            let content = replace(content, b"@PROJECT@", project.as_bytes());
            std::fs::write(&path, content).expect("cannot write a tree file");
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
            let hash = config_hash(&server.config);
            assert!(
                hash.len() == 16 && hash.bytes().all(|b| b.is_ascii_hexdigit()),
                "config hash {hash:?} is not 16 hex digits"
            );
            let _ = signature(&server.config);
            assert!(
                server_name_problem(&server.config.name).is_none(),
                "server name {:?} loaded but no verb could manage it",
                server.config.name
            );
            if let TransportConfig::Stdio(stdio) = &server.config.transport {
                for key in stdio.env.keys() {
                    assert!(
                        !is_dangerous_env_key(key) && is_env_name(key),
                        "refused env key {key:?} reached server {:?}",
                        server.config.name
                    );
                }
            }
        }
        for plugin in &config.plugins {
            assert!(
                tree.plugin_homes
                    .iter()
                    .any(|home| plugin.root == *home || plugin.root.parent() == Some(home)),
                "plugin {:?} was loaded from {}, outside the plugin folders",
                plugin.name,
                plugin.root.display()
            );
        }

        let lines = report.human_lines();
        let json = report.to_json().to_string();
        let _ = report.exit_code(true);
        let spelled = data
            .windows(SECRET_VALUE.len())
            .any(|w| w == SECRET_VALUE.as_bytes());
        if !spelled {
            for diagnostic in &config.diagnostics {
                assert!(
                    !diagnostic.message.contains(SECRET_VALUE),
                    "a diagnostic shows the value of ${SECRET_NAME}: {}",
                    diagnostic.message
                );
            }
            assert!(
                !lines.iter().any(|l| l.contains(SECRET_VALUE)),
                "check-config output shows the value of ${SECRET_NAME}"
            );
            // In JSON the value could only sit in a signature (a url
            // expanded from the variable): that one is redacted.
            assert!(
                !json.contains(SECRET_VALUE),
                "check-config --json shows the value of ${SECRET_NAME}"
            );
        }
    });
});
