//! The common successful answer, read without `serde`.
//!
//! Nearly every message a client reads is one answer of one shape:
//! `{"jsonrpc":"2.0","id":7,"result":{…}}`, its three members in any order.
//! [`read`] checks such a frame completely (every byte of the result too,
//! as the parser would) and returns its id and where its result lies, in
//! one pass without building anything (a string id is its one
//! allocation); the derived parser spent most of its time on the
//! envelope's keys and on copying the result it had already walked.
//!
//! It answers only when it is sure: anything else (another member, a key
//! written with escapes, a member given twice, an id that is not a plain
//! integer or string, a `\u` escape of a surrogate, nesting past
//! [`MAX_NESTING`], bytes that are not UTF-8, invalid JSON) returns `None`
//! and the frame goes to the parser, which reads it or says why not. So a
//! frame it accepts is one the parser accepts as the same answer, and the
//! parser alone words every error.

use crate::message::{RequestId, ResultTypeAt};
use crate::scan::{escape, skip_space, special_byte};
use crate::top_members::TopMembers;

/// Deepest nesting read here (the result counts from 1); deeper results
/// go to the parser, which knows the depth rules.
pub(crate) const MAX_NESTING: u32 = 64;

/// A successful answer as [`read`] finds it.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct PlainAnswer<'a> {
    pub(crate) id: RequestId,
    /// The result's JSON text.
    pub(crate) result: &'a str,
    /// Where the result's top-level `resultType` is, learnt on the way.
    pub(crate) result_type: ResultTypeAt,
    /// Where the result's top-level members are, learnt on the way.
    pub(crate) members: TopMembers,
}

/// The answer `frame` is when it is one successful answer with no other
/// member; `None` for anything else.
pub(crate) fn read(frame: &[u8]) -> Option<PlainAnswer<'_>> {
    let bytes = frame;
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let (mut version, mut id, mut result) = (false, None, None);
    loop {
        at = skip_space(bytes, at + 1);
        let key_end = plain_string_end(bytes, at)?;
        let key = &bytes[at + 1..key_end - 1];
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        at = skip_space(bytes, at + 1);
        match key {
            b"jsonrpc" if !version => {
                if bytes.get(at..at + 5) != Some(b"\"2.0\"") {
                    return None;
                }
                version = true;
                at += 5;
            }
            b"id" if id.is_none() => {
                let (read, end) = request_id(bytes, at)?;
                id = Some(read);
                at = end;
            }
            b"result" if result.is_none() => {
                let (end, noted) = value_end(bytes, at)?;
                result = Some((at..end, noted));
                at = end;
            }
            _ => return None,
        }
        at = skip_space(bytes, at);
        match bytes.get(at)? {
            b',' => continue,
            b'}' => break,
            _ => return None,
        }
    }
    if skip_space(bytes, at + 1) != bytes.len() || !version {
        return None;
    }
    let (span, (result_type, members)) = result?;
    // The grammar takes bytes past ASCII only inside strings: the result's
    // and a string id's (checked there), so only the result is left to
    // check, once the frame is known to be an answer.
    let result = std::str::from_utf8(&bytes[span]).ok()?;
    Some(PlainAnswer {
        id: id?,
        result,
        result_type,
        members,
    })
}

/// An id that is an integer in `i64` (no fraction, no exponent) or a
/// string without escapes, and where it ends.
fn request_id(bytes: &[u8], at: usize) -> Option<(RequestId, usize)> {
    if bytes.get(at) == Some(&b'"') {
        let end = plain_string_end(bytes, at)?;
        let id = std::str::from_utf8(&bytes[at + 1..end - 1]).ok()?;
        return Some((RequestId::String(id.to_owned()), end));
    }
    let negative = bytes.get(at) == Some(&b'-');
    let digits_start = at + usize::from(negative);
    let digits = bytes[digits_start..]
        .iter()
        .take_while(|b| b.is_ascii_digit());
    // At most 19 digits fit; more overflow (the parser would read them as
    // a float, which is no id).
    let mut magnitude: i64 = 0;
    let mut digits_end = digits_start;
    for &digit in digits {
        magnitude = magnitude
            .checked_mul(10)?
            .checked_add(i64::from(digit - b'0'))?;
        digits_end += 1;
    }
    let valid = match &bytes[digits_start..digits_end] {
        [] => false,
        [b'0', _, ..] => false,
        _ => !matches!(bytes.get(digits_end), Some(b'.' | b'e' | b'E')),
    };
    if !valid {
        return None;
    }
    match (negative, magnitude) {
        // The parser reads `-0` as a float, which is no id.
        (true, 0) => None,
        (true, magnitude) => Some((RequestId::Number(-magnitude), digits_end)),
        (false, magnitude) => Some((RequestId::Number(magnitude), digits_end)),
    }
}

