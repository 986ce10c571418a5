//! The `openai-strict` profile: every object closed and every property
//! required (optional ones become nullable), only the keywords strict
//! mode accepts, within OpenAI's documented size limits.

use serde_json::{Map, Value, json};

use super::anthropic::{is_object_like, is_object_like_map, merge_objects};
use super::limits::{Budget, count_nodes};
use super::subset::{provider_object, refuse_lost_logic};
use super::{CatalogError, Path, escape_pointer, required_names_in, resolve_local, schema_error};

/// The root's `$defs` and `definitions` alone: what a `$ref` inside the
/// strict rewrite resolves against while the root itself changes.
pub(super) fn definitions(root: &Value) -> Value {
    let mut defs = Map::new();
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(map)) = root.get(keyword) {
            defs.insert(keyword.to_owned(), Value::Object(map.clone()));
        }
    }
    Value::Object(defs)
}

// OpenAI's documented limits for strict mode ("Structured Outputs",
// platform.openai.com/docs/guides/structured-outputs, section "Supported
// schemas" / "Objects have limitations on nesting depth and size"): at
// most 5000 object properties in total, at most 10 levels of nesting; in
// total at most 120,000 characters of property names, definition names,
// enum values and const values; at most 1000 enum values across the
// schema; and a single enum of more than 250 string values at most 15,000
// characters long. A schema over one is refused by the API, so the tool
// is left out here instead.
const OPENAI_MAX_PROPERTIES: usize = 5000;
const OPENAI_MAX_NESTING: usize = 10;
const OPENAI_MAX_STRING_TOTAL: usize = 120_000;
const OPENAI_MAX_ENUM_VALUES: usize = 1000;
const OPENAI_LARGE_ENUM: usize = 250;
const OPENAI_MAX_LARGE_ENUM_CHARS: usize = 15_000;

/// Refuses a strict schema over OpenAI's documented limits. Nesting counts
/// the object and array schemas on a path (the root is level 1; a
/// definition starts again at 1, as references are not followed).
pub(super) fn openai_limits(schema: &Value) -> Result<(), CatalogError> {
    let mut properties = 0usize;
    let mut strings = 0usize;
    let mut enum_values = 0usize;
    let mut stack: Vec<(&Value, String, usize)> = vec![(schema, String::new(), 0)];
    while let Some((schema, pointer, level)) = stack.pop() {
        let Value::Object(map) = schema else {
            continue;
        };
        let level = match map.get("type").and_then(Value::as_str) {
            Some("object" | "array") => level + 1,
            _ => level,
        };
        if level > OPENAI_MAX_NESTING {
            return Err(schema_error(
                &pointer,
                format!("strict mode allows at most {OPENAI_MAX_NESTING} levels of nesting"),
            ));
        }
        if let Some(Value::Array(values)) = map.get("enum") {
            enum_values += values.len();
            if enum_values > OPENAI_MAX_ENUM_VALUES {
                return Err(schema_error(
                    &pointer,
                    format!(
                        "strict mode allows at most {OPENAI_MAX_ENUM_VALUES} enum values in a schema"
                    ),
                ));
            }
            let chars: usize = values
                .iter()
                .filter_map(Value::as_str)
                .map(|s| s.chars().count())
                .sum();
            if values.len() > OPENAI_LARGE_ENUM && chars > OPENAI_MAX_LARGE_ENUM_CHARS {
                return Err(schema_error(
                    &pointer,
                    format!(
                        "strict mode allows at most {OPENAI_MAX_LARGE_ENUM_CHARS} characters in an enum of more than {OPENAI_LARGE_ENUM} string values"
                    ),
                ));
            }
            strings += chars;
        }
        if let Some(Value::String(constant)) = map.get("const") {
            strings += constant.chars().count();
        }
        if let Some(Value::Object(children)) = map.get("properties") {
            properties += children.len();
            if properties > OPENAI_MAX_PROPERTIES {
                return Err(schema_error(
                    &pointer,
                    format!(
                        "strict mode allows at most {OPENAI_MAX_PROPERTIES} properties in a schema"
                    ),
                ));
            }
            for (name, child) in children {
                strings += name.chars().count();
                stack.push((
                    child,
                    format!("{pointer}/properties/{}", escape_pointer(name)),
                    level,
                ));
            }
        }
        for keyword in ["$defs", "definitions"] {
            if let Some(Value::Object(children)) = map.get(keyword) {
                for (name, child) in children {
                    strings += name.chars().count();
                    stack.push((
                        child,
                        format!("{pointer}/{keyword}/{}", escape_pointer(name)),
                        0,
                    ));
                }
            }
        }
        if strings > OPENAI_MAX_STRING_TOTAL {
            return Err(schema_error(
                &pointer,
                format!(
                    "strict mode allows at most {OPENAI_MAX_STRING_TOTAL} characters of property names, definition names, enum and const values"
                ),
            ));
        }
        if let Some(items) = map.get("items") {
            stack.push((items, format!("{pointer}/items"), level));
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            for (i, branch) in branches.iter().enumerate() {
                stack.push((branch, format!("{pointer}/anyOf/{i}"), level));
            }
        }
    }
    Ok(())
}

