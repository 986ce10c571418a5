//! Tool names a model sees (REFERENCE §3.2).
//!
//! Two styles exist because hosts already depend on them: `openclaw`
//! (`server__tool`) and `claw` (`mcp__server__tool`, Claude Code's form,
//! which permission rules match on). Both produce names matching
//! `^[A-Za-z0-9_-]{1,64}$`, the strictest rule among providers.
//!
//! Names are allocated by [`NameAllocator`] in a fixed order (servers sorted
//! by raw name, tools sorted by raw name), so the result never depends on
//! which server answered first.

use std::borrow::Cow;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;

use serde::Serialize;
use sha2::{Digest, Sha256};

/// Longest name any provider accepts.
pub const MAX_NAME_LEN: usize = 64;

/// Longest server part of an `openclaw` name.
pub const MAX_OPENCLAW_SERVER_LEN: usize = 30;

/// Hex digits of the hash suffix of a shortened `claw` name.
const HASH_SUFFIX_LEN: usize = 8;

/// How materialised names are spelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
#[non_exhaustive]
pub enum NamingStyle {
    /// `server__tool`, sanitised with `-`, collisions get `-2`, `-3`, …
    /// (OpenClaw's form).
    OpenClaw,
    /// `mcp__server__tool`, sanitised with `_` (Claude Code's form, which
    /// permission rules match on). The default, as in the CLI.
    #[default]
    Claw,
}

impl NamingStyle {
    /// The name [`NamingStyle::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            NamingStyle::OpenClaw => "openclaw",
            NamingStyle::Claw => "claw",
        }
    }

    /// Parses `openclaw` or `claw`.
    pub fn parse(text: &str) -> Option<NamingStyle> {
        match text {
            "openclaw" => Some(NamingStyle::OpenClaw),
            "claw" => Some(NamingStyle::Claw),
            _ => None,
        }
    }
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Claw's `normalize_name_for_mcp`: every character outside
/// `[A-Za-z0-9_-]` becomes `_`.
pub fn normalize_name_for_mcp(name: &str) -> String {
    name.chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect()
}

/// The server part of a `claw` name: [`normalize_name_for_mcp`], and for
/// claude.ai connectors (`claude.ai …`) runs of `_` collapse and `_` is
/// trimmed at both ends.
pub fn normalize_server_name_for_mcp(name: &str) -> String {
    let normalized = normalize_name_for_mcp(name);
    if !name.starts_with("claude.ai ") {
        return normalized;
    }
    let mut collapsed = String::with_capacity(normalized.len());
    for c in normalized.chars() {
        if c == '_' && collapsed.ends_with('_') {
            continue;
        }
        collapsed.push(c);
    }
    collapsed.trim_matches('_').to_owned()
}

/// One fragment of an `openclaw` name: characters outside `[A-Za-z0-9_-]`
/// become `-`, an empty fragment becomes `empty`, and a fragment that does
/// not start with a letter gets `empty-` in front.
pub fn openclaw_fragment(raw: &str, empty: &str) -> String {
    let sanitized: String = raw
        .chars()
        .map(|c| if is_name_char(c) { c } else { '-' })
        .collect();
    if sanitized.is_empty() {
        return empty.to_owned();
    }
    if sanitized.starts_with(|c: char| c.is_ascii_alphabetic()) {
        sanitized
    } else {
        format!("{empty}-{sanitized}")
    }
}

/// The first `max` characters of an ASCII name.
fn cut(name: &str, max: usize) -> &str {
    // Every name built here is ASCII, so byte and char positions agree; the
    // `get` keeps this total even if that ever changed.
    name.get(..max.min(name.len())).unwrap_or(name)
}

/// 8 hex digits of SHA-256 over the raw server and tool name.
fn stable_hash(server: &str, tool: &str, attempt: u32) -> String {
    let mut hasher = Sha256::new();
    hasher.update(server.as_bytes());
    hasher.update([0]);
    hasher.update(tool.as_bytes());
    if attempt > 0 {
        hasher.update(attempt.to_le_bytes());
    }
    let digest = hasher.finalize();
    let mut hex = String::with_capacity(HASH_SUFFIX_LEN);
    for byte in digest.iter().take(HASH_SUFFIX_LEN / 2) {
        hex.push_str(&format!("{byte:02x}"));
    }
    hex
}

