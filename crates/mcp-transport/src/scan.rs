//! A structural scan of JSON bytes that never recurses and never fails.
//!
//! The codec parses with `serde_json`; this scan answers the two questions
//! a parser cannot answer about a message it refused:
//!
//! - how deep does it nest ([`depth`]), so a message deeper than serde's
//!   default limit is parsed again without it, and one past
//!   [`crate::codec::MAX_DEPTH`] is refused without building anything;
//! - which requests does it answer ([`AnswerScan`]), so a message that
//!   cannot be decoded (too deep, not JSON, invalid JSON-RPC, too large)
//!   still fails the request it was meant for at once instead of leaving it
//!   to its timeout.
//!
//! It only tracks strings (with escapes) and brackets, so it works on
//! truncated, invalid or enormous input alike, in one pass, fed in chunks
//! as bytes arrive (the SSE decoder feeds it while it skips an oversized
//! event). It does not validate: a caller uses it only after the parser
//! has refused the bytes.
//!
//! One more question is asked of bytes the parser already accepted: what
//! is one top-level member of a result ([`top_level_member`]), so the
//! session reads a 2026-07-28 result's `resultType` without walking the
//! rest through a parser (every result carries it, so this is on the path
//! of every call).

use crate::message::RequestId;

/// How deep `bytes` nests: the largest number of arrays and objects open at
/// once (0 for a scalar). Unbalanced input counts what it opens.
pub(crate) fn depth(bytes: &[u8]) -> usize {
    let mut depth = 0usize;
    let mut max = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &byte in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if byte == b'\\' {
                escaped = true;
            } else if byte == b'"' {
                in_string = false;
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                max = max.max(depth);
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    max
}

/// What the scan learnt about one top-level object (the message, or one
/// element of a batch).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Element {
    /// The `id` member, when it is an integer or a string.
    id: Option<RequestId>,
    /// A `method` member was seen: a request or notification from the
    /// server, whose id is in the server's space, not ours.
    method: bool,
    /// A `result` or `error` member was seen: an answer.
    outcome: bool,
}

impl Element {
    /// The id of the request this element answers, when it surely is an
    /// answer: complete without a method, or with its outcome already seen.
    fn answered(&self, complete: bool) -> Option<&RequestId> {
        if self.method || !(complete || self.outcome) {
            return None;
        }
        self.id.as_ref()
    }
}

/// Which top-level member a value belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Member {
    Id,
    Method,
    Outcome,
    Other,
}

/// Where the scan is within the members of the object it watches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Phase {
    /// Before a member's key.
    Key,
    /// Inside the key string.
    InKey,
    /// After the key, before its colon.
    AfterKey,
    /// Inside a member's value.
    Value(Member),
}

/// Longest id value kept (as JSON text); longer ids are not ids we sent.
const MAX_ID_BYTES: usize = 128;
/// Longest key compared (`method` is the longest one of interest).
const MAX_KEY_BYTES: usize = 8;

/// Finds the ids of the answers in a JSON message or batch, fed in chunks.
#[derive(Debug)]
pub struct AnswerScan {
    depth: usize,
    in_string: bool,
    escaped: bool,
    /// The depth at which members of the watched objects sit: 1 for a
    /// message, 2 for the elements of a batch; 0 until the first bracket.
    member_depth: usize,
    /// Whether the container at `member_depth` is an object.
    in_object: bool,
    phase: Phase,
    key: Vec<u8>,
    /// The raw text of the `id` value being read.
    id_text: Option<Vec<u8>>,
    current: Element,
    /// Whether `current` has been opened and not yet closed.
    open: bool,
    /// Ids of finished elements, in order.
    answers: Vec<RequestId>,
}

impl Default for AnswerScan {
    fn default() -> Self {
        AnswerScan::new()
    }
}

impl AnswerScan {
    /// A scan at the start of a message.
    pub fn new() -> Self {
        AnswerScan {
            depth: 0,
            in_string: false,
            escaped: false,
            member_depth: 0,
            in_object: false,
            phase: Phase::Key,
            key: Vec::with_capacity(MAX_KEY_BYTES),
            id_text: None,
            current: Element::default(),
            open: false,
            answers: Vec::new(),
        }
    }

