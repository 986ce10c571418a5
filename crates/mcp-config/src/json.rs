//! Positioned JSON: a parsed document as a `serde_json::Value` plus the
//! byte offset of every member and element, so a diagnostic about any value
//! can name its line and column.
//!
//! Files are read leniently (comments and trailing commas are accepted, as
//! hand-edited config files often have them); positions are addressed with
//! RFC 6901 JSON pointers.
//!
//! Every config, settings and plugin file is read through
//! [`Document::parse`], which holds the input rules of the crate:
//!
//! - **Depth.** The parser underneath recurses once per level, so text
//!   nested 10,000 levels deep would overflow the stack and abort the
//!   host. An iterative scan that knows strings and comments runs first
//!   and refuses anything deeper than [`MAX_JSON_DEPTH`] with one error at
//!   the bracket that goes too deep. Every later walk over a parsed value
//!   (conversion here, plugin merge patches, the deep merge of settings,
//!   rendering) recurses at most that deep.
//! - **Encoding.** A leading byte order mark is skipped; surrogate-pair
//!   escapes decode to their character (the same scan rewrites them for
//!   the parser and maps offsets back); a lone surrogate reads as U+FFFD.
//! - **Findings.** A key repeated in one object and a lone surrogate are
//!   recorded as [`Finding`]s with their positions; the caller decides the
//!   level (see [`parse_file`](crate::parse_file)).
//!
//! [`escape_text`] is how a message quotes text from a file that may hold
//! control or invisible characters.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use jsonc_parser::ast;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
use serde_json::{Map, Number, Value};

use crate::lines::LineIndex;
use crate::types::{Diagnostic, Level};

/// The deepest nesting of arrays and objects a config file may hold. Real
/// files nest a handful of levels; the cap keeps every recursive walk over
/// a parsed value (the parser's own, conversion, merge patches, deep merges
/// of settings, rendering) far from the end of any thread's stack. It is
/// serde_json's default limit too, which the edit path parses with.
pub const MAX_JSON_DEPTH: usize = 128;

/// Something valid JSON may hold that a reader of the file could misread:
/// found while parsing, reported by the caller at the level its place in
/// the file deserves.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Pointer of the member or string it concerns (for a repeated key:
    /// the member; both occurrences share it).
    pub pointer: String,
    /// What was found.
    pub kind: FindingKind,
    /// Lowercase description naming both positions where there are two.
    pub message: String,
    /// Offset of the later occurrence (or of the escape) in the text.
    offset: usize,
}

/// The kinds of [`Finding`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum FindingKind {
    /// A key written twice in one object: the last one wins, as in
    /// `JSON.parse`, so whoever reads the first one is misled.
    DuplicateKey,
    /// A `\uD800`-`\uDFFF` escape that is not half of a pair: it has no
    /// character, so it was read as U+FFFD.
    LoneSurrogate,
}

/// A parsed JSON file with positions.
#[derive(Debug, Clone)]
pub struct Document {
    /// The file the text came from (as given by the caller).
    pub path: PathBuf,
    /// The parsed value; object members keep the file's order.
    pub value: Value,
    /// Offsets keyed by the FNV-1a 64 hash of each member's pointer, built
    /// incrementally while converting, so no pointer string is allocated
    /// per node. (A hash collision could only misplace a diagnostic.)
    positions: Positions,
    /// Turns the offsets into lines and columns.
    lines: LineIndex,
    /// Kept to count columns in characters, not bytes, as editors do.
    text: std::sync::Arc<str>,
    findings: Vec<Finding>,
}

