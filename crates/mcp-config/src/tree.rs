//! One positioned tree for the three formats other hosts write: JSON (with
//! comments, through the crate's [`crate::json`] reader), TOML (Codex,
//! through `toml_edit`'s spans) and YAML (Goose, built from `yaml-rust2`'s
//! marked events). Each becomes a `serde_json::Value` plus the line and
//! column of every member and element, addressed by JSON pointer, so the
//! translators see one shape whatever the host wrote.
//!
//! Every builder here is bounded: JSON and TOML by their parsers' own depth
//! checks (the crate's prescan, `toml_edit`'s recursion limit), YAML by an
//! explicit stack that refuses nesting past [`MAX_JSON_DEPTH`] and alias
//! expansion past a node budget, so no input can exhaust the stack or
//! memory.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{Map, Number, Value};

use crate::json::{Document, MAX_JSON_DEPTH, child_pointer};
use crate::lines::LineIndex;
use crate::types::{Diagnostic, Level};

/// Most nodes a YAML document may expand to through aliases (a "billion
/// laughs" file is a few lines that expand without bound).
const MAX_YAML_NODES: usize = 1_000_000;

/// A parsed file: its value and where each part of it was written.
#[derive(Debug)]
pub(crate) struct Tree {
    pub(crate) value: Value,
    pub(crate) path: PathBuf,
    positions: Positions,
}

#[derive(Debug)]
enum Positions {
    Json(Box<Document>),
    Table(HashMap<String, (u32, u32)>),
}

impl Tree {
    /// 1-based line and column of `pointer`, or of its nearest ancestor
    /// with a position.
    pub(crate) fn position(&self, pointer: &str) -> (u32, u32) {
        match &self.positions {
            Positions::Json(doc) => doc.position(pointer),
            Positions::Table(map) => {
                let mut p = pointer;
                loop {
                    if let Some(&at) = map.get(p) {
                        return at;
                    }
                    match p.rfind('/') {
                        Some(i) => p = &p[..i],
                        None => return (1, 1),
                    }
                }
            }
        }
    }

    /// A diagnostic positioned at `pointer`.
    pub(crate) fn diagnostic(
        &self,
        level: Level,
        pointer: &str,
        message: String,
        server: Option<&str>,
    ) -> Diagnostic {
        let (line, column) = self.position(pointer);
        at(&self.path, level, line, column, message, server)
    }

    /// Diagnostics for the JSON reader's findings (a repeated key hides
    /// one of its values from whoever reads the file).
    pub(crate) fn findings(&self) -> Vec<Diagnostic> {
        match &self.positions {
            Positions::Json(doc) => doc
                .findings()
                .iter()
                .map(|f| doc.finding_diagnostic(f, Level::Warning, f.message.clone(), None, None))
                .collect(),
            Positions::Table(_) => Vec::new(),
        }
    }
}

pub(crate) fn at(
    path: &Path,
    level: Level,
    line: u32,
    column: u32,
    message: String,
    server: Option<&str>,
) -> Diagnostic {
    Diagnostic {
        level,
        message,
        file: Some(path.to_path_buf()),
        line: Some(line),
        column: Some(column),
        server: server.map(str::to_owned),
        field: None,
    }
}

/// JSON or JSONC (comments and trailing commas, as VS Code and Zed write).
pub(crate) fn parse_json(text: &str, path: &Path) -> Result<Tree, Diagnostic> {
    let mut doc = Document::parse(text, path)?;
    let value = std::mem::take(&mut doc.value);
    Ok(Tree {
        value,
        path: path.to_path_buf(),
        positions: Positions::Json(Box::new(doc)),
    })
}

fn to_u32(n: usize) -> u32 {
    u32::try_from(n).unwrap_or(u32::MAX)
}

/// TOML (Codex's `config.toml`), with the position of every key.
pub(crate) fn parse_toml(text: &str, path: &Path) -> Result<Tree, Diagnostic> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let lines = LineIndex::new(text);
    let doc = toml_edit::Document::parse(text).map_err(|err| {
        let (line, column) = lines.position(text, err.span().map_or(0, |s| s.start));
        let message = err.message().trim().replace('\n', "; ");
        at(
            path,
            Level::Error,
            line,
            column,
            format!("invalid TOML: {message}"),
            None,
        )
    })?;
    let mut positions = HashMap::new();
    positions.insert(String::new(), (1, 1));
    let mut cx = TomlCx {
        text,
        lines: &lines,
        positions: &mut positions,
    };
    let root = doc.as_table();
    let value = cx.table(root, String::new(), 0);
    Ok(Tree {
        value,
        path: path.to_path_buf(),
        positions: Positions::Table(positions),
    })
}

