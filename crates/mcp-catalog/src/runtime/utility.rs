//! Utility tools: the `resources/*` and `prompts/*` requests a utility tool
//! stands for, each within the tool-call timeout, and the content blocks a
//! model gets from their answers.

use std::sync::Arc;
use std::time::Duration;

use mcp_transport::{CallToolResult, ContentBlock};
use serde_json::{Map, Value, json};

use crate::catalog::UtilityTool;
use crate::deep;
use crate::error::{CatalogError, Cause};
use crate::schema::MAX_JSON_DEPTH;

use super::connection::Connection;

/// Turns a utility's answer into content blocks, cut near a byte cap.
type Shape = fn(&Value, usize) -> Vec<Value>;

/// `future`, failing with a timeout error naming `operation` after
/// `timeout`.
pub(super) async fn within<T>(
    server: &str,
    operation: &str,
    timeout: Duration,
    future: impl std::future::Future<Output = Result<T, CatalogError>>,
) -> Result<T, CatalogError> {
    match tokio::time::timeout(timeout, future).await {
        Ok(result) => result,
        Err(_) => Err(CatalogError::request(
            server,
            operation,
            Cause::TimedOut(timeout),
        )),
    }
}

/// A `tools/call` result as the server sent it, read without recursion
/// limits (it may nest as deep as the transport allows).
pub(super) fn parse_call_result(server: &str, raw: &Value) -> Result<CallToolResult, CatalogError> {
    use serde::Deserialize as _;
    CallToolResult::deserialize(serde_stacker::Deserializer::new(raw)).map_err(|error| {
        CatalogError::request(server, "tools/call", Cause::InvalidResult(Arc::new(error)))
    })
}

/// One utility call: the request it stands for, within the tool-call
/// timeout, shaped into content blocks.
pub(super) struct UtilityCall<'a> {
    pub(super) connection: &'a dyn Connection,
    pub(super) server: &'a str,
    pub(super) timeout: Duration,
    pub(super) max_bytes: usize,
}

impl UtilityCall<'_> {
    pub(super) async fn run(
        &self,
        utility: UtilityTool,
        arguments: Value,
        keep_raw: bool,
    ) -> Result<(CallToolResult, Option<Value>), CatalogError> {
        let string_arg = |name: &str| {
            arguments
                .get(name)
                .and_then(Value::as_str)
                .map(str::to_owned)
        };
        let connection = self.connection;
        let (result, shape): (Value, Shape) = match utility {
            UtilityTool::ResourcesList => (
                self.within(
                    "resources/list",
                    connection.list_resources(string_arg("cursor")),
                )
                .await?,
                |result, max_bytes| vec![json_text(result, max_bytes)],
            ),
            UtilityTool::PromptsList => (
                self.within(
                    "prompts/list",
                    connection.list_prompts(string_arg("cursor")),
                )
                .await?,
                |result, max_bytes| vec![json_text(result, max_bytes)],
            ),
            UtilityTool::ResourcesRead => {
                let uri = string_arg("uri").unwrap_or_default();
                (
                    self.within("resources/read", connection.read_resource(&uri))
                        .await?,
                    resource_contents,
                )
            }
            UtilityTool::PromptsGet => {
                let name = string_arg("name").unwrap_or_default();
                let arguments = prompt_arguments(arguments.get("arguments"));
                (
                    self.within("prompts/get", connection.get_prompt(&name, arguments))
                        .await?,
                    prompt_messages,
                )
            }
        };
        // Shaping copies parts of the answer, which recurses: an answer too
        // deep for that is shown as JSON text, written without recursion.
        let content = if deep::exceeds_depth(&result, MAX_JSON_DEPTH) {
            vec![json_text(&result, self.max_bytes)]
        } else {
            shape(&result, self.max_bytes)
        };
        let raw = if keep_raw {
            Some(result)
        } else {
            deep::dispose(result);
            None
        };
        let result = CallToolResult {
            content: content.into_iter().map(ContentBlock::from).collect(),
            structured_content: None,
            is_error: false,
        };
        Ok((result, raw))
    }

    pub(super) async fn within<T>(
        &self,
        operation: &str,
        future: impl std::future::Future<Output = Result<T, CatalogError>>,
    ) -> Result<T, CatalogError> {
        within(self.server, operation, self.timeout, future).await
    }
}