impl Document {
    /// Parses `text`; on a syntax error returns the positioned diagnostic.
    ///
    /// A leading byte order mark is skipped (columns are counted without
    /// it, as editors show them). Surrogate-pair escapes (`\ud83d\ude00`,
    /// what Python's `json.dump` writes) decode to their character; a lone
    /// surrogate becomes U+FFFD and a [`Finding`]. Nesting deeper than
    /// [`MAX_JSON_DEPTH`] is a syntax error at the bracket that goes too
    /// deep, found by an iterative scan before anything recursive runs.
    pub fn parse(text: &str, path: &Path) -> Result<Document, Diagnostic> {
        let text = text.strip_prefix('\u{feff}').unwrap_or(text);
        let lines = LineIndex::new(text);
        let at = |offset: usize, message: String| {
            let (line, column) = lines.position(text, offset);
            Diagnostic {
                level: Level::Error,
                message,
                file: Some(path.to_path_buf()),
                line: Some(line),
                column: Some(column),
                server: None,
                field: None,
            }
        };
        let scanned = prescan(text).map_err(|offset| {
            at(
                offset,
                format!(
                    "invalid JSON: arrays and objects are nested deeper than {MAX_JSON_DEPTH} levels"
                ),
            )
        })?;
        let source: &str = scanned.rewritten.as_deref().unwrap_or(text);
        let parsed = parse_to_ast(source, &CollectOptions::default(), &ParseOptions::default())
            .map_err(|err| {
                at(
                    scanned.original(err.range().start),
                    format!("invalid JSON: {}", lowercase_first(&err.kind().to_string())),
                )
            })?;
        // About one member or element per 16 bytes of typical config text.
        let mut cx = Convert {
            positions: Positions::with_capacity_and_hasher(text.len() / 16, Default::default()),
            findings: Vec::new(),
            pointer: String::new(),
            scanned: &scanned,
            text,
            lines: &lines,
        };
        let value = match parsed.value {
            Some(v) => {
                cx.positions
                    .insert(FNV_OFFSET, scanned.original(range_of(&v).start));
                cx.convert(&v, FNV_OFFSET)
            }
            None => Value::Null,
        };
        let Convert {
            positions,
            findings,
            ..
        } = cx;
        Ok(Document {
            path: path.to_path_buf(),
            value,
            positions,
            lines,
            text: text.into(),
            findings,
        })
    }

