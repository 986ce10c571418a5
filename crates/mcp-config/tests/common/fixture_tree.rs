//! Copying a fixture tree into a temporary folder, with `@PROJECT@`
//! replaced by the absolute project path. Shared by this crate's tests and
//! the `check-config` tests in `xtask`, which use the same fixture tree.

// Test helpers unwrap: a broken fixture should stop the test loudly.
#![allow(clippy::unwrap_used)]

use std::path::Path;

/// Copies `from` into `to` recursively, writing `project` for `@PROJECT@`.
pub(crate) fn copy_tree(from: &Path, to: &Path, project: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target, project);
        } else {
            let text = std::fs::read_to_string(entry.path()).unwrap();
            std::fs::write(
                &target,
                text.replace("@PROJECT@", &project.display().to_string()),
            )
            .unwrap();
        }
    }
}
