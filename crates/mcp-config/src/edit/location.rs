//! Where an edit goes: the file and key path of each writable scope, and
//! the file actually replaced when the config file is a symlink.

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::sources::{self, Base, PROJECTS_KEY, ServerMap};
use crate::types::Scope;

use crate::error::{EditError, EditErrorKind};

/// The directories that decide where each scope's file lives.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct EditDirs {
    /// The user's home directory (holds `.claude.json`).
    pub home: PathBuf,
    /// The project directory, absolute (holds `.mcp.json`; also the key of
    /// the local scope's entries in `<home>/.claude.json`).
    pub project: PathBuf,
    /// OpenClaw's home (holds `openclaw.json`).
    pub openclaw_home: PathBuf,
}

impl EditDirs {
    /// The directories of a user's home, a project (absolute) and
    /// OpenClaw's home.
    pub fn new(
        home: impl Into<PathBuf>,
        project: impl Into<PathBuf>,
        openclaw_home: impl Into<PathBuf>,
    ) -> Self {
        EditDirs {
            home: home.into(),
            project: project.into(),
            openclaw_home: openclaw_home.into(),
        }
    }
}

/// One file and the path of keys inside it that leads to its server map.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ServersLocation {
    /// The file.
    pub path: PathBuf,
    /// Object keys from the root to the server map, e.g. `["mcpServers"]`.
    pub key_path: Vec<String>,
}

impl ServersLocation {
    /// Where the entries of `scope` are written: the source the table of
    /// sources marks as written for it (`mcpServers` of
    /// `<home>/.claude.json` for user, `projects["<project>"].mcpServers`
    /// there for local, `.mcp.json` for project, `mcp.servers` of
    /// `openclaw.json` for openclaw).
    ///
    /// Plugin bundles are never written: a plugin's server is switched off
    /// with a tombstone (`{"enabled": false}`) in a scope above it.
    pub fn for_scope(scope: Scope, dirs: &EditDirs) -> Result<ServersLocation, EditError> {
        let Some(source) = sources::written(scope) else {
            return Err(EditError::new(EditErrorKind::ReadOnlyScope {
                scope,
                reason: "plugin bundles are never edited; disable the server instead",
            }));
        };
        let dir = match source.base {
            Base::Home => &dirs.home,
            Base::Project => &dirs.project,
            Base::OpenClawHome => &dirs.openclaw_home,
        };
        let mut key_path = Vec::new();
        if let ServerMap::ProjectEntry(_) = source.servers {
            key_path.push(PROJECTS_KEY.to_owned());
            key_path.push(dirs.project.to_string_lossy().into_owned());
        }
        key_path.extend(source.servers.keys().iter().map(|k| (*k).to_owned()));
        Ok(ServersLocation {
            path: source.path_in(dir),
            key_path,
        })
    }

    /// A readable rendering of the key path, e.g. `projects./repo.mcpServers`.
    pub fn key_path_display(&self) -> String {
        self.key_path.join(".")
    }
}

/// The file an edit of `path` reads and replaces: `path` itself, or, when
/// it is a symlink (a `~/.claude.json` kept in a dotfiles repository), the
/// file it points to, so the link stays a link. A missing `path` is a file
/// to create; a symlink to nothing, or to anything but a regular file, is
/// refused.
pub(super) fn edit_target(path: &Path) -> Result<PathBuf, EditError> {
    let refuse = |reason: String| EditError::at(path, EditErrorKind::Unreadable { reason });
    let meta = match fs::symlink_metadata(path) {
        Ok(meta) => meta,
        Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(path.to_path_buf()),
        Err(source) => {
            return Err(EditError::at(path, EditErrorKind::Io(source)));
        }
    };
    if !meta.file_type().is_symlink() {
        return if meta.is_file() {
            Ok(path.to_path_buf())
        } else {
            Err(refuse("not a regular file".to_owned()))
        };
    }
    let shown = fs::read_link(path)
        .map(|target| target.display().to_string())
        .unwrap_or_default();
    match fs::canonicalize(path) {
        Ok(real) if fs::metadata(&real).is_ok_and(|m| m.is_file()) => Ok(real),
        Ok(real) => Err(refuse(format!(
            "a symlink to {}, which is not a regular file",
            real.display()
        ))),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {
            Err(refuse(format!("a symlink to a missing file ({shown})")))
        }
        Err(err) => Err(refuse(format!(
            "a symlink that cannot be followed ({shown}): {err}"
        ))),
    }
}

/// The bytes of `target` the way the loader reads them (regular files
/// only, capped, UTF-8), `None` when it does not exist; `shown` is the path
/// errors name.
pub(super) fn read_capped(shown: &Path, target: &Path) -> Result<Option<Vec<u8>>, EditError> {
    crate::file::read_text(target)
        .map(|text| text.map(String::into_bytes))
        .map_err(|d| EditError::at(shown, EditErrorKind::Unreadable { reason: d.message }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::edit::WRITABLE_SCOPES;

    #[test]
    fn scope_locations() {
        let dirs = EditDirs {
            home: PathBuf::from("/h"),
            project: PathBuf::from("/p"),
            openclaw_home: PathBuf::from("/o"),
        };
        let shown: Vec<String> = WRITABLE_SCOPES
            .iter()
            .map(|scope| {
                let loc = ServersLocation::for_scope(*scope, &dirs).expect("writable");
                format!("{scope}: {} {}", loc.path.display(), loc.key_path_display())
            })
            .collect();
        assert_eq!(
            shown,
            [
                "openclaw: /o/openclaw.json mcp.servers",
                "user: /h/.claude.json mcpServers",
                "project: /p/.mcp.json mcpServers",
                "local: /h/.claude.json projects./p.mcpServers",
            ]
        );
        assert!(ServersLocation::for_scope(Scope::Plugin, &dirs).is_err());
    }
}
