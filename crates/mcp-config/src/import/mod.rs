//! Import from other hosts' configuration files: Claude Desktop, Cursor,
//! VS Code, Codex, Gemini CLI, Windsurf, Zed and Goose (REFERENCE §1.8).
//!
//! Each host's file is read from text ([`import_text`]) into one
//! positioned tree (`tree`: JSON and JSONC through the crate's own reader,
//! Codex's TOML with spans, Goose's YAML from marked events), and its
//! server map is translated into our JSON entries, which callers write
//! through [`crate::edit`]. Nothing is dropped silently: every field a
//! translator cannot carry over is returned as an [`Untranslated`] with its
//! position, every entry that cannot be imported at all is a positioned
//! [`Diagnostic`], and a malformed file is one error diagnostic at the
//! place it goes wrong. Values are copied as the host wrote them (env and
//! header values included, since the entry needs them) but never appear in
//! a message.
//!
//! VS Code's `${input:ID}` values exist only when someone types them: the
//! entry keeps the placeholder, [`Imported::inputs`] says what to ask for,
//! and [`fill_inputs`] puts the answers in.
//!
//! The thin reading layer ([`import_file`], [`found_files`]) takes every
//! directory from the caller ([`ImportDirs`]) and reads through the
//! loader's capped reader; one file per host holds that host's fields, and
//! `shared` holds the entry builder they all use.

mod claude_desktop;
mod codex;
mod cursor;
mod gemini;
mod goose;
mod shared;
use crate::tree;
mod vscode;
mod windsurf;
mod zed;

use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::Value;

use sha2::Digest as _;

use crate::error::{EditError, EditErrorKind};
use crate::secret::{MAX_SECRET_NAME, SecretName, secret_name_problem};
use crate::types::{Diagnostic, Level};

/// A host whose configuration file can be imported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Host {
    /// Claude Desktop's `claude_desktop_config.json`.
    ClaudeDesktop,
    /// Cursor's `mcp.json`, user-wide or in a project's `.cursor` folder.
    Cursor,
    /// VS Code's `mcp.json` (its `servers` map, `inputs` and `${input:ID}` values).
    #[serde(rename = "vscode")]
    VsCode,
    /// Codex's `config.toml` (`mcp_servers` tables).
    Codex,
    /// Gemini CLI's `settings.json`.
    Gemini,
    /// Windsurf's `mcp_config.json`.
    Windsurf,
    /// Zed's `settings.json` (`context_servers`).
    Zed,
    /// Goose's `config.yaml` (`extensions`).
    Goose,
}

impl Host {
    /// Every host, in the order listings show them.
    pub const ALL: [Host; 8] = [
        Host::ClaudeDesktop,
        Host::Cursor,
        Host::VsCode,
        Host::Codex,
        Host::Gemini,
        Host::Windsurf,
        Host::Zed,
        Host::Goose,
    ];

    /// The name `--from` takes: `claude-desktop`, `cursor`, `vscode`, …
    pub fn id(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "claude-desktop",
            Host::Cursor => "cursor",
            Host::VsCode => "vscode",
            Host::Codex => "codex",
            Host::Gemini => "gemini",
            Host::Windsurf => "windsurf",
            Host::Zed => "zed",
            Host::Goose => "goose",
        }
    }

    /// The host's own name, as people write it.
    pub fn display_name(self) -> &'static str {
        match self {
            Host::ClaudeDesktop => "Claude Desktop",
            Host::Cursor => "Cursor",
            Host::VsCode => "VS Code",
            Host::Codex => "Codex",
            Host::Gemini => "Gemini CLI",
            Host::Windsurf => "Windsurf",
            Host::Zed => "Zed",
            Host::Goose => "Goose",
        }
    }

    /// The host whose [`Host::id`] is `id`.
    pub fn from_id(id: &str) -> Option<Host> {
        Host::ALL.into_iter().find(|h| h.id() == id)
    }

    /// The files this host reads on Linux, user-wide ones first, for the
    /// directories in `dirs`.
    pub fn files(self, dirs: &ImportDirs) -> Vec<HostFile> {
        let config = dirs.config_dir();
        let home = &dirs.home;
        let user: Vec<PathBuf> = match self {
            Host::ClaudeDesktop => vec![config.join("Claude/claude_desktop_config.json")],
            Host::Cursor => vec![home.join(".cursor/mcp.json")],
            Host::VsCode => vec![config.join("Code/User/mcp.json")],
            Host::Codex => vec![home.join(".codex/config.toml")],
            Host::Gemini => vec![home.join(".gemini/settings.json")],
            Host::Windsurf => vec![home.join(".codeium/windsurf/mcp_config.json")],
            Host::Zed => vec![config.join("zed/settings.json")],
            Host::Goose => vec![config.join("goose/config.yaml")],
        };
        let project: Option<&str> = match self {
            Host::Cursor => Some(".cursor/mcp.json"),
            Host::VsCode => Some(".vscode/mcp.json"),
            Host::Codex => Some(".codex/config.toml"),
            Host::Gemini => Some(".gemini/settings.json"),
            Host::Zed => Some(".zed/settings.json"),
            Host::ClaudeDesktop | Host::Windsurf | Host::Goose => None,
        };
        let mut files: Vec<HostFile> = user
            .into_iter()
            .map(|path| HostFile {
                host: self,
                path,
                reach: Reach::User,
            })
            .collect();
        if let (Some(rel), Some(dir)) = (project, &dirs.project) {
            files.push(HostFile {
                host: self,
                path: dir.join(rel),
                reach: Reach::Project,
            });
        }
        files
    }
}

