//! The top-level members of a result, as the reader that checked it noted
//! them, and a tool call's result decoded from them.
//!
//! The plain reader ([`crate::plain_answer`]) walks every byte of a result
//! before its caller decodes it; noting where each top-level member's key
//! and value lie costs it a few instructions a member. With them a
//! `tools/call` result is decoded from the values it keeps (`content`,
//! `structuredContent`, `isError`), and serde neither matches the other
//! members' names nor walks their values a second time: at 2026-07-28
//! `resultType` and `_meta` are often a third of a short result.
//!
//! The path is taken only where it gives what serde gives on the whole
//! result: every member noted (at most [`CAPACITY`], no key written with
//! escapes), none that the result keeps given twice, each kept value
//! decoding on its own. Otherwise the caller decodes the whole result, as
//! before, and serde words any error.

use std::ops::Range;

use crate::message::RawJson;
use crate::protocol::CallToolResult;

/// The most members noted. A tool call's result has a handful (`content`,
/// `structuredContent`, `isError`, `resultType`, `_meta`); one with more
/// is decoded whole.
const CAPACITY: usize = 6;

/// Where one member's key (within its quotes) and its value lie in the
/// result's text.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
struct Span {
    key: (u32, u32),
    value: (u32, u32),
}

/// The top-level members of an object result, when its reader noted them
/// all.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct TopMembers {
    spans: [Span; CAPACITY],
    len: u8,
    /// Every member so far is noted; false once one could not be (a key
    /// with escapes, one member too many), and for a result that is not an
    /// object or whose members were not looked at.
    complete: bool,
}

impl TopMembers {
    /// Nothing known: a result the parser checked, or not an object.
    pub(crate) const UNKNOWN: TopMembers = TopMembers {
        spans: [Span {
            key: (0, 0),
            value: (0, 0),
        }; CAPACITY],
        len: 0,
        complete: false,
    };

    /// An object whose members are about to be noted, in order.
    pub(crate) fn object() -> Self {
        TopMembers {
            complete: true,
            ..TopMembers::UNKNOWN
        }
    }

    /// Notes a member whose quoted key spans `quoted` (written with
    /// escapes: `escaped`) and whose value spans `value`, offsets within
    /// the result.
    pub(crate) fn note(&mut self, quoted: Range<usize>, value: Range<usize>, escaped: bool) {
        let offsets = (
            u32::try_from(quoted.start + 1),
            u32::try_from(quoted.end.saturating_sub(1)),
            u32::try_from(value.start),
            u32::try_from(value.end),
        );
        let index = usize::from(self.len);
        match offsets {
            (Ok(key_start), Ok(key_end), Ok(value_start), Ok(value_end))
                if self.complete && index < CAPACITY && !escaped =>
            {
                self.spans[index] = Span {
                    key: (key_start, key_end),
                    value: (value_start, value_end),
                };
                self.len += 1;
            }
            _ => self.complete = false,
        }
    }

    /// Each member's key (unquoted, without escapes) and value text, when
    /// all were noted; `None` when any was not.
    pub(crate) fn of<'a>(
        &self,
        text: &'a str,
    ) -> Option<impl Iterator<Item = (&'a str, &'a str)> + 'a> {
        if !self.complete {
            return None;
        }
        let range = |(start, end): (u32, u32)| start as usize..end as usize;
        let spans = self.spans;
        let members = (0..usize::from(self.len)).map(move |i| {
            let span = spans[i];
            (
                text.get(range(span.key)).unwrap_or_default(),
                text.get(range(span.value)).unwrap_or_default(),
            )
        });
        Some(members)
    }
}

