//! Tool results in each provider's shape: one snapshot per `tools/call`
//! result holds its Anthropic `tool_result`, OpenAI `function_call_output`
//! and Gemini `functionResponse`.

#![allow(clippy::expect_used)]

use mcp_catalog::convert_result;
use mcp_catalog::results::DEFAULT_MAX_RESULT_BYTES;
use mcp_transport::CallToolResult;
use serde_json::{Value, json};

/// A tiny PNG's base64, as a server would send it.
const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==";

/// Converts the `tools/call` result `raw` and snapshots the three shapes
/// under `name`, with the ids a host would pass.
fn check(name: &str, raw: Value) {
    let result: CallToolResult = serde_json::from_value(raw).expect("a tools/call result");
    let model = convert_result(&result, DEFAULT_MAX_RESULT_BYTES);
    let shapes = json!({
        "anthropic": model.to_anthropic("toolu_01A"),
        "openai": model.to_openai("call_01A"),
        "gemini": model.to_gemini("weather__forecast"),
    });
    // The id form is the plain one plus the call's id.
    let mut with_id = model.to_gemini_with_id("weather__forecast", "fc_1");
    let id = with_id["functionResponse"]
        .as_object_mut()
        .and_then(|response| response.remove("id"));
    assert_eq!(id, Some(json!("fc_1")), "{name}");
    assert_eq!(with_id, shapes["gemini"], "{name}");
    let mut settings = insta::Settings::clone_current();
    // Key order is not part of any API; keep snapshots independent of
    // serde_json's map order.
    settings.set_sort_maps(true);
    settings.set_snapshot_suffix(name);
    settings.bind(|| insta::assert_json_snapshot!("provider_result", shapes));
}

#[test]
fn text_only() {
    check(
        "text",
        json!({"content": [{"type": "text", "text": "sunny, 21 °C"}]}),
    );
}

#[test]
fn several_text_blocks() {
    check(
        "texts",
        json!({"content": [
            {"type": "text", "text": "first"},
            {"type": "text", "text": ""},
            {"type": "resource_link", "uri": "file:///a.txt", "name": "a.txt"},
        ]}),
    );
}

#[test]
fn text_and_image() {
    check(
        "image",
        json!({"content": [
            {"type": "text", "text": "the chart:"},
            {"type": "image", "data": PNG, "mimeType": "image/png"},
        ]}),
    );
}

#[test]
fn image_only_with_upper_case_type() {
    check(
        "image-only",
        json!({"content": [{"type": "image", "data": PNG, "mimeType": "Image/PNG"}]}),
    );
}

#[test]
fn image_type_no_provider_takes() {
    check(
        "svg",
        json!({"content": [
            {"type": "image", "data": "PHN2Zy8+", "mimeType": "image/svg+xml"},
        ]}),
    );
}

#[test]
fn gif_is_not_gemini_s() {
    check(
        "gif",
        json!({"content": [{"type": "image", "data": "R0lGODlhAQABAAAAACw=", "mimeType": "image/gif"}]}),
    );
}

#[test]
fn tool_error() {
    check(
        "error",
        json!({"content": [{"type": "text", "text": "city not found"}], "isError": true}),
    );
}

#[test]
fn empty_result() {
    check("empty", json!({"content": []}));
}

#[test]
fn empty_text_only() {
    check(
        "empty-text",
        json!({"content": [{"type": "text", "text": ""}]}),
    );
}

#[test]
fn structured_content() {
    check(
        "structured",
        json!({
            "content": [{"type": "text", "text": "{\"temp\":21}"}],
            "structuredContent": {"temp": 21},
        }),
    );
}
