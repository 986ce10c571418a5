//! Feeds any JSON value as a `tools/call` result to the conversion a model
//! sees (REFERENCE §3.5: `structuredContent` first, blocks downgraded to
//! text and images, `isError` a status, a size cap).
//!
//! The first byte picks a small size cap, the rest is the JSON; every
//! result is converted with that cap and with the default one. Checks:
//! nothing panics; there is always at least one block; the status follows
//! `isError`; images keep non-empty data and type; a result within the cap
//! is whole and one over it is cut, says so in its last block and stays
//! within the cap plus a bounded allowance for the notes; a result read
//! from the text is the result read from its value (content blocks are
//! sorted into typed and JSON ones the same way on both paths).

#![no_main]

use libfuzzer_sys::fuzz_target;
use mcp_catalog::results::DEFAULT_MAX_RESULT_BYTES;
use mcp_catalog::{ModelBlock, ModelResult, convert_result};
use mcp_transport::CallToolResult;
use serde_json::Value;

/// Bytes a note about an image left out, or about the cut, may add.
const NOTE_ALLOWANCE: usize = 160;

fn size(block: &ModelBlock) -> usize {
    match block {
        ModelBlock::Text { text } => text.len(),
        ModelBlock::Image { data, .. } => data.len(),
        // A kind added later: counted by its JSON, as a model would get it.
        other => serde_json::to_string(other).map_or(0, |json| json.len()),
    }
}

fn check(result: &CallToolResult, converted: &ModelResult, max_bytes: usize) {
    assert!(
        !converted.content.is_empty(),
        "a converted result has no block"
    );
    assert_eq!(
        converted.is_error(),
        result.is_error,
        "status differs from isError"
    );
    for block in &converted.content {
        if let ModelBlock::Image { data, mime_type } = block {
            assert!(
                !data.is_empty() && !mime_type.is_empty(),
                "an empty image block"
            );
        }
    }
    let total: usize = converted.content.iter().map(size).sum();
    if converted.truncated {
        let Some(ModelBlock::Text { text }) = converted.content.last() else {
            panic!("a cut result does not end with a note");
        };
        assert!(
            text.starts_with("[result truncated"),
            "the last block is {text:?}"
        );
        let notes = converted
            .content
            .iter()
            .filter(|b| matches!(b, ModelBlock::Text { text } if text.starts_with("[image ")))
            .count()
            + 1;
        assert!(
            total <= max_bytes + notes * NOTE_ALLOWANCE,
            "a cut result holds {total} bytes, cap {max_bytes}, {notes} note(s)"
        );
    } else {
        assert!(
            total <= max_bytes,
            "an uncut result holds {total} bytes, cap {max_bytes}"
        );
    }
    let _ = serde_json::to_string(converted);
}

fuzz_target!(|data: &[u8]| {
    let Some((&cap, json)) = data.split_first() else {
        return;
    };
    let Ok(value) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let from_text = serde_json::from_slice::<CallToolResult>(json);
    let from_value = serde_json::from_value::<CallToolResult>(value);
    // A member given twice at the top is refused from text and read (the
    // last one) from a value; whatever the text gives, its value gives too.
    if let Ok(from_text) = &from_text {
        assert_eq!(
            from_value.as_ref().ok(),
            Some(from_text),
            "text and its value read differently"
        );
    }
    let Ok(result) = from_value else {
        return;
    };
    let small = usize::from(cap) * 8;
    for max_bytes in [small, DEFAULT_MAX_RESULT_BYTES] {
        let converted = convert_result(&result, max_bytes);
        check(&result, &converted, max_bytes);
    }
});