/// Cuts a `claw` name to 64 characters with a stable hash suffix.
fn claw_shorten(full: &str, server: &str, tool: &str, attempt: u32) -> String {
    let keep = MAX_NAME_LEN - HASH_SUFFIX_LEN - 1;
    format!("{}_{}", cut(full, keep), stable_hash(server, tool, attempt))
}

/// Why a name is not the plain rendering of its parts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
#[non_exhaustive]
pub enum NameAdjustment {
    /// Cut to 64 characters.
    Shortened,
    /// Renamed because it collided with a reserved (native) name.
    ReservedCollision {
        /// The name the tool would have had.
        wanted: String,
    },
    /// Renamed because another tool already had that name.
    Collision {
        /// The name the tool would have had.
        wanted: String,
    },
}

/// The outcome of naming one server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServerPrefix {
    /// The prefix to put before each tool name.
    Assigned(String),
    /// `openclaw` style: another server already had this server's prefix
    /// (`my.server` and `my server` both become `my-server`), so this one
    /// got a numbered prefix. Its tool names then depend on which other
    /// servers exist, which the caller must report.
    Renamed {
        /// The numbered prefix it got.
        prefix: String,
        /// The prefix the server would have had.
        wanted: String,
        /// The server that holds the wanted prefix.
        taken_by: String,
    },
    /// `claw` style: another server already uses this prefix.
    Conflict {
        /// The prefix both servers map to.
        prefix: String,
        /// The server that got it first.
        taken_by: String,
    },
}

/// Allocates unique names in a fixed order. Feed servers sorted by raw
/// name and, within a server, tools sorted by raw name.
#[derive(Debug)]
pub struct NameAllocator {
    style: NamingStyle,
    /// Reserved and emitted names; lowercased for `openclaw`, which compares
    /// case-insensitively. Shared with the catalog's names where they are
    /// the same text, so a rebuild claims a server's names without copying
    /// them; hashed with a seeded foldhash, several times faster than
    /// SipHash on short names while still seeded per process against
    /// names made to collide.
    taken: HashSet<Arc<str>, foldhash::fast::RandomState>,
    reserved: HashSet<String>,
    /// Server prefix → raw server name that owns it.
    prefixes: BTreeMap<String, String>,
}

