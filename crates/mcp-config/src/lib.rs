//! `mcp-config` owns everything between the files a user already has on disk
//! and one deterministic list of MCP servers: discovery of every source
//! (Claude-style settings, `.mcp.json`, `~/.claude.json`, OpenClaw's
//! `openclaw.json`, plugin bundles), the layered merge, validation with
//! positioned diagnostics, `${VAR}` expansion, stdio env safety, and the
//! identity of a server (signature, proxy unwrap, config hash).
//!
//! It sits at the bottom of the workspace and depends on no other workspace
//! crate. It never spawns a process, never opens a socket and never reads
//! `$HOME`, the current directory or the process environment on its own:
//! every directory and every environment variable comes in through the
//! caller's inputs, so the core is pure and testable.
//!
//! Input is hostile until checked: [`json`] refuses nesting past a fixed
//! depth before anything recursive runs, reads BOMs and surrogate pairs,
//! and reports repeated keys; [`limits::server_name_problem`] is the one rule for
//! server names (the loader's and every write verb's); [`child_env`] and
//! [`env::is_dangerous_env_key`] keep code-loading variables and keys that are
//! not names away from children; [`redaction::redact_url`] is how a url or signature
//! is shown.
//!
//! Which file each scope reads and writes, and where its server map sits,
//! is one table inside the crate that loading, parsing and editing all
//! read, so the three can never disagree.
//!
//! The core parses from text ([`parse_file`]) and returns entries *and*
//! diagnostics: a bad entry never stops the others, a bad file never stops
//! the other files. [`load`] is the thin layer that reads the files a
//! [`LoadOptions`] names and hands them to [`merge()`]; [`CheckReport`]
//! renders the result for `check-config` front ends. [`edit`] is the one
//! module that writes: it changes one entry of one file, under a lock and
//! atomically, and only when the caller asks (the CLI's write verbs).
//! [`ApprovalRecord`] says what counts as the user's consent to run a
//! project's servers: trust of the project, and approvals that record what
//! they approved. [`import`] translates other hosts' files into entries.
//!
//! [`policy`] is what an organisation's managed directory allows
//! (Claude Code's `managed-mcp.json` and `managed-settings.json`, Codex's
//! `requirements.toml`): read only from the directory a caller passes
//! ([`LoadOptions::with_managed_dir`]), it blocks servers by a named rule,
//! and a blocked server stays listed but is never runnable.
//!
//! Every item has one path: the crate root, or [`edit`], [`import`],
//! [`json`] and [`policy`] for the namespaces whose items are not
//! re-exported.
//!
//! # Example
//!
//! A user's server and a project's server, loaded from explicit
//! directories; the project's server starts only once the user approves
//! it, and the approval records what was approved:
//!
//! ```
//! use std::fs;
//!
//! use mcp_config::edit::{self, EditDirs, ProjectChoice, ServersLocation};
//! use mcp_config::{Approval, ApprovalRecord, LoadOptions, Scope, load};
//!
//! # fn main() -> Result<(), Box<dyn std::error::Error>> {
//! let dir = tempfile::tempdir()?;
//! let home = dir.path().join("home");
//! let project = dir.path().join("project");
//! fs::create_dir_all(&home)?;
//! fs::create_dir_all(&project)?;
//! fs::write(
//!     home.join(".claude.json"),
//!     r#"{"mcpServers": {"notes": {"command": "notes-server", "args": ["--stdio"]}}}"#,
//! )?;
//! fs::write(
//!     project.join(".mcp.json"),
//!     r#"{"mcpServers": {"search": {"url": "https://search.example/mcp"}}}"#,
//! )?;
//!
//! // Every directory comes from the caller: nothing is read from $HOME
//! // or the current directory.
//! let options = LoadOptions::default()
//!     .with_home(&home)
//!     .with_project(&project);
//! let config = load(&options);
//! let search = config.server("search").expect("the project's server is loaded");
//! assert_eq!(search.approval, Approval::Pending);
//! let runnable: Vec<&str> = config.runnable().map(|s| s.config.name.as_str()).collect();
//! assert_eq!(runnable, ["notes"]);
//!
//! // Approve it in the user's local settings, recording what it is now:
//! // a later change to its url makes it pending again.
//! let record = ApprovalRecord::of(&search.config);
//! let dirs = EditDirs::new(&home, &project, home.join(".openclaw"));
//! edit::edit(ServersLocation::for_scope(Scope::Local, &dirs)?, |file| {
//!     file.set_project_choice("search", ProjectChoice::Approve)?;
//!     file.set_approval_record("search", &record)
//! })?;
//!
//! let config = load(&options);
//! for server in config.runnable() {
//!     println!("{} ({} scope)", server.config.name, server.scope);
//! }
//! assert_eq!(config.runnable().count(), 2);
//! # Ok(())
//! # }
//! ```

