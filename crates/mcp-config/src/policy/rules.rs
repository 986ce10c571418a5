//! What a policy is made of: a rule's position (shown with every verdict),
//! the block a server carries, and the entries of the lists.

use std::path::PathBuf;

use serde::Serialize;

/// Where a policy rule is written: the file, its line, the key (such as
/// `deniedMcpServers[2].serverUrl`) and the pattern it holds.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct PolicyRule {
    /// The file the rule is in.
    pub file: PathBuf,
    /// 1-based line of the rule, when known.
    pub line: Option<u32>,
    /// The key of the rule inside its file.
    pub key: String,
    /// The pattern or value it holds, as written (empty for a switch).
    pub pattern: String,
}

impl PolicyRule {
    pub(crate) fn new(file: PathBuf, line: u32, key: String, pattern: String) -> Self {
        PolicyRule {
            file,
            line: Some(line),
            key,
            pattern,
        }
    }
}

impl std::fmt::Display for PolicyRule {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.file.display())?;
        if let Some(line) = self.line {
            write!(f, ":{line}")?;
        }
        if !self.key.is_empty() {
            write!(f, " `{}`", self.key)?;
        }
        if !self.pattern.is_empty() {
            write!(f, " {}", self.pattern)?;
        }
        Ok(())
    }
}

/// Why the managed policy blocks a server: the rule and what it found.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
pub struct PolicyBlock {
    /// The rule that blocks the server.
    pub rule: PolicyRule,
    /// Lowercase reason, naming what matched or what is missing.
    pub reason: String,
}

impl std::fmt::Display for PolicyBlock {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} (by {})", self.reason, self.rule)
    }
}

/// What one list entry matches.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Matcher {
    /// `serverName`: the configured name, exactly.
    Name(String),
    /// `serverCommand`: the command and every argument, in order.
    Command(Vec<String>),
    /// `serverUrl`: a url pattern with `*` wildcards.
    Url(String),
}

/// One entry of an allow or deny list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Rule {
    pub(crate) matcher: Matcher,
    /// `configHash` of an allow entry: the server's hash must equal it.
    pub(crate) pin: Option<String>,
    pub(crate) at: PolicyRule,
}

/// One file's `allowedMcpServers`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct AllowList {
    /// Read from managed settings (kept under `allowManagedMcpServersOnly`).
    pub(crate) managed: bool,
    /// The `allowedMcpServers` key itself, named when nothing matches.
    pub(crate) at: PolicyRule,
    pub(crate) rules: Vec<Rule>,
}

/// One `[mcp_servers.NAME.identity]` of Codex's `requirements.toml`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodexIdentity {
    pub(crate) name: String,
    /// `command` (stdio) or `url` (remote): Codex compares the program,
    /// not its arguments.
    pub(crate) command: Option<String>,
    pub(crate) url: Option<String>,
    pub(crate) at: PolicyRule,
}

/// Codex's allow list.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct CodexList {
    pub(crate) at: PolicyRule,
    pub(crate) identities: Vec<CodexIdentity>,
}