impl NameAllocator {
    /// An allocator that never hands out any of `reserved` (native tools).
    pub fn new<'a>(style: NamingStyle, reserved: impl IntoIterator<Item = &'a str>) -> Self {
        let reserved: HashSet<String> = reserved
            .into_iter()
            .map(|name| Self::key_for(style, name).into_owned())
            .collect();
        NameAllocator {
            style,
            taken: reserved
                .iter()
                .map(|name| Arc::from(name.as_str()))
                .collect(),
            reserved,
            prefixes: BTreeMap::new(),
        }
    }

    fn key_for(style: NamingStyle, name: &str) -> Cow<'_, str> {
        match style {
            NamingStyle::OpenClaw => Cow::Owned(name.to_ascii_lowercase()),
            NamingStyle::Claw => Cow::Borrowed(name),
        }
    }

    fn key<'n>(&self, name: &'n str) -> Cow<'n, str> {
        Self::key_for(self.style, name)
    }

    /// The prefix of a server's tool names. In `openclaw` style a colliding
    /// server part gets `-2`, `-3`, … ([`ServerPrefix::Renamed`]); in
    /// `claw` style a collision is a conflict. Either is an error the
    /// caller must report.
    pub fn server_prefix(&mut self, server: &str) -> ServerPrefix {
        match self.style {
            NamingStyle::OpenClaw => {
                let base = openclaw_fragment(server, "mcp");
                let base = cut(&base, MAX_OPENCLAW_SERVER_LEN).to_owned();
                let mut candidate = base.clone();
                let mut n = 2u32;
                let taken_by = self.prefixes.get(&base.to_ascii_lowercase()).cloned();
                while self.prefixes.contains_key(&candidate.to_ascii_lowercase()) {
                    let suffix = format!("-{n}");
                    candidate = format!(
                        "{}{suffix}",
                        cut(&base, MAX_OPENCLAW_SERVER_LEN - suffix.len())
                    );
                    n += 1;
                }
                self.prefixes
                    .insert(candidate.to_ascii_lowercase(), server.to_owned());
                match taken_by {
                    None => ServerPrefix::Assigned(format!("{candidate}__")),
                    Some(taken_by) => ServerPrefix::Renamed {
                        prefix: format!("{candidate}__"),
                        wanted: format!("{base}__"),
                        taken_by,
                    },
                }
            }
            NamingStyle::Claw => {
                let prefix = format!("mcp__{}__", normalize_server_name_for_mcp(server));
                match self.prefixes.get(&prefix) {
                    Some(owner) => ServerPrefix::Conflict {
                        prefix,
                        taken_by: owner.clone(),
                    },
                    None => {
                        self.prefixes.insert(prefix.clone(), server.to_owned());
                        ServerPrefix::Assigned(prefix)
                    }
                }
            }
        }
    }

    /// Takes every one of `names` as it is, if all are free; takes none and
    /// returns `false` otherwise. A rebuild uses it for a server whose
    /// names came out unadjusted last time: given the same prefix and
    /// nothing taking them since, [`NameAllocator::tool_name`] would hand
    /// out exactly these again. `names` are distinct (one server's).
    pub(crate) fn claim<'a>(&mut self, names: impl Iterator<Item = &'a Arc<str>> + Clone) -> bool {
        // One hash per name: insert, and take the inserted ones back out
        // in the rare case one was taken.
        for (claimed, name) in names.clone().enumerate() {
            if !self.taken.insert(self.shared_key(name)) {
                for name in names.take(claimed) {
                    self.taken.remove(self.key(name).as_ref());
                }
                return false;
            }
        }
        true
    }

    /// Makes room for `additional` more names: a build knows how many
    /// tools it names, and growing the set step by step rehashes every
    /// name taken so far each time.
    pub(crate) fn reserve(&mut self, additional: usize) {
        self.taken.reserve(additional);
    }

    /// Whether `name` is free. Used for utility tools, which are never
    /// renamed.
    pub fn is_free(&self, name: &str) -> bool {
        !self.taken.contains(self.key(name).as_ref())
    }

    /// A unique name for `tool` of `server`, given the server's prefix from
    /// [`NameAllocator::server_prefix`]. Returns the name and, when it is
    /// not the plain rendering, why.
    pub fn tool_name(
        &mut self,
        prefix: &str,
        server: &str,
        tool: &str,
    ) -> (String, Option<NameAdjustment>) {
        let (name, adjustment) = self.shared_tool_name(prefix, server, tool);
        (name.as_ref().to_owned(), adjustment)
    }

    /// [`NameAllocator::tool_name`], as the one allocation the catalog
    /// and the taken set share.
    pub(crate) fn shared_tool_name(
        &mut self,
        prefix: &str,
        server: &str,
        tool: &str,
    ) -> (Arc<str>, Option<NameAdjustment>) {
        let (name, adjustment) = match self.style {
            NamingStyle::OpenClaw => self.openclaw_name(prefix, tool),
            NamingStyle::Claw => self.claw_name(prefix, server, tool),
        };
        let name: Arc<str> = name.into();
        self.taken.insert(self.shared_key(&name));
        (name, adjustment)
    }

    /// The taken-set key of `name`: `name` itself where the style keeps
    /// case, so the set and the catalog share one allocation.
    fn shared_key(&self, name: &Arc<str>) -> Arc<str> {
        match self.key(name) {
            Cow::Borrowed(_) => Arc::clone(name),
            Cow::Owned(lowered) => lowered.into(),
        }
    }

    fn openclaw_name(&self, prefix: &str, tool: &str) -> (String, Option<NameAdjustment>) {
        let full = format!("{prefix}{}", openclaw_fragment(tool, "tool"));
        let shortened = full.len() > MAX_NAME_LEN;
        let base = cut(&full, MAX_NAME_LEN).to_owned();
        let key = self.key(&base);
        if !self.taken.contains(key.as_ref()) {
            return (base, shortened.then_some(NameAdjustment::Shortened));
        }
        let reserved = self.reserved.contains(key.as_ref());
        let mut n = 2u32;
        loop {
            let suffix = format!("-{n}");
            let candidate = format!("{}{suffix}", cut(&base, MAX_NAME_LEN - suffix.len()));
            if !self.taken.contains(self.key(&candidate).as_ref()) {
                let adjustment = if reserved {
                    NameAdjustment::ReservedCollision { wanted: base }
                } else {
                    NameAdjustment::Collision { wanted: base }
                };
                return (candidate, Some(adjustment));
            }
            n += 1;
        }
    }

    fn claw_name(
        &self,
        prefix: &str,
        server: &str,
        tool: &str,
    ) -> (String, Option<NameAdjustment>) {
        let full = format!("{prefix}{}", normalize_name_for_mcp(tool));
        let shortened = full.len() > MAX_NAME_LEN;
        let base = if shortened {
            claw_shorten(&full, server, tool, 0)
        } else {
            full.clone()
        };
        if !self.taken.contains(self.key(&base).as_ref()) {
            return (base, shortened.then_some(NameAdjustment::Shortened));
        }
        let reserved = self.reserved.contains(self.key(&base).as_ref());
        let mut attempt = 0u32;
        loop {
            let candidate = claw_shorten(&full, server, tool, attempt);
            if !self.taken.contains(self.key(&candidate).as_ref()) {
                let adjustment = if reserved {
                    NameAdjustment::ReservedCollision { wanted: base }
                } else {
                    NameAdjustment::Collision { wanted: base }
                };
                return (candidate, Some(adjustment));
            }
            attempt += 1;
        }
    }
}