    /// The value at `pointer`, if any.
    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.value.pointer(pointer)
    }

    /// Everything found while parsing, in text order per kind.
    pub fn findings(&self) -> &[Finding] {
        &self.findings
    }

    /// Findings at `pointer` or anywhere below it.
    pub fn findings_within<'a>(&'a self, pointer: &'a str) -> impl Iterator<Item = &'a Finding> {
        self.findings
            .iter()
            .filter(move |f| is_within(&f.pointer, pointer))
    }

    /// A diagnostic about `finding`, positioned at its later occurrence.
    pub fn finding_diagnostic(
        &self,
        finding: &Finding,
        level: Level,
        message: String,
        server: Option<&str>,
        field: Option<&str>,
    ) -> Diagnostic {
        let (line, column) = self.line_column(finding.offset);
        Diagnostic {
            level,
            message,
            file: Some(self.path.clone()),
            line: Some(line),
            column: Some(column),
            server: server.map(str::to_owned),
            field: field.map(str::to_owned),
        }
    }

    /// Diagnostics for the findings that lie outside every entry of the
    /// server maps at `server_maps` (the entries' own are reported, as
    /// errors, when each entry is parsed). A key repeated on the way to a
    /// server map hides a whole set of servers from whoever reads the
    /// first one: an error. Anything else (a repeated settings key, a
    /// lone surrogate in a setting) is a warning; the value read is the
    /// last one, as `JSON.parse` reads it.
    pub(crate) fn file_findings(&self, server_maps: &[&str]) -> Vec<Diagnostic> {
        self.findings
            .iter()
            .filter(|f| {
                !server_maps
                    .iter()
                    .any(|map| f.pointer.len() > map.len() && is_within(&f.pointer, map))
            })
            .map(|f| {
                let on_the_way = f.kind == FindingKind::DuplicateKey
                    && server_maps.iter().any(|map| is_within(map, &f.pointer));
                let level = if on_the_way {
                    Level::Error
                } else {
                    Level::Warning
                };
                self.finding_diagnostic(f, level, f.message.clone(), None, None)
            })
            .collect()
    }

    /// 1-based line and column of the member or element at `pointer`,
    /// falling back to the nearest ancestor that has a position.
    pub fn position(&self, pointer: &str) -> (u32, u32) {
        let mut p = pointer;
        loop {
            if let Some(&offset) = self.positions.get(&fnv_extend(FNV_OFFSET, p.as_bytes())) {
                return self.line_column(offset);
            }
            match p.rfind('/') {
                Some(i) => p = &p[..i],
                None => return (1, 1),
            }
        }
    }

    /// The members of the object at `pointer` (which is `map`) in the
    /// order the file has them. `serde_json::Map` iterates sorted unless
    /// the host enables `preserve_order`, a choice this crate leaves to the
    /// host, so whatever depends on file order (the first of two aliases
    /// wins, entries are listed as written) asks here.
    pub fn in_file_order<'v>(
        &self,
        pointer: &str,
        map: &'v Map<String, Value>,
    ) -> Vec<(&'v String, &'v Value)> {
        let mut members: Vec<(usize, (&String, &Value))> = map
            .iter()
            .map(|member| {
                let member_pointer = child_pointer(pointer, member.0);
                let offset = self
                    .positions
                    .get(&fnv_extend(FNV_OFFSET, member_pointer.as_bytes()))
                    .copied()
                    .unwrap_or(usize::MAX);
                (offset, member)
            })
            .collect();
        // Stable: members without a position keep the map's order, last.
        members.sort_by_key(|(offset, _)| *offset);
        members.into_iter().map(|(_, member)| member).collect()
    }

    fn line_column(&self, offset: usize) -> (u32, u32) {
        self.lines.position(&self.text, offset)
    }

    /// A diagnostic positioned at `pointer` in this document.
    pub(crate) fn diagnostic(
        &self,
        level: Level,
        pointer: &str,
        message: String,
        server: Option<&str>,
        field: Option<&str>,
    ) -> Diagnostic {
        let (line, column) = self.position(pointer);
        Diagnostic {
            level,
            message,
            file: Some(self.path.clone()),
            line: Some(line),
            column: Some(column),
            server: server.map(str::to_owned),
            field: field.map(str::to_owned),
        }
    }
}

/// Whether `pointer` is `ancestor` or lies below it.
fn is_within(pointer: &str, ancestor: &str) -> bool {
    pointer
        .strip_prefix(ancestor)
        .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
}

/// What the scan before parsing found: the text to hand the parser (when
/// escapes had to be rewritten) and how to map its offsets back.
#[derive(Debug, Default)]
struct Scanned {
    /// The text with each surrogate pair escape replaced by its character
    /// and each lone surrogate escape by `\uFFFD`; `None` when unchanged.
    rewritten: Option<String>,
    /// `(offset in rewritten, bytes removed before it)`, ascending: each
    /// pair escape (12 bytes) became one 4-byte character.
    shifts: Vec<(usize, usize)>,
    /// Offsets (in the rewritten text) of lone surrogate escapes, ascending.
    lone: Vec<usize>,
}

impl Scanned {
    /// The offset in the file's text of `offset` in the parsed text.
    fn original(&self, offset: usize) -> usize {
        let i = self.shifts.partition_point(|&(at, _)| at <= offset);
        match i.checked_sub(1).and_then(|i| self.shifts.get(i)) {
            Some(&(_, removed)) => offset + removed,
            None => offset,
        }
    }

    /// Lone surrogate escapes inside the parsed-text range `start..end`.
    fn lone_in(&self, start: usize, end: usize) -> &[usize] {
        let from = self.lone.partition_point(|&o| o < start);
        let to = self.lone.partition_point(|&o| o < end);
        self.lone.get(from..to).unwrap_or(&[])
    }
}