    /// The ids of every answer in `bytes`, a whole message or batch.
    pub fn answers_in(bytes: &[u8]) -> Vec<RequestId> {
        let mut scan = AnswerScan::new();
        scan.feed(bytes);
        scan.finish()
    }

    /// Takes the next bytes of the message.
    pub fn feed(&mut self, bytes: &[u8]) {
        for &byte in bytes {
            self.byte(byte);
        }
    }

    /// The ids found so far for a single message (not a batch): its id as
    /// soon as it is known to be an answer. Lets a caller stop early.
    pub fn early_answer(&self) -> Option<&RequestId> {
        if self.member_depth != 1 {
            return None;
        }
        if let Some(done) = self.answers.first() {
            return Some(done);
        }
        if self.open {
            self.current.answered(false)
        } else {
            None
        }
    }

    /// Whether a single message is known not to answer anything (it is a
    /// request or a notification from the server), so a caller may stop.
    pub fn settled_without_answer(&self) -> bool {
        self.member_depth == 1 && self.open && self.current.method
    }

    /// Ends the scan: the ids of every answer seen, including an unfinished
    /// last element whose outcome was already seen.
    pub fn finish(mut self) -> Vec<RequestId> {
        if self.open {
            self.end_value();
            if let Some(id) = self.current.answered(false) {
                self.answers.push(id.clone());
            }
        }
        self.answers
    }

    fn watching(&self) -> bool {
        self.depth == self.member_depth && self.in_object
    }

    fn keep_id_byte(&mut self, byte: u8) {
        if let Some(text) = &mut self.id_text {
            if text.len() < MAX_ID_BYTES {
                text.push(byte);
            } else {
                // Too long to be one of ours; remember that it was not one.
                text.clear();
                text.push(b'!');
            }
        }
    }

    fn byte(&mut self, byte: u8) {
        if self.in_string {
            self.keep_id_byte(byte);
            if self.escaped {
                self.escaped = false;
                if self.phase == Phase::InKey {
                    // An escaped key is none of the keys compared.
                    self.key.push(0);
                }
            } else if byte == b'\\' {
                self.escaped = true;
            } else if byte == b'"' {
                self.in_string = false;
                if self.phase == Phase::InKey {
                    self.phase = Phase::AfterKey;
                }
            } else if self.phase == Phase::InKey && self.key.len() <= MAX_KEY_BYTES {
                self.key.push(byte);
            }
            return;
        }
        match byte {
            b'"' => {
                self.keep_id_byte(byte);
                self.in_string = true;
                if self.watching() && self.phase == Phase::Key {
                    self.phase = Phase::InKey;
                    self.key.clear();
                }
            }
            b'{' | b'[' => {
                if self.depth == 0 && self.member_depth == 0 {
                    self.member_depth = if byte == b'{' { 1 } else { 2 };
                }
                self.keep_id_byte(byte);
                self.depth += 1;
                if self.depth == self.member_depth {
                    self.in_object = byte == b'{';
                    self.phase = Phase::Key;
                    self.current = Element::default();
                    self.open = true;
                }
            }
            b'}' | b']' => {
                if self.depth == self.member_depth && self.open {
                    self.end_value();
                    self.open = false;
                    if let Some(id) = self.current.answered(true) {
                        self.answers.push(id.clone());
                    }
                } else {
                    self.keep_id_byte(byte);
                }
                self.depth = self.depth.saturating_sub(1);
            }
            b',' if self.watching() => self.end_value(),
            b':' if self.watching() && self.phase == Phase::AfterKey => {
                let member = match self.key.as_slice() {
                    b"id" => Member::Id,
                    b"method" => Member::Method,
                    b"result" | b"error" => Member::Outcome,
                    _ => Member::Other,
                };
                match member {
                    Member::Id => self.id_text = Some(Vec::new()),
                    Member::Method => self.current.method = true,
                    Member::Outcome => self.current.outcome = true,
                    Member::Other => {}
                }
                self.phase = Phase::Value(member);
            }
            _ => self.keep_id_byte(byte),
        }
    }

    /// The value of a member ended (at `,` or the closing brace).
    fn end_value(&mut self) {
        if let Some(text) = self.id_text.take() {
            self.current.id = parse_id(&text);
        }
        self.phase = Phase::Key;
    }
}

