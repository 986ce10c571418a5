//! The result-conversion table of REFERENCE §3.5, block by block.

use mcp_catalog::results::{convert_block, convert_result_owned};
use mcp_catalog::{ModelBlock, ResultStatus, convert_result};
use mcp_transport::{CallToolResult, ContentBlock};
use serde_json::{Value, json};

fn text(t: &str) -> ModelBlock {
    ModelBlock::Text { text: t.to_owned() }
}

/// Converts one block, typed as the client reads it and kept as JSON
/// (how a block of its kind but not of its shape is kept), and compares.
fn check(block: Value, expect: ModelBlock) {
    assert_eq!(
        convert_block(&ContentBlock::from(block.clone())),
        expect,
        "block {block}"
    );
    assert_eq!(
        convert_block(&ContentBlock::Other(block.clone())),
        expect,
        "block {block} as JSON"
    );
}

#[test]
fn text_block() {
    check(json!({"type": "text", "text": "hello"}), text("hello"));
    check(
        json!({"type": "text", "text": "", "annotations": {"x": 1}}),
        text(""),
    );
    // malformed text block: JSON text
    check(json!({"type": "text"}), text(r#"{"type":"text"}"#));
}

#[test]
fn image_block() {
    check(
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
        ModelBlock::Image {
            data: "iVBORw0KGgo=".into(),
            mime_type: "image/png".into(),
        },
    );
}

#[test]
fn malformed_image_blocks_become_json_text() {
    for block in [
        json!({"type": "image", "mimeType": "image/png"}),
        json!({"type": "image", "data": "AAAA"}),
        json!({"type": "image", "data": 42, "mimeType": "image/png"}),
        json!({"type": "image", "data": "AAAA", "mimeType": null}),
        json!({"type": "image", "data": "", "mimeType": "image/png"}),
    ] {
        let expect = text(&serde_json::to_string(&block).unwrap());
        check(block, expect);
    }
}

#[test]
fn audio_block() {
    check(
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
        text("[audio audio/wav]"),
    );
    check(json!({"type": "audio", "data": "AAAA"}), text("[audio]"));
}

#[test]
fn resource_link_block() {
    check(
        json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt", "title": "The A"}),
        text("[The A] file:///a.txt"),
    );
    check(
        json!({"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"}),
        text("[a.txt] file:///a.txt"),
    );
    check(
        json!({"type": "resource_link", "uri": "file:///a.txt"}),
        text("file:///a.txt"),
    );
    check(
        json!({"type": "resource_link", "uri": "file:///a.txt", "name": ""}),
        text("file:///a.txt"),
    );
}

#[test]
fn embedded_resource_block() {
    check(
        json!({"type": "resource", "resource": {"uri": "test://1", "mimeType": "text/plain", "text": "body"}}),
        text("body"),
    );
    check(
        json!({"type": "resource", "resource": {"uri": "test://2", "mimeType": "application/octet-stream", "blob": "AAAA"}}),
        text("test://2"),
    );
    check(json!({"type": "resource"}), text(r#"{"type":"resource"}"#));
}

#[test]
fn unknown_block_becomes_json_text() {
    check(
        json!({"type": "hologram", "depth": 3}),
        text(r#"{"type":"hologram","depth":3}"#),
    );
    check(json!("just a string"), text(r#""just a string""#));
}

fn result(content: Vec<Value>, structured: Option<Value>, is_error: bool) -> CallToolResult {
    CallToolResult {
        content: content.into_iter().map(ContentBlock::from).collect(),
        structured_content: structured,
        is_error,
    }
}

#[test]
fn structured_content_comes_first_and_repeats_are_dropped() {
    let structured = json!({"temperature": 21.5, "unit": "C"});
    let converted = convert_result(
        &result(
            vec![
                json!({"type": "text", "text": "{\"unit\":\"C\",\"temperature\":21.5}"}),
                json!({"type": "text", "text": "sunny"}),
            ],
            Some(structured.clone()),
            false,
        ),
        100_000,
    );
    let pretty = serde_json::to_string_pretty(&structured).unwrap();
    assert_eq!(
        converted.content,
        vec![
            text(&format!("structuredContent:\n{pretty}")),
            text("sunny")
        ]
    );
    assert_eq!(converted.status, ResultStatus::Ok);
}

/// Converts a result with `structured` and one text block `text`.
fn check_structured(structured: Value, text_block: &str, expect: Vec<ModelBlock>) {
    let converted = convert_result(
        &result(
            vec![json!({"type": "text", "text": text_block})],
            Some(structured.clone()),
            false,
        ),
        1000,
    );
    assert_eq!(converted.content, expect, "{structured}");
}

/// SEP-2106: `structuredContent` may be any JSON value; it comes first
/// whatever its type, and a text block repeating it is dropped.
#[test]
fn structured_content_of_any_json_type_comes_first() {
    check_structured(json!(1), "1", vec![text("structuredContent:\n1")]);
    check_structured(
        json!("sunny"),
        "it is sunny",
        vec![text("structuredContent:\n\"sunny\""), text("it is sunny")],
    );
    check_structured(
        json!([{"id": "u1"}]),
        "[{\"id\": \"u1\"}]",
        vec![text(
            "structuredContent:\n[\n  {\n    \"id\": \"u1\"\n  }\n]",
        )],
    );
    check_structured(
        json!(false),
        "done",
        vec![text("structuredContent:\nfalse"), text("done")],
    );
}

#[test]
fn is_error_is_a_status() {
    let converted = convert_result(
        &result(vec![json!({"type": "text", "text": "boom"})], None, true),
        1000,
    );
    assert_eq!(converted.status, ResultStatus::Error);
    assert!(converted.is_error());
    assert_eq!(converted.content, vec![text("boom")]);
}

#[test]
fn empty_results_say_so() {
    assert_eq!(
        convert_result(&result(vec![], None, false), 1000).content,
        vec![text("the tool completed without content")]
    );
    assert_eq!(
        convert_result(&result(vec![], None, true), 1000).content,
        vec![text("the tool failed without content")]
    );
}

#[test]
fn oversized_results_are_cut_with_a_note() {
    let long = "é".repeat(100); // 200 bytes
    let converted = convert_result(
        &result(
            vec![
                json!({"type": "text", "text": long}),
                json!({"type": "image", "data": "A".repeat(50), "mimeType": "image/png"}),
            ],
            None,
            false,
        ),
        101,
    );
    assert!(converted.truncated);
    let ModelBlock::Text { text: first } = &converted.content[0] else {
        panic!("text first")
    };
    assert_eq!(
        first,
        &"é".repeat(50),
        "cut at a character boundary within the cap"
    );
    assert_eq!(
        converted.content[1],
        text("[image image/png of 50 bytes left out]")
    );
    assert_eq!(
        converted.content[2],
        text("[result truncated: 250 bytes, limit 101]")
    );
}

#[test]
fn a_left_out_image_note_stays_small_whatever_its_type() {
    let mime_type = format!("image/{}", "é".repeat(500));
    let converted = convert_result(
        &result(
            vec![json!({"type": "image", "data": "A".repeat(50), "mimeType": mime_type})],
            None,
            false,
        ),
        16,
    );
    assert!(converted.truncated);
    let total: usize = converted
        .content
        .iter()
        .map(|b| match b {
            ModelBlock::Text { text } => text.len(),
            ModelBlock::Image { data, .. } => data.len(),
            other => panic!("unexpected block {other:?}"),
        })
        .sum();
    assert!(total < 200, "{:?}", converted.content);
}

#[test]
fn results_within_the_cap_are_untouched() {
    let converted = convert_result(
        &result(vec![json!({"type": "text", "text": "abc"})], None, false),
        3,
    );
    assert!(!converted.truncated);
    assert_eq!(converted.content, vec![text("abc")]);
}

/// Converting a result the caller gives up moves its strings instead of
/// copying them, and must give the model exactly the same blocks, for
/// every kind of block the table knows, malformed ones included.
#[test]
fn converting_an_owned_result_gives_what_converting_a_borrowed_one_gives() {
    let structured = json!({"temperature": 21.5, "unit": "C"});
    let blocks = vec![
        json!({"type": "text", "text": "hello", "annotations": {"x": [1, 2]}}),
        json!({"type": "text", "text": "{\"unit\":\"C\",\"temperature\":21.5}"}),
        json!({"type": "text"}),
        json!({"type": "text", "text": 7}),
        json!({"type": "image", "data": "iVBORw0KGgo=", "mimeType": "image/png"}),
        json!({"type": "image", "data": "", "mimeType": "image/png"}),
        json!({"type": "image", "data": "AAAA"}),
        json!({"type": "audio", "data": "AAAA", "mimeType": "audio/wav"}),
        json!({"type": "resource_link", "uri": "file:///a", "name": "a"}),
        json!({"type": "resource", "resource": {"uri": "file:///b", "text": "body"}}),
        json!({"type": "resource", "resource": {"uri": "file:///c", "blob": "AAAA"}}),
        json!({"type": "resource", "resource": "not an object"}),
        json!({"type": "mystery", "payload": {"deep": [true]}}),
        json!("just a string"),
        json!(null),
    ];
    let cases = [
        result(blocks.clone(), None, false),
        result(blocks.clone(), Some(structured.clone()), true),
        result(blocks.clone(), Some(json!([1])), false),
        result(
            vec![
                json!({"type": "text", "text": "unit", "extra": "x"}),
                json!({"type": "text"}),
            ],
            Some(json!({"type": "text", "extra": "x"})),
            false,
        ),
        result(vec![], None, true),
        result(vec![], Some(structured), false),
    ];
    for case in cases {
        for max_bytes in [0, 5, 40, 200, 100_000] {
            assert_eq!(
                convert_result_owned(case.clone(), max_bytes),
                convert_result(&case, max_bytes),
                "{case:?} at {max_bytes} bytes"
            );
        }
    }
}