/// A value as pretty JSON text, cut soon after `max_bytes` (the result
/// is cut there with a note anyway).
fn json_text(value: &Value, max_bytes: usize) -> Value {
    json!({"type": "text", "text": deep::to_json_capped(value, true, max_bytes.saturating_add(1))})
}

/// `resources/read` contents as content blocks: text stays text, an image
/// blob becomes an image, any other blob its uri.
fn resource_contents(result: &Value, max_bytes: usize) -> Vec<Value> {
    let Some(contents) = result.get("contents").and_then(Value::as_array) else {
        return vec![json_text(result, max_bytes)];
    };
    contents
        .iter()
        .map(|item| {
            let mime = item.get("mimeType").and_then(Value::as_str).unwrap_or("");
            match (item.get("text"), item.get("blob")) {
                (Some(_), _) => json!({"type": "resource", "resource": item}),
                (None, Some(blob)) if mime.starts_with("image/") => {
                    json!({"type": "image", "data": blob, "mimeType": mime})
                }
                _ => json!({"type": "resource", "resource": item}),
            }
        })
        .collect()
}

/// `prompts/get` messages as content blocks, text prefixed by the role.
fn prompt_messages(result: &Value, max_bytes: usize) -> Vec<Value> {
    let mut blocks = Vec::new();
    if let Some(description) = result.get("description").and_then(Value::as_str) {
        blocks.push(json!({"type": "text", "text": description}));
    }
    let Some(messages) = result.get("messages").and_then(Value::as_array) else {
        return vec![json_text(result, max_bytes)];
    };
    for message in messages {
        let role = message
            .get("role")
            .and_then(Value::as_str)
            .unwrap_or("user");
        let mut content = message.get("content").cloned().unwrap_or(Value::Null);
        if let Some(Value::String(text)) = content.get_mut("text") {
            *text = format!("{role}: {text}");
        }
        blocks.push(content);
    }
    blocks
}

/// Prompt arguments from the object the utility schema asks for (or the
/// `[{name, value}]` list it asks for under `openai-strict`). `prompts/get`
/// takes strings, so a number or boolean the model sent is written out.
fn prompt_arguments(value: Option<&Value>) -> Map<String, Value> {
    let text = |value: &Value| match value {
        Value::Number(_) | Value::Bool(_) => Value::String(value.to_string()),
        other => other.clone(),
    };
    match value {
        Some(Value::Object(map)) => map
            .iter()
            .map(|(name, value)| (name.clone(), text(value)))
            .collect(),
        Some(Value::Array(pairs)) => pairs
            .iter()
            .filter_map(|pair| {
                let name = pair.get("name")?.as_str()?;
                let value = pair.get("value")?;
                Some((name.to_owned(), text(value)))
            })
            .collect(),
        _ => Map::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(given: Value, expect: Value) {
        let got = Value::Object(prompt_arguments(Some(&given)));
        assert_eq!(got, expect, "{given}");
    }

    #[test]
    fn prompt_arguments_from_either_form() {
        check(
            json!({"who": "ann", "n": 3, "loud": true}),
            json!({"who": "ann", "n": "3", "loud": "true"}),
        );
        check(
            json!([{"name": "who", "value": "ann"}, {"name": "n", "value": 3}, {"value": "x"}]),
            json!({"who": "ann", "n": "3"}),
        );
        check(json!("who=ann"), json!({}));
        check(json!(null), json!({}));
    }
}