/// One pass over `text` that knows strings (both quote styles) and
/// comments, as the parser does: measures nesting without recursion and
/// finds the `\u` escapes of surrogates, which the parser cannot decode.
/// Returns the offset of the first bracket deeper than [`MAX_JSON_DEPTH`]
/// as the error.
///
/// Where the two could disagree, the scan counts more nesting, never less:
/// it ends a line comment at `\r` as well as `\n`.
fn prescan(text: &str) -> Result<Scanned, usize> {
    let bytes = text.as_bytes();
    let mut scanned = Scanned::default();
    let mut out = String::new();
    let mut copied = 0;
    let mut removed = 0;
    let mut depth = 0usize;
    let mut i = 0;
    while let Some(&b) = bytes.get(i) {
        match b {
            b'"' | b'\'' => {
                i += 1;
                while let Some(&c) = bytes.get(i) {
                    if c == b {
                        break;
                    }
                    if c != b'\\' {
                        i += 1;
                        continue;
                    }
                    let Some(unit) = hex4(bytes, i + 1) else {
                        i += 2;
                        continue;
                    };
                    let (len, replacement) = match unit {
                        0xD800..=0xDBFF => match hex4(bytes, i + 7).filter(|lo| {
                            (0xDC00..=0xDFFF).contains(lo) && bytes.get(i + 6) == Some(&b'\\')
                        }) {
                            Some(lo) => {
                                let code = 0x10000 + ((unit - 0xD800) << 10) + (lo - 0xDC00);
                                (12, char::from_u32(code))
                            }
                            None => (6, None),
                        },
                        0xDC00..=0xDFFF => (6, None),
                        _ => {
                            i += 6;
                            continue;
                        }
                    };
                    out.push_str(text.get(copied..i).unwrap_or(""));
                    match replacement {
                        Some(c) => {
                            out.push(c);
                            removed += len - c.len_utf8();
                            scanned.shifts.push((out.len(), removed));
                        }
                        None => {
                            scanned.lone.push(out.len());
                            out.push_str("\\uFFFD");
                        }
                    }
                    i += len;
                    copied = i;
                }
                i += 1;
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while bytes.get(i).is_some_and(|c| *c != b'\n' && *c != b'\r') {
                    i += 1;
                }
            }
            b'/' if bytes.get(i + 1) == Some(&b'*') => {
                i = text
                    .get(i + 2..)
                    .and_then(|rest| rest.find("*/"))
                    .map_or(bytes.len(), |end| i + 2 + end + 2);
            }
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_JSON_DEPTH {
                    return Err(i);
                }
                i += 1;
            }
            b']' | b'}' => {
                depth = depth.saturating_sub(1);
                i += 1;
            }
            _ => i += 1,
        }
    }
    if copied > 0 {
        out.push_str(text.get(copied..).unwrap_or(""));
        scanned.rewritten = Some(out);
    }
    Ok(scanned)
}

/// The `\uXXXX` escape whose `u` is at `at`: its code unit.
fn hex4(bytes: &[u8], at: usize) -> Option<u32> {
    if bytes.get(at) != Some(&b'u') {
        return None;
    }
    let digits = bytes.get(at + 1..at + 5)?;
    let digits = std::str::from_utf8(digits).ok()?;
    if !digits.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u32::from_str_radix(digits, 16).ok()
}

/// Escapes what a terminal would act on or hide in `text` (control
/// characters, bidirectional and zero-width format characters) as Rust
/// escapes, so a message quoting a hostile name shows it for what it is.
pub fn escape_text(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.chars().any(needs_escape) {
        return text.into();
    }
    let mut out = String::with_capacity(text.len() + 8);
    for c in text.chars() {
        if needs_escape(c) {
            out.extend(c.escape_debug());
        } else {
            out.push(c);
        }
    }
    out.into()
}

/// Control characters (C0, DEL, C1) and the invisible format characters
/// that reorder or hide text: bidirectional embeddings, overrides and
/// isolates, zero-width characters, line and paragraph separators, the
/// byte order mark, soft hyphen, Arabic letter mark, interlinear
/// annotation controls and the tag characters (invisible text that some
/// models still read).
pub(crate) fn needs_escape(c: char) -> bool {
    c.is_control()
        || matches!(
            c,
            '\u{ad}'
                | '\u{61c}'
                | '\u{180e}'
                | '\u{200b}'..='\u{200f}'
                | '\u{2028}'..='\u{202e}'
                | '\u{2060}'..='\u{2064}'
                | '\u{2066}'..='\u{2069}'
                | '\u{feff}'
                | '\u{fff9}'..='\u{fffb}'
                | '\u{e0000}'..='\u{e007f}'
        )
}

