//! Tool results as a model accepts them (REFERENCE §3.5).
//!
//! Models take text and images only. Every other content block is
//! downgraded to text by a fixed table, `structuredContent` (any JSON
//! value, SEP-2106) comes first,
//! `isError` is a status (never a thrown error), and a result over the size
//! cap is cut with a note saying so.

use serde::Serialize;
use serde_json::{Map, Value};

use mcp_transport::types::{MediaContent, TextContent};
use mcp_transport::{CallToolResult, ContentBlock};

use crate::deep;
use crate::schema::MAX_JSON_DEPTH;

mod provider;

/// Default cap on the bytes of one converted result (text plus image data).
pub const DEFAULT_MAX_RESULT_BYTES: usize = 100_000;

/// Whether the tool reported success.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum ResultStatus {
    /// The tool ran and answered.
    Ok,
    /// The tool ran and reported a failure (`isError: true`).
    Error,
}

/// One block a model accepts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "type", rename_all = "lowercase")]
#[non_exhaustive]
pub enum ModelBlock {
    /// Text, from a text block or a resource or structured content the
    /// model gets as text.
    Text {
        /// The text.
        text: String,
    },
    /// An image the provider accepts inline.
    Image {
        /// Base64 data as the server sent it.
        data: String,
        /// The image's media type (`image/png`, …).
        #[serde(rename = "mimeType")]
        mime_type: String,
    },
}

impl ModelBlock {
    fn text(text: impl Into<String>) -> Self {
        ModelBlock::Text { text: text.into() }
    }

    fn size(&self) -> usize {
        match self {
            ModelBlock::Text { text } => text.len(),
            ModelBlock::Image { data, .. } => data.len(),
        }
    }
}

/// A converted tool result.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ModelResult {
    /// Whether the tool reported an error (`isError`).
    pub status: ResultStatus,
    /// The content blocks a model is given, in the server's order.
    pub content: Vec<ModelBlock>,
    /// Whether the size cap cut the result.
    pub truncated: bool,
    /// What the host should know about the call that is not the tool's
    /// answer: top-level arguments the tool's schema does not describe.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

impl ModelResult {
    /// Whether the tool reported a failure.
    pub fn is_error(&self) -> bool {
        self.status == ResultStatus::Error
    }

    /// An error result saying only `text`, for a call whose result the
    /// client refused (a `structuredContent` that breaks the tool's
    /// `outputSchema`).
    pub fn failed(text: impl Into<String>) -> Self {
        ModelResult {
            status: ResultStatus::Error,
            content: vec![ModelBlock::text(text)],
            truncated: false,
            warnings: Vec::new(),
        }
    }
}

/// Converts one content block by the table in REFERENCE §3.5.
pub fn convert_block(block: &ContentBlock) -> ModelBlock {
    convert_block_capped(block, usize::MAX)
}

/// [`convert_block`], writing a block shown as JSON text only up to about
/// `max_len` bytes.
fn convert_block_capped(block: &ContentBlock, max_len: usize) -> ModelBlock {
    match block {
        ContentBlock::Text(text) => ModelBlock::text(&text.text),
        ContentBlock::Image(media) if shows_image(media) => ModelBlock::Image {
            data: media.data.clone(),
            mime_type: media.mime_type.clone(),
        },
        ContentBlock::Audio(media) => audio_note(&media.mime_type),
        ContentBlock::Other(value) => convert_json_block(value, max_len),
        ContentBlock::Image(media) => convert_json_block(&image_as_json(media), max_len),
        // A kind typed later: by the table, from its JSON.
        typed => convert_json_block(&typed.to_value(), max_len),
    }
}

/// An image block the model gets as JSON text (it lacks its data or its
/// media type), as a value to write. Its `annotations` and `_meta` are a
/// server's values, copied only when they nest no deeper than a copy may
/// recurse; past that they are left out of the text.
fn image_as_json(media: &MediaContent) -> Value {
    let shallow = |map: &Option<Map<String, Value>>| {
        map.as_ref().is_none_or(|map| {
            map.values()
                .all(|value| !deep::exceeds_depth(value, MAX_JSON_DEPTH))
        })
    };
    let keep = shallow(&media.annotations) && shallow(&media.meta);
    let copy = |map: &Option<Map<String, Value>>| if keep { map.clone() } else { None };
    ContentBlock::Image(MediaContent {
        data: media.data.clone(),
        mime_type: media.mime_type.clone(),
        annotations: copy(&media.annotations),
        meta: copy(&media.meta),
    })
    .into_value()
}

/// Whether an image block is given to the model as an image.
fn shows_image(media: &MediaContent) -> bool {
    !media.data.is_empty() && !media.mime_type.is_empty()
}

/// What the model is told of an audio block.
fn audio_note(mime_type: &str) -> ModelBlock {
    if mime_type.is_empty() {
        ModelBlock::text("[audio]")
    } else {
        ModelBlock::text(format!("[audio {mime_type}]"))
    }
}