/// One top-level member of a JSON object, as [`top_level_member`] finds it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TopLevel<'a> {
    /// The text is an array or a scalar: it has no members.
    NotAnObject,
    /// The object has no such member.
    Absent,
    /// The member's value, as its JSON text.
    Found(&'a str),
    /// The member is given more than once, or the text is not well-formed
    /// JSON where the scan had to look.
    Unreadable,
}

/// The value of the member `key` of the object `text`, read without
/// building anything: strings are skipped to their closing quote, nested
/// values to their closing bracket (counted, not recursed into). A key
/// written with escapes is compared as it decodes. Every member is looked
/// at, so a key given twice is noticed.
pub(crate) fn top_level_member<'a>(text: &'a str, key: &str) -> TopLevel<'a> {
    let bytes = text.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return TopLevel::NotAnObject;
    }
    let mut found = None;
    at = skip_space(bytes, at + 1);
    if bytes.get(at) != Some(&b'}') {
        loop {
            let Some(key_end) = string_end(bytes, at) else {
                return TopLevel::Unreadable;
            };
            let Some(this_key) = text.get(at..key_end) else {
                return TopLevel::Unreadable;
            };
            at = skip_space(bytes, key_end);
            if bytes.get(at) != Some(&b':') {
                return TopLevel::Unreadable;
            }
            at = skip_space(bytes, at + 1);
            let Some(value_end) = value_end(bytes, at) else {
                return TopLevel::Unreadable;
            };
            if key_is(this_key, key) {
                match (found, text.get(at..value_end)) {
                    (None, Some(value)) => found = Some(value),
                    _ => return TopLevel::Unreadable,
                }
            }
            at = skip_space(bytes, value_end);
            match bytes.get(at) {
                Some(b',') => at = skip_space(bytes, at + 1),
                Some(b'}') => break,
                _ => return TopLevel::Unreadable,
            }
        }
    }
    if skip_space(bytes, at + 1) != bytes.len() {
        return TopLevel::Unreadable;
    }
    found.map_or(TopLevel::Absent, TopLevel::Found)
}

/// Whether the quoted key `quoted` (with its quotes) decodes to `key`.
fn key_is(quoted: &str, key: &str) -> bool {
    let inner = &quoted[1..quoted.len() - 1];
    // An escape is longer than the character it stands for.
    if inner.len() <= key.len() || !inner.as_bytes().contains(&b'\\') {
        return inner == key;
    }
    serde_json::from_str::<std::borrow::Cow<'_, str>>(quoted).is_ok_and(|decoded| decoded == key)
}

/// Past the JSON whitespace at `at`.
#[inline(always)]
pub(crate) fn skip_space(bytes: &[u8], mut at: usize) -> usize {
    // Servers mostly write compact JSON: one comparison settles most calls.
    if bytes.get(at).is_some_and(|&byte| byte > b' ') {
        return at;
    }
    while let Some(b' ' | b'\t' | b'\n' | b'\r') = bytes.get(at) {
        at += 1;
    }
    at
}

/// The first `"`, `\` or control character in `bytes` (what a JSON
/// string must escape, and where a valid one can stop), eight bytes at a
/// time: a tool's text can be long, and most of a message is strings.
#[inline(always)]
pub(crate) fn special_byte(bytes: &[u8]) -> Option<usize> {
    const ONES: u64 = u64::from_ne_bytes([1; 8]);
    const HIGHS: u64 = u64::from_ne_bytes([0x80; 8]);
    const QUOTES: u64 = u64::from_ne_bytes([b'"'; 8]);
    const BACKSLASHES: u64 = u64::from_ne_bytes([b'\\'; 8]);
    const SPACES: u64 = u64::from_ne_bytes([0x20; 8]);
    let mut chunks = bytes.chunks_exact(8);
    let mut offset = 0;
    for chunk in &mut chunks {
        let word = u64::from_le_bytes(chunk.try_into().unwrap_or_default());
        // A byte's high bit is set where it is zero after the xor, or
        // below 0x20; bits above the first such byte may be set wrongly
        // (borrows), so only the lowest one is used.
        let zero = |x: u64| x.wrapping_sub(ONES) & !x & HIGHS;
        let found = zero(word ^ QUOTES)
            | zero(word ^ BACKSLASHES)
            | (word.wrapping_sub(SPACES) & !word & HIGHS);
        if found != 0 {
            return Some(offset + (found.trailing_zeros() / 8) as usize);
        }
        offset += 8;
    }
    chunks
        .remainder()
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)
        .map(|at| offset + at)
}

