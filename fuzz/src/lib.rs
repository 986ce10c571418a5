//! Builds deep and hostile JSON *structurally* from fuzz input, for the
//! `*_hostile` targets.
//!
//! Raw bytes rarely nest deep or spell a `$ref` cycle, so a target reads
//! its input as a small program instead: each byte picks what comes next
//! (a scalar, a hostile string, a container, a chain thousands of levels
//! deep, a `$ref` structure, a duplicate key), and a target-given *frame*
//! puts the value where it matters (a server entry, a `tools/list`
//! answer, a tool's `inputSchema`). The program becomes a flat list of
//! [`Event`]s, and every sink over them ([`Doc::to_text`], [`Doc::to_value`],
//! [`drop_value`]) works with an explicit stack: only the code under test
//! may recurse, so a stack overflow is always its finding, never the
//! harness's.
//!
//! The opcodes are ASCII so seeds can be written by hand (see
//! `fuzz/README.md`): `n` `t` `f` scalars, `0`–`9` numbers, `s` a hostile
//! string from [`HOSTILE_STRINGS`], `S` a string of the next bytes, `[` /
//! `{` containers, `D` a deep chain, `R` a `$ref` structure, `K` an object
//! with one key twice, `X` a string that is not valid JSON; any other byte
//! maps onto one of these.

use serde_json::{Map, Value};

pub mod grammars;
pub mod import_input;

/// Deepest chain one `D` opcode builds (two bytes of depth).
pub const MAX_CHAIN: usize = 65_535;
/// The generated text stops growing past this many bytes.
pub const MAX_TEXT: usize = 4 * 1024 * 1024;
/// Nesting of the generator's own calls (chains are iterative).
const MAX_NEST: usize = 24;

/// One step of a JSON document.
#[derive(Debug, Clone, PartialEq)]
pub enum Event {
    StartArray,
    StartObject,
    /// The end of the innermost open array or object.
    End,
    Key(Text),
    Str(Text),
    /// A number, as written.
    Number(&'static str),
    Bool(bool),
    Null,
}

/// A string and how it is spelled in the text.
#[derive(Debug, Clone, PartialEq)]
pub enum Text {
    /// Literal UTF-8 where JSON allows it.
    Plain(String),
    /// Every non-ASCII character as `\u` escapes, astral ones as surrogate
    /// pairs: what Python's `json.dump` writes.
    Escaped(String),
    /// Bytes written between the quotes as they are: raw control
    /// characters, invalid UTF-8, a lone surrogate escape. Not valid JSON.
    Raw(Vec<u8>),
}

impl Text {
    fn value(&self) -> String {
        match self {
            Text::Plain(s) | Text::Escaped(s) => s.clone(),
            Text::Raw(bytes) => String::from_utf8_lossy(bytes).into_owned(),
        }
    }
}

/// Strings that have broken parsers, terminals and name checks.
pub const HOSTILE_STRINGS: &[&str] = &[
    "",
    "a",
    "😀",
    "\u{feff}bom",
    "\u{1b}[31mred\u{1b}[0m",
    "line\nbreak",
    "tab\there",
    "nul\u{0}byte",
    "\u{202e}evil\u{202c}",
    "\u{9b}c1 csi",
    "my server",
    "my.server",
    "a=b",
    "PYTHONPATH=/srv/hook:",
    "${TOKEN}",
    "${UNSET:-default}",
    "https://user:pass@host/x?token=${TOKEN}",
    "#/$defs/A",
    "#",
    "../outside",
    "/bin/sh",
    "\u{10ffff}",
    "\u{fffd}",
    "mcp__a__b",
    "__proto__",
    "CON",
];

/// Numbers, including those a parser may refuse or round.
const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "1.5",
    "1e3",
    "18446744073709551616",
    "-9223372036854775809",
    "0.000000000000000000000000000001",
    "123456789012345678901234567890.5",
];