/// [`convert_block_capped`] of a block kept as JSON: any kind but the
/// typed ones, or a typed kind not of its shape.
fn convert_json_block(block: &Value, max_len: usize) -> ModelBlock {
    let as_json_text =
        |block: &Value| ModelBlock::text(deep::to_json_capped(block, false, max_len));
    let kind = block.get("type").and_then(Value::as_str).unwrap_or("");
    let str_field = |name: &str| block.get(name).and_then(Value::as_str);
    match kind {
        "text" => match str_field("text") {
            Some(text) => ModelBlock::text(text),
            None => as_json_text(block),
        },
        "image" => match (str_field("data"), str_field("mimeType")) {
            (Some(data), Some(mime_type)) if !data.is_empty() && !mime_type.is_empty() => {
                ModelBlock::Image {
                    data: data.to_owned(),
                    mime_type: mime_type.to_owned(),
                }
            }
            _ => as_json_text(block),
        },
        "audio" => audio_note(str_field("mimeType").unwrap_or("")),
        "resource_link" => {
            let Some(uri) = str_field("uri") else {
                return as_json_text(block);
            };
            let label = str_field("title")
                .filter(|t| !t.is_empty())
                .or_else(|| str_field("name").filter(|n| !n.is_empty()));
            match label {
                Some(label) => ModelBlock::text(format!("[{label}] {uri}")),
                None => ModelBlock::text(uri),
            }
        }
        "resource" => {
            let resource = block.get("resource");
            let text = resource.and_then(|r| r.get("text")).and_then(Value::as_str);
            let uri = resource.and_then(|r| r.get("uri")).and_then(Value::as_str);
            match (text, uri) {
                (Some(text), _) => ModelBlock::text(text),
                (None, Some(uri)) => ModelBlock::text(uri),
                (None, None) => as_json_text(block),
            }
        }
        _ => as_json_text(block),
    }
}

/// Whether a text block only repeats the structured content. The parser
/// stops at 128 levels, and the comparison recurses no deeper than the
/// parsed side.
fn repeats(text: &str, structured: &Value) -> bool {
    serde_json::from_str::<Value>(text.trim()).is_ok_and(|parsed| &parsed == structured)
}

/// Drops a result without recursion (its values may nest any depth).
pub fn dispose_result(result: CallToolResult) {
    result.content.into_iter().for_each(dispose_block);
    if let Some(structured) = result.structured_content {
        deep::dispose(structured);
    }
}

/// Converts a `tools/call` result, cutting it at `max_bytes`. Reads the
/// result at any depth without recursion. Every string the model gets is
/// copied out of `result`; a caller that owns the result and is done with
/// it saves those copies with [`convert_result_owned`].
pub fn convert_result(result: &CallToolResult, max_bytes: usize) -> ModelResult {
    let cap = max_bytes.saturating_add(1);
    let structured = result.structured_content.as_ref();
    let converted = result
        .content
        .iter()
        .map(|block| (is_text_block(block), convert_block_capped(block, cap)));
    assemble(result.is_error, structured, converted, max_bytes)
}

/// [`convert_result`] of a result the caller is done with: the text of
/// text and embedded-resource blocks and the data of images move into the
/// model's blocks instead of being copied (they are most of a result's
/// bytes), and the rest is dropped without recursion. Gives exactly what
/// [`convert_result`] gives.
pub fn convert_result_owned(result: CallToolResult, max_bytes: usize) -> ModelResult {
    let cap = max_bytes.saturating_add(1);
    let structured = result.structured_content;
    let converted = result.content.into_iter().map(|block| {
        let text = is_text_block(&block);
        (text, convert_block_owned(block, cap))
    });
    let model = assemble(result.is_error, structured.as_ref(), converted, max_bytes);
    if let Some(structured) = structured {
        deep::dispose(structured);
    }
    model
}

/// Drops a block without recursion.
fn dispose_block(block: ContentBlock) {
    match block {
        ContentBlock::Text(text) => dispose_maps([text.annotations, text.meta]),
        ContentBlock::Image(media) | ContentBlock::Audio(media) => {
            dispose_maps([media.annotations, media.meta]);
        }
        other => deep::dispose(other.into_value()),
    }
}

/// Drops a typed block's `annotations` and `_meta` without recursion.
fn dispose_maps(maps: [Option<Map<String, Value>>; 2]) {
    maps.into_iter()
        .flatten()
        .for_each(|map| deep::dispose(Value::Object(map)));
}

/// Whether a block says it is text (a repeat of the structured content is
/// looked for only in those).
fn is_text_block(block: &ContentBlock) -> bool {
    block.kind() == Some("text")
}

/// [`convert_block_capped`] of a block the caller is done with, moving
/// the strings it keeps.
fn convert_block_owned(block: ContentBlock, max_len: usize) -> ModelBlock {
    match block {
        ContentBlock::Text(TextContent {
            text,
            annotations,
            meta,
        }) => {
            dispose_maps([annotations, meta]);
            ModelBlock::Text { text }
        }
        ContentBlock::Other(value) => convert_json_block_owned(value, max_len),
        ContentBlock::Image(media) if shows_image(&media) => {
            dispose_maps([media.annotations, media.meta]);
            ModelBlock::Image {
                data: media.data,
                mime_type: media.mime_type,
            }
        }
        other => {
            let converted = convert_block_capped(&other, max_len);
            dispose_block(other);
            converted
        }
    }
}

