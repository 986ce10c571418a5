//! The fixture tree shared by the integration tests: copied into a fresh
//! temporary folder (so `@PROJECT@` can become the absolute project path)
//! and addressed only through explicit `LoadOptions`.

#![allow(dead_code, clippy::unwrap_used)]

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use mcp_config::LoadOptions;

mod fixture_tree;

use fixture_tree::copy_tree;

/// A copy of `tests/fixtures/tree` in a temporary folder.
pub(crate) struct Fixture {
    pub(crate) dir: tempfile::TempDir,
    pub(crate) root: PathBuf,
}

impl Fixture {
    pub(crate) fn new() -> Fixture {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let source = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/tree");
        copy_tree(&source, &root, &root.join("project"));
        Fixture { dir, root }
    }

    /// Home, project, OpenClaw home and the three explicit plugins.
    pub(crate) fn options(&self) -> LoadOptions {
        LoadOptions::default()
            .with_home(self.root.join("home"))
            .with_project(self.root.join("project"))
            .with_openclaw_home(self.root.join("openclaw"))
            .with_plugin_roots(
                ["bare", "codex", "cursor"]
                    .iter()
                    .map(|p| self.root.join("plugins").join(p)),
            )
            .with_env(
                [("TEAM", "core")]
                    .into_iter()
                    .map(|(k, v)| (k.to_owned(), v.to_owned()))
                    .collect::<BTreeMap<_, _>>(),
            )
    }

    /// `text` with the temporary root replaced by `<root>`.
    pub(crate) fn redact(&self, text: &str) -> String {
        text.replace(&self.root.display().to_string(), "<root>")
    }
}
