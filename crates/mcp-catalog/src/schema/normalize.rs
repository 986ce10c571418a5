//! Normalisation into plain draft 2020-12 (REFERENCE §3.4): the rewrite
//! rules, and the read-only test of whether a schema needs any, which
//! lets an already normal schema be shared instead of copied.

use serde_json::{Map, Value, json};

use crate::deep;

use super::limits::{MAX_DEPTH, MAX_JSON_DEPTH};
use super::{Keyword, for_each_subschema, keyword};

/// Normalises a tool's input schema (REFERENCE §3.4). Idempotent. A
/// schema nesting deeper than [`MAX_JSON_DEPTH`] is not read at all and
/// becomes `false` (accepts nothing), which every profile refuses.
pub fn normalize(schema: &Value) -> Value {
    normalize_tracking_moves(schema).0
}

/// [`normalize`], and whether it moved a subschema to another place
/// (`additionalProperties` into `patternProperties`, an `anyOf` or
/// `allOf` under a new `allOf`), where a reference written against the
/// schema as sent may name something else in the normal form. Without a
/// move every other rule only removes keywords that hold no subschema,
/// rewrites `type`, or appends subschemas; so every reference resolves
/// to the same place in both, and the normal form has every subschema
/// and every edge of the schema as sent, and more.
pub(super) fn normalize_tracking_moves(schema: &Value) -> (Value, bool) {
    if deep::exceeds_depth(schema, MAX_JSON_DEPTH) {
        return (Value::Bool(false), true);
    }
    let mut out = schema.clone();
    let mut moved = false;
    normalize_in_place(&mut out, 0, &mut moved);
    if let Value::Object(map) = &mut out {
        if !map.contains_key("type") {
            map.insert("type".into(), json!("object"));
        }
    } else if out != Value::Bool(false) {
        // `true`, null or a non-schema: any object
        out = json!({"type": "object"});
    }
    (out, moved)
}

fn normalize_in_place(schema: &mut Value, depth: usize, moved: &mut bool) {
    let Value::Object(map) = schema else {
        return;
    };
    if depth > MAX_DEPTH {
        // Deeper than any profile accepts (`check_limits` refuses it):
        // left as it is, so the refusal names its real depth.
        return;
    }
    if needs_rewrite(map) {
        *moved |= rewrite(map);
    }
    for_each_subschema(map, |sub| normalize_in_place(sub, depth + 1, moved));
}

/// Whether any normalisation rule applies to this schema object itself.
/// A linear scan: schema objects are small, and most need nothing.
fn needs_rewrite(map: &Map<String, Value>) -> bool {
    map.iter().any(|(key, value)| match key.as_str() {
        "format" | "nullable" => true,
        "$dynamicRef" => !map.contains_key("$ref"),
        "type" => {
            value.is_array()
                || (value.as_str() == Some("array")
                    && !map.contains_key("items")
                    && !map.contains_key("prefixItems"))
        }
        "additionalProperties" => {
            value.is_object()
                && !map.contains_key("properties")
                && !map.contains_key("patternProperties")
        }
        _ => false,
    })
}

/// Applies the rules to one schema object; whether a subschema moved.
fn rewrite(map: &mut Map<String, Value>) -> bool {
    let mut moved = false;
    map.remove("format");

    if let Some(nullable) = map.remove("nullable")
        && nullable == Value::Bool(true)
    {
        add_null(map);
    }

    if let Some(Value::Array(list)) = map.get_mut("type") {
        // Taken, not copied: every branch below replaces or removes it.
        let mut types = std::mem::take(list);
        types.dedup();
        match types.len() {
            0 => {
                map.remove("type");
            }
            1 => {
                if let Some(slot) = map.get_mut("type") {
                    *slot = types.remove(0);
                }
            }
            _ => {
                map.remove("type");
                let branches: Vec<Value> = types.into_iter().map(|t| json!({"type": t})).collect();
                match map.remove("anyOf") {
                    Some(existing) => {
                        moved = true;
                        let mut all = match map.remove("allOf") {
                            Some(Value::Array(all)) => all,
                            Some(other) => vec![other],
                            None => Vec::new(),
                        };
                        all.push(json!({"anyOf": existing}));
                        all.push(json!({"anyOf": branches}));
                        map.insert("allOf".into(), Value::Array(all));
                    }
                    None => {
                        map.insert("anyOf".into(), Value::Array(branches));
                    }
                }
            }
        }
    }

    if !map.contains_key("$ref")
        && let Some(dynamic) = map.remove("$dynamicRef")
    {
        map.insert("$ref".into(), dynamic);
    }

    let has_named_properties =
        map.contains_key("properties") || map.contains_key("patternProperties");
    if !has_named_properties
        && matches!(map.get("additionalProperties"), Some(Value::Object(_)))
        && let Some(values) = map.remove("additionalProperties")
    {
        moved = true;
        map.insert("patternProperties".into(), json!({ ".*": values }));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }

    if map.get("type").and_then(Value::as_str) == Some("array")
        && !map.contains_key("items")
        && !map.contains_key("prefixItems")
    {
        map.insert("items".into(), json!({}));
    }
    moved
}

/// Adds `null` to what a schema accepts (`nullable: true`).
fn add_null(map: &mut Map<String, Value>) {
    match map.get_mut("type") {
        Some(slot @ Value::String(_)) => {
            if slot.as_str() != Some("null") {
                let t = std::mem::take(slot);
                *slot = Value::Array(vec![t, Value::String("null".into())]);
            }
        }
        Some(Value::Array(types)) => {
            if !types.contains(&json!("null")) {
                types.push(json!("null"));
            }
        }
        _ => {
            if let Some(Value::Array(branches)) = map.get_mut("anyOf")
                && !branches
                    .iter()
                    .any(|b| b.get("type") == Some(&json!("null")))
            {
                branches.push(json!({"type": "null"}));
            }
        }
    }
    if let Some(Value::Array(values)) = map.get_mut("enum")
        && !values.contains(&Value::Null)
    {
        values.push(Value::Null);
    }
}

/// Whether [`normalize`] would return `schema` unchanged. Mirrors
/// `normalize_in_place`; a top level that is not an object counts as not
/// normal.
pub(super) fn is_normal(schema: &Value) -> bool {
    matches!(schema, Value::Object(map) if map.contains_key("type")) && is_normal_at(schema, 0)
}

fn is_normal_at(schema: &Value, depth: usize) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    if depth > MAX_DEPTH {
        return true;
    }
    if needs_rewrite(map) {
        return false;
    }
    map.iter().all(|(key, value)| match (keyword(key), value) {
        (Some(Keyword::Map), Value::Object(children)) => children
            .values()
            .all(|child| is_normal_at(child, depth + 1)),
        (Some(Keyword::Single | Keyword::List), Value::Array(children)) => {
            children.iter().all(|child| is_normal_at(child, depth + 1))
        }
        (Some(Keyword::Single), child) => is_normal_at(child, depth + 1),
        _ => true,
    })
}