/// Where the string opening at `at` ends (past its closing quote), if it
/// has no escape and no control character.
#[inline(always)]
fn plain_string_end(bytes: &[u8], at: usize) -> Option<usize> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let inner = at + 1;
    let stop = inner + special_byte(&bytes[inner..])?;
    (bytes[stop] == b'"').then_some(stop + 1)
}

/// Where the string opening at `at` ends (past its closing quote), its
/// escapes checked; `None` if it is not a valid JSON string, or escapes a
/// surrogate (whose pairing the parser judges).
#[inline(always)]
fn string_end(bytes: &[u8], at: usize) -> Option<usize> {
    let stop = at + 1 + special_byte(bytes.get(at + 1..)?)?;
    match bytes[stop] {
        b'"' => Some(stop + 1),
        _ => string_end_past(bytes, stop),
    }
}

/// Where a string ends whose first escape or control character is at
/// `at`: kept out of line, as most strings have none.
#[inline(never)]
fn string_end_past(bytes: &[u8], mut at: usize) -> Option<usize> {
    loop {
        match bytes[at] {
            b'"' => return Some(at + 1),
            b'\\' => at = escape(bytes, at)?.1,
            // A control character, which JSON allows only escaped.
            _ => return None,
        }
        at += special_byte(bytes.get(at..)?)?;
    }
}

/// Where the result starting at `at` ends, every byte of it checked, and
/// where its top-level `resultType` and members are; `None` if it is not
/// one valid value or nests past [`MAX_NESTING`]. An object's own members
/// are walked here, and their values by [`skip_value`].
fn value_end(bytes: &[u8], at: usize) -> Option<(usize, (ResultTypeAt, TopMembers))> {
    let start = at;
    if bytes.get(at) != Some(&b'{') {
        let end = skip_value(bytes, at, MAX_NESTING)?;
        return Some((end, (ResultTypeAt::NotAnObject, TopMembers::UNKNOWN)));
    }
    let (mut result_type, mut members) = (ResultTypeAt::Absent, TopMembers::object());
    let mut at = skip_space(bytes, at + 1);
    if bytes.get(at) == Some(&b'}') {
        return Some((at + 1, (result_type, members)));
    }
    loop {
        let member = member(bytes, at)?;
        let end = skip_value(bytes, member.value, MAX_NESTING - 1)?;
        let value = member.value - start..end - start;
        if result_type.note_key(&bytes[at..member.key_end], member.escaped) {
            result_type = result_type.found(value.start, value.end);
        }
        members.note(at - start..member.key_end - start, value, member.escaped);
        at = skip_space(bytes, end);
        match bytes.get(at)? {
            b',' => at = skip_space(bytes, at + 1),
            b'}' => return Some((at + 1, (result_type, members))),
            _ => return None,
        }
    }
}