struct TomlCx<'a> {
    text: &'a str,
    lines: &'a LineIndex,
    positions: &'a mut HashMap<String, (u32, u32)>,
}

impl TomlCx<'_> {
    fn mark(&mut self, pointer: &str, span: Option<std::ops::Range<usize>>) {
        if let Some(span) = span {
            self.positions.insert(
                pointer.to_owned(),
                self.lines.position(self.text, span.start),
            );
        }
    }

    // `toml_edit` refuses nesting past its own recursion limit (80) while
    // parsing; `depth` keeps this walk bounded even so.
    fn table(&mut self, table: &toml_edit::Table, pointer: String, depth: usize) -> Value {
        let mut map = Map::new();
        for (key, item) in table.iter() {
            let p = child_pointer(&pointer, key);
            self.mark(&p, table.key(key).and_then(toml_edit::Key::span));
            map.insert(key.to_owned(), self.item(item, p, depth + 1));
        }
        Value::Object(map)
    }

    fn item(&mut self, item: &toml_edit::Item, pointer: String, depth: usize) -> Value {
        if depth > MAX_JSON_DEPTH {
            return Value::Null;
        }
        match item {
            toml_edit::Item::None => Value::Null,
            toml_edit::Item::Value(value) => self.value(value, pointer, depth),
            toml_edit::Item::Table(table) => self.table(table, pointer, depth),
            toml_edit::Item::ArrayOfTables(tables) => Value::Array(
                tables
                    .iter()
                    .enumerate()
                    .map(|(i, t)| {
                        let p = child_pointer(&pointer, &i.to_string());
                        self.mark(&p, t.span());
                        self.table(t, p, depth + 1)
                    })
                    .collect(),
            ),
        }
    }

    fn value(&mut self, value: &toml_edit::Value, pointer: String, depth: usize) -> Value {
        if depth > MAX_JSON_DEPTH {
            return Value::Null;
        }
        match value {
            toml_edit::Value::String(s) => Value::String(s.value().clone()),
            toml_edit::Value::Integer(i) => Value::from(*i.value()),
            toml_edit::Value::Float(f) => {
                Number::from_f64(*f.value()).map_or(Value::Null, Value::Number)
            }
            toml_edit::Value::Boolean(b) => Value::Bool(*b.value()),
            toml_edit::Value::Datetime(d) => Value::String(d.value().to_string()),
            toml_edit::Value::Array(items) => Value::Array(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        let p = child_pointer(&pointer, &i.to_string());
                        self.mark(&p, v.span());
                        self.value(v, p, depth + 1)
                    })
                    .collect(),
            ),
            toml_edit::Value::InlineTable(table) => {
                let mut map = Map::new();
                for (key, v) in table.iter() {
                    let p = child_pointer(&pointer, key);
                    self.mark(&p, table.key(key).and_then(toml_edit::Key::span));
                    map.insert(key.to_owned(), self.value(v, p, depth + 1));
                }
                Value::Object(map)
            }
        }
    }
}

