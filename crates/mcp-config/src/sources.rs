//! The one table of config sources: for each scope, the files its servers
//! come from and the keys that lead to the server map in each. The loader
//! ([`crate::load`]) reads the files in the table's order, the file parser
//! ([`crate::parse_file`]) finds a scope's server map through it, and the
//! editor ([`crate::edit::ServersLocation::for_scope`]) writes the row each
//! scope marks as written, so the three can never disagree.
//!
//! | scope | file | server map | written |
//! |---|---|---|---|
//! | openclaw | `<openclaw home>/openclaw.json` | `mcp.servers` | yes |
//! | user | `<home>/.claude.json` | `mcpServers` | yes |
//! | local | `<home>/.claude.json` | `projects["<project>"].mcpServers` | yes |
//! | user | `<home>/.claude/settings.json` | `mcpServers` | |
//! | project | `<project>/.claude.json` | `mcpServers` | |
//! | project | `<project>/.claude/settings.json` | `mcpServers` | |
//! | project | `<project>/.mcp.json` | `mcpServers` | yes |
//! | local | `<project>/.claude/settings.local.json` | `mcpServers` | |
//!
//! Plugin bundles are not in the table: their files and layouts are the
//! bundle's own ([`crate::plugin`]), and they are never written.

use std::path::{Path, PathBuf};

use crate::json::child_pointer;
use crate::types::Scope;

/// The key of `<home>/.claude.json` that holds one object per project.
pub(crate) const PROJECTS_KEY: &str = "projects";

/// The directory a source's file lives in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Base {
    /// The user's home.
    Home,
    /// The project directory.
    Project,
    /// OpenClaw's home.
    OpenClawHome,
}

/// Where a source's server map sits in its file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerMap {
    /// Object keys from the file's root.
    Root(&'static [&'static str]),
    /// Object keys from the project's own object, `projects["<project>"]`.
    ProjectEntry(&'static [&'static str]),
}

/// One config source: a file of one scope and its server map.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Source {
    /// The scope its servers belong to.
    pub scope: Scope,
    /// The directory its file is in.
    pub base: Base,
    /// The file's path below `base`, one component each.
    pub file: &'static [&'static str],
    /// The keys that lead to its server map.
    pub servers: ServerMap,
    /// Its precedence among the sources of its scope, lowest first.
    pub rank: usize,
    /// Whether its other keys are settings (deep-merged) rather than
    /// application state.
    pub settings: bool,
    /// Whether this is the file the write verbs change for its scope.
    pub written: bool,
}

const MCP_SERVERS: &[&str] = &["mcpServers"];

/// Every source, in the order the loader reads them.
pub(crate) const SOURCES: [Source; 8] = [
    Source {
        scope: Scope::OpenClaw,
        base: Base::OpenClawHome,
        file: &["openclaw.json"],
        servers: ServerMap::Root(&["mcp", "servers"]),
        rank: 0,
        settings: true,
        written: true,
    },
    Source {
        scope: Scope::User,
        base: Base::Home,
        file: &[".claude.json"],
        servers: ServerMap::Root(MCP_SERVERS),
        rank: 0,
        // The top level of `.claude.json` is application state.
        settings: false,
        written: true,
    },
    Source {
        scope: Scope::Local,
        base: Base::Home,
        file: &[".claude.json"],
        servers: ServerMap::ProjectEntry(MCP_SERVERS),
        rank: 1,
        settings: true,
        written: true,
    },
    Source {
        scope: Scope::User,
        base: Base::Home,
        file: &[".claude", "settings.json"],
        servers: ServerMap::Root(MCP_SERVERS),
        rank: 1,
        settings: true,
        written: false,
    },
    Source {
        scope: Scope::Project,
        base: Base::Project,
        file: &[".claude.json"],
        servers: ServerMap::Root(MCP_SERVERS),
        rank: 0,
        settings: false,
        written: false,
    },
    Source {
        scope: Scope::Project,
        base: Base::Project,
        file: &[".claude", "settings.json"],
        servers: ServerMap::Root(MCP_SERVERS),
        rank: 1,
        settings: true,
        written: false,
    },
    Source {
        scope: Scope::Project,
        base: Base::Project,
        file: &[".mcp.json"],
        servers: ServerMap::Root(MCP_SERVERS),
        rank: 2,
        settings: false,
        written: true,
    },
    // Inside the project tree, so a cloned project can ship it: local only
    // once the user trusts the project (see `crate::load`).
    Source {
        scope: Scope::Local,
        base: Base::Project,
        file: &[".claude", "settings.local.json"],
        servers: ServerMap::Root(MCP_SERVERS),
        rank: 0,
        settings: true,
        written: false,
    },
];