impl fmt::Display for Host {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.id())
    }
}

/// The directories other hosts' files live under. Nothing here is read from
/// the process environment: the caller resolves `$HOME` and
/// `$XDG_CONFIG_HOME`.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct ImportDirs {
    /// The user's home directory.
    pub home: PathBuf,
    /// The project directory, absolute, when there is one.
    pub project: Option<PathBuf>,
    /// `$XDG_CONFIG_HOME`; `<home>/.config` when `None`.
    pub config_dir: Option<PathBuf>,
}

impl ImportDirs {
    /// The directories of a user whose home is `home`, outside any project,
    /// with `<home>/.config` as the config directory.
    pub fn new(home: impl Into<PathBuf>) -> Self {
        ImportDirs {
            home: home.into(),
            project: None,
            config_dir: None,
        }
    }

    /// Sets the project directory (absolute).
    pub fn with_project(mut self, project: impl Into<PathBuf>) -> Self {
        self.project = Some(project.into());
        self
    }

    /// Sets `$XDG_CONFIG_HOME`, as the caller resolved it.
    pub fn with_config_dir(mut self, config_dir: impl Into<PathBuf>) -> Self {
        self.config_dir = Some(config_dir.into());
        self
    }

    /// `$XDG_CONFIG_HOME` or `<home>/.config`.
    pub fn config_dir(&self) -> PathBuf {
        self.config_dir
            .clone()
            .unwrap_or_else(|| self.home.join(".config"))
    }
}

/// Whether a host's file applies to every project of the user or to one.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reach {
    /// The file holds the user's servers for every project.
    User,
    /// The file lives in one project and holds that project's servers.
    Project,
}

/// One file a host reads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct HostFile {
    /// The host the file belongs to.
    pub host: Host,
    /// Where the host keeps it, under the caller's directories.
    pub path: PathBuf,
    /// Whether its servers are user-wide or the project's.
    pub reach: Reach,
}

/// What a translation needs besides the text: the directories VS Code's
/// and Cursor's variables stand for.
#[derive(Debug, Clone, Copy, Default)]
#[non_exhaustive]
pub struct ImportContext<'a> {
    /// `${userHome}`.
    pub home: Option<&'a Path>,
    /// `${workspaceFolder}`: the project the file is imported for; `None`
    /// when the entries go where no project is (a user-wide scope), so
    /// the variable is kept and reported rather than fixed to one project.
    pub project: Option<&'a Path>,
}

impl<'a> ImportContext<'a> {
    /// Sets the directory `${userHome}` stands for.
    pub fn with_home(mut self, home: &'a Path) -> Self {
        self.home = Some(home);
        self
    }

    /// Sets the project `${workspaceFolder}` stands for.
    pub fn with_project(mut self, project: &'a Path) -> Self {
        self.project = Some(project);
        self
    }
}

/// A field of a host's entry that has no counterpart in ours.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Untranslated {
    /// The field, dotted below the entry (`trust`, `env.TOKEN`, `args.2`).
    pub field: String,
    /// 1-based line of the field in the host's file.
    pub line: u32,
    /// 1-based column of the field in the host's file.
    pub column: u32,
    /// Why it was not carried over.
    pub reason: String,
}

/// A value VS Code asks for when it starts a server (`inputs`, used as
/// `${input:ID}`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct InputPrompt {
    /// The `ID` of `${input:ID}`.
    pub id: String,
    /// The prompt VS Code shows, if the file gives one.
    pub description: Option<String>,
    /// Typed without echo in VS Code.
    pub password: bool,
}

