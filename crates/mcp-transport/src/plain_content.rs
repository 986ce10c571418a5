//! The common content array, read without `serde`.
//!
//! Nearly every tool result's `content` is text blocks and nothing else:
//! `[{"type":"text","text":"…"}]`. [`text_blocks`] reads such an array
//! straight into [`ContentBlock::Text`], its two members in either order,
//! the text unescaped as the parser would; the derived reader spent most
//! of a call's decoding on building and sorting the block's members.
//!
//! Like [`crate::plain_answer`], it answers only when it is sure: any
//! other member or kind, a member given twice, a key written with
//! escapes, a `\u` escape of a surrogate, or anything that is not JSON
//! returns `None`, and the array goes to the parser, which reads it as
//! the same blocks or says why not.

use std::borrow::Cow;

use crate::content::{ContentBlock, TextContent};
use crate::scan::{escape, skip_space, special_byte};

/// The blocks of `array` when it is an array of text blocks, each with a
/// `type` and a `text` member only; `None` for anything else.
pub(crate) fn text_blocks(array: &str) -> Option<Vec<ContentBlock>> {
    let bytes = array.as_bytes();
    let mut at = skip_space(bytes, 0);
    if bytes.get(at) != Some(&b'[') {
        return None;
    }
    let mut blocks = Vec::new();
    at = skip_space(bytes, at + 1);
    if bytes.get(at) != Some(&b']') {
        loop {
            let (block, end) = text_block(array, at)?;
            blocks.push(block);
            at = skip_space(bytes, end);
            match bytes.get(at)? {
                b',' => at = skip_space(bytes, at + 1),
                b']' => break,
                _ => return None,
            }
        }
    }
    (skip_space(bytes, at + 1) == bytes.len()).then_some(blocks)
}

/// The text block whose object opens at `at`, and where it ends.
fn text_block(array: &str, mut at: usize) -> Option<(ContentBlock, usize)> {
    let bytes = array.as_bytes();
    if bytes.get(at) != Some(&b'{') {
        return None;
    }
    let (mut typed, mut text) = (false, None);
    loop {
        at = skip_space(bytes, at + 1);
        let (key, key_end) = match string(array, at)? {
            (Cow::Borrowed(key), end) => (key, end),
            // A key with escapes may spell either member.
            (Cow::Owned(_), _) => return None,
        };
        at = skip_space(bytes, key_end);
        if bytes.get(at) != Some(&b':') {
            return None;
        }
        let (value, value_end) = string(array, skip_space(bytes, at + 1))?;
        match key {
            "type" if !typed && value == "text" => typed = true,
            "text" if text.is_none() => text = Some(value.into_owned()),
            _ => return None,
        }
        at = skip_space(bytes, value_end);
        match bytes.get(at)? {
            b',' => {}
            b'}' => break,
            _ => return None,
        }
    }
    let block = TextContent {
        text: text?,
        ..TextContent::default()
    };
    typed.then_some((ContentBlock::Text(block), at + 1))
}

