//! The Anthropic profile: one object schema at the top, with top-level
//! `allOf`/`anyOf`/`oneOf` merged into the root's properties when that
//! keeps their meaning. OpenAI strict mode and Gemini start from the same
//! flattened root.

use serde_json::{Map, Value, json};

use super::subset::refuse_overlapping_one_of;
use super::{CatalogError, required_names, resolve_local, schema_error};

/// Whether a schema describes an object (explicitly or by its keywords).
pub(super) fn is_object_like(schema: &Value) -> bool {
    schema.as_object().is_some_and(is_object_like_map)
}

pub(super) fn is_object_like_map(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => schema.get("properties").is_some() || schema.get("required").is_some(),
    }
}

/// Merges object schemas into one. `all` = `allOf` (a property is required
/// when any branch requires it); otherwise `anyOf`/`oneOf` (required only
/// when every branch requires it).
pub(super) fn merge_objects(branches: &[Value], all: bool) -> Map<String, Value> {
    let mut properties: Map<String, Value> = Map::new();
    let mut required: Option<Vec<String>> = None;
    let mut closed = true;
    for branch in branches {
        if let Some(Value::Object(props)) = branch.get("properties") {
            for (name, schema) in props {
                match properties.get_mut(name) {
                    None => {
                        properties.insert(name.clone(), schema.clone());
                    }
                    Some(existing) if existing == schema => {}
                    // Both branches apply: the property must satisfy both
                    // schemas, never just one of them.
                    Some(existing) if all => combine(existing, schema, "allOf"),
                    Some(existing) => combine(existing, schema, "anyOf"),
                }
            }
        }
        let branch_required = required_names(branch);
        required = Some(match required {
            None => branch_required,
            Some(mut so_far) => {
                if all {
                    for name in branch_required {
                        if !so_far.contains(&name) {
                            so_far.push(name);
                        }
                    }
                    so_far
                } else {
                    so_far.retain(|name| branch_required.contains(name));
                    so_far
                }
            }
        });
        if branch.get("additionalProperties") != Some(&Value::Bool(false)) {
            closed = false;
        }
    }
    let mut merged = Map::new();
    merged.insert("type".into(), json!("object"));
    merged.insert("properties".into(), Value::Object(properties));
    let required = required.unwrap_or_default();
    if !required.is_empty() {
        merged.insert("required".into(), json!(required));
    }
    if closed && !branches.is_empty() && !all {
        merged.insert("additionalProperties".into(), Value::Bool(false));
    }
    merged
}

/// The top level as one object schema: `anyOf`/`oneOf`/`allOf` at the top
/// are merged into the root's properties.
pub(super) fn flatten_top_level(schema: Value) -> Result<Value, CatalogError> {
    let Value::Object(mut root) = schema else {
        return Err(schema_error("", "the input schema is not an object schema"));
    };
    match root.get("type") {
        Some(Value::String(t)) if t == "object" => {}
        None => {
            root.insert("type".into(), json!("object"));
        }
        Some(other) => {
            return Err(schema_error(
                "/type",
                format!("the input schema must describe an object, not {other}"),
            ));
        }
    }
    let combined = ["allOf", "anyOf", "oneOf"]
        .iter()
        .any(|k| root.contains_key(*k));
    // Branches may point into the root's `$defs`; resolve against a copy
    // taken before the root changes (only for schemas that need it).
    let original = if combined {
        Value::Object(root.clone())
    } else {
        Value::Null
    };
    let schema = &original;
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if !combined {
            break;
        }
        let Some(Value::Array(branches)) = root.remove(keyword) else {
            continue;
        };
        if keyword == "anyOf" && branches.iter().any(|b| b == &Value::Bool(true)) {
            // One branch accepts anything, so the whole `anyOf` does.
            continue;
        }
        let mut resolved = Vec::with_capacity(branches.len());
        for (i, branch) in branches.iter().enumerate() {
            let branch = match branch.get("$ref").and_then(Value::as_str) {
                Some(reference) => resolve_local(schema, reference).ok_or_else(|| {
                    schema_error(
                        &format!("/{keyword}/{i}"),
                        format!("cannot resolve {reference}"),
                    )
                })?,
                None => branch,
            };
            if branch == &Value::Bool(true) && keyword == "allOf" {
                continue;
            }
            if !is_object_like(branch) {
                return Err(schema_error(
                    &format!("/{keyword}/{i}"),
                    format!("top-level {keyword} branch is not an object schema"),
                ));
            }
            resolved.push(branch.clone());
        }
        if resolved.is_empty() {
            continue;
        }
        if keyword != "allOf" {
            refuse_lossy_union(keyword, &resolved, schema)?;
        }
        // The root's own properties count as one more `allOf` branch.
        let own = Value::Object(root.clone());
        let merged_branches = merge_objects(&resolved, keyword == "allOf");
        let merged = merge_objects(&[own, Value::Object(merged_branches)], true);
        for (key, value) in merged {
            if key == "additionalProperties" {
                continue;
            }
            root.insert(key, value);
        }
    }
    if !root.contains_key("properties") {
        root.insert("properties".into(), json!({}));
    }
    Ok(Value::Object(root))
}

/// A top-level `anyOf`/`oneOf` of objects becomes one object only when
/// that keeps its meaning: every branch requires the same properties (the
/// merged object can require only what all require, so `anyOf[{required:
/// [a]}, {required: [b]}]` would lose that one of them is needed), closed
/// branches list the same properties (else the merge accepts mixtures),
/// and `oneOf` branches cannot both match.
fn refuse_lossy_union(keyword: &str, branches: &[Value], root: &Value) -> Result<(), CatalogError> {
    let required_of = |branch: &Value| {
        let mut names = required_names(branch);
        names.sort();
        names.dedup();
        names
    };
    let properties_of = |branch: &Value| {
        let mut names: Vec<String> = branch
            .get("properties")
            .and_then(Value::as_object)
            .map(|p| p.keys().cloned().collect())
            .unwrap_or_default();
        names.sort();
        names
    };
    let path = format!("/{keyword}");
    let first = required_of(&branches[0]);
    if branches.iter().any(|b| required_of(b) != first) {
        let sets: Vec<String> = branches
            .iter()
            .map(|b| format!("[{}]", required_of(b).join(", ")))
            .collect();
        return Err(schema_error(
            &path,
            format!(
                "top-level {keyword} branches require different properties ({}); one object schema cannot say which are required",
                sets.join(" or ")
            ),
        ));
    }
    let closed = branches
        .iter()
        .any(|b| b.get("additionalProperties") == Some(&Value::Bool(false)));
    let names = properties_of(&branches[0]);
    if closed && branches.iter().any(|b| properties_of(b) != names) {
        return Err(schema_error(
            &path,
            format!(
                "top-level {keyword} branches are closed objects with different properties; one object schema would accept a mixture"
            ),
        ));
    }
    if keyword == "oneOf" {
        refuse_overlapping_one_of(branches, root, "one object schema", &path)?;
    }
    Ok(())
}

/// Makes `existing` the `keyword` (`allOf` or `anyOf`) of itself and
/// `schema`, extending a bare list of that keyword rather than nesting it,
/// and never listing a schema twice.
fn combine(existing: &mut Value, schema: &Value, keyword: &str) {
    let mut branches = match existing.get(keyword) {
        Some(Value::Array(branches)) if existing.as_object().map(Map::len) == Some(1) => {
            branches.clone()
        }
        _ => vec![existing.clone()],
    };
    if !branches.contains(schema) {
        branches.push(schema.clone());
    }
    *existing = json!({ keyword: branches });
}