/// The character the escape at `at` (its backslash) stands for, and where
/// the escape ends; `None` for an invalid escape or one of a surrogate.
pub(crate) fn escape(bytes: &[u8], at: usize) -> Option<(char, usize)> {
    let unit = match bytes.get(at + 1)? {
        b'"' => '"',
        b'\\' => '\\',
        b'/' => '/',
        b'b' => '\u{8}',
        b'f' => '\u{c}',
        b'n' => '\n',
        b'r' => '\r',
        b't' => '\t',
        b'u' => {
            let hex = bytes.get(at + 2..at + 6)?;
            let mut code = 0u32;
            for &digit in hex {
                code = code * 16 + char::from(digit).to_digit(16)?;
            }
            // `from_u32` refuses a surrogate, whose pairing the parser
            // judges (the plain readers leave such strings to it).
            return Some((char::from_u32(code)?, at + 6));
        }
        _ => return None,
    };
    Some((unit, at + 2))
}

/// Where the string opening at `at` ends (past its closing quote).
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let mut at = at + 1;
    loop {
        at += quote_or_backslash(bytes.get(at..)?)?;
        if bytes[at] == b'"' {
            return Some(at + 1);
        }
        // A backslash and the byte it escapes.
        at += 2;
    }
}

/// The first `"` or `\\` in `bytes`. Most strings in a result are short
/// (keys, kinds) and read fastest a byte at a time; a long one (a tool's
/// text) is searched with SIMD past its first bytes.
fn quote_or_backslash(bytes: &[u8]) -> Option<usize> {
    const SHORT: usize = 32;
    let (head, tail) = bytes.split_at(bytes.len().min(SHORT));
    match head.iter().position(|byte| matches!(byte, b'"' | b'\\')) {
        Some(at) => Some(at),
        None => Some(head.len() + memchr::memchr2(b'"', b'\\', tail)?),
    }
}

/// Where the value starting at `at` ends: past a string's closing quote,
/// past the bracket that closes an array or object, or at the byte that
/// ends a number or literal.
fn value_end(bytes: &[u8], at: usize) -> Option<usize> {
    match bytes.get(at)? {
        b'"' => string_end(bytes, at),
        b'[' | b'{' => {
            let mut depth = 0usize;
            let mut at = at;
            loop {
                match bytes.get(at)? {
                    b'"' => {
                        at = string_end(bytes, at)?;
                        continue;
                    }
                    b'[' | b'{' => depth += 1,
                    b']' | b'}' => {
                        depth -= 1;
                        if depth == 0 {
                            return Some(at + 1);
                        }
                    }
                    _ => {}
                }
                at += 1;
            }
        }
        _ => {
            let end = bytes[at..]
                .iter()
                .position(|byte| matches!(byte, b',' | b'}' | b']' | b' ' | b'\t' | b'\n' | b'\r'))
                .map_or(bytes.len(), |length| at + length);
            (end > at).then_some(end)
        }
    }
}