/// Keywords OpenAI strict mode accepts; the `openai-strict` profile drops
/// every other one.
pub const OPENAI_KEYWORDS: &[&str] = &[
    "type",
    "properties",
    "required",
    "additionalProperties",
    "items",
    "enum",
    "const",
    "anyOf",
    "$ref",
    "$defs",
    "definitions",
    "description",
    "title",
    "pattern",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minItems",
    "maxItems",
];

pub(super) fn openai_strict(
    schema: &mut Value,
    defs: &Value,
    path: &Path<'_>,
    depth: usize,
    budget: &mut Budget,
) -> Result<(), CatalogError> {
    let Some(map) = provider_object(
        schema,
        || json!({ "anyOf": scalar_types() }),
        "strict mode",
        path,
        depth,
    )?
    else {
        return Ok(());
    };
    refuse_lost_logic(map, defs, "strict mode", path)?;
    if let Some(one_of) = map.remove("oneOf") {
        // No value matches two branches (checked above), so `anyOf`
        // accepts exactly what `oneOf` does.
        map.insert("anyOf".into(), one_of);
    }
    if let Some(Value::Array(all_of)) = map.remove("allOf") {
        let mut branches = Vec::new();
        for (i, branch) in all_of.iter().enumerate() {
            let branch = match branch.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve_local(defs, reference).cloned().ok_or_else(|| {
                    schema_error(
                        &path.key("allOf").index(i).render(),
                        format!("cannot resolve {reference}"),
                    )
                })?,
                None => branch.clone(),
            };
            budget.charge(count_nodes(&branch), path, "merging allOf")?;
            if !is_object_like(&branch) {
                return Err(schema_error(
                    &path.key("allOf").index(i).render(),
                    "strict mode cannot express allOf over non-object schemas",
                ));
            }
            branches.push(branch);
        }
        let own = Value::Object(map.clone());
        let merged = merge_objects(&[own, Value::Object(merge_objects(&branches, true))], true);
        for (key, value) in merged {
            map.insert(key, value);
        }
    }
    if let Some(Value::Object(patterns)) = map.get("patternProperties")
        && !patterns.is_empty()
    {
        return Err(schema_error(
            &path.key("patternProperties").render(),
            "strict mode cannot express an object with free-form keys",
        ));
    }
    map.retain(|key, _| OPENAI_KEYWORDS.contains(&key.as_str()));
    if map.get("type") == Some(&json!("array")) && !map.contains_key("items") {
        // A tuple (`prefixItems`) lost its positions above, and strict mode
        // refuses an array without `items`: accept any item instead (the
        // server's schema still checks the call).
        map.insert("items".into(), json!({}));
    }
    let constrained = ["type", "anyOf", "$ref", "enum", "const", "properties"]
        .iter()
        .any(|key| map.contains_key(*key));
    if !constrained {
        // Strict mode needs a type: an unconstrained value narrows to the
        // scalars, which the server's schema accepts all the same.
        map.retain(|key, _| key == "description" || key == "title");
        map.insert("anyOf".into(), scalar_types());
        return Ok(());
    }
    let may_be_object = match map.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(Value::Array(types)) => types.iter().any(|t| t == "object"),
        _ => true,
    };
    if !may_be_object {
        // Object keywords on a scalar or array type constrain nothing, but
        // strict mode reads `properties` as an object it must close.
        for key in ["properties", "required", "additionalProperties"] {
            map.remove(key);
        }
    }
    if is_object_like_map(map) {
        map.insert("type".into(), json!("object"));
        map.insert("additionalProperties".into(), Value::Bool(false));
        let required = required_names_in(map);
        let properties = match map.entry("properties") {
            serde_json::map::Entry::Occupied(entry) => entry.into_mut(),
            serde_json::map::Entry::Vacant(entry) => entry.insert(json!({})),
        };
        let Value::Object(properties) = properties else {
            return Err(schema_error(
                &path.key("properties").render(),
                "properties is not an object",
            ));
        };
        let mut all = Vec::with_capacity(properties.len());
        for (name, property) in properties.iter_mut() {
            openai_strict(
                property,
                defs,
                &path.key("properties").key(name),
                depth + 1,
                budget,
            )?;
            if !required.contains(name) && !accepts_null(property) {
                let inner = std::mem::take(property);
                *property = json!({ "anyOf": [inner, {"type": "null"}] });
            }
            all.push(Value::String(name.clone()));
        }
        map.insert("required".into(), Value::Array(all));
    }
    if let Some(items) = map.get_mut("items") {
        openai_strict(items, defs, &path.key("items"), depth + 1, budget)?;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for (i, branch) in branches.iter_mut().enumerate() {
            openai_strict(branch, defs, &path.key("anyOf").index(i), depth + 1, budget)?;
        }
    }
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get_mut(keyword) {
            for (name, child) in children.iter_mut() {
                openai_strict(child, defs, &path.key(keyword).key(name), depth + 1, budget)?;
            }
        }
    }
    Ok(())
}

fn scalar_types() -> Value {
    json!([{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}])
}

/// Whether a (strict) schema already accepts `null`.
pub(super) fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.contains(&json!("null")),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(accepts_null)),
    }
}