/// Numbers that are JSON by the grammar but out of `f64`'s range.
const HUGE_NUMBERS: &[&str] = &["1e999", "-1e999"];

/// What a target puts around the generated values: JSON text where each
/// `$` is a hole, and the keys its programs draw from.
#[derive(Debug, Clone, Copy)]
pub struct Grammar {
    pub frames: &'static [&'static str],
    pub keys: &'static [&'static str],
    /// The chains a `D` opcode can build, each a frame with one hole
    /// (`{"items": $}`): the chain repeats it.
    pub chains: &'static [&'static str],
}

/// A generated document.
#[derive(Debug, Clone, Default)]
pub struct Doc {
    pub events: Vec<Event>,
    /// Starts with a UTF-8 byte order mark.
    pub bom: bool,
    /// The text is cut at this byte (not valid JSON then).
    pub cut: Option<usize>,
    /// Bytes after the document (not valid JSON then).
    pub trailing: Vec<u8>,
    /// No opcode wrote something that is not JSON (or not representable as
    /// `serde_json` values: a number out of range).
    pub valid: bool,
    /// Deepest nesting of the document.
    pub depth: usize,
    /// Which frame was used.
    pub frame: usize,
}

/// Reads the fuzz input.
#[derive(Debug)]
pub struct Input<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, at: 0 }
    }

    pub fn is_empty(&self) -> bool {
        self.at >= self.data.len()
    }

    /// The next byte, 0 once the input is used up.
    pub fn byte(&mut self) -> u8 {
        let byte = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        byte
    }

    fn u16(&mut self) -> usize {
        (usize::from(self.byte()) << 8) | usize::from(self.byte())
    }

    fn bytes(&mut self, len: usize) -> &'a [u8] {
        let start = self.at.min(self.data.len());
        let end = (start + len).min(self.data.len());
        self.at = start + len;
        &self.data[start..end]
    }
}

/// Generates one document: a header byte (bit 0: BOM, bit 1: cut short,
/// bit 2: trailing bytes), a frame byte, then one value program per hole.
pub fn document(input: &mut Input<'_>, grammar: &Grammar) -> Doc {
    let header = input.byte();
    let frame = usize::from(input.byte()) % grammar.frames.len();
    let mut generator = Gen {
        input,
        grammar,
        events: Vec::new(),
        valid: true,
    };
    generator.frame(grammar.frames[frame]);
    let mut doc = Doc {
        bom: header & 1 != 0,
        frame,
        ..Doc::default()
    };
    if header & 2 != 0 {
        let cut = generator.input.u16();
        doc.cut = Some(cut);
        generator.valid = false;
    }
    if header & 4 != 0 {
        let len = usize::from(generator.input.byte() % 8) + 1;
        doc.trailing = generator.input.bytes(len).to_vec();
        if !doc.trailing.iter().all(u8::is_ascii_whitespace) {
            generator.valid = false;
        }
    }
    doc.valid = generator.valid;
    doc.events = generator.events;
    doc.depth = depth_of(&doc.events);
    doc
}

struct Gen<'i, 'a> {
    input: &'i mut Input<'a>,
    grammar: &'i Grammar,
    events: Vec<Event>,
    valid: bool,
}

impl Gen<'_, '_> {
    /// Emits a frame's events; each `$` is a generated value.
    fn frame(&mut self, frame: &str) {
        for token in tokens(frame) {
            match token {
                Token::Hole => self.value(0),
                Token::Event(event) => self.events.push(event),
            }
        }
    }

    fn too_big(&self) -> bool {
        // Each event stands for a few bytes of text at least.
        self.events.len() * 2 > MAX_TEXT
    }

