//! What each provider accepts, written from the providers' documented
//! rules, so tests can check every produced schema against them. The
//! keyword lists are the crate's own ([`OPENAI_KEYWORDS`],
//! [`GEMINI_KEYWORDS`]): one list per provider, in one place.

#![allow(dead_code)]

use mcp_catalog::schemas::{GEMINI_KEYWORDS, OPENAI_KEYWORDS};
use serde_json::Value;

/// Anthropic: the top level is an object schema without combinators.
pub(crate) fn anthropic_problems(schema: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    if schema.get("type") != Some(&Value::String("object".into())) {
        problems.push("top-level type is not object".into());
    }
    for keyword in ["anyOf", "oneOf", "allOf"] {
        if schema.get(keyword).is_some() {
            problems.push(format!("top-level {keyword}"));
        }
    }
    problems
}

/// OpenAI strict mode.
pub(crate) fn openai_strict_problems(schema: &Value) -> Vec<String> {
    let mut problems = anthropic_problems(schema);
    openai_walk(schema, "", &mut problems);
    problems
}

fn openai_walk(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{path}: not an object schema"));
        return;
    };
    for key in map.keys() {
        if !OPENAI_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{path}: unsupported keyword {key}"));
        }
    }
    if !["type", "anyOf", "$ref", "enum", "const"]
        .iter()
        .any(|k| map.contains_key(*k))
    {
        problems.push(format!("{path}: no type"));
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        if map.get("additionalProperties") != Some(&Value::Bool(false)) {
            problems.push(format!("{path}: additionalProperties is not false"));
        }
        let required: Vec<&str> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        for (name, property) in properties {
            if !required.contains(&name.as_str()) {
                problems.push(format!("{path}: property {name} not required"));
            }
            openai_walk(property, &format!("{path}/properties/{name}"), problems);
        }
    } else if map.get("type") == Some(&Value::String("object".into())) {
        problems.push(format!("{path}: object without properties"));
    }
    if map.get("type") == Some(&Value::String("array".into())) && !map.contains_key("items") {
        problems.push(format!("{path}: array without items"));
    }
    if let Some(items) = map.get("items") {
        openai_walk(items, &format!("{path}/items"), problems);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for (i, branch) in branches.iter().enumerate() {
            openai_walk(branch, &format!("{path}/anyOf/{i}"), problems);
        }
    }
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(defs)) = map.get(keyword) {
            for (name, def) in defs {
                openai_walk(def, &format!("{path}/{keyword}/{name}"), problems);
            }
        }
    }
}

/// Gemini's OpenAPI subset.
pub(crate) fn gemini_problems(schema: &Value) -> Vec<String> {
    let mut problems = anthropic_problems(schema);
    gemini_walk(schema, "", &mut problems);
    problems
}

fn gemini_walk(schema: &Value, path: &str, problems: &mut Vec<String>) {
    let Some(map) = schema.as_object() else {
        problems.push(format!("{path}: not an object schema"));
        return;
    };
    for key in map.keys() {
        if !GEMINI_KEYWORDS.contains(&key.as_str()) {
            problems.push(format!("{path}: unsupported keyword {key}"));
        }
    }
    match map.get("type") {
        None => {}
        Some(Value::String(t))
            if ["string", "number", "integer", "boolean", "array", "object"]
                .contains(&t.as_str()) => {}
        Some(other) => problems.push(format!("{path}: type {other} is not a single OpenAPI type")),
    }
    if let Some(Value::Array(values)) = map.get("enum")
        && !values.iter().all(Value::is_string)
    {
        problems.push(format!("{path}: enum with non-string values"));
    }
    if let Some(Value::Object(properties)) = map.get("properties") {
        for (name, property) in properties {
            gemini_walk(property, &format!("{path}/properties/{name}"), problems);
        }
    }
    if let Some(items) = map.get("items") {
        gemini_walk(items, &format!("{path}/items"), problems);
    }
    if let Some(Value::Array(branches)) = map.get("anyOf") {
        for (i, branch) in branches.iter().enumerate() {
            gemini_walk(branch, &format!("{path}/anyOf/{i}"), problems);
        }
    }
}

/// The problems a produced schema has for `profile`.
pub(crate) fn problems_for(profile: mcp_catalog::ProviderProfile, schema: &Value) -> Vec<String> {
    use mcp_catalog::ProviderProfile;
    match profile {
        ProviderProfile::Generic => {
            if jsonschema::validator_for(schema).is_err() {
                vec!["does not compile as JSON Schema".into()]
            } else {
                Vec::new()
            }
        }
        ProviderProfile::Anthropic => anthropic_problems(schema),
        ProviderProfile::OpenAiStrict => openai_strict_problems(schema),
        ProviderProfile::Gemini => gemini_problems(schema),
        other => panic!("no check for the {other:?} profile"),
    }
}

/// The path and reason of a schema refused for a provider.
pub(crate) fn refused(error: &mcp_catalog::CatalogError) -> (&str, &str) {
    match error.kind() {
        mcp_catalog::CatalogErrorKind::Schema { path, reason } => (path, reason),
        other => panic!("not a schema refusal: {other:?}"),
    }
}