/// A `tools/call` result decoded from its noted members; `None` where the
/// whole result must be decoded instead (see the module docs).
pub(crate) fn tool_result(raw: &RawJson) -> Option<CallToolResult> {
    let mut result = CallToolResult::default();
    let mut seen = [false; 3];
    for (key, value) in raw.members()? {
        let slot = match key {
            "content" => 0,
            "structuredContent" => 1,
            "isError" => 2,
            _ => continue,
        };
        // Given twice, the whole decode refuses it.
        if std::mem::replace(&mut seen[slot], true) {
            return None;
        }
        match slot {
            0 => {
                result.content = crate::plain_content::text_blocks(value)
                    .or_else(|| serde_json::from_str(value).ok())?;
            }
            1 => result.structured_content = serde_json::from_str(value).ok()?,
            _ => result.is_error = serde_json::from_str(value).ok()?,
        }
    }
    Some(result)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::codec::decode_result;
    use proptest::prelude::*;

    /// What reading `result` in an answer and decoding it from its members
    /// gives, checked against decoding the whole result: where the members
    /// give a result, the whole decode gives the same one.
    fn from_members(result: &str) -> Result<Option<CallToolResult>, String> {
        let frame = format!(r#"{{"jsonrpc":"2.0","id":1,"result":{result}}}"#);
        let Some(answer) = crate::plain_answer::read(frame.as_bytes()) else {
            return Err(format!("not a plain answer: {frame}"));
        };
        let raw = RawJson::checked(answer.result, answer.result_type, answer.members);
        let fast = tool_result(&raw);
        if let Some(fast) = &fast {
            match decode_result::<CallToolResult>(result) {
                Ok(whole) if whole == *fast => {}
                other => return Err(format!("members {fast:?}, whole {other:?}: {result}")),
            }
        }
        Ok(fast)
    }

    /// Decoding `result` from its members gives a result (`true`) or
    /// leaves it to the whole decode, and agrees with it.
    fn check(result: &str, decoded: bool) {
        let fast = from_members(result).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(fast.is_some(), decoded, "{result}");
    }

    #[test]
    fn a_tool_result_is_decoded_from_its_members_only_when_sure() {
        for (result, decoded) in [
            // What a 2026-07-28 server sends.
            (
                r#"{"content":[{"type":"text","text":"hi"}],"resultType":"complete","_meta":{"io.modelcontextprotocol/serverInfo":{"name":"s","version":"1"}}}"#,
                true,
            ),
            (
                r#"{"content":[],"structuredContent":{"n":1},"isError":true}"#,
                true,
            ),
            (r#"{ "isError" : false , "content" : [ ] }"#, true),
            (r#"{"structuredContent":null}"#, true),
            (r#"{}"#, true),
            // Members it does not keep, however many, up to the capacity.
            (r#"{"a":1,"b":[2],"c":{"d":3},"e":"f","content":[]}"#, true),
            // Past the capacity, with escapes, given twice, of another type.
            (
                r#"{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"content":[]}"#,
                false,
            ),
            (r#"{"cont\u0065nt":[{"type":"text","text":"x"}]}"#, false),
            (r#"{"content":[],"content":[]}"#, false),
            (r#"{"isError":true,"isError":false}"#, false),
            (r#"{"content":null}"#, false),
            (r#"{"content":{}}"#, false),
            (r#"{"isError":"yes"}"#, false),
            (r#"{"isError":null}"#, false),
            // Not an object.
            (r#"[[],null,false]"#, false),
            (r#""text""#, false),
        ] {
            check(result, decoded);
        }
        // What a hostile server might send.
        let nested = format!(
            r#"{{"content":[],"structuredContent":{}1{},"_meta":{{}}}}"#,
            "[".repeat(60),
            "]".repeat(60)
        );
        check(&nested, true);
        let huge = format!(
            r#"{{"content":[{{"type":"text","text":"{}"}}],"_meta":{{"k":"{}"}}}}"#,
            "a\\u0000\\n\\\"".repeat(100_000),
            "m".repeat(1_000_000)
        );
        check(&huge, true);
        check(r#"{"content":[],"content":[],"content":[]}"#, false);
        check(
            r#"{"content":[{"type":"text","text":"a","text":"b"}]}"#,
            true,
        );
        check(
            r#"{"isError":true,"_meta":{"isError":false,"content":7}}"#,
            true,
        );
        let typical = from_members(
            r#"{"content":[{"type":"text","text":"hi"}],"isError":true,"resultType":"complete"}"#,
        )
        .unwrap()
        .unwrap();
        assert_eq!(typical.content, vec![crate::ContentBlock::text("hi")]);
        assert!(typical.is_error);
    }

    /// Results near a tool call's: members it keeps (sometimes twice, or
    /// of another type), members it does not, keys with escapes.
    fn near_result() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            Just("content"),
            Just("structuredContent"),
            Just("isError"),
            Just("resultType"),
            Just("_meta"),
            Just("cont\\u0065nt"),
            Just("other"),
        ];
        let value = prop_oneof![
            Just(r#"[]"#),
            Just(
                r#"[{"type":"text","text":"a"},{"type":"image","data":"AA==","mimeType":"image/png"}]"#
            ),
            Just(r#"[{"type":"resource_link","uri":"x"}]"#),
            Just("true"),
            Just("false"),
            Just("null"),
            Just(r#""complete""#),
            Just(r#"{"k":[1,{"m":null}]}"#),
            Just("12"),
        ];
        prop::collection::vec((key, value), 0..9).prop_map(|members| {
            let members: Vec<String> = members
                .into_iter()
                .map(|(key, value)| format!(r#""{key}":{value}"#))
                .collect();
            format!("{{{}}}", members.join(","))
        })
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn what_the_members_give_the_whole_decode_gives(result in near_result()) {
            if let Err(e) = from_members(&result) {
                prop_assert!(false, "{}", e);
            }
        }
    }
}