/// [`convert_json_block`] of a block the caller is done with, moving the
/// strings it keeps.
fn convert_json_block_owned(block: Value, max_len: usize) -> ModelBlock {
    let mut map = match block {
        Value::Object(map) => map,
        other => {
            let converted = convert_json_block(&other, max_len);
            deep::dispose(other);
            return converted;
        }
    };
    let kind = map.get("type").and_then(Value::as_str).unwrap_or("");
    let non_empty = |map: &serde_json::Map<String, Value>, name: &str| {
        map.get(name)
            .and_then(Value::as_str)
            .is_some_and(|s| !s.is_empty())
    };
    // Only where the table keeps a string exactly as sent; every other
    // block is written out by the table itself.
    let moved = match kind {
        "text" => take_string(&mut map, "text").map(|text| ModelBlock::Text { text }),
        "image" if non_empty(&map, "data") && non_empty(&map, "mimeType") => {
            match (
                take_string(&mut map, "data"),
                take_string(&mut map, "mimeType"),
            ) {
                (Some(data), Some(mime_type)) => Some(ModelBlock::Image { data, mime_type }),
                _ => None,
            }
        }
        "resource" => match map.get_mut("resource") {
            Some(Value::Object(resource)) => {
                take_string(resource, "text").map(|text| ModelBlock::Text { text })
            }
            _ => None,
        },
        _ => None,
    };
    let rest = Value::Object(map);
    let converted = match moved {
        Some(block) => block,
        None => convert_json_block(&rest, max_len),
    };
    deep::dispose(rest);
    converted
}

/// Moves the string at `name` out of `map`, leaving anything else there.
fn take_string(map: &mut serde_json::Map<String, Value>, name: &str) -> Option<String> {
    match map.get_mut(name) {
        Some(Value::String(text)) => Some(std::mem::take(text)),
        _ => None,
    }
}

/// The shared end of both conversions: structured content first, repeats
/// of it dropped, a note for an empty result, then the size cap.
fn assemble(
    is_error: bool,
    structured: Option<&Value>,
    converted: impl ExactSizeIterator<Item = (bool, ModelBlock)>,
    max_bytes: usize,
) -> ModelResult {
    let status = if is_error {
        ResultStatus::Error
    } else {
        ResultStatus::Ok
    };
    let mut blocks = Vec::with_capacity(converted.len() + 1);
    if let Some(structured) = structured {
        // One byte over the cap is enough to know it is cut.
        let pretty = deep::to_json_capped(structured, true, max_bytes.saturating_add(1));
        blocks.push(ModelBlock::text(format!("structuredContent:\n{pretty}")));
    }
    for (text_block, converted) in converted {
        if let (Some(structured), ModelBlock::Text { text }) = (structured, &converted)
            && text_block
            && repeats(text, structured)
        {
            continue;
        }
        blocks.push(converted);
    }
    if blocks.is_empty() {
        let note = match status {
            ResultStatus::Ok => "the tool completed without content",
            ResultStatus::Error => "the tool failed without content",
        };
        blocks.push(ModelBlock::text(note));
    }
    truncate(status, blocks, max_bytes)
}

/// Longest media type a note about a left-out image repeats.
const MAX_NOTE_MIME_TYPE: usize = 64;

/// At most `max` bytes of `text`, cut at a character boundary.
fn prefix(text: &str, max: usize) -> &str {
    let mut end = max.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

fn truncate(status: ResultStatus, blocks: Vec<ModelBlock>, max_bytes: usize) -> ModelResult {
    let total: usize = blocks.iter().map(ModelBlock::size).sum();
    if total <= max_bytes {
        return ModelResult {
            status,
            content: blocks,
            truncated: false,
            warnings: Vec::new(),
        };
    }
    let mut budget = max_bytes;
    let mut kept = Vec::with_capacity(blocks.len() + 1);
    for block in blocks {
        let size = block.size();
        if size <= budget {
            budget -= size;
            kept.push(block);
            continue;
        }
        match block {
            ModelBlock::Text { text } if budget > 0 => {
                let mut end = budget;
                while !text.is_char_boundary(end) {
                    end -= 1;
                }
                budget -= end;
                kept.push(ModelBlock::text(&text[..end]));
            }
            ModelBlock::Text { .. } => {}
            ModelBlock::Image { mime_type, data } => {
                // The type is the server's text: cut, so the note stays small.
                kept.push(ModelBlock::text(format!(
                    "[image {} of {} bytes left out]",
                    prefix(&mime_type, MAX_NOTE_MIME_TYPE),
                    data.len()
                )));
            }
        }
    }
    kept.push(ModelBlock::text(format!(
        "[result truncated: {total} bytes, limit {max_bytes}]"
    )));
    ModelResult {
        status,
        content: kept,
        truncated: true,
        warnings: Vec::new(),
    }
}
