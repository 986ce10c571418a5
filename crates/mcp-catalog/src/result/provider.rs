//! A [`ModelResult`] in the shape each provider's API takes a tool's answer
//! back: an Anthropic `tool_result` content block, an OpenAI Responses
//! `function_call_output` input item, a Gemini `functionResponse` part.
//!
//! The host passes the id (or, for Gemini, the function name) the model
//! used when it asked for the call; the shapes hold nothing else the host
//! has to fill in. Each API takes images of a few media types only and
//! rejects the whole request for any other, so an image of another type is
//! replaced by a note saying what was left out. The host-facing parts of a
//! result (`truncated`, `warnings`) are not the model's and stay out.

use serde_json::{Map, Value, json};

use super::{ModelBlock, ModelResult, ResultStatus};

/// Image media types the Anthropic Messages API takes in a `base64` source.
const ANTHROPIC_IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Image media types OpenAI's vision models take (GIF only unanimated,
/// which cannot be told from the type).
const OPENAI_IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/gif", "image/webp"];

/// Image media types Gemini takes in a function response's `inlineData`.
const GEMINI_IMAGE_TYPES: &[&str] = &["image/jpeg", "image/png", "image/webp"];

/// How text blocks are joined where an API takes one string.
const TEXT_SEPARATOR: &str = "\n\n";

/// One block as a provider takes it: text, or an image it accepts.
enum Part<'a> {
    Text(std::borrow::Cow<'a, str>),
    Image { media_type: String, data: &'a str },
}

/// The blocks of `result` for a provider accepting `accepted` image types,
/// an image of any other type turned into a note naming the provider.
fn parts<'a>(result: &'a ModelResult, accepted: &[&str], provider: &str) -> Vec<Part<'a>> {
    result
        .content
        .iter()
        .map(|block| match block {
            ModelBlock::Text { text } => Part::Text(text.as_str().into()),
            ModelBlock::Image { data, mime_type } => {
                // Media types are case-insensitive; the APIs compare exactly.
                let media_type = mime_type.trim().to_ascii_lowercase();
                if accepted.contains(&media_type.as_str()) {
                    Part::Image { media_type, data }
                } else {
                    Part::Text(
                        format!(
                            "[image {} left out: {provider} does not accept this type]",
                            super::prefix(mime_type, super::MAX_NOTE_MIME_TYPE)
                        )
                        .into(),
                    )
                }
            }
        })
        .collect()
}

/// Every non-empty text part joined into one string, for APIs that take
/// one.
fn joined_text(parts: &[Part<'_>]) -> String {
    let texts: Vec<&str> = parts
        .iter()
        .filter_map(|part| match part {
            Part::Text(text) if !text.is_empty() => Some(text.as_ref()),
            _ => None,
        })
        .collect();
    texts.join(TEXT_SEPARATOR)
}

impl ModelResult {
    /// The result as an Anthropic Messages `tool_result` content block,
    /// answering the `tool_use` block whose id is `tool_use_id`:
    /// `{"type":"tool_result","tool_use_id":…,"content":[…],"is_error":…}`.
    ///
    /// Text blocks stay separate `text` blocks and images become `image`
    /// blocks with a `base64` source. Empty text blocks are left out (the
    /// API rejects them); a result with nothing else has no `content`.
    pub fn to_anthropic(&self, tool_use_id: &str) -> Value {
        let content: Vec<Value> = parts(self, ANTHROPIC_IMAGE_TYPES, "anthropic")
            .into_iter()
            .filter_map(|part| match part {
                Part::Text(text) if text.is_empty() => None,
                Part::Text(text) => Some(json!({"type": "text", "text": text})),
                Part::Image { media_type, data } => Some(json!({
                    "type": "image",
                    "source": {"type": "base64", "media_type": media_type, "data": data},
                })),
            })
            .collect();
        let mut block = Map::new();
        block.insert("type".into(), "tool_result".into());
        block.insert("tool_use_id".into(), tool_use_id.into());
        if !content.is_empty() {
            block.insert("content".into(), Value::Array(content));
        }
        block.insert(
            "is_error".into(),
            Value::Bool(self.status == ResultStatus::Error),
        );
        Value::Object(block)
    }

    /// The result as an OpenAI Responses `function_call_output` input item,
    /// answering the `function_call` whose `call_id` is `call_id`:
    /// `{"type":"function_call_output","call_id":…,"output":…}`.
    ///
    /// A result of text only gives `output` as one string (its text blocks
    /// joined by a blank line), the form every Responses model takes; a
    /// result with an image gives a list of `input_text` and `input_image`
    /// items (the image as a `data:` URL), in the blocks' order. The item
    /// has no error flag: a failed call is told by its text alone.
    pub fn to_openai(&self, call_id: &str) -> Value {
        let parts = parts(self, OPENAI_IMAGE_TYPES, "openai");
        let has_image = parts.iter().any(|part| matches!(part, Part::Image { .. }));
        let output = if has_image {
            Value::Array(
                parts
                    .into_iter()
                    .filter_map(|part| match part {
                        Part::Text(text) if text.is_empty() => None,
                        Part::Text(text) => Some(json!({"type": "input_text", "text": text})),
                        Part::Image { media_type, data } => Some(json!({
                            "type": "input_image",
                            "image_url": format!("data:{media_type};base64,{data}"),
                            "detail": "auto",
                        })),
                    })
                    .collect(),
            )
        } else {
            Value::String(joined_text(&parts))
        };
        json!({"type": "function_call_output", "call_id": call_id, "output": output})
    }

    /// The result as a Gemini `functionResponse` part, answering the
    /// `functionCall` of the function named `name`:
    /// `{"functionResponse":{"name":…,"response":{"output":…}}}`.
    ///
    /// The text blocks, joined by a blank line, are `response.output`, or
    /// `response.error` when the tool reported a failure (the two keys the
    /// API documents). Images go in `functionResponse.parts` as
    /// `inlineData`, which Gemini 3 models read; older models ignore them.
    pub fn to_gemini(&self, name: &str) -> Value {
        self.gemini(name, None)
    }

    /// [`ModelResult::to_gemini`] with the `id` of the `functionCall`, which
    /// the Gemini Developer API sends and matches (Vertex AI sends none).
    pub fn to_gemini_with_id(&self, name: &str, id: &str) -> Value {
        self.gemini(name, Some(id))
    }

    fn gemini(&self, name: &str, id: Option<&str>) -> Value {
        let parts = parts(self, GEMINI_IMAGE_TYPES, "gemini");
        let key = match self.status {
            ResultStatus::Ok => "output",
            ResultStatus::Error => "error",
        };
        let mut response = Map::new();
        response.insert(key.into(), Value::String(joined_text(&parts)));
        let media: Vec<Value> = parts
            .into_iter()
            .filter_map(|part| match part {
                Part::Image { media_type, data } => {
                    Some(json!({"inlineData": {"mimeType": media_type, "data": data}}))
                }
                Part::Text(_) => None,
            })
            .collect();
        let mut function_response = Map::new();
        if let Some(id) = id {
            function_response.insert("id".into(), id.into());
        }
        function_response.insert("name".into(), name.into());
        function_response.insert("response".into(), Value::Object(response));
        if !media.is_empty() {
            function_response.insert("parts".into(), Value::Array(media));
        }
        json!({"functionResponse": function_response})
    }
}
