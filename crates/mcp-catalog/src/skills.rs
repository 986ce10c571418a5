//! The skills extension (`io.modelcontextprotocol/skills`, SEP-2640) as a
//! host sees it: a server's skills listed as a catalog, each loaded only
//! when the host asks, and nothing a server sent used before it is
//! verified.
//!
//! Three steps, each a separate call so the order is the host's:
//!
//! - [`list_skills`] pages `skills/list` and reads no file (a host must
//!   not fetch a skill's files on connection, listing or approval). An
//!   entry that breaks the extension's rules is left out and reported,
//!   naming server and skill.
//! - [`load_skill`] reads the skill's `SKILL.md` and verifies it against
//!   its entry: the byte length against `size`, the SHA-256 of the bytes
//!   against `digest`, and the YAML front matter field by field against
//!   the entry's `frontmatter`. Any difference refuses the skill.
//! - [`LoadedSkill::read_file`] reads one supporting file, verified the
//!   same way. It exists only on a loaded skill, so no supporting file is
//!   read before its `SKILL.md` passed.
//!
//! Requests go through [`SkillSource`], which [`SessionSkills`] implements
//! over an open [`ClientSession`] (raw `request`s) and tests implement
//! over scripted answers.

use async_trait::async_trait;
use base64::Engine;
use mcp_config::Level;
use mcp_transport::ClientSession;
use serde::Serialize;
use serde_json::{Map, Value, json};
use sha2::{Digest, Sha256};

use crate::catalog::CatalogDiagnostic;
use crate::error::{CatalogError, Cause};

/// The extension's identifier, as servers advertise it under
/// `capabilities.extensions`.
pub const SKILLS_EXTENSION: &str = "io.modelcontextprotocol/skills";

/// Pages of `skills/list` followed at most.
pub const MAX_SKILL_PAGES: usize = 100;

/// Largest file of a skill read, in bytes: the extension's cap on a whole
/// skill (16 MiB), which no one file can pass either.
pub const MAX_SKILL_FILE_BYTES: u64 = 16 * 1024 * 1024;

/// The entry value that says a skill's files are found by reading its
/// directory rather than listed.
const DYNAMIC: &str = "dynamic";

/// Whether `capabilities` (a server's, from `initialize` or
/// `server/discover`) advertise the skills extension.
pub fn advertises_skills(capabilities: &Value) -> bool {
    capabilities
        .get("extensions")
        .and_then(|e| e.get(SKILLS_EXTENSION))
        .is_some_and(|v| !v.is_null())
}

/// Where skill requests go: one server, raw requests.
#[async_trait]
pub trait SkillSource: Send + Sync {
    /// The configured server name, for errors and diagnostics.
    fn server(&self) -> &str;

    /// One request; the result as the server sent it.
    async fn request(&self, method: &str, params: Value) -> Result<Value, CatalogError>;
}

/// [`SkillSource`] over an open session.
#[derive(Debug, Clone, Copy)]
pub struct SessionSkills<'a> {
    server: &'a str,
    session: &'a ClientSession,
}

impl<'a> SessionSkills<'a> {
    /// Skills of `session`, a connection to the server configured as
    /// `server`.
    pub fn new(server: &'a str, session: &'a ClientSession) -> Self {
        SessionSkills { server, session }
    }
}

#[async_trait]
impl SkillSource for SessionSkills<'_> {
    fn server(&self) -> &str {
        self.server
    }

    async fn request(&self, method: &str, params: Value) -> Result<Value, CatalogError> {
        self.session
            .request(method, Some(params))
            .await
            .map_err(|error| CatalogError::request(self.server, method, error))
    }
}

/// One file of a skill as its entry lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct SkillFile {
    /// The file's uri, under the skill's directory.
    pub uri: String,
    /// `sha256:` and 64 lowercase hex digits, over the file's raw bytes.
    pub digest: String,
    /// The file's length in bytes.
    pub size: u64,
}

/// How a skill names its files.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case", tag = "kind", content = "files")]
pub enum SkillFiles {
    /// Every file with its digest and size, `SKILL.md` included.
    Listed(Vec<SkillFile>),
    /// Found by reading the skill's directory; nothing to verify a file
    /// against but its place.
    Dynamic,
}