/// One translated server.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ImportedServer {
    /// The server's name (the host's key), kept as written.
    pub name: String,
    /// Our JSON entry, valid for [`crate::edit::validate_entry`] once its
    /// `${input:…}` placeholders are filled.
    pub entry: Value,
    /// Where the host's entry starts.
    pub line: u32,
    /// 1-based column where the host's entry starts.
    pub column: u32,
    /// Every field that was not carried over.
    pub untranslated: Vec<Untranslated>,
    /// Ids of the `${input:ID}` placeholders the entry holds.
    pub inputs: Vec<String>,
}

/// The translation of one host file.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Imported {
    /// The host whose format the text was read as.
    pub host: Host,
    /// The file the text came from, as given by the caller.
    pub file: PathBuf,
    /// The servers that could be translated, in the file's order.
    pub servers: Vec<ImportedServer>,
    /// The inputs the servers' placeholders need, in the file's order.
    pub inputs: Vec<InputPrompt>,
    /// Malformed input, entries that could not be imported, notes.
    pub diagnostics: Vec<Diagnostic>,
}

impl Imported {
    fn empty(host: Host, file: &Path) -> Imported {
        Imported {
            host,
            file: file.to_path_buf(),
            servers: Vec::new(),
            inputs: Vec::new(),
            diagnostics: Vec::new(),
        }
    }
}

/// Translates the text of `host`'s file at `path` (the path only names the
/// file in diagnostics). Never fails: a malformed file is an error
/// diagnostic and no servers.
pub fn import_text(host: Host, text: &str, path: &Path, cx: &ImportContext<'_>) -> Imported {
    let mut out = Imported::empty(host, path);
    if text.len() > crate::file::MAX_CONFIG_FILE_BYTES {
        out.diagnostics.push(tree::at(
            path,
            Level::Error,
            1,
            1,
            format!(
                "file is larger than {} MiB",
                crate::file::MAX_CONFIG_FILE_BYTES >> 20
            ),
            None,
        ));
        return out;
    }
    let parsed = match host {
        Host::Codex => tree::parse_toml(text, path),
        Host::Goose => tree::parse_yaml(text, path),
        _ => tree::parse_json(text, path),
    };
    let tree = match parsed {
        Ok(tree) => tree,
        Err(diagnostic) => {
            out.diagnostics.push(diagnostic);
            return out;
        }
    };
    out.diagnostics.extend(tree.findings());
    if !tree.value.is_object() && !tree.value.is_null() {
        out.diagnostics.push(tree.diagnostic(
            Level::Error,
            "",
            "the file is not an object of settings".into(),
            None,
        ));
        return out;
    }
    let mut session = shared::Session {
        tree: &tree,
        cx,
        host,
        out,
    };
    match host {
        Host::ClaudeDesktop => claude_desktop::translate(&mut session),
        Host::Cursor => cursor::translate(&mut session),
        Host::VsCode => vscode::translate(&mut session),
        Host::Codex => codex::translate(&mut session),
        Host::Gemini => gemini::translate(&mut session),
        Host::Windsurf => windsurf::translate(&mut session),
        Host::Zed => zed::translate(&mut session),
        Host::Goose => goose::translate(&mut session),
    }
    session.out
}

/// Reads and translates `path` as `host`'s file: `None` when it does not
/// exist. The file is read the way the loader reads config files (regular
/// files only, at most [`crate::file::MAX_CONFIG_FILE_BYTES`], UTF-8); a file
/// that cannot be read is an error diagnostic.
pub fn import_file(host: Host, path: &Path, cx: &ImportContext<'_>) -> Option<Imported> {
    match crate::file::read_text(path) {
        Ok(None) => None,
        Ok(Some(text)) => Some(import_text(host, &text, path, cx)),
        Err(diagnostic) => {
            let mut out = Imported::empty(host, path);
            out.diagnostics.push(diagnostic);
            Some(out)
        }
    }
}

/// A host file that exists and holds servers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FoundFile {
    /// The host the file belongs to.
    pub host: Host,
    /// The file's path.
    pub path: PathBuf,
    /// Whether its servers are user-wide or the project's.
    pub reach: Reach,
    /// How many of its servers can be imported.
    pub servers: usize,
}