    fn value(&mut self, nest: usize) {
        if nest >= MAX_NEST || self.too_big() {
            self.events.push(Event::Null);
            return;
        }
        let op = self.input.byte();
        let op = match op {
            b'n'
            | b't'
            | b'f'
            | b'0'..=b'9'
            | b's'
            | b'S'
            | b'['
            | b'{'
            | b'D'
            | b'R'
            | b'K'
            | b'X' => op,
            other => b"ntf0sS[{DRKX"[usize::from(other) % 12],
        };
        match op {
            b'n' => self.events.push(Event::Null),
            b't' => self.events.push(Event::Bool(true)),
            b'f' => self.events.push(Event::Bool(false)),
            b'0'..=b'9' => {
                let index = usize::from(self.input.byte());
                if op == b'9' && index % 4 == 0 {
                    self.valid = false;
                    self.events
                        .push(Event::Number(HUGE_NUMBERS[index / 4 % HUGE_NUMBERS.len()]));
                } else {
                    self.events
                        .push(Event::Number(NUMBERS[index % NUMBERS.len()]));
                }
            }
            b's' => {
                let text = self.hostile_text();
                self.events.push(Event::Str(text));
            }
            b'S' => {
                let text = self.input_text();
                self.events.push(Event::Str(text));
            }
            b'X' => {
                self.valid = false;
                let raw = self.raw_text();
                self.events.push(Event::Str(raw));
            }
            b'[' => {
                let count = usize::from(self.input.byte() % 6);
                self.events.push(Event::StartArray);
                for _ in 0..count {
                    self.value(nest + 1);
                }
                self.events.push(Event::End);
            }
            b'{' => {
                let count = usize::from(self.input.byte() % 6);
                self.events.push(Event::StartObject);
                for _ in 0..count {
                    let key = self.key();
                    self.events.push(Event::Key(key));
                    self.value(nest + 1);
                }
                self.events.push(Event::End);
            }
            b'K' => {
                let key = self.key();
                self.events.push(Event::StartObject);
                self.events.push(Event::Key(key.clone()));
                self.value(nest + 1);
                self.events.push(Event::Key(key));
                self.value(nest + 1);
                self.events.push(Event::End);
            }
            b'D' => self.chain(nest),
            b'R' => self.refs(nest),
            _ => self.events.push(Event::Null),
        }
    }

    /// `D kind hi lo leaf`: one of the grammar's chains (or a bare array
    /// or object chain) repeated `hi*256+lo` times around a leaf.
    fn chain(&mut self, nest: usize) {
        let kind = usize::from(self.input.byte());
        let depth = self.input.u16().min(MAX_CHAIN);
        let chains = self.grammar.chains;
        let frame = match kind % (chains.len() + 2) {
            0 => "[$]",
            1 => "{\"a\": $}",
            n => chains[n - 2],
        };
        let tokens = tokens(frame);
        let hole = tokens
            .iter()
            .position(|t| matches!(t, Token::Hole))
            .unwrap_or(tokens.len());
        let (before, after) = tokens.split_at(hole);
        let after = after.get(1..).unwrap_or_default();
        let mut levels = 0;
        for _ in 0..depth {
            if self.too_big() {
                break;
            }
            levels += 1;
            self.events
                .extend(before.iter().filter_map(Token::event).cloned());
        }
        self.value(nest + 1);
        for _ in 0..levels {
            self.events
                .extend(after.iter().filter_map(Token::event).cloned());
        }
    }