/// One skill of a server's listing, as a host shows it before loading.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Skill {
    /// The server it comes from.
    pub server: String,
    /// The `SKILL.md` uri (`skill://<path>/SKILL.md`).
    pub uri: String,
    /// The front matter's `name`.
    pub name: String,
    /// The front matter's `description`.
    pub description: String,
    /// The entry's whole front matter, which `SKILL.md` must repeat.
    pub frontmatter: Map<String, Value>,
    /// The files the skill is made of.
    pub files: SkillFiles,
}

impl Skill {
    /// The skill's directory: its uri without `/SKILL.md`.
    pub fn directory(&self) -> &str {
        self.uri.strip_suffix("/SKILL.md").unwrap_or(&self.uri)
    }

    fn file(&self, uri: &str) -> Option<&SkillFile> {
        match &self.files {
            SkillFiles::Listed(files) => files.iter().find(|f| f.uri == uri),
            SkillFiles::Dynamic => None,
        }
    }

    fn refused(&self, problem: impl Into<String>) -> CatalogError {
        CatalogError::skill(&self.server, &self.uri, problem)
    }
}

/// A server's skills, listed without reading any of their files.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct SkillListing {
    /// The server that listed the skills.
    pub server: String,
    /// In the server's order.
    pub skills: Vec<Skill>,
    /// Entries left out, each naming server and skill.
    pub diagnostics: Vec<CatalogDiagnostic>,
}

impl SkillListing {
    /// The skill whose `SKILL.md` is at `uri`.
    pub fn get(&self, uri: &str) -> Option<&Skill> {
        self.skills.iter().find(|s| s.uri == uri)
    }
}

/// Lists a server's skills: every page of `skills/list`, no file read.
pub async fn list_skills(source: &dyn SkillSource) -> Result<SkillListing, CatalogError> {
    let server = source.server().to_owned();
    let mut listing = SkillListing {
        server: server.clone(),
        skills: Vec::new(),
        diagnostics: Vec::new(),
    };
    let mut cursor: Option<String> = None;
    let mut seen = std::collections::HashSet::new();
    for _ in 0..MAX_SKILL_PAGES {
        let params = match &cursor {
            Some(cursor) => json!({ "cursor": cursor }),
            None => json!({}),
        };
        let page = source.request("skills/list", params).await?;
        let Some(entries) = page.get("skills").and_then(Value::as_array) else {
            return Err(CatalogError::request(
                &server,
                "skills/list",
                Cause::other("the result has no `skills` list"),
            ));
        };
        for (index, entry) in entries.iter().enumerate() {
            match parse_entry(&server, entry) {
                Ok(skill) => listing.skills.push(skill),
                Err(problem) => {
                    let label = entry
                        .get("uri")
                        .and_then(Value::as_str)
                        .map_or_else(|| format!("skills[{index}]"), str::to_owned);
                    listing.diagnostics.push(CatalogDiagnostic::server(
                        Level::Error,
                        &server,
                        format!(
                            "server {server:?}, skill {label:?}: {problem}; the skill is left out"
                        ),
                    ));
                }
            }
        }
        match page.get("nextCursor").and_then(Value::as_str) {
            Some(next) if !next.is_empty() && seen.insert(next.to_owned()) => {
                cursor = Some(next.to_owned());
            }
            _ => return Ok(listing),
        }
    }
    Err(CatalogError::request(
        &server,
        "skills/list",
        Cause::other(format!("more than {MAX_SKILL_PAGES} pages")),
    ))
}