fn parse_id(text: &[u8]) -> Option<RequestId> {
    match serde_json::from_slice::<serde_json::Value>(text).ok()? {
        serde_json::Value::Number(n) => n.as_i64().map(RequestId::Number),
        serde_json::Value::String(s) => Some(RequestId::String(s)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn n(id: i64) -> RequestId {
        RequestId::Number(id)
    }

    fn check(input: &str, expect: &[RequestId]) {
        assert_eq!(AnswerScan::answers_in(input.as_bytes()), expect, "{input}");
        // Fed one byte at a time, the scan finds the same.
        let mut scan = AnswerScan::new();
        for byte in input.as_bytes() {
            scan.feed(std::slice::from_ref(byte));
        }
        assert_eq!(scan.finish(), expect, "{input} byte by byte");
    }

    #[test]
    fn answers_are_found_in_whatever_is_around_them() {
        check(r#"{"jsonrpc":"2.0","id":7,"result":{}}"#, &[n(7)]);
        check(
            r#"{"result":[[[1]]],"id":"abc"}"#,
            &[RequestId::String("abc".into())],
        );
        check(r#"{ "id" : 3 , "error" : {"code":1} }"#, &[n(3)]);
        // Not JSON further on, truncated, or bytes that are not UTF-8.
        check(r#"{"jsonrpc":"2.0","id":4,"result":nope}"#, &[n(4)]);
        check(r#"{"jsonrpc":"2.0","id":5,"result":{"text":"cut"#, &[n(5)]);
        check("{\"id\":6,\"result\":{\"text\":\"bad \u{0}\"}}", &[n(6)]);
        // Strings that look like members are not members.
        check(r#"{"result":{"id":9,"x":"\"id\":8"},"id":2}"#, &[n(2)]);
        // A batch: each element on its own.
        check(
            r#"[{"id":1,"result":{}},{"method":"a","id":2},{"id":3,"error":{}},5,[{"id":4}]]"#,
            &[n(1), n(3)],
        );
        // Server requests and notifications answer nothing of ours.
        check(r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#, &[]);
        check(r#"{"jsonrpc":"2.0","method":"x","params":{"id":1}}"#, &[]);
        // An unfinished message whose outcome has not begun may be a request.
        check(r#"{"jsonrpc":"2.0","id":5"#, &[]);
        // Ids that are not ours.
        check(r#"{"id":null,"error":{}}"#, &[]);
        check(r#"{"id":1.5,"result":{}}"#, &[]);
        check(r#"{"id":{"a":1},"result":{}}"#, &[]);
        check(
            &format!(r#"{{"id":"{}","result":1}}"#, "x".repeat(200)),
            &[],
        );
        // An escaped key is not compared.
        check(r#"{"\u0069d":1,"result":{}}"#, &[]);
        check("", &[]);
        check("banner line", &[]);
    }

    #[test]
    fn depth_counts_brackets_outside_strings() {
        for (input, expect) in [
            ("1", 0),
            ("[]", 1),
            (r#"{"a":[{"b":"[[[["}]}"#, 3),
            (r#"["\"[", [[]]]"#, 3),
            ("[[[[", 4),
            ("]]]][", 1),
        ] {
            assert_eq!(depth(input.as_bytes()), expect, "{input}");
        }
    }

    #[test]
    fn the_end_of_a_string_is_found_at_any_length() {
        for length in 0..100 {
            for end in [b'"', b'\\'] {
                let mut text = vec![b'a'; length];
                assert_eq!(quote_or_backslash(&text), None, "{length}");
                text.push(end);
                text.extend_from_slice(b"b\"");
                assert_eq!(quote_or_backslash(&text), Some(length), "{length}");
            }
        }
    }

    #[test]
    fn a_top_level_member_is_found_past_anything_before_it() {
        use TopLevel::*;
        for (input, expect) in [
            (r#"{"k":"v"}"#, Found(r#""v""#)),
            (
                r#" { "a" : [1, {"k": 2}] , "k" : {"x": "}"} } "#,
                Found(r#"{"x": "}"}"#),
            ),
            (r#"{"a":"\"k\":1","k":-1.5e3}"#, Found("-1.5e3")),
            (
                r#"{"a":"0123456789012345678901234567890\"k\":[1]\\","k":[]}"#,
                Found("[]"),
            ),
            (r#"{"\u006b":true}"#, Found("true")),
            (r#"{"a":{"k":1}}"#, Absent),
            ("{}", Absent),
            (r#"["k"]"#, NotAnObject),
            (r#""k""#, NotAnObject),
            ("", NotAnObject),
            (r#"{"k":1,"k":1}"#, Unreadable),
            (r#"{"k":1,}"#, Unreadable),
            (r#"{"k" 1}"#, Unreadable),
            (r#"{"k":"unterminated}"#, Unreadable),
            (r#"{"a":[1,2}"#, Unreadable),
            (r#"{"k":1} trailing"#, Unreadable),
            (r#"{"k":}"#, Unreadable),
        ] {
            assert_eq!(top_level_member(input, "k"), expect, "{input}");
        }
    }
}