    /// `R kind count`: `$defs` whose `$ref`s form a chain, a cycle, a
    /// self-reference, a reference to the root, or a dangling one.
    fn refs(&mut self, nest: usize) {
        let kind = self.input.byte() % 5;
        let count = usize::from(self.input.byte() % 64) + 1;
        let plain = |s: &str| Text::Plain(s.to_owned());
        self.events.push(Event::StartObject);
        self.events.push(Event::Key(plain("$ref")));
        self.events.push(Event::Str(plain(match kind {
            3 => "#",
            4 => "#/$defs/missing",
            _ => "#/$defs/A0",
        })));
        self.events.push(Event::Key(plain("$defs")));
        self.events.push(Event::StartObject);
        for i in 0..count {
            self.events.push(Event::Key(Text::Plain(format!("A{i}"))));
            let target = match kind {
                0 => format!("#/$defs/A{}", (i + 1) % count),
                1 => format!("#/$defs/A{i}"),
                2 if i + 1 == count => {
                    self.value(nest + 1);
                    continue;
                }
                2 => format!("#/$defs/A{}", i + 1),
                _ => "#".to_owned(),
            };
            self.events.push(Event::StartObject);
            self.events.push(Event::Key(plain("$ref")));
            self.events.push(Event::Str(Text::Plain(target)));
            self.events.push(Event::End);
        }
        self.events.push(Event::End);
        self.events.push(Event::End);
    }

    fn key(&mut self) -> Text {
        let pick = self.input.byte();
        let keys = self.grammar.keys;
        match usize::from(pick) % (keys.len() + 2) {
            n if n < keys.len() => Text::Plain(keys[n].to_owned()),
            n if n == keys.len() => self.hostile_text(),
            _ => self.input_text(),
        }
    }

    fn hostile_text(&mut self) -> Text {
        let pick = usize::from(self.input.byte());
        let s = HOSTILE_STRINGS[(pick & 0x7f) % HOSTILE_STRINGS.len()].to_owned();
        if pick & 0x80 != 0 {
            Text::Escaped(s)
        } else {
            Text::Plain(s)
        }
    }

    fn input_text(&mut self) -> Text {
        let len = usize::from(self.input.byte() % 32);
        let s = String::from_utf8_lossy(self.input.bytes(len)).into_owned();
        Text::Escaped(s)
    }

    fn raw_text(&mut self) -> Text {
        const RAW: &[&[u8]] = &[
            b"\\ud800",
            b"\\udc00\\ud83d",
            b"\xff\xfe",
            b"\xc0\x80",
            b"a\nb",
            b"\x1b[2J",
            b"\\x41",
            b"\\u12",
        ];
        let pick = usize::from(self.input.byte());
        Text::Raw(RAW[pick % RAW.len()].to_vec())
    }
}

#[derive(Debug, Clone)]
enum Token {
    Hole,
    Event(Event),
}

impl Token {
    fn event(&self) -> Option<&Event> {
        match self {
            Token::Event(e) => Some(e),
            Token::Hole => None,
        }
    }
}

/// The events of a frame: this crate's own small, well-formed JSON with
/// `$` holes (strings without escapes, numbers as `NUMBERS` spells them).
fn tokens(frame: &str) -> Vec<Token> {
    let bytes = frame.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'{' => out.push(Token::Event(Event::StartObject)),
            b'[' => out.push(Token::Event(Event::StartArray)),
            b'}' | b']' => out.push(Token::Event(Event::End)),
            b'$' => out.push(Token::Hole),
            b'"' => {
                let end = frame[i + 1..].find('"').map_or(bytes.len(), |e| i + 1 + e);
                let text = Text::Plain(frame[i + 1..end].to_owned());
                i = end;
                let next = bytes[i + 1..]
                    .iter()
                    .find(|b| !b.is_ascii_whitespace())
                    .copied();
                out.push(Token::Event(if next == Some(b':') {
                    Event::Key(text)
                } else {
                    Event::Str(text)
                }));
            }
            b't' if frame[i..].starts_with("true") => {
                out.push(Token::Event(Event::Bool(true)));
                i += 3;
            }
            b'f' if frame[i..].starts_with("false") => {
                out.push(Token::Event(Event::Bool(false)));
                i += 4;
            }
            b'n' if frame[i..].starts_with("null") => {
                out.push(Token::Event(Event::Null));
                i += 3;
            }
            b'-' | b'0'..=b'9' => {
                let end = frame[i..]
                    .find(|c: char| !(c.is_ascii_digit() || c == '-' || c == '.'))
                    .map_or(bytes.len(), |e| i + e);
                let number = NUMBERS
                    .iter()
                    .find(|n| **n == &frame[i..end])
                    .copied()
                    .unwrap_or("1");
                out.push(Token::Event(Event::Number(number)));
                i = end - 1;
            }
            _ => {}
        }
        i += 1;
    }
    out
}