/// Reads one entry of `skills/list`, refusing one that breaks the
/// extension's rules.
fn parse_entry(server: &str, entry: &Value) -> Result<Skill, String> {
    let uri = entry
        .get("uri")
        .and_then(Value::as_str)
        .ok_or("the entry has no uri")?;
    let directory = uri
        .strip_suffix("/SKILL.md")
        .filter(|d| d.contains("://"))
        .ok_or("the uri does not name a SKILL.md")?;
    let frontmatter = entry
        .get("frontmatter")
        .and_then(Value::as_object)
        .ok_or("the entry has no frontmatter object")?;
    let text = |field: &str| {
        frontmatter
            .get(field)
            .and_then(Value::as_str)
            .filter(|t| !t.is_empty())
            .map(str::to_owned)
            .ok_or_else(|| format!("the frontmatter has no {field}"))
    };
    let name = text("name")?;
    let description = text("description")?;
    let files = match entry.get("resources") {
        Some(Value::String(kind)) if kind == DYNAMIC => SkillFiles::Dynamic,
        Some(Value::Array(items)) => {
            let mut files = Vec::with_capacity(items.len());
            for item in items {
                files.push(parse_file(directory, uri, item)?);
            }
            if !files.iter().any(|f| f.uri == uri) {
                return Err("its resources do not list the SKILL.md".into());
            }
            SkillFiles::Listed(files)
        }
        _ => return Err(format!("resources is neither a list nor {DYNAMIC:?}")),
    };
    Ok(Skill {
        server: server.to_owned(),
        uri: uri.to_owned(),
        name,
        description,
        frontmatter: frontmatter.clone(),
        files,
    })
}

fn parse_file(directory: &str, skill_md: &str, item: &Value) -> Result<SkillFile, String> {
    let uri = item
        .get("uri")
        .and_then(Value::as_str)
        .ok_or("a resources entry has no uri")?;
    if uri != skill_md && !within(directory, uri) {
        return Err(format!("{uri} is outside the skill's directory"));
    }
    let digest = item
        .get("digest")
        .and_then(Value::as_str)
        .filter(|d| is_digest(d))
        .ok_or_else(|| format!("{uri} has no digest of the form sha256:<64 lowercase hex>"))?;
    let size = item
        .get("size")
        .and_then(Value::as_u64)
        .ok_or_else(|| format!("{uri} has no size in bytes"))?;
    Ok(SkillFile {
        uri: uri.to_owned(),
        digest: digest.to_owned(),
        size,
    })
}

/// Whether `uri` is a file inside `directory` (no `..` step out of it).
fn within(directory: &str, uri: &str) -> bool {
    uri.strip_prefix(directory)
        .and_then(|rest| rest.strip_prefix('/'))
        .is_some_and(|rest| {
            !rest.is_empty()
                && rest
                    .split('/')
                    .all(|s| !s.is_empty() && s != "." && s != "..")
        })
}

fn is_digest(digest: &str) -> bool {
    digest.strip_prefix("sha256:").is_some_and(|hex| {
        hex.len() == 64
            && hex
                .bytes()
                .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    })
}

/// `sha256:` and the lowercase hex SHA-256 of `bytes`.
pub fn digest_of(bytes: &[u8]) -> String {
    let hash = Sha256::digest(bytes);
    let mut out = String::with_capacity(7 + 64);
    out.push_str("sha256:");
    for byte in hash {
        out.push_str(&format!("{byte:02x}"));
    }
    out
}

/// A skill whose `SKILL.md` passed verification.
#[derive(Debug, Clone, PartialEq)]
pub struct LoadedSkill {
    /// The skill's entry in the listing.
    pub skill: Skill,
    /// The verified `SKILL.md`, front matter included.
    pub text: String,
}

/// A verified file of a loaded skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SkillFileContent {
    /// The file's uri.
    pub uri: String,
    /// The raw bytes the digest covers.
    pub bytes: Vec<u8>,
    /// The server's media type, if it gave one.
    pub mime_type: Option<String>,
}

impl SkillFileContent {
    /// The bytes as text, when they are UTF-8.
    pub fn text(&self) -> Option<&str> {
        std::str::from_utf8(&self.bytes).ok()
    }
}

/// Loads a skill: reads its `SKILL.md` and verifies size, digest and front
/// matter against the entry. Nothing of a file that fails is returned.
pub async fn load_skill(
    source: &dyn SkillSource,
    skill: &Skill,
) -> Result<LoadedSkill, CatalogError> {
    let file = read_verified(source, skill, &skill.uri).await?;
    let text =
        String::from_utf8(file.bytes).map_err(|_| skill.refused("SKILL.md is not UTF-8 text"))?;
    let parsed = frontmatter(&text).map_err(|problem| skill.refused(problem))?;
    let mut differences = Vec::new();
    let keys: std::collections::BTreeSet<&String> =
        parsed.keys().chain(skill.frontmatter.keys()).collect();
    for key in keys {
        let in_file = parsed.get(key).unwrap_or(&Value::Null);
        let in_entry = skill.frontmatter.get(key).unwrap_or(&Value::Null);
        if in_file != in_entry {
            differences.push(format!("{key}: file {in_file}, entry {in_entry}"));
        }
    }
    if !differences.is_empty() {
        return Err(skill.refused(format!(
            "the front matter of SKILL.md differs from the listed entry ({})",
            differences.join("; ")
        )));
    }
    Ok(LoadedSkill {
        skill: skill.clone(),
        text,
    })
}