/// YAML (Goose's `config.yaml`): the first document, with the position of
/// every key and element.
pub(crate) fn parse_yaml(text: &str, path: &Path) -> Result<Tree, Diagnostic> {
    use yaml_rust2::parser::{Event, Parser};

    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    // The parser's mark of an error can lie past the text (a line after
    // the last, a column past the line's end): the end of the text then.
    // One error per file, so counting the lines here stays linear.
    let fail = |line: usize, col: usize, message: String| {
        let lines: Vec<&str> = text.split('\n').collect();
        let (line, col) = match lines.get(line.max(1) - 1) {
            Some(l) => (line.max(1), col.min(l.chars().count())),
            None => (lines.len(), lines.last().map_or(0, |l| l.chars().count())),
        };
        at(
            path,
            Level::Error,
            to_u32(line),
            to_u32(col + 1),
            format!("invalid YAML: {message}"),
            None,
        )
    };
    let mut parser = Parser::new_from_str(text);
    let mut positions = HashMap::new();
    let mut stack: Vec<Frame> = Vec::new();
    let mut anchors: HashMap<usize, (Value, usize)> = HashMap::new();
    let mut nodes = 0usize;
    let mut root: Option<Value> = None;
    loop {
        let (event, mark) = parser.next_token().map_err(|err| {
            let m = err.marker();
            fail(m.line(), m.col(), err.info().to_owned())
        })?;
        let here = (to_u32(mark.line().max(1)), to_u32(mark.col() + 1));
        // A completed node: (value, anchor, nodes it holds, nodes it adds
        // to the document: its children were counted as they completed).
        let done: Option<(Value, usize, usize, usize)> = match event {
            Event::StreamEnd | Event::DocumentEnd => break,
            Event::Nothing | Event::StreamStart | Event::DocumentStart => None,
            Event::Alias(id) => {
                let Some((value, count)) = anchors.get(&id) else {
                    return Err(fail(mark.line(), mark.col(), "unknown alias".into()));
                };
                Some((value.clone(), 0, *count, *count))
            }
            Event::Scalar(text, style, anchor, tag) => {
                let value = yaml_scalar(text, style, tag.as_ref());
                Some((value, anchor, 1, 1))
            }
            Event::SequenceStart(anchor, _) | Event::MappingStart(anchor, _) => {
                if stack.len() >= MAX_JSON_DEPTH {
                    return Err(fail(
                        mark.line(),
                        mark.col(),
                        format!(
                            "mappings and sequences are nested deeper than {MAX_JSON_DEPTH} levels"
                        ),
                    ));
                }
                let pointer = stack.last().map_or_else(String::new, Frame::child_pointer);
                positions.entry(pointer.clone()).or_insert(here);
                let container = if matches!(event, Event::MappingStart(..)) {
                    Container::Map(Map::new(), None)
                } else {
                    Container::Seq(Vec::new())
                };
                stack.push(Frame {
                    pointer,
                    container,
                    anchor,
                    nodes: 1,
                });
                None
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let Some(frame) = stack.pop() else {
                    return Err(fail(mark.line(), mark.col(), "unbalanced document".into()));
                };
                let value = match frame.container {
                    Container::Map(map, _) => Value::Object(map),
                    Container::Seq(items) => Value::Array(items),
                };
                Some((value, frame.anchor, frame.nodes, 1))
            }
        };
        let Some((value, anchor, count, added)) = done else {
            continue;
        };
        nodes = nodes.saturating_add(added);
        if nodes > MAX_YAML_NODES {
            return Err(fail(
                mark.line(),
                mark.col(),
                format!("the document expands to more than {MAX_YAML_NODES} nodes"),
            ));
        }
        if anchor != 0 {
            anchors.insert(anchor, (value.clone(), count));
        }
        match stack.last_mut() {
            None => {
                root = Some(value);
                // Only the first document counts.
                break;
            }
            Some(frame) => {
                frame.nodes = frame.nodes.saturating_add(count);
                match &mut frame.container {
                    Container::Seq(items) => {
                        let p = child_pointer(&frame.pointer, &items.len().to_string());
                        positions.entry(p).or_insert(here);
                        items.push(value);
                    }
                    Container::Map(map, pending) => match pending.take() {
                        None => {
                            let key = match value {
                                Value::String(s) => s,
                                Value::Number(n) => n.to_string(),
                                Value::Bool(b) => b.to_string(),
                                Value::Null => "null".to_owned(),
                                _ => {
                                    return Err(fail(
                                        mark.line(),
                                        mark.col(),
                                        "a mapping key must be a scalar".into(),
                                    ));
                                }
                            };
                            positions.insert(child_pointer(&frame.pointer, &key), here);
                            *pending = Some(key);
                        }
                        Some(key) => {
                            map.insert(key, value);
                        }
                    },
                }
            }
        }
    }
    Ok(Tree {
        value: root.unwrap_or(Value::Null),
        path: path.to_path_buf(),
        positions: Positions::Table(positions),
    })
}

enum Container {
    /// A mapping and the key waiting for its value.
    Map(Map<String, Value>, Option<String>),
    Seq(Vec<Value>),
}

struct Frame {
    pointer: String,
    container: Container,
    anchor: usize,
    nodes: usize,
}

impl Frame {
    /// The pointer of the node that comes next inside this frame.
    fn child_pointer(&self) -> String {
        match &self.container {
            Container::Map(_, Some(key)) => child_pointer(&self.pointer, key),
            Container::Map(_, None) => self.pointer.clone(),
            Container::Seq(items) => child_pointer(&self.pointer, &items.len().to_string()),
        }
    }
}

/// A YAML scalar as JSON: quoted and block scalars (and `!!str`) are
/// strings; plain ones follow YAML 1.2's core schema (null, booleans,
/// integers, floats), as Goose's own reader resolves them.
fn yaml_scalar(
    text: String,
    style: yaml_rust2::scanner::TScalarStyle,
    tag: Option<&yaml_rust2::parser::Tag>,
) -> Value {
    use yaml_rust2::Yaml;
    use yaml_rust2::scanner::TScalarStyle;

    if style != TScalarStyle::Plain || tag.is_some_and(|t| t.suffix == "str") {
        return Value::String(text);
    }
    match Yaml::from_str(&text) {
        Yaml::Null => Value::Null,
        Yaml::Boolean(b) => Value::Bool(b),
        Yaml::Integer(i) => Value::from(i),
        Yaml::Real(r) => r
            .parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map_or(Value::String(text), Value::Number),
        _ => Value::String(text),
    }
}