/// Every host file under `dirs` that holds at least one server that can
/// be imported, in [`Host::ALL`] order: what `list` and `check-config`
/// name when no server is configured.
pub fn found_files(dirs: &ImportDirs) -> Vec<FoundFile> {
    let cx = ImportContext {
        home: Some(&dirs.home),
        project: dirs.project.as_deref(),
    };
    Host::ALL
        .into_iter()
        .flat_map(|host| host.files(dirs))
        .filter_map(|file| {
            let imported = import_file(file.host, &file.path, &cx)?;
            let servers = imported.servers.len();
            (servers > 0).then_some(FoundFile {
                host: file.host,
                servers,
                path: file.path,
                reach: file.reach,
            })
        })
        .collect()
}

/// Replaces every `${input:ID}` in the string values of `entry` with
/// `values[ID]`; returns the ids that had no value (their placeholders
/// stay).
pub fn fill_inputs(entry: &mut Value, values: &BTreeMap<String, String>) -> Vec<String> {
    let mut missing = Vec::new();
    // Entries are a few levels deep (built by the translators), so a work
    // list rather than recursion is only for uniformity with the readers.
    let mut work = vec![entry];
    while let Some(value) = work.pop() {
        match value {
            Value::String(s) => {
                let (filled, absent) = shared::fill_placeholders(s.as_str(), values);
                *s = filled;
                for id in absent {
                    if !missing.contains(&id) {
                        missing.push(id);
                    }
                }
            }
            Value::Array(items) => work.extend(items.iter_mut()),
            Value::Object(map) => work.extend(map.values_mut()),
            _ => {}
        }
    }
    missing.sort();
    missing
}

/// The secret name suggested for VS Code's password input `id`:
/// `vscode.` and the id, when the id follows the secret name rule;
/// otherwise the id with every other character as `_`, cut to leave room
/// for `-` and 16 hex digits of SHA-256 of the id, so two ids never share
/// a name. The same id always gives the same name, so importing again
/// replaces the same secret.
pub fn input_secret_name(id: &str) -> Result<SecretName, EditError> {
    let plain = format!("vscode.{id}");
    if secret_name_problem(&plain).is_none() {
        return SecretName::new(&plain);
    }
    let digest = sha2::Sha256::digest(id.as_bytes());
    let hex: String = digest.iter().take(8).map(|b| format!("{b:02x}")).collect();
    let room = MAX_SECRET_NAME - "vscode.".len() - 1 - hex.len();
    let kept: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .take(room)
        .collect();
    SecretName::new(&format!("vscode.{kept}-{hex}"))
}

/// Puts a `${secret:NAME}` reference where `entry` (the server `server`'s)
/// uses a password input: `secrets` maps each password input's id to the
/// secret its value was stored as. A reference is read at connect time
/// from `env` and `headers` values only, so an input used anywhere else
/// (`args`, `url`, `command`, …) refuses the server with an error naming
/// the server, the input and the field: its value would otherwise be
/// written in clear. On an error the entry is unchanged. Inputs not in
/// `secrets` are left for [`fill_inputs`].
pub fn fill_secret_inputs(
    server: &str,
    entry: &mut Value,
    secrets: &BTreeMap<String, SecretName>,
) -> Result<(), EditError> {
    let references: BTreeMap<String, String> = secrets
        .iter()
        .map(|(id, name)| (id.clone(), format!("${{secret:{name}}}")))
        .collect();
    // First every place an input is used, so nothing changes on a refusal.
    let mut work: Vec<(Vec<String>, &Value)> = vec![(Vec::new(), &*entry)];
    while let Some((path, value)) = work.pop() {
        match value {
            Value::String(text) => {
                let Some(id) = secrets
                    .keys()
                    .find(|id| text.contains(&format!("${{input:{id}}}")))
                else {
                    continue;
                };
                let reference_ok = path.len() == 2 && matches!(path[0].as_str(), "env" | "headers");
                if !reference_ok {
                    return Err(EditError::new(EditErrorKind::InvalidEntry {
                        name: server.to_owned(),
                        reason: format!(
                            "password input `{}` is used in `{}`, where no secret reference is read (only `env` and `headers` values); not imported, so the password is not written in clear",
                            shared::shown_name(id),
                            shared::shown_name(&path.join("."))
                        ),
                    }));
                }
            }
            Value::Array(items) => work.extend(items.iter().enumerate().map(|(i, item)| {
                let mut path = path.clone();
                path.push(i.to_string());
                (path, item)
            })),
            Value::Object(map) => work.extend(map.iter().map(|(key, item)| {
                let mut path = path.clone();
                path.push(key.clone());
                (path, item)
            })),
            _ => {}
        }
    }
    for field in ["env", "headers"] {
        if let Some(Value::Object(map)) = entry.get_mut(field) {
            for value in map.values_mut() {
                if let Value::String(text) = value {
                    *text = shared::fill_placeholders(text, &references).0;
                }
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests;
