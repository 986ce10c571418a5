//! The `gemini` profile: references inlined (Gemini has no `$ref`), then
//! the OpenAPI 3.0 subset its function declarations accept, with `null`
//! as `nullable`.

use serde_json::{Map, Value, json};

use super::anthropic::{is_object_like, merge_objects};
use super::limits::{Budget, MAX_DEPTH, count_nodes};
use super::subset::{provider_object, refuse_lost_logic};
use super::{CatalogError, Keyword, Path, keyword, resolve_local, schema_error};

/// Replaces every local `$ref` with the schema it points to. A reference
/// cycle cannot be inlined and is refused.
pub(super) fn inline_refs(
    schema: &Value,
    root: &Value,
    path: &Path<'_>,
    stack: &mut Vec<String>,
    depth: usize,
    budget: &mut Budget,
) -> Result<Value, CatalogError> {
    if depth > MAX_DEPTH {
        return Err(schema_error(
            &path.render(),
            format!("inlining its $refs nests deeper than {MAX_DEPTH} levels of subschemas"),
        ));
    }
    let Value::Object(map) = schema else {
        budget.charge(count_nodes(schema), path, "inlining its $refs")?;
        return Ok(schema.clone());
    };
    budget.charge(1, path, "inlining its $refs")?;
    if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
        if stack.iter().any(|r| r == reference) {
            return Err(schema_error(
                &path.render(),
                format!("recursive {reference} cannot be inlined"),
            ));
        }
        let target = resolve_local(root, reference)
            .ok_or_else(|| schema_error(&path.render(), format!("cannot resolve {reference}")))?;
        stack.push(reference.to_owned());
        let mut inlined = inline_refs(target, root, path, stack, depth + 1, budget)?;
        stack.pop();
        // Siblings of `$ref` (often a description) stay.
        if let Value::Object(inlined_map) = &mut inlined {
            for (key, value) in map {
                if key != "$ref" {
                    let value = inline_refs(value, root, path, stack, depth + 1, budget)?;
                    inlined_map.insert(key.clone(), value);
                }
            }
        }
        return Ok(inlined);
    }
    let mut out = Map::with_capacity(map.len());
    for (key, value) in map {
        if key == "$defs" || key == "definitions" {
            continue;
        }
        let child_path = path.key(key);
        let value = if keyword(key) == Some(Keyword::Map) {
            match value {
                Value::Object(children) => {
                    let mut inlined = Map::with_capacity(children.len());
                    for (name, child) in children {
                        let grandchild = child_path.key(name);
                        inlined.insert(
                            name.clone(),
                            inline_refs(child, root, &grandchild, stack, depth + 1, budget)?,
                        );
                    }
                    Value::Object(inlined)
                }
                other => {
                    budget.charge(count_nodes(other), &child_path, "inlining its $refs")?;
                    other.clone()
                }
            }
        } else if keyword(key).is_some() {
            match value {
                Value::Array(children) => Value::Array(
                    children
                        .iter()
                        .enumerate()
                        .map(|(i, c)| {
                            inline_refs(c, root, &child_path.index(i), stack, depth + 1, budget)
                        })
                        .collect::<Result<_, _>>()?,
                ),
                other => inline_refs(other, root, &child_path, stack, depth + 1, budget)?,
            }
        } else {
            budget.charge(count_nodes(value), &child_path, "inlining its $refs")?;
            value.clone()
        };
        out.insert(key.clone(), value);
    }
    Ok(Value::Object(out))
}

/// Keywords Gemini's schema subset accepts; the `gemini` profile drops
/// every other one.
pub const GEMINI_KEYWORDS: &[&str] = &[
    "type",
    "description",
    "title",
    "nullable",
    "enum",
    "items",
    "properties",
    "required",
    "minItems",
    "maxItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "minProperties",
    "maxProperties",
    "anyOf",
];

pub(super) fn gemini(
    schema: &mut Value,
    path: &Path<'_>,
    depth: usize,
) -> Result<(), CatalogError> {
    let Some(map) = provider_object(schema, || json!({}), "gemini", path, depth)? else {
        return Ok(());
    };
    // References are inlined by now.
    refuse_lost_logic(map, &Value::Null, "gemini", path)?;
    if let Some(one_of) = map.remove("oneOf") {
        map.insert("anyOf".into(), one_of);
    }
    if let Some(Value::Array(all_of)) = map.remove("allOf") {
        if all_of.iter().any(|b| !is_object_like(b)) {
            return Err(schema_error(
                &path.key("allOf").render(),
                "gemini cannot express allOf over non-object schemas",
            ));
        }
        let own = Value::Object(map.clone());
        let merged = merge_objects(&[own, Value::Object(merge_objects(&all_of, true))], true);
        for (key, value) in merged {
            if key != "additionalProperties" {
                map.insert(key, value);
            }
        }
    }
    if let Some(constant) = map.remove("const") {
        map.insert("enum".into(), json!([constant]));
    }
    // `null` as a type becomes Gemini's `nullable`.
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        let before = branches.len();
        branches.retain(|b| b.get("type") != Some(&json!("null")));
        if branches.len() != before {
            map.insert("nullable".into(), Value::Bool(true));
        }
        if let Some(Value::Array(branches)) = map.get("anyOf") {
            if branches.len() == 1 {
                let only = branches[0].clone();
                map.remove("anyOf");
                if let Value::Object(only) = only {
                    for (key, value) in only {
                        map.entry(key).or_insert(value);
                    }
                }
            } else if branches.is_empty() {
                map.remove("anyOf");
            }
        }
    }
    if map.get("type") == Some(&json!("null")) {
        map.remove("type");
        map.insert("nullable".into(), Value::Bool(true));
    }
    if let Some(Value::Array(values)) = map.get_mut("enum") {
        values.retain(|v| !v.is_null());
        if values.iter().all(Value::is_string) && !values.is_empty() {
            map.entry("type").or_insert(json!("string"));
        } else {
            // Gemini enums are strings only; the server's schema still
            // checks the value at call time.
            map.remove("enum");
        }
    }
    map.retain(|key, _| GEMINI_KEYWORDS.contains(&key.as_str()));
    if let Some(Value::Object(properties)) = map.get_mut("properties") {
        for (name, property) in properties.iter_mut() {
            gemini(property, &path.key("properties").key(name), depth + 1)?;
        }
    }
    if let Some(items) = map.get_mut("items") {
        gemini(items, &path.key("items"), depth + 1)?;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for (i, branch) in branches.iter_mut().enumerate() {
            gemini(branch, &path.key("anyOf").index(i), depth + 1)?;
        }
    }
    Ok(())
}