impl LoadedSkill {
    /// Reads one supporting file of this skill, verified against its
    /// entry (for a skill with listed files, only a listed one).
    pub async fn read_file(
        &self,
        source: &dyn SkillSource,
        uri: &str,
    ) -> Result<SkillFileContent, CatalogError> {
        read_verified(source, &self.skill, uri).await
    }
}

/// Reads `uri` of `skill` with `resources/read` and verifies it against
/// the skill's entry.
async fn read_verified(
    source: &dyn SkillSource,
    skill: &Skill,
    uri: &str,
) -> Result<SkillFileContent, CatalogError> {
    let listed = match &skill.files {
        SkillFiles::Listed(_) => Some(
            skill
                .file(uri)
                .ok_or_else(|| skill.refused(format!("{uri} is not a file the skill lists")))?,
        ),
        SkillFiles::Dynamic if uri == skill.uri || within(skill.directory(), uri) => None,
        SkillFiles::Dynamic => {
            return Err(skill.refused(format!("{uri} is outside the skill's directory")));
        }
    };
    if let Some(file) = listed
        && file.size > MAX_SKILL_FILE_BYTES
    {
        return Err(skill.refused(format!(
            "{uri} is listed at {} bytes, over the limit of {MAX_SKILL_FILE_BYTES}",
            file.size
        )));
    }
    let result = source
        .request("resources/read", json!({ "uri": uri }))
        .await?;
    let contents = result
        .get("contents")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    let content = contents
        .iter()
        .find(|c| c.get("uri").and_then(Value::as_str) == Some(uri))
        .or_else(|| contents.first())
        .ok_or_else(|| skill.refused(format!("reading {uri} gave no content")))?;
    let bytes = if let Some(text) = content.get("text").and_then(Value::as_str) {
        text.as_bytes().to_vec()
    } else if let Some(blob) = content.get("blob").and_then(Value::as_str) {
        base64::engine::general_purpose::STANDARD
            .decode(blob)
            .map_err(|e| skill.refused(format!("{uri} is not valid base64: {e}")))?
    } else {
        return Err(skill.refused(format!("reading {uri} gave neither text nor blob")));
    };
    if let Some(file) = listed {
        if bytes.len() as u64 != file.size {
            return Err(skill.refused(format!(
                "{uri} is {} bytes, but its entry lists {}; the content is not used",
                bytes.len(),
                file.size
            )));
        }
        let digest = digest_of(&bytes);
        if digest != file.digest {
            return Err(skill.refused(format!(
                "{uri} has digest {digest}, but its entry lists {}; the content is not used",
                file.digest
            )));
        }
    } else if bytes.len() as u64 > MAX_SKILL_FILE_BYTES {
        return Err(skill.refused(format!(
            "{uri} is over the limit of {MAX_SKILL_FILE_BYTES} bytes"
        )));
    }
    Ok(SkillFileContent {
        uri: uri.to_owned(),
        bytes,
        mime_type: content
            .get("mimeType")
            .and_then(Value::as_str)
            .map(str::to_owned),
    })
}