impl Source {
    /// The file below `dir` (the directory `base` names).
    pub(crate) fn path_in(&self, dir: &Path) -> PathBuf {
        self.file
            .iter()
            .fold(dir.to_path_buf(), |path, part| path.join(part))
    }

    /// Whether `other` reads the same file.
    pub(crate) fn same_file(&self, other: &Source) -> bool {
        self.base == other.base && self.file == other.file
    }

    /// A local-scope file inside the project tree: the project could have
    /// written it, so it counts as the user's only once the project is
    /// trusted.
    pub(crate) fn needs_trust(&self) -> bool {
        self.scope == Scope::Local && self.base == Base::Project
    }
}

impl ServerMap {
    /// The keys below the root, or below the project's object.
    pub(crate) fn keys(self) -> &'static [&'static str] {
        match self {
            ServerMap::Root(keys) | ServerMap::ProjectEntry(keys) => keys,
        }
    }
}

/// The JSON pointer of `keys` below `parent` (`""` for the root).
pub(crate) fn pointer_below(parent: &str, keys: &[&str]) -> String {
    keys.iter().fold(parent.to_owned(), |pointer, key| {
        child_pointer(&pointer, key)
    })
}

/// The source the write verbs change for `scope`; `None` for a scope that
/// is never written (plugins).
pub(crate) fn written(scope: Scope) -> Option<&'static Source> {
    SOURCES.iter().find(|s| s.scope == scope && s.written)
}

/// The keys that lead from a file's root to the server map in any file of
/// `scope` (every such file of a scope agrees, see the tests); `None` for
/// plugins, whose files say for themselves.
pub(crate) fn root_servers(scope: Scope) -> Option<&'static [&'static str]> {
    SOURCES.iter().find_map(|s| match s.servers {
        ServerMap::Root(keys) if s.scope == scope => Some(keys),
        _ => None,
    })
}

/// The rank of a project-tree local file read as a project file: after
/// every other project file, as it was the highest of them.
pub(crate) fn untrusted_rank() -> usize {
    SOURCES
        .iter()
        .filter(|s| s.scope == Scope::Project)
        .map(|s| s.rank + 1)
        .max()
        .unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_root_files_of_a_scope_agree_on_the_server_map() {
        for source in &SOURCES {
            if let ServerMap::Root(keys) = source.servers {
                assert_eq!(root_servers(source.scope), Some(keys), "{source:?}");
            }
        }
    }

    #[test]
    fn every_writable_scope_has_exactly_one_written_file() {
        for scope in crate::edit::WRITABLE_SCOPES {
            assert_eq!(
                SOURCES
                    .iter()
                    .filter(|s| s.scope == scope && s.written)
                    .count(),
                1,
                "{scope}"
            );
        }
        assert!(written(Scope::Plugin).is_none());
        assert!(root_servers(Scope::Plugin).is_none());
    }

    #[test]
    fn ranks_are_unique_within_a_scope() {
        for (i, a) in SOURCES.iter().enumerate() {
            for b in &SOURCES[i + 1..] {
                assert!(a.scope != b.scope || a.rank != b.rank, "{a:?} {b:?}");
            }
        }
        assert_eq!(untrusted_rank(), 3);
    }

    #[test]
    fn pointers() {
        assert_eq!(pointer_below("", &["mcp", "servers"]), "/mcp/servers");
        assert_eq!(
            pointer_below("/projects/~1repo", MCP_SERVERS),
            "/projects/~1repo/mcpServers"
        );
    }
}