/// The servers whose tools a catalog name may belong to, found from the
/// name alone: prefixes are allocated as a catalog allocates them (servers
/// in raw-name order), so a host can connect only the server that owns a
/// name instead of every server. `servers` are the raw names of every
/// server a catalog could hold. Most names have one owner; a name several
/// prefixes begin (`a__b__x` for servers `a` and `a__b`) has each, and a
/// name no prefix begins has none, so it cannot be in any catalog of
/// these servers. A `claw` name cut to 64 characters may have lost part of
/// a long server's prefix; such a server owns every name its cut prefix
/// begins.
pub fn tool_owners<'a>(
    style: NamingStyle,
    servers: impl IntoIterator<Item = &'a str>,
    name: &str,
) -> Vec<&'a str> {
    let mut servers: Vec<&str> = servers.into_iter().collect();
    servers.sort_unstable();
    servers.dedup();
    let mut allocator = NameAllocator::new(style, []);
    let mut owners = Vec::new();
    for server in servers {
        let prefix = match allocator.server_prefix(server) {
            ServerPrefix::Assigned(prefix) | ServerPrefix::Renamed { prefix, .. } => prefix,
            // Its tools are left out of every catalog.
            ServerPrefix::Conflict { .. } => continue,
        };
        let kept = match style {
            NamingStyle::Claw if prefix.len() > MAX_NAME_LEN - HASH_SUFFIX_LEN - 1 => {
                cut(&prefix, MAX_NAME_LEN - HASH_SUFFIX_LEN - 1)
            }
            _ => prefix.as_str(),
        };
        if name.len() > kept.len() && name.starts_with(kept) {
            owners.push(server);
        }
    }
    owners
}

/// Whether `name` matches `^[A-Za-z0-9_-]{1,64}$`.
pub fn is_valid_name(name: &str) -> bool {
    !name.is_empty() && name.len() <= MAX_NAME_LEN && name.chars().all(is_name_char)
}