/// The YAML front matter of a `SKILL.md`: the block between a leading
/// `---` line and the next `---` line, read as the flat mapping the Agent
/// Skills format uses (scalar fields, and one level of nested mapping
/// such as `metadata`). YAML beyond that (lists, block or flow
/// collections, block scalars, anchors) is refused rather than guessed:
/// front matter that cannot be read cannot be verified.
pub(crate) fn frontmatter(text: &str) -> Result<Map<String, Value>, String> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    if lines.next() != Some("---") {
        return Err("SKILL.md does not begin with a --- front matter block".into());
    }
    let mut block = Vec::new();
    let mut closed = false;
    for line in lines {
        if line.trim_end() == "---" {
            closed = true;
            break;
        }
        block.push(line);
    }
    if !closed {
        return Err("the front matter of SKILL.md has no closing ---".into());
    }
    let mut top = Map::new();
    let mut nested: Option<(String, Map<String, Value>)> = None;
    for (number, line) in block.iter().enumerate() {
        let trimmed = line.trim_start();
        if trimmed.is_empty() || trimmed.starts_with('#') {
            continue;
        }
        let unsupported =
            |what: &str| format!("front matter line {}: {what} is not read", number + 2);
        let indented = trimmed.len() < line.len();
        let (key, value) =
            split_pair(trimmed).ok_or_else(|| unsupported("a line that is not `key: value`"))?;
        match (indented, &mut nested) {
            (true, Some((_, map))) => {
                if value.is_empty() {
                    return Err(unsupported("a mapping nested two levels"));
                }
                map.insert(key, scalar(value).ok_or_else(|| unsupported("this value"))?);
            }
            (true, None) => return Err(unsupported("an indented line")),
            (false, _) => {
                if let Some((name, map)) = nested.take() {
                    top.insert(name, Value::Object(map));
                }
                if top.contains_key(&key) {
                    return Err(unsupported("a repeated key"));
                }
                if value.is_empty() {
                    nested = Some((key, Map::new()));
                } else {
                    top.insert(key, scalar(value).ok_or_else(|| unsupported("this value"))?);
                }
            }
        }
    }
    if let Some((name, map)) = nested.take() {
        // A key with nothing under it is YAML's null.
        let value = if map.is_empty() {
            Value::Null
        } else {
            Value::Object(map)
        };
        top.insert(name, value);
    }
    Ok(top)
}

/// `key: value` (the value may be empty); `None` for anything else.
fn split_pair(line: &str) -> Option<(String, &str)> {
    let (key, value) = if let Some(rest) = line.strip_prefix('"') {
        let end = rest.find('"')?;
        let after = rest[end + 1..].strip_prefix(':')?;
        (rest[..end].to_owned(), after)
    } else {
        let colon = line
            .find(": ")
            .or_else(|| line.strip_suffix(':').map(|k| k.len()))?;
        (line[..colon].trim_end().to_owned(), &line[colon + 1..])
    };
    if key.is_empty() || key.starts_with(['-', '?', '[', '{', '&', '*', '!', '|', '>']) {
        return None;
    }
    Some((key, value.trim()))
}

/// One scalar as YAML's core schema types it: quoted strings, `true`,
/// `false`, `null`, numbers, and plain strings (a ` #` starts a comment).
/// `None` for what this reader does not take (collections, block scalars,
/// anchors, tags).
fn scalar(value: &str) -> Option<Value> {
    if let Some(rest) = value.strip_prefix('"') {
        let end = closing_quote(rest)?;
        let tail = rest[end + 1..].trim_start();
        if !(tail.is_empty() || tail.starts_with('#')) {
            return None;
        }
        return serde_json::from_str::<String>(&format!("\"{}\"", &rest[..end]))
            .ok()
            .map(Value::String);
    }
    if let Some(rest) = value.strip_prefix('\'') {
        let mut out = String::new();
        let mut chars = rest.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\'' {
                if chars.peek() == Some(&'\'') {
                    chars.next();
                    out.push('\'');
                    continue;
                }
                let tail: String = chars.collect();
                let tail = tail.trim_start();
                return (tail.is_empty() || tail.starts_with('#')).then_some(Value::String(out));
            }
            out.push(c);
        }
        return None;
    }
    let plain = match value.find(" #") {
        Some(at) => value[..at].trim_end(),
        None => value,
    };
    if plain.starts_with(['[', '{', '|', '>', '&', '*', '!', '%', '@', '`'])
        || plain.starts_with("- ")
    {
        return None;
    }
    Some(match plain {
        "true" | "True" | "TRUE" => Value::Bool(true),
        "false" | "False" | "FALSE" => Value::Bool(false),
        "null" | "Null" | "NULL" | "~" | "" => Value::Null,
        _ => number(plain).unwrap_or_else(|| Value::String(plain.to_owned())),
    })
}