/// Past the JSON value starting at `at`, every byte of it checked; `None`
/// if it is not one valid value or opens more than `limit` containers at
/// once. Iterative: the open containers are bits of one word, the
/// innermost lowest.
fn skip_value(bytes: &[u8], mut at: usize, limit: u32) -> Option<usize> {
    // Bit `n` set: the container `n` levels out from the innermost is an
    // object.
    let mut objects: u64 = 0;
    let mut depth: u32 = 0;
    loop {
        // A value starts at `at`.
        match *bytes.get(at)? {
            open @ (b'{' | b'[') => {
                if depth == limit {
                    return None;
                }
                let object = open == b'{';
                let close = if object { b'}' } else { b']' };
                at = skip_space(bytes, at + 1);
                if bytes.get(at) == Some(&close) {
                    at += 1;
                } else {
                    objects = (objects << 1) | u64::from(object);
                    depth += 1;
                    if object {
                        at = member(bytes, at)?.value;
                    }
                    continue;
                }
            }
            b'"' => at = string_end(bytes, at)?,
            b't' => at = literal_end(bytes, at, b"true")?,
            b'f' => at = literal_end(bytes, at, b"false")?,
            b'n' => at = literal_end(bytes, at, b"null")?,
            b'-' | b'0'..=b'9' => at = number_end(bytes, at)?,
            _ => return None,
        }
        // A value ended at `at`: close what it ends, or go to the next one.
        loop {
            if depth == 0 {
                return Some(at);
            }
            at = skip_space(bytes, at);
            match (*bytes.get(at)?, objects & 1 == 1) {
                (b',', true) => {
                    at = member(bytes, skip_space(bytes, at + 1))?.value;
                    break;
                }
                (b',', false) => {
                    at = skip_space(bytes, at + 1);
                    break;
                }
                (b'}', true) | (b']', false) => {
                    at += 1;
                    objects >>= 1;
                    depth -= 1;
                }
                _ => return None,
            }
        }
    }
}

impl ResultTypeAt {
    /// Notes the top-level key `quoted` (with its quotes); whether it is
    /// `resultType` seen for the first time.
    fn note_key(&mut self, quoted: &[u8], escaped: bool) -> bool {
        if quoted == b"\"resultType\"" {
            match self {
                ResultTypeAt::Absent => return true,
                ResultTypeAt::At(..) => *self = ResultTypeAt::Twice,
                _ => {}
            }
        } else if escaped {
            // A key with escapes may spell `resultType`; the scan decodes it.
            *self = ResultTypeAt::NotLooked;
        }
        false
    }

    /// The top-level `resultType` found between `start` and `end`.
    fn found(self, start: usize, end: usize) -> Self {
        match self {
            ResultTypeAt::Absent => ResultTypeAt::At(start, end),
            other => other,
        }
    }
}

/// A member's key starting at `at`: where the key ends, whether it is
/// written with escapes, and where its value starts (past the colon and
/// any space).
#[inline(always)]
fn member(bytes: &[u8], at: usize) -> Option<Member> {
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let stop = at + 1 + special_byte(bytes.get(at + 1..)?)?;
    let (key_end, escaped) = match bytes[stop] {
        b'"' => (stop + 1, false),
        _ => (string_end_past(bytes, stop)?, true),
    };
    let colon = skip_space(bytes, key_end);
    (bytes.get(colon) == Some(&b':')).then(|| Member {
        key_end,
        escaped,
        value: skip_space(bytes, colon + 1),
    })
}

/// A member's key as [`member`] finds it.
struct Member {
    /// Past the key's closing quote.
    key_end: usize,
    /// The key is written with escapes.
    escaped: bool,
    /// Where the value starts.
    value: usize,
}

fn literal_end(bytes: &[u8], at: usize, literal: &[u8]) -> Option<usize> {
    (bytes.get(at..at + literal.len()) == Some(literal)).then_some(at + literal.len())
}

