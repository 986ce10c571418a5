//! Arguments on their way to the server: what the `openai-strict`
//! rewrite made the model send is taken back out, so the server sees the
//! arguments its own schema describes.

use serde_json::Value;

use super::limits::MAX_DEPTH;
use super::openai::accepts_null;
use super::resolve_local;

/// For `openai-strict`, optional properties are sent as `null` when the
/// model leaves them out. This drops those `null`s again (following
/// `properties` and `items` of the normalised schema) so the server sees
/// the arguments its own schema describes.
pub fn strip_optional_nulls(normalized: &Value, arguments: &mut Value) {
    strip_nulls(normalized, normalized, arguments, 0);
}

fn strip_nulls(root: &Value, schema: &Value, value: &mut Value, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => match resolve_local(root, reference) {
            Some(target) => target,
            None => return,
        },
        None => schema,
    };
    match value {
        Value::Object(object) => {
            let Some(Value::Object(properties)) = schema.get("properties") else {
                return;
            };
            let required: Vec<&str> = schema
                .get("required")
                .and_then(Value::as_array)
                .map(|r| r.iter().filter_map(Value::as_str).collect())
                .unwrap_or_default();
            object.retain(|name, value| {
                !(value.is_null()
                    && !required.contains(&name.as_str())
                    && properties.get(name).is_some_and(|p| !accepts_null(p)))
            });
            for (name, value) in object.iter_mut() {
                if let Some(property) = properties.get(name) {
                    strip_nulls(root, property, value, depth + 1);
                }
            }
        }
        Value::Array(values) => {
            if let Some(items) = schema.get("items") {
                for value in values {
                    strip_nulls(root, items, value, depth + 1);
                }
            }
        }
        _ => {}
    }
}
