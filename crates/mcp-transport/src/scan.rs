//! A structural scan of JSON bytes that never recurses and never fails.
//!
//! The codec parses with `serde_json`; this scan answers the two questions
//! a parser cannot answer about a message it refused:
//!
//! - how deep does it nest ([`depth`]), so a message deeper than serde's
//!   default limit is parsed again without it, and one past
//!   [`crate::depth::MAX_DEPTH`] is refused without building anything;
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

// `AnswerScan` is public to the fuzz targets alone (`--cfg fuzzing`).
#![cfg_attr(not(fuzzing), allow(unreachable_pub))]

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
/// Public to the fuzz targets alone.
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
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
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
    #[cfg_attr(not(feature = "remote"), allow(dead_code))]
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
}