fn depth_of(events: &[Event]) -> usize {
    let mut depth = 0usize;
    let mut deepest = 0;
    for event in events {
        match event {
            Event::StartArray | Event::StartObject => {
                depth += 1;
                deepest = deepest.max(depth);
            }
            Event::End => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    deepest
}

impl Doc {
    /// The document as JSON text (with its BOM, cut and trailing bytes).
    pub fn to_text(&self) -> Vec<u8> {
        let mut out = Vec::new();
        if self.bom {
            out.extend_from_slice("\u{feff}".as_bytes());
        }
        // Per open container: is it an object, and has it a member yet.
        let mut open: Vec<(bool, bool)> = Vec::new();
        let mut after_key = false;
        for event in &self.events {
            if out.len() > MAX_TEXT {
                break;
            }
            let value_start = !matches!(event, Event::End | Event::Key(_));
            if (value_start && !after_key) || matches!(event, Event::Key(_)) {
                if let Some((_, started)) = open.last_mut() {
                    if *started {
                        out.push(b',');
                    }
                    *started = true;
                }
            }
            after_key = false;
            match event {
                Event::StartArray => {
                    out.push(b'[');
                    open.push((false, false));
                }
                Event::StartObject => {
                    out.push(b'{');
                    open.push((true, false));
                }
                Event::End => match open.pop() {
                    Some((true, _)) => out.push(b'}'),
                    Some((false, _)) => out.push(b']'),
                    None => {}
                },
                Event::Key(text) => {
                    write_text(&mut out, text);
                    out.push(b':');
                    after_key = true;
                }
                Event::Str(text) => write_text(&mut out, text),
                Event::Number(n) => out.extend_from_slice(n.as_bytes()),
                Event::Bool(true) => out.extend_from_slice(b"true"),
                Event::Bool(false) => out.extend_from_slice(b"false"),
                Event::Null => out.extend_from_slice(b"null"),
            }
        }
        if let Some(cut) = self.cut {
            out.truncate(cut);
        }
        out.extend_from_slice(&self.trailing);
        out
    }

    /// The document as a `serde_json` value, built without recursion
    /// (duplicate keys: the last wins, as `serde_json` parses them). Drop
    /// it with [`drop_value`].
    pub fn to_value(&self) -> Value {
        enum Container {
            Array(Vec<Value>),
            Object(Map<String, Value>),
        }
        // Each open container with the key it sits under in its parent.
        let mut stack: Vec<(Container, Option<String>)> = Vec::new();
        let mut root = None;
        let mut pending_key: Option<String> = None;
        let place = |stack: &mut Vec<(Container, Option<String>)>,
                     root: &mut Option<Value>,
                     key: Option<String>,
                     value: Value| match stack.last_mut() {
            Some((Container::Array(items), _)) => items.push(value),
            Some((Container::Object(map), _)) => {
                // A repeated key replaces a value that may be deep.
                if let Some(replaced) = map.insert(key.unwrap_or_default(), value) {
                    drop_value(replaced);
                }
            }
            None => {
                if let Some(replaced) = root.replace(value) {
                    drop_value(replaced);
                }
            }
        };
        let close = |container: Container| match container {
            Container::Array(items) => Value::Array(items),
            Container::Object(map) => Value::Object(map),
        };
        for event in &self.events {
            let value = match event {
                Event::StartArray => {
                    stack.push((Container::Array(Vec::new()), pending_key.take()));
                    continue;
                }
                Event::StartObject => {
                    stack.push((Container::Object(Map::new()), pending_key.take()));
                    continue;
                }
                Event::Key(text) => {
                    pending_key = Some(text.value());
                    continue;
                }
                Event::End => {
                    if let Some((container, key)) = stack.pop() {
                        place(&mut stack, &mut root, key, close(container));
                    }
                    continue;
                }
                Event::Str(text) => Value::String(text.value()),
                Event::Number(n) => n
                    .parse::<serde_json::Number>()
                    .map(Value::Number)
                    .unwrap_or(Value::Null),
                Event::Bool(b) => Value::Bool(*b),
                Event::Null => Value::Null,
            };
            let key = pending_key.take();
            place(&mut stack, &mut root, key, value);
        }
        while let Some((container, key)) = stack.pop() {
            place(&mut stack, &mut root, key, close(container));
        }
        root.unwrap_or(Value::Null)
    }
}

fn write_text(out: &mut Vec<u8>, text: &Text) {
    match text {
        Text::Plain(s) => {
            let quoted = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".to_owned());
            out.extend_from_slice(quoted.as_bytes());
        }
        Text::Escaped(s) => {
            out.push(b'"');
            for c in s.chars() {
                match c {
                    '"' => out.extend_from_slice(b"\\\""),
                    '\\' => out.extend_from_slice(b"\\\\"),
                    ' '..='~' => out.push(c as u8),
                    _ => {
                        let mut units = [0u16; 2];
                        for unit in c.encode_utf16(&mut units) {
                            out.extend_from_slice(format!("\\u{unit:04x}").as_bytes());
                        }
                    }
                }
            }
            out.push(b'"');
        }
        Text::Raw(bytes) => {
            out.push(b'"');
            out.extend_from_slice(bytes);
            out.push(b'"');
        }
    }
}

/// Drops a value of any depth without recursion: `serde_json`'s own drop
/// recurses, and a harness must not overflow where the code under test
/// did not.
pub fn drop_value(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const GRAMMAR: Grammar = Grammar {
        frames: &[
            "$",
            "{\"result\": {\"tools\": [{\"name\": \"t\", \"inputSchema\": $}]}}",
        ],
        keys: &["type", "items"],
        chains: &["{\"items\": $}"],
    };

    fn doc(program: &[u8]) -> Doc {
        document(&mut Input::new(program), &GRAMMAR)
    }

    fn text(program: &[u8]) -> String {
        String::from_utf8_lossy(&doc(program).to_text()).into_owned()
    }

    #[test]
    fn programs_spell_the_json_they_name() {
        let check = |program: &[u8], expect: &str| {
            assert_eq!(
                text(program),
                expect,
                "{:?}",
                String::from_utf8_lossy(program)
            );
        };
        check(b"\0\0n", "null");
        check(b"\0\0[\x02ntf", "[null,true]");
        check(b"\0\0{\x02\0n\x01t", "{\"type\":null,\"items\":true}");
        check(b"\0\0K\0nt", "{\"type\":null,\"type\":true}");
        check(b"\0\0D\0\0\x03n", "[[[null]]]");
        check(b"\0\0D\x02\0\x02n", "{\"items\":{\"items\":null}}");
        check(b"\0\0s\x82", "\"\\ud83d\\ude00\"");
        check(b"\x01\0n", "\u{feff}null");
        check(
            b"\0\x01n",
            "{\"result\":{\"tools\":[{\"name\":\"t\",\"inputSchema\":null}]}}",
        );
        check(
            b"\0\0R\0\x01",
            "{\"$ref\":\"#/$defs/A0\",\"$defs\":{\"A0\":{\"$ref\":\"#/$defs/A1\"},\"A1\":{\"$ref\":\"#/$defs/A0\"}}}",
        );
    }

    #[test]
    fn text_and_value_agree_and_deep_chains_need_no_stack() {
        let check = |program: &[u8]| {
            let doc = doc(program);
            let value = doc.to_value();
            if doc.depth < 100 {
                let parsed: Value = serde_json::from_slice(&doc.to_text()).expect("valid JSON");
                assert_eq!(parsed, value, "{:?}", String::from_utf8_lossy(program));
            }
            drop_value(value);
            doc
        };
        check(b"\0\x01{\x03\0s\x02\x01[\x02\x31\x05K\x01s\x04n");
        check(b"\0\0R\x02\x05{\x01\0t");
        let deep = check(b"\0\0D\0\xff\xffn");
        assert_eq!(deep.depth, MAX_CHAIN);
        assert!(deep.valid);
        let deep = check(b"\0\0D\x02\x27\x10n");
        assert_eq!(deep.depth, 10_000);
    }

    /// The committed seeds do what their names say.
    #[test]
    fn the_seeds_build_what_they_are_named_for() {
        use crate::grammars::{ARGUMENTS, CONFIG, MESSAGE, SCHEMA};
        let seeds = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds");
        let read = |target: &str, name: &str| {
            std::fs::read(seeds.join(target).join(name))
                .unwrap_or_else(|e| panic!("seed {target}/{name}: {e}"))
        };
        // Each target's documents, as its fuzz_target reads them.
        let config = |data: &[u8]| {
            let mut input = Input::new(data);
            let mut docs = Vec::new();
            while !input.is_empty() && docs.len() < 8 {
                let _slot = input.byte();
                docs.push(document(&mut input, &CONFIG));
            }
            docs
        };
        let message = |data: &[u8]| vec![document(&mut Input::new(data), &MESSAGE)];
        let schema = |data: &[u8]| {
            let mut input = Input::new(data);
            let schema = document(&mut input, &SCHEMA);
            let _name = input.byte();
            vec![schema, document(&mut input, &ARGUMENTS)]
        };
        type Docs = fn(&[u8]) -> Vec<Doc>;
        let targets: [(&str, Docs); 3] = [
            ("config_hostile", config),
            ("message_hostile", message),
            ("schema_hostile", schema),
        ];
        for (target, docs) in targets {
            let dir = seeds.join(target);
            let mut names: Vec<String> = std::fs::read_dir(&dir)
                .expect("seed folder")
                .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
                .collect();
            names.sort();
            assert!(names.len() >= 10, "{target}: {names:?}");
            for name in names {
                let docs = docs(&read(target, &name));
                assert!(!docs.is_empty(), "{target}/{name} builds nothing");
                let first = &docs[0];
                let text = String::from_utf8_lossy(&first.to_text()).into_owned();
                let check = |ok: bool, what: &str| {
                    assert!(
                        ok,
                        "{target}/{name}: {what}\n{}",
                        &text[..text.len().min(300)]
                    );
                };
                if name.contains("10000") {
                    check(first.depth >= 10_000, "is not 10,000 deep");
                }
                if name.contains("65535") {
                    check(first.depth >= 65_535, "is not 65,535 deep");
                }
                if name.starts_with("deep") {
                    check(first.depth >= 2_000, "is not deep");
                }
                if name.contains("surrogate-pair") {
                    check(text.contains("\\ud83d\\ude00"), "spells no surrogate pair");
                    check(first.valid, "is not valid JSON");
                }
                if name.contains("bom") {
                    check(text.contains('\u{feff}'), "has no BOM");
                }
                if name.contains("ref-cycle") {
                    check(
                        text.contains("\"$ref\":\"#/$defs/A0\"") || text.contains("#/$defs/B"),
                        "has no $ref cycle",
                    );
                }
                if name.contains("duplicate") {
                    let value = first.to_value();
                    let compact = value.to_string();
                    drop_value(value);
                    check(compact.len() < text.len(), "repeats no key");
                }
                if name.contains("lone-surrogate") || name.contains("cut") {
                    check(!first.valid, "should not be valid JSON");
                }
                for doc in docs {
                    drop_value(doc.to_value());
                }
            }
        }
    }
}