/// The end of a double-quoted scalar (the index of its closing quote).
fn closing_quote(rest: &str) -> Option<usize> {
    let mut escaped = false;
    for (i, c) in rest.char_indices() {
        match c {
            '\\' if !escaped => escaped = true,
            '"' if !escaped => return Some(i),
            _ => escaped = false,
        }
    }
    None
}

/// A plain scalar that is a YAML core-schema number.
fn number(plain: &str) -> Option<Value> {
    let digits = plain.strip_prefix(['-', '+']).unwrap_or(plain);
    if digits.is_empty()
        || !digits.bytes().all(|b| {
            b.is_ascii_digit() || b == b'.' || b == b'e' || b == b'E' || b == b'-' || b == b'+'
        })
    {
        return None;
    }
    if !digits.starts_with(|c: char| c.is_ascii_digit() || c == '.') {
        return None;
    }
    if let Ok(integer) = plain.parse::<i64>() {
        return Some(Value::from(integer));
    }
    plain
        .parse::<f64>()
        .ok()
        .and_then(serde_json::Number::from_f64)
        .map(Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(text: &str, expect: Result<Value, &str>) {
        match (frontmatter(text), expect) {
            (Ok(map), Ok(expect)) => assert_eq!(Value::Object(map), expect, "{text}"),
            (Err(problem), Err(fragment)) => {
                assert!(problem.contains(fragment), "{text}: {problem}")
            }
            (got, expect) => panic!("{text}: expected {expect:?}, got {got:?}"),
        }
    }

    #[test]
    fn front_matter_is_read_as_a_flat_mapping() {
        check(
            "---\nname: pdf-processing\ndescription: Extract, fill, and assemble PDF documents\n---\n\nBody.\n",
            Ok(
                json!({"name": "pdf-processing", "description": "Extract, fill, and assemble PDF documents"}),
            ),
        );
        check(
            "\u{feff}---\r\nname: \"a: b\"\r\nlicense: 'it''s MIT' # note\r\nversion: 2\r\nbeta: false\r\nmetadata:\r\n  author: me\r\n  level: 1.5\r\nempty:\r\n---\r\n",
            Ok(
                json!({"name": "a: b", "license": "it's MIT", "version": 2, "beta": false, "metadata": {"author": "me", "level": 1.5}, "empty": null}),
            ),
        );
        check("---\nname: x # comment\n---", Ok(json!({"name": "x"})));
    }

    #[test]
    fn front_matter_beyond_the_flat_mapping_is_refused() {
        check("name: x\n", Err("does not begin with"));
        check("---\nname: x\n", Err("no closing ---"));
        check("---\ntools:\n  - a\n---\n", Err("line 3"));
        check(
            "---\ndescription: |\n  text\n---\n",
            Err("line 2: this value"),
        );
        check("---\nlist: [a, b]\n---\n", Err("this value"));
        check("---\nname: a\nname: b\n---\n", Err("a repeated key"));
        check("---\n  name: a\n---\n", Err("an indented line"));
        check("---\na:\n  b:\n    c: d\n---\n", Err("nested two levels"));
    }

    #[test]
    fn digests_are_sha256_hex() {
        assert_eq!(
            digest_of(b"abc"),
            "sha256:ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        assert!(is_digest(&digest_of(b"")));
        assert!(!is_digest(
            "sha256:BA7816BF8F01CFEA414140DE5DAE2223B00361A396177A9CB410FF61F20015AD"
        ));
        assert!(!is_digest("md5:900150983cd24fb0d6963f7d28e17f72"));
    }

    #[test]
    fn files_stay_inside_the_skill_directory() {
        for (uri, inside) in [
            ("skill://a/references/F.md", true),
            ("skill://a/SKILL.md", true),
            ("skill://a/../b/SKILL.md", false),
            ("skill://ab/x", false),
            ("skill://a/", false),
            ("skill://a//x", false),
        ] {
            assert_eq!(within("skill://a", uri), inside, "{uri}");
        }
    }

    #[test]
    fn the_extension_is_found_in_the_capabilities() {
        assert!(advertises_skills(
            &json!({"extensions": {SKILLS_EXTENSION: {}}})
        ));
        assert!(!advertises_skills(&json!({"extensions": {"other": {}}})));
        assert!(!advertises_skills(&json!({"tools": {}})));
    }
}
