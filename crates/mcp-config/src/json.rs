//! Positioned JSON: a parsed document as a `serde_json::Value` plus the
//! byte offset of every member and element, so a diagnostic about any value
//! can name its line and column.
//!
//! Files are read leniently (comments and trailing commas are accepted, as
//! hand-edited config files often have them); positions are addressed with
//! RFC 6901 JSON pointers.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use jsonc_parser::ast;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};
use serde_json::{Map, Number, Value};

use crate::types::{Diagnostic, Level};

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
    line_starts: Vec<usize>,
    /// Kept to count columns in characters, not bytes, as editors do.
    text: std::sync::Arc<str>,
}

impl Document {
    /// Parses `text`; on a syntax error returns the positioned diagnostic.
    pub fn parse(text: &str, path: &Path) -> Result<Document, Diagnostic> {
        let parsed = parse_to_ast(text, &CollectOptions::default(), &ParseOptions::default())
            .map_err(|err| Diagnostic {
                level: Level::Error,
                message: format!("invalid JSON: {}", lowercase_first(&err.kind().to_string())),
                file: Some(path.to_path_buf()),
                line: u32::try_from(err.line_display()).ok(),
                column: u32::try_from(err.column_display()).ok(),
                server: None,
                field: None,
            })?;
        // About one member or element per 16 bytes of typical config text.
        let mut positions =
            Positions::with_capacity_and_hasher(text.len() / 16, Default::default());
        let value = match parsed.value {
            Some(v) => {
                positions.insert(FNV_OFFSET, range_of(&v).start);
                convert(&v, FNV_OFFSET, &mut positions)
            }
            None => Value::Null,
        };
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Ok(Document {
            path: path.to_path_buf(),
            value,
            positions,
            line_starts,
            text: text.into(),
        })
    }

    /// The value at `pointer`, if any.
    pub fn get(&self, pointer: &str) -> Option<&Value> {
        self.value.pointer(pointer)
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

    fn line_column(&self, offset: usize) -> (u32, u32) {
        let offset = offset.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= offset).max(1) - 1;
        let start = self.line_starts[line];
        let column = self
            .text
            .get(start..offset)
            .map_or(offset - start, |s| s.chars().count());
        (
            u32::try_from(line + 1).unwrap_or(u32::MAX),
            u32::try_from(column + 1).unwrap_or(u32::MAX),
        )
    }

    /// A diagnostic positioned at `pointer` in this document.
    pub fn diagnostic(
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

/// Escapes one JSON pointer reference token (RFC 6901).
pub fn escape_token(token: &str) -> std::borrow::Cow<'_, str> {
    if token.contains(['~', '/']) {
        token.replace('~', "~0").replace('/', "~1").into()
    } else {
        token.into()
    }
}

/// Joins a pointer and one reference token.
pub fn child_pointer(parent: &str, token: &str) -> String {
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

fn convert(v: &ast::Value<'_>, pointer: u64, positions: &mut Positions) -> Value {
    match v {
        ast::Value::StringLit(s) => Value::String(s.value.to_string()),
        ast::Value::NumberLit(n) => parse_number(n.value),
        ast::Value::BooleanLit(b) => Value::Bool(b.value),
        ast::Value::NullKeyword(_) => Value::Null,
        ast::Value::Array(a) => Value::Array(
            a.elements
                .iter()
                .enumerate()
                .map(|(i, e)| {
                    let p = index_hash(pointer, i);
                    positions.insert(p, range_of(e).start);
                    convert(e, p, positions)
                })
                .collect(),
        ),
        ast::Value::Object(o) => {
            let mut map = Map::new();
            for prop in &o.properties {
                let name = prop.name.as_str();
                let p = child_hash(pointer, name);
                positions.insert(p, prop.range.start);
                let value = convert(&prop.value, p, positions);
                // A repeated key: the last one wins, as in JSON.parse.
                map.remove(name);
                map.insert(name.to_owned(), value);
            }
            Value::Object(map)
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