/// Escapes one JSON pointer reference token (RFC 6901).
pub(crate) fn escape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1").into()
    } else {
        token.into()
    }
}

/// Joins a pointer and one reference token.
pub(crate) fn child_pointer(parent: &str, token: &str) -> String {
    let token = escape_token(token);
    let mut pointer = String::with_capacity(parent.len() + 1 + token.len());
    pointer.push_str(parent);
    pointer.push('/');
    pointer.push_str(&token);
    pointer
}

fn lowercase_first(s: &str) -> String {
    let mut chars = s.chars();
    match chars.next() {
        Some(c) => c.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

fn range_of(v: &ast::Value<'_>) -> jsonc_parser::common::Range {
    match v {
        ast::Value::StringLit(x) => x.range,
        ast::Value::NumberLit(x) => x.range,
        ast::Value::BooleanLit(x) => x.range,
        ast::Value::Object(x) => x.range,
        ast::Value::Array(x) => x.range,
        ast::Value::NullKeyword(x) => x.range,
    }
}

type Positions = HashMap<u64, usize, std::hash::BuildHasherDefault<PrehashedKey>>;

const FNV_OFFSET: u64 = 0xcbf2_9ce4_8422_2325;

/// Continues an FNV-1a 64 hash over `bytes`.
fn fnv_extend(mut hash: u64, bytes: &[u8]) -> u64 {
    for b in bytes {
        hash ^= u64::from(*b);
        hash = hash.wrapping_mul(0x0100_0000_01b3);
    }
    hash
}

/// The hash of `parent` + `/` + the escaped `token`.
fn child_hash(parent: u64, token: &str) -> u64 {
    fnv_extend(fnv_extend(parent, b"/"), escape_token(token).as_bytes())
}

/// The hash of `parent` + `/` + the decimal `index`, without allocating.
fn index_hash(parent: u64, index: usize) -> u64 {
    let mut digits = [0u8; 20];
    let mut start = digits.len();
    let mut n = index;
    loop {
        start -= 1;
        // `n % 10` is below 10, so the cast cannot truncate.
        digits[start] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    fnv_extend(fnv_extend(parent, b"/"), &digits[start..])
}

/// Keys are already FNV hashes: pass them through.
#[derive(Debug, Default)]
struct PrehashedKey(u64);

impl std::hash::Hasher for PrehashedKey {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        self.0 = fnv_extend(self.0, bytes);
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

/// Conversion state: positions and findings collected on the way, and the
/// pointer of the node being converted (one buffer, truncated on return).
struct Convert<'s> {
    positions: Positions,
    findings: Vec<Finding>,
    pointer: String,
    scanned: &'s Scanned,
    text: &'s str,
    lines: &'s LineIndex,
}

impl Convert<'_> {
    fn at(&self, offset: usize) -> String {
        let (line, column) = self.lines.position(self.text, offset);
        format!("{line}:{column}")
    }

    /// Records each lone surrogate escape in the string at `range`.
    fn lone_surrogates(&mut self, range: jsonc_parser::common::Range) {
        for &offset in self.scanned.lone_in(range.start, range.end) {
            let offset = self.scanned.original(offset);
            let escape = self.text.get(offset..offset + 6).unwrap_or("\\u");
            let message = format!(
                "lone surrogate `{escape}` at {} is not a character; it reads as U+FFFD",
                self.at(offset)
            );
            self.findings.push(Finding {
                pointer: self.pointer.clone(),
                kind: FindingKind::LoneSurrogate,
                message,
                offset,
            });
        }
    }

    // Recursion is bounded: `prescan` refused anything nested deeper than
    // MAX_JSON_DEPTH before the parser ran.
    fn convert(&mut self, v: &ast::Value<'_>, hash: u64) -> Value {
        match v {
            ast::Value::StringLit(s) => {
                if !self.scanned.lone.is_empty() {
                    self.lone_surrogates(s.range);
                }
                Value::String(s.value.to_string())
            }
            ast::Value::NumberLit(n) => parse_number(n.value),
            ast::Value::BooleanLit(b) => Value::Bool(b.value),
            ast::Value::NullKeyword(_) => Value::Null,
            ast::Value::Array(a) => {
                let mut items = Vec::with_capacity(a.elements.len());
                for (i, e) in a.elements.iter().enumerate() {
                    let p = index_hash(hash, i);
                    let start = self.scanned.original(range_of(e).start);
                    self.positions.insert(p, start);
                    let len = self.pointer.len();
                    // Writing into a String cannot fail.
                    let _ = write!(self.pointer, "/{i}");
                    items.push(self.convert(e, p));
                    self.pointer.truncate(len);
                }
                Value::Array(items)
            }
            ast::Value::Object(o) => {
                let mut map = Map::new();
                for prop in &o.properties {
                    let name = prop.name.as_str();
                    let p = child_hash(hash, name);
                    let start = self.scanned.original(prop.range.start);
                    let len = self.pointer.len();
                    self.pointer.push('/');
                    self.pointer.push_str(&escape_token(name));
                    if let ast::ObjectPropName::String(key) = &prop.name
                        && !self.scanned.lone.is_empty()
                    {
                        self.lone_surrogates(key.range);
                    }
                    if map.contains_key(name) {
                        let first = self.positions.get(&p).copied().unwrap_or(start);
                        let message = format!(
                            "key `{}` is repeated: {} is ignored, {} is used",
                            escape_text(name),
                            self.at(first),
                            self.at(start)
                        );
                        self.findings.push(Finding {
                            pointer: self.pointer.clone(),
                            kind: FindingKind::DuplicateKey,
                            message,
                            offset: start,
                        });
                    }
                    self.positions.insert(p, start);
                    let value = self.convert(&prop.value, p);
                    self.pointer.truncate(len);
                    // A repeated key: the last one wins, as in JSON.parse.
                    map.remove(name);
                    map.insert(name.to_owned(), value);
                }
                Value::Object(map)
            }
        }
    }
}

fn parse_number(text: &str) -> Value {
    if let Ok(i) = text.parse::<i64>() {
        return Value::Number(i.into());
    }
    if let Ok(u) = text.parse::<u64>() {
        return Value::Number(u.into());
    }
    text.parse::<f64>()
        .ok()
        .and_then(Number::from_f64)
        .map_or_else(|| Value::String(text.to_owned()), Value::Number)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_name_line_and_column_of_members() {
        let text = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\"}\n  }\n}";
        let doc = Document::parse(text, Path::new("f.json")).unwrap();
        assert_eq!(doc.position("/mcpServers"), (2, 3));
        assert_eq!(doc.position("/mcpServers/a"), (3, 5));
        assert_eq!(doc.position("/mcpServers/a/command"), (3, 11));
        assert_eq!(doc.position("/mcpServers/a/missing"), (3, 5));
    }

    #[test]
    fn syntax_errors_are_positioned() {
        let err = Document::parse("{\n  \"a\": ,\n}", Path::new("f.json")).unwrap_err();
        assert_eq!(err.level, Level::Error);
        assert_eq!(err.line, Some(2));
        assert!(err.message.starts_with("invalid JSON"), "{}", err.message);
    }

    #[test]
    fn pointer_tokens_are_escaped() {
        let doc =
            Document::parse("{\"projects\": {\"/a/b\": {\"x\": 1}}}", Path::new("f")).unwrap();
        let p = child_pointer("/projects", "/a/b");
        assert_eq!(doc.get(&p).and_then(|v| v.get("x")), Some(&Value::from(1)));
        assert_eq!(doc.position(&p), (1, 15));
    }
}