/// Past the number starting at `at`:
/// `-? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?`.
fn number_end(bytes: &[u8], mut at: usize) -> Option<usize> {
    let digits = |at: usize| {
        bytes[at..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count()
    };
    if bytes.get(at) == Some(&b'-') {
        at += 1;
    }
    match bytes.get(at)? {
        b'0' => at += 1,
        b'1'..=b'9' => at += digits(at),
        _ => return None,
    }
    if bytes.get(at) == Some(&b'.') {
        let fraction = digits(at + 1);
        if fraction == 0 {
            return None;
        }
        at += 1 + fraction;
    }
    if let Some(b'e' | b'E') = bytes.get(at) {
        at += 1;
        if let Some(b'+' | b'-') = bytes.get(at) {
            at += 1;
        }
        let exponent = digits(at);
        if exponent == 0 {
            return None;
        }
        at += exponent;
    }
    Some(at)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::{Incoming, RawEnvelope, RawJson};
    use crate::scan::top_level_member;
    use proptest::prelude::*;

    /// What the parser makes of `frame`: the id and result text of a
    /// successful answer, or `None` for anything else.
    fn parsed(frame: &[u8]) -> Option<(RequestId, String)> {
        let envelope = serde_json::from_slice::<RawEnvelope>(frame).ok()?;
        match envelope.into_incoming().ok()? {
            Incoming::Answer(answer) => Some((answer.id, answer.result.get().to_owned())),
            Incoming::Message(_) => None,
        }
    }

    /// What the reader makes of `frame`, checked against the parser: the
    /// same answer, and the same `resultType` as the scan finds.
    fn read_checked(frame: &[u8]) -> Result<Option<(RequestId, String)>, String> {
        let Some(answer) = read(frame) else {
            return Ok(None);
        };
        let text = String::from_utf8_lossy(frame);
        let read = Some((answer.id, answer.result.to_owned()));
        if parsed(frame) != read {
            return Err(format!("read {read:?}, parsed {:?}: {text}", parsed(frame)));
        }
        let noted = RawJson::checked(answer.result, answer.result_type, answer.members);
        let scanned = top_level_member(answer.result, "resultType");
        if noted.result_type() != scanned {
            return Err(format!(
                "noted {:?}, scanned {scanned:?}: {text}",
                noted.result_type()
            ));
        }
        // The noted members, written back as an object, are the result.
        if let Some(members) = noted.members() {
            let rebuilt: Vec<String> = members
                .map(|(key, value)| format!("\"{key}\":{value}"))
                .collect();
            let rebuilt = format!("{{{}}}", rebuilt.join(","));
            let as_value = |text: &str| serde_json::from_str::<serde_json::Value>(text).ok();
            if as_value(&rebuilt) != as_value(answer.result) {
                return Err(format!("noted members {rebuilt}: {text}"));
            }
        }
        Ok(read)
    }

    /// `read` gives `expect`, and agrees with the parser and the scan.
    fn check(frame: &str, expect: Option<(RequestId, &str)>) {
        let read = read_checked(frame.as_bytes()).unwrap_or_else(|e| panic!("{e}"));
        let expect = expect.map(|(id, result)| (id, result.to_owned()));
        assert_eq!(read, expect, "{frame}");
    }

    fn number(id: i64) -> RequestId {
        RequestId::Number(id)
    }

    #[test]
    fn the_answers_servers_send_are_read() {
        let result = r#"{"content":[{"type":"text","text":"hi"}],"isError":false}"#;
        check(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#),
            Some((number(1), result)),
        );
        // The TypeScript SDK writes the result first.
        check(
            &format!(r#"{{"result":{result},"jsonrpc":"2.0","id":"a-b"}}"#),
            Some((RequestId::String("a-b".into()), result)),
        );
        check(
            "\r\n{ \"id\" : -5 ,\n\t\"jsonrpc\": \"2.0\", \"result\": null }\n",
            Some((number(-5), "null")),
        );
        check(
            r#"{"jsonrpc":"2.0","id":9223372036854775807,"result":[1,-0.5e+3,true,false,null,{},[],"\u00e9\n\"é"]}"#,
            Some((
                number(i64::MAX),
                r#"[1,-0.5e+3,true,false,null,{},[],"\u00e9\n\"é"]"#,
            )),
        );
        let long = "x".repeat(1000);
        let result = format!(r#"{{"text":"{long}\\\\","resultType":"complete"}}"#);
        check(
            &format!(r#"{{"jsonrpc":"2.0","id":0,"result":{result}}}"#),
            Some((number(0), &result)),
        );
    }

    #[test]
    fn the_results_top_level_result_type_is_noted_on_the_way() {
        use crate::scan::TopLevel;
        for (result, expect) in [
            (
                r#"{"content":[],"resultType" : "complete" ,"_meta":{}}"#,
                TopLevel::Found(r#""complete""#),
            ),
            (
                r#"{"resultType":{"a":[1]}}"#,
                TopLevel::Found(r#"{"a":[1]}"#),
            ),
            (r#"{"resultType":7}"#, TopLevel::Found("7")),
            (
                r#"{"content":[{"resultType":"task"}],"x":{"resultType":1}}"#,
                TopLevel::Absent,
            ),
            (r#"{"a":"\"resultType\""}"#, TopLevel::Absent),
            (r#"{}"#, TopLevel::Absent),
            (r#"["resultType"]"#, TopLevel::NotAnObject),
            (r#""resultType""#, TopLevel::NotAnObject),
            (
                r#"{"resultType":"a","resultType":"b"}"#,
                TopLevel::Unreadable,
            ),
            // spelt with an escape: left to the scan, which decodes it
            (
                r#"{"result\u0054ype":"task"}"#,
                TopLevel::Found(r#""task""#),
            ),
        ] {
            let frame = format!(r#"{{"jsonrpc":"2.0","id":3,"result":{result}}}"#);
            check(&frame, Some((number(3), result)));
            let answer = read(frame.as_bytes()).expect("read");
            let noted = RawJson::checked(answer.result, answer.result_type, answer.members);
            assert_eq!(noted.result_type(), expect, "{result}");
            assert_eq!(
                noted.knows_result_type(),
                !result.contains("\\u0054"),
                "{result}"
            );
        }
    }

    #[test]
    fn everything_else_is_left_to_the_parser() {
        for frame in [
            // other members, or other messages
            r#"{"jsonrpc":"2.0","id":1,"result":{},"x":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#,
            r#"{"jsonrpc":"2.0","method":"notifications/x","params":{}}"#,
            r#"[{"jsonrpc":"2.0","id":1,"result":{}}]"#,
            // a member missing, or given twice
            r#"{"jsonrpc":"2.0","result":{}}"#,
            r#"{"id":1,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"id":2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{},"result":{}}"#,
            // the version or a key with escapes, or another version
            r#"{"jsonrpc":"2\u002e0","id":1,"result":{}}"#,
            r#"{"json\u0072pc":"2.0","id":1,"result":{}}"#,
            r#"{"jsonrpc":"1.0","id":1,"result":{}}"#,
            // ids that are no integer, or that the parser must judge
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1.0,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1e2,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":-0,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":01,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":[],"result":{}}"#,
            // results that are not valid JSON
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":1,}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1,]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a"}}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[01]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1.]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[.5]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[1e]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":[tru]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":["\x"]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":["\u12g4"]}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[\"a\u{1}b\"]}",
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":1]}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{"a":1}"#,
            r#"{"jsonrpc":"2.0","id":1,"result":{}} x"#,
            // a surrogate escape, whose pairing the parser judges
            r#"{"jsonrpc":"2.0","id":1,"result":["\ud83d\ude00"]}"#,
        ] {
            check(frame, None);
        }
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":1,"result":{}{}}}"#,
            "[".repeat(MAX_NESTING as usize + 1),
            "]".repeat(MAX_NESTING as usize + 1)
        );
        check(&deep, None);
        let deepest = format!(
            "{}{}",
            "[".repeat(MAX_NESTING as usize),
            "]".repeat(MAX_NESTING as usize)
        );
        check(
            &format!(r#"{{"jsonrpc":"2.0","id":1,"result":{deepest}}}"#),
            Some((number(1), &deepest)),
        );
        assert_eq!(
            read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\xff\"}"),
            None
        );
    }

    /// What a hostile server might send: bytes that are not UTF-8 wherever
    /// they can stand, a result of megabytes, nesting far past the limit.
    #[test]
    fn hostile_frames_are_read_or_declined_whole() {
        // Not UTF-8 in a string id, in a key, outside any string, deep in
        // the result, and a lone continuation byte: the parser's to refuse.
        for frame in [
            &b"{\"jsonrpc\":\"2.0\",\"id\":\"\xc3\",\"result\":{}}"[..],
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"k\xff\":1}}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[1,\xff]}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":[[[{\"a\":\"ok \xed\xa0\x80\"}]]]}",
            b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":\"\x80\"}",
            b"{\"json\xffrpc\":\"2.0\",\"id\":1,\"result\":{}}",
        ] {
            assert_eq!(read(frame), None, "{}", String::from_utf8_lossy(frame));
            assert_eq!(parsed(frame), None, "{}", String::from_utf8_lossy(frame));
        }
        // Valid UTF-8 past ASCII is read like any other text.
        check(
            r#"{"jsonrpc":"2.0","id":"é-1","result":{"ключ":"值 😀"}}"#,
            Some((RequestId::String("é-1".into()), r#"{"ключ":"值 😀"}"#)),
        );
        // Four megabytes of text, escapes and control characters spread
        // through it, are read in one pass; one raw control byte at the end
        // leaves the frame to the parser.
        let text = "text \\n\\u0001 \\\"".repeat(4 * 1024 * 1024 / 16);
        let result = format!(r#"{{"content":[{{"type":"text","text":"{text}"}}]}}"#);
        check(
            &format!(r#"{{"jsonrpc":"2.0","id":2,"result":{result}}}"#),
            Some((number(2), &result)),
        );
        let raw_control = format!("{{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":\"{text}\u{1f}\"}}");
        check(&raw_control, None);
        // A result nested 100,000 levels deep is declined without
        // recursing; the parser keeps it raw, as before, and the caller's
        // decode refuses it as too deep.
        let deep = format!(
            r#"{{"jsonrpc":"2.0","id":5,"result":{}{}}}"#,
            "[".repeat(100_000),
            "]".repeat(100_000)
        );
        assert_eq!(read(deep.as_bytes()), None);
        let mut incoming = Vec::new();
        let decoded = crate::Codec::default().decode_incoming(deep.as_bytes(), &mut incoming);
        assert!(decoded.is_ok(), "{decoded:?}");
        let [Incoming::Answer(answer)] = &incoming[..] else {
            panic!("one raw answer, not {} messages", incoming.len());
        };
        assert_eq!(answer.id, number(5));
        assert!(matches!(
            crate::codec::decode_result::<serde_json::Value>(answer.result.get()),
            Err(crate::codec::ResultError::Refused(
                crate::TransportErrorKind::TooDeep { .. }
            ))
        ));
    }

    /// Envelopes near the reader's shape: its three members (mostly
    /// valid) in any order, sometimes another member or one given twice,
    /// results of any shape with an invalid token now and then, and some
    /// frames mutated at one byte.
    fn frame() -> impl Strategy<Value = Vec<u8>> {
        let space = prop::sample::select(vec!["", "", " ", "\n\t", "\r\n  ", "\u{b}"]);
        let string = prop_oneof![
            8 => prop::sample::select(vec![
                r#""a""#,
                r#""""#,
                r#""\"\\\/\b\f\n\r\t""#,
                r#""\u00e9\u0041""#,
                "\"é😀\"",
                r#""aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa\"],\"id\":{[\\bbbbbbbbbbbbbbbbbbb""#,
                r#""resultType""#,
                r#""resultType""#,
                r#""result\u0054ype""#,
                r#""complete""#,
            ]),
            1 => prop::sample::select(vec![
                r#""\ud83d\ude00""#,
                r#""\x""#,
                r#""\u12""#,
                "\"a\u{1}\"",
                "\"a\u{7f}\u{1f}\"",
                r#""unterminated"#,
            ]),
        ];
        let scalar = prop_oneof![
            8 => prop::sample::select(vec!["0", "-1", "1.5", "-1.5e3", "1E+2", "true", "false", "null"]),
            1 => prop::sample::select(vec!["-0", "01", "1.", ".5", "1e", "2e-", "tru", "nul", "-", "+1"]),
        ];
        let leaf = prop_oneof![
            string.clone().prop_map(str::to_owned),
            scalar.prop_map(str::to_owned)
        ];
        let inner_space = space.clone();
        let value = leaf.prop_recursive(4, 48, 5, move |inner| {
            let space = &inner_space;
            let member = (space.clone(), string.clone(), space.clone(), inner.clone());
            prop_oneof![
                8 => prop::collection::vec(member, 0..5).prop_map(|members| {
                    let members: Vec<String> = members
                        .into_iter()
                        .map(|(before, key, after, value)| format!("{before}{key}{after}:{value}"))
                        .collect();
                    format!("{{{}}}", members.join(","))
                }),
                8 => prop::collection::vec(inner, 0..4)
                    .prop_map(|items| format!("[{}]", items.join(" , "))),
                1 => prop::sample::select(vec!["{,}", "[1,]", "{\"a\"}", "[}", "{]"])
                    .prop_map(str::to_owned),
            ]
        });
        let id = prop_oneof![
            6 => prop::sample::select(vec!["1", "0", "-7", "9223372036854775807", "\"s\"", "\"\""]),
            1 => prop::sample::select(vec![
                "-0", "01", "1.0", "1e2", "9223372036854775808", "-9223372036854775808",
                "\"s\\\"\"", "null", "[]", "1 2",
            ]),
        ];
        let version = prop_oneof![
            6 => Just("\"2.0\""),
            1 => prop::sample::select(vec!["\"2\\u002e0\"", "\"1.0\"", "2", "\"2.0 \""]),
        ];
        let extra = (
            prop::sample::select(vec![
                "\"jsonrpc\"",
                "\"id\"",
                "\"result\"",
                "\"error\"",
                "\"method\"",
                "\"x\"",
                "\"i\\u0064\"",
            ]),
            value.clone(),
        );
        let members = (
            version,
            id,
            value,
            prop::collection::vec(extra, 0..2),
            prop::sample::select(vec![0usize, 1, 2, 3]),
        )
            .prop_flat_map(|(version, id, result, extra, drop)| {
                let mut members = vec![
                    ("\"jsonrpc\"".to_owned(), version.to_owned()),
                    ("\"id\"".to_owned(), id.to_owned()),
                    ("\"result\"".to_owned(), result),
                ];
                // Now and then one of the three is missing.
                if drop < members.len() && extra.len() == 1 {
                    members.remove(drop);
                }
                members.extend(
                    extra
                        .into_iter()
                        .map(|(key, value)| (key.to_owned(), value)),
                );
                Just(members).prop_shuffle()
            });
        let envelope = (members, prop::collection::vec(space.clone(), 4), space).prop_map(
            |(members, gaps, after)| {
                let members: Vec<String> = members
                    .into_iter()
                    .map(|(key, value)| format!("{}{key}{}:{}{value}", gaps[0], gaps[1], gaps[2]))
                    .collect();
                format!("{{{}{}}}{after}", members.join(","), gaps[3])
            },
        );
        let edit = (any::<prop::sample::Index>(), 0u8..3, any::<u8>());
        (envelope, prop::option::weighted(0.25, edit)).prop_map(|(text, edit)| {
            let mut bytes = text.into_bytes();
            if let Some((at, kind, byte)) = edit {
                let at = at.index(bytes.len() + 1);
                match kind {
                    0 if at < bytes.len() => {
                        bytes.remove(at);
                    }
                    1 if at < bytes.len() => bytes[at] = byte,
                    _ => bytes.insert(at, byte),
                }
            }
            bytes
        })
    }

    /// A well-formed answer in the reader's shape, members in any order.
    fn answer() -> impl Strategy<Value = (Vec<u8>, i64)> {
        (
            any::<i64>(),
            any::<bool>(),
            prop::sample::select(vec![0usize, 1, 2]),
        )
            .prop_map(|(id, pretty, rotate)| {
                let gap = if pretty { " \n" } else { "" };
                let mut members = [
                    format!(r#""jsonrpc":{gap}"2.0""#),
                    format!(r#""id":{gap}{id}"#),
                    format!(r#""result":{gap}{{"content":[{{"type":"text","text":"{id}"}}]}}"#),
                ];
                members.rotate_left(rotate);
                (
                    format!("{{{}}}", members.join(&format!(",{gap}"))).into_bytes(),
                    id,
                )
            })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(4096))]

        #[test]
        fn what_it_reads_the_parser_reads_the_same(frame in frame()) {
            if let Err(e) = read_checked(&frame) {
                prop_assert!(false, "{}", e);
            }
        }

        #[test]
        fn every_plain_answer_is_read(answer in answer()) {
            let (frame, id) = answer;
            let read = read_checked(&frame);
            prop_assert_eq!(read.map(|read| read.map(|(id, _)| id)), Ok(Some(number(id))));
        }
    }
}