// Nothing here needs `unsafe`; forbid it so no module can opt back in.
#![forbid(unsafe_code)]
// Every public item says what it is for; `cargo doc` is part of CI.
#![warn(missing_docs)]

mod check;
mod consent;
pub mod edit;
mod entry;
mod env_safety;
mod error;
mod expand;
mod file;
mod identity;
pub mod import;
pub mod json;
mod lines;
mod load;
mod merge;
mod name;
mod parse;
mod plugin;
pub mod policy;
pub mod secret;
mod sources;
mod tree;
mod types;

// What a host needs first; the rest sits in the named modules below.
pub use check::{CheckReport, diagnostic_line};
pub use consent::ApprovalRecord;
pub use entry::EntryOutcome;
pub use env_safety::child_env;
pub use error::{EditError, EditErrorKind};
pub use identity::{config_hash, signature};
pub use load::{LoadOptions, LoadedConfig, load};
pub use merge::{Contribution, Merged, merge};
pub use parse::{ParseEnv, ParsedEntry, ParsedFile, parse_file};
pub use plugin::{PluginFormat, PluginInfo};
pub use types::{
    Approval, ApprovalBasis, ConfigSecret, CredentialSource, Diagnostic, IdpConfig, Level,
    McpOAuthConfig, OAuthGrantKind, ProxyConfig, RemoteConfig, Scope, ScopedServer, ServerConfig,
    StdioConfig, Timeouts, ToolFilter, TransportConfig, TransportKind,
};

/// Which environment variables a server inherits, and which are refused.
pub mod env {
    pub use crate::env_safety::{
        DANGEROUS_ENV_NAMES, DANGEROUS_ENV_PREFIXES, inherited_env_names, is_dangerous_env_key,
        is_env_name, is_inherited_env_name, is_passthrough_name,
    };
    pub use crate::types::{
        INHERITED_ENV_ALLOWLIST, INHERITED_ENV_ALLOWLIST_WINDOWS, INHERITED_ENV_PREFIXES,
        INHERITED_NETWORK_ENV,
    };
}

/// A server's command line and URL as they may be shown: secrets removed.
pub mod redaction {
    pub use crate::identity::{
        redact_url, redacted_command_line, redacted_remote_url, redacted_signature, redacted_words,
        unwrap_ccr_proxy_url,
    };
}

/// Defaults, bounds and the server-name rule.
pub mod limits {
    pub use crate::consent::RECORDED_PARTS;
    pub use crate::file::MAX_CONFIG_FILE_BYTES;
    pub use crate::name::{MAX_NAME_LEN, server_name_problem};
    pub use crate::types::{
        DEFAULT_CONNECT_TIMEOUT, DEFAULT_REQUEST_TIMEOUT, DEFAULT_SESSION_IDLE_TTL,
        DEFAULT_SIGNING_ALGORITHM, DEFAULT_TOOL_CALL_TIMEOUT, SIGNING_ALGORITHMS,
    };
}

// The crate's README examples compile (and run where they can) with the
// doctests, so the page a reader sees first never goes stale.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
struct ReadmeExamples;