/// The string opening at `at`, unescaped (borrowed when it has no
/// escape), and where it ends.
fn string(text: &str, at: usize) -> Option<(Cow<'_, str>, usize)> {
    let bytes = text.as_bytes();
    if bytes.get(at) != Some(&b'"') {
        return None;
    }
    let start = at + 1;
    let mut stop = start + special_byte(bytes.get(start..)?)?;
    if bytes[stop] == b'"' {
        return Some((Cow::Borrowed(text.get(start..stop)?), stop + 1));
    }
    let mut unescaped = String::with_capacity(stop - start + 16);
    let mut run = start;
    loop {
        // Every byte that stops the scan is ASCII, so `run..stop` lies on
        // character boundaries.
        unescaped.push_str(text.get(run..stop)?);
        match bytes[stop] {
            b'"' => return Some((Cow::Owned(unescaped), stop + 1)),
            b'\\' => {
                let (unit, next) = escape(bytes, stop)?;
                unescaped.push(unit);
                run = next;
            }
            // A control character, which JSON allows only escaped.
            _ => return None,
        }
        stop = run + special_byte(bytes.get(run..)?)?;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// What the parser reads `array` as, when it reads it.
    fn parsed(array: &str) -> Option<Vec<ContentBlock>> {
        serde_json::from_str(array).ok()
    }

    /// `text_blocks` reads `array` (`read`) or leaves it, and agrees with
    /// the parser where it reads it.
    fn check(array: &str, read: bool) {
        let fast = text_blocks(array);
        assert_eq!(fast.is_some(), read, "{array}");
        if fast.is_some() {
            assert_eq!(fast, parsed(array), "{array}");
        }
    }

    #[test]
    fn arrays_of_text_blocks_are_read_as_the_parser_reads_them() {
        for (array, read) in [
            (r#"[{"type":"text","text":"hello"}]"#, true),
            (r#"[]"#, true),
            (
                " [ { \"text\" : \"b\" , \"type\" : \"text\" } ,{\"type\":\"text\",\"text\":\"\"}]\n",
                true,
            ),
            (
                r#"[{"type":"text","text":"line\nnext \"q\" \\ \/ \b\f\r\t \u00e9 \u0000 é😀"}]"#,
                true,
            ),
            (r#"[{"type":"te\u0078t","text":"x"}]"#, true),
            // Left to the parser.
            (r#"[{"type":"text","text":"x","annotations":{}}]"#, false),
            (
                r#"[{"type":"image","data":"AA==","mimeType":"image/png"}]"#,
                false,
            ),
            (r#"[{"type":"text"}]"#, false),
            (r#"[{"text":"x"}]"#, false),
            (r#"[{"type":"text","text":"x","text":"y"}]"#, false),
            (r#"[{"type":"text","type":"text","text":"y"}]"#, false),
            (r#"[{"t\u0065xt":"x","type":"text"}]"#, false),
            (r#"[{"type":"text","text":"\ud83d\ude00"}]"#, false),
            (r#"[{"type":"text","text":1}]"#, false),
            (r#"[{"type":"text","text":"x"},]"#, false),
            (r#"[{"type":"text","text":"x"}] x"#, false),
            (r#"[{"type":"text","text":"x"}"#, false),
            (r#"[{"type":"text","text":"a\x"}]"#, false),
            (r#"[{"type":"text","text":"\u12"}]"#, false),
            ("[{\"type\":\"text\",\"text\":\"a\u{1}\"}]", false),
            (r#"{"type":"text","text":"x"}"#, false),
        ] {
            check(array, read);
        }
    }

    fn json_string() -> impl Strategy<Value = String> {
        let piece = prop_oneof![
            4 => "[ -~é😀]{0,12}".prop_map(|text| text.replace(['"', '\\'], "")),
            1 => prop::sample::select(vec![
                r#"\""#, r#"\\"#, r#"\/"#, r#"\b"#, r#"\f"#, r#"\n"#, r#"\r"#, r#"\t"#,
                r#"\u0041"#, r#"\u00E9"#, r#"\uffff"#, r#"\ud800"#, r#"\x"#, "\u{1}",
            ])
            .prop_map(str::to_owned),
        ];
        prop::collection::vec(piece, 0..5).prop_map(|pieces| format!("\"{}\"", pieces.concat()))
    }

    fn array() -> impl Strategy<Value = String> {
        let key = prop_oneof![
            4 => Just("\"text\"".to_owned()),
            4 => Just("\"type\"".to_owned()),
            1 => Just("\"annotations\"".to_owned()),
            1 => json_string(),
        ];
        let value = prop_oneof![
            4 => json_string(),
            2 => Just("\"text\"".to_owned()),
            1 => prop::sample::select(vec!["1", "null", "{}", "[]"]).prop_map(str::to_owned),
        ];
        let block = prop::collection::vec((key, value), 0..4).prop_map(|members| {
            let members: Vec<String> = members.iter().map(|(k, v)| format!("{k}:{v}")).collect();
            format!("{{{}}}", members.join(","))
        });
        prop::collection::vec(block, 0..3).prop_map(|blocks| format!("[{}]", blocks.join(",")))
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2048))]

        #[test]
        fn what_it_reads_the_parser_reads_the_same(array in array()) {
            if let Some(fast) = text_blocks(&array) {
                prop_assert_eq!(Some(fast), parsed(&array), "{}", array);
            }
        }

        #[test]
        fn every_text_block_array_is_read(texts in prop::collection::vec(json_string(), 0..4)) {
            let blocks: Vec<String> = texts
                .iter()
                .map(|text| format!(r#"{{"type":"text","text":{text}}}"#))
                .collect();
            let array = format!("[{}]", blocks.join(","));
            let valid = texts.iter().all(|text| serde_json::from_str::<String>(text).is_ok());
            let surrogate = texts.iter().any(|text| text.contains("\\ud8"));
            prop_assert_eq!(text_blocks(&array).is_some(), valid && !surrogate, "{}", array);
        }
    }
}
