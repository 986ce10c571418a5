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

pub mod edit;
pub mod types;

pub use types::*;
