//! Input schema normalisation (REFERENCE §3.4) and provider profiles.
//!
//! [`normalize`] turns whatever a server sent into a plain draft 2020-12
//! schema that validators and models read the same way. A
//! [`ProviderProfile`] then rewrites it into the subset one provider
//! accepts. A rewrite that would change what arguments mean is refused with
//! a [`SchemaError`]: the tool is left out and reported rather than sent
//! broken. Rewrites that only relax a constraint are allowed, because
//! arguments are still validated against the server's own schema before a
//! call.

use std::borrow::Cow;

use serde::Serialize;
use serde_json::{Map, Value, json};

/// How deep a schema may nest before it is refused (hostile input).
const MAX_DEPTH: usize = 64;

/// The schema dialect a provider accepts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum ProviderProfile {
    /// The normalised schema, for providers and validators that take JSON
    /// Schema as is.
    #[default]
    Generic,
    /// Anthropic: the top level is one object schema, no top-level
    /// `anyOf`/`oneOf`/`allOf`.
    Anthropic,
    /// OpenAI function calling with `strict: true`: every object closed
    /// with `additionalProperties: false`, every property required (optional
    /// ones become nullable), only the supported keywords.
    OpenAiStrict,
    /// Gemini function declarations: an OpenAPI 3.0 subset without `$ref`.
    Gemini,
}

impl ProviderProfile {
    /// Every profile, in a fixed order.
    pub const ALL: [ProviderProfile; 4] = [
        ProviderProfile::Generic,
        ProviderProfile::Anthropic,
        ProviderProfile::OpenAiStrict,
        ProviderProfile::Gemini,
    ];

    /// Parses `generic`, `anthropic`, `openai-strict` or `gemini`.
    pub fn parse(text: &str) -> Option<ProviderProfile> {
        match text {
            "generic" => Some(ProviderProfile::Generic),
            "anthropic" => Some(ProviderProfile::Anthropic),
            "openai-strict" => Some(ProviderProfile::OpenAiStrict),
            "gemini" => Some(ProviderProfile::Gemini),
            _ => None,
        }
    }

    /// The name [`ProviderProfile::parse`] reads.
    pub fn as_str(self) -> &'static str {
        match self {
            ProviderProfile::Generic => "generic",
            ProviderProfile::Anthropic => "anthropic",
            ProviderProfile::OpenAiStrict => "openai-strict",
            ProviderProfile::Gemini => "gemini",
        }
    }
}

/// A schema that cannot be expressed for a provider without changing what
/// the arguments mean.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{path}: {reason}")]
pub struct SchemaError {
    /// JSON pointer into the normalised schema.
    pub path: String,
    pub reason: String,
}

fn schema_error(path: &str, reason: impl Into<String>) -> SchemaError {
    SchemaError {
        path: if path.is_empty() {
            "/".to_owned()
        } else {
            path.to_owned()
        },
        reason: reason.into(),
    }
}

/// Normalises a tool's input schema (REFERENCE §3.4). Idempotent.
pub fn normalize(schema: &Value) -> Value {
    let mut out = schema.clone();
    normalize_in_place(&mut out, 0);
    if let Value::Object(map) = &mut out {
        if !map.contains_key("type") {
            map.insert("type".into(), json!("object"));
        }
    } else if out != Value::Bool(false) {
        // `true`, null or a non-schema: any object
        out = json!({"type": "object"});
    }
    out
}

fn normalize_in_place(schema: &mut Value, depth: usize) {
    let Value::Object(map) = schema else {
        return;
    };
    if depth > MAX_DEPTH {
        // Deeper than any real schema: accept anything below this point
        // rather than recurse without bound.
        map.clear();
        return;
    }
    if needs_rewrite(map) {
        rewrite(map);
    }
    for_each_subschema(map, |sub| normalize_in_place(sub, depth + 1));
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

fn rewrite(map: &mut Map<String, Value>) {
    map.remove("format");

    if let Some(nullable) = map.remove("nullable")
        && nullable == Value::Bool(true)
    {
        add_null(map);
    }

    if let Some(Value::Array(types)) = map.get("type") {
        let mut types = types.clone();
        types.dedup();
        match types.len() {
            0 => {
                map.remove("type");
            }
            1 => {
                map.insert("type".into(), types.remove(0));
            }
            _ => {
                map.remove("type");
                let branches: Vec<Value> = types.into_iter().map(|t| json!({"type": t})).collect();
                match map.remove("anyOf") {
                    Some(existing) => {
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
        map.insert("patternProperties".into(), json!({ ".*": values }));
        map.insert("additionalProperties".into(), Value::Bool(false));
    }

    if map.get("type").and_then(Value::as_str) == Some("array")
        && !map.contains_key("items")
        && !map.contains_key("prefixItems")
    {
        map.insert("items".into(), json!({}));
    }
}

/// Adds `null` to what a schema accepts (`nullable: true`).
fn add_null(map: &mut Map<String, Value>) {
    match map.get_mut("type") {
        Some(Value::String(t)) => {
            if t != "null" {
                let t = t.clone();
                map.insert("type".into(), json!([t, "null"]));
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

/// Where a keyword keeps its subschemas.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Keyword {
    /// name → subschema
    Map,
    /// one subschema (or, for `items`, a draft 4-7 tuple)
    Single,
    /// a list of subschemas
    List,
}

/// Where `key` keeps subschemas, if it is an applicator keyword. A
/// `match` rather than a list scan: it runs on every key of every schema
/// object, several times per build.
fn keyword(key: &str) -> Option<Keyword> {
    match key {
        "$defs" | "definitions" | "properties" | "patternProperties" | "dependentSchemas" => {
            Some(Keyword::Map)
        }
        "items"
        | "additionalItems"
        | "additionalProperties"
        | "contains"
        | "if"
        | "then"
        | "else"
        | "not"
        | "propertyNames"
        | "unevaluatedItems"
        | "unevaluatedProperties" => Some(Keyword::Single),
        "prefixItems" | "allOf" | "anyOf" | "oneOf" => Some(Keyword::List),
        _ => None,
    }
}

/// Calls `f` on every direct subschema of a schema object.
fn for_each_subschema(map: &mut Map<String, Value>, mut f: impl FnMut(&mut Value)) {
    for (key, value) in map.iter_mut() {
        match (keyword(key), value) {
            (Some(Keyword::Map), Value::Object(children)) => children.values_mut().for_each(&mut f),
            (Some(Keyword::Single), Value::Array(items)) => items.iter_mut().for_each(&mut f),
            (Some(Keyword::Single), child) => f(child),
            (Some(Keyword::List), Value::Array(children)) => children.iter_mut().for_each(&mut f),
            _ => {}
        }
    }
}

/// A JSON pointer built only when an error needs it.
#[derive(Clone, Copy)]
struct Path<'a> {
    parent: Option<&'a Path<'a>>,
    segment: Segment<'a>,
}

#[derive(Clone, Copy)]
enum Segment<'a> {
    Root,
    Key(&'a str),
    Index(usize),
}

impl<'a> Path<'a> {
    const ROOT: Path<'static> = Path {
        parent: None,
        segment: Segment::Root,
    };

    fn key(&'a self, key: &'a str) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Key(key),
        }
    }

    fn index(&'a self, index: usize) -> Path<'a> {
        Path {
            parent: Some(self),
            segment: Segment::Index(index),
        }
    }

    fn render(&self) -> String {
        let mut segments = Vec::new();
        let mut node = Some(self);
        while let Some(current) = node {
            segments.push(current.segment);
            node = current.parent;
        }
        let mut out = String::new();
        for segment in segments.iter().rev() {
            match segment {
                Segment::Root => {}
                Segment::Key(key) => {
                    out.push('/');
                    out.push_str(&escape_pointer(key));
                }
                Segment::Index(index) => {
                    out.push('/');
                    out.push_str(&index.to_string());
                }
            }
        }
        out
    }
}

/// Rewrites a normalised schema for `profile`.
pub fn for_profile(normalized: &Value, profile: ProviderProfile) -> Result<Value, SchemaError> {
    for_profile_owned(normalized.clone(), profile)
}

fn for_profile_owned(normalized: Value, profile: ProviderProfile) -> Result<Value, SchemaError> {
    check(&normalized)?;
    match profile {
        ProviderProfile::Generic => {
            check_generic_top(&normalized)?;
            Ok(normalized)
        }
        ProviderProfile::Anthropic => flatten_top_level(normalized),
        ProviderProfile::OpenAiStrict => {
            let mut flat = flatten_top_level(normalized)?;
            let defs = definitions(&flat);
            openai_strict(&mut flat, &defs, &Path::ROOT, 0)?;
            Ok(flat)
        }
        ProviderProfile::Gemini => {
            let flat = flatten_top_level(normalized)?;
            let mut inlined = if contains_ref(&flat, 0) {
                inline_refs(&flat, &flat, &Path::ROOT, &mut Vec::new(), 0)?
            } else {
                flat
            };
            gemini(&mut inlined, &Path::ROOT, 0)?;
            Ok(inlined)
        }
    }
}

/// The checks every profile starts with: structure, then references.
fn check(normalized: &Value) -> Result<(), SchemaError> {
    check_structure(normalized, &Path::ROOT, 0)?;
    check_refs(normalized, normalized, &Path::ROOT, 0)
}

/// MCP requires an object at the top; combinators may stay.
fn check_generic_top(normalized: &Value) -> Result<(), SchemaError> {
    match normalized.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        Some(other) => Err(schema_error(
            "/type",
            format!("the input schema must describe an object, not {other}"),
        )),
        None => Err(schema_error("", "the input schema is not an object schema")),
    }
}

const TYPE_NAMES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// Refuses a schema a validator would not compile: a subschema that is not
/// an object or boolean, an unknown type, a malformed `required` or `enum`.
fn check_structure(schema: &Value, path: &Path<'_>, depth: usize) -> Result<(), SchemaError> {
    if depth > MAX_DEPTH + 1 {
        return Err(schema_error(&path.render(), "schema nests too deeply"));
    }
    let map = match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(map) => map,
        other => {
            return Err(schema_error(
                &path.render(),
                format!("{other} is not a schema"),
            ));
        }
    };
    for (key, value) in map {
        let here = path.key(key);
        match key.as_str() {
            "type" => match value {
                Value::String(t) if TYPE_NAMES.contains(&t.as_str()) => {}
                other => {
                    return Err(schema_error(
                        &here.render(),
                        format!("{other} is not a type"),
                    ));
                }
            },
            "required" => {
                if !value
                    .as_array()
                    .is_some_and(|r| r.iter().all(Value::is_string))
                {
                    return Err(schema_error(
                        &here.render(),
                        "required is not a list of names",
                    ));
                }
            }
            "enum" => {
                if !value.is_array() {
                    return Err(schema_error(&here.render(), "enum is not a list"));
                }
            }
            _ => match (keyword(key), value) {
                (Some(Keyword::Map), Value::Object(children)) => {
                    for (name, child) in children {
                        check_structure(child, &here.key(name), depth + 1)?;
                    }
                }
                (Some(Keyword::Map), _) => {
                    return Err(schema_error(
                        &here.render(),
                        format!("{key} is not an object"),
                    ));
                }
                (Some(Keyword::Single), Value::Array(children))
                    if key == "items" || key == "additionalItems" =>
                {
                    for (i, child) in children.iter().enumerate() {
                        check_structure(child, &here.index(i), depth + 1)?;
                    }
                }
                (Some(Keyword::Single), child) => check_structure(child, &here, depth + 1)?,
                (Some(Keyword::List), Value::Array(children)) if !children.is_empty() => {
                    for (i, child) in children.iter().enumerate() {
                        check_structure(child, &here.index(i), depth + 1)?;
                    }
                }
                (Some(Keyword::List), _) => {
                    return Err(schema_error(
                        &here.render(),
                        format!("{key} is not a non-empty list"),
                    ));
                }
                (None, _) => {}
            },
        }
    }
    Ok(())
}

/// Refuses a `$ref` that does not resolve inside the schema: a missing
/// pointer or anchor, or a remote reference (never fetched).
fn check_refs(
    root: &Value,
    schema: &Value,
    path: &Path<'_>,
    depth: usize,
) -> Result<(), SchemaError> {
    let Value::Object(map) = schema else {
        return Ok(());
    };
    if depth > MAX_DEPTH + 1 {
        return Ok(());
    }
    for (key, value) in map {
        let here = path.key(key);
        if key == "$ref" {
            let ok = match value.as_str() {
                Some(r) if r == "#" || r.starts_with("#/") => resolve_local(root, r).is_some(),
                Some(r) if r.starts_with('#') => has_anchor(root, &r[1..], 0),
                _ => false,
            };
            if !ok {
                return Err(schema_error(
                    &here.render(),
                    format!("{value} does not resolve inside the schema"),
                ));
            }
            continue;
        }
        match (keyword(key), value) {
            (Some(Keyword::Map), Value::Object(children)) => {
                for (name, child) in children {
                    check_refs(root, child, &here.key(name), depth + 1)?;
                }
            }
            (Some(_), Value::Array(children)) => {
                for (i, child) in children.iter().enumerate() {
                    check_refs(root, child, &here.index(i), depth + 1)?;
                }
            }
            (Some(Keyword::Single), child) => check_refs(root, child, &here, depth + 1)?,
            _ => {}
        }
    }
    Ok(())
}

fn has_anchor(schema: &Value, anchor: &str, depth: usize) -> bool {
    if depth > MAX_DEPTH + 1 {
        return false;
    }
    match schema {
        Value::Object(map) => {
            ["$anchor", "$dynamicAnchor"]
                .iter()
                .any(|k| map.get(*k).and_then(Value::as_str) == Some(anchor))
                || map.values().any(|v| has_anchor(v, anchor, depth + 1))
        }
        Value::Array(values) => values.iter().any(|v| has_anchor(v, anchor, depth + 1)),
        _ => false,
    }
}

fn contains_ref(schema: &Value, depth: usize) -> bool {
    if depth > MAX_DEPTH + 1 {
        return false;
    }
    match schema {
        Value::Object(map) => map
            .iter()
            .any(|(key, value)| key == "$ref" || contains_ref(value, depth + 1)),
        Value::Array(values) => values.iter().any(|v| contains_ref(v, depth + 1)),
        _ => false,
    }
}

/// Normalises `schema` and rewrites it for `profile`.
pub fn prepare(schema: &Value, profile: ProviderProfile) -> Result<Value, SchemaError> {
    prepare_shared(schema, profile).map(Cow::into_owned)
}

/// [`prepare`], borrowing `schema` when it already is the result: a
/// schema that is already normal needs no copy for the `generic` profile.
/// Whether it is normal is found by a read-only pass, far cheaper than
/// the deep copy it saves.
pub fn prepare_shared(
    schema: &Value,
    profile: ProviderProfile,
) -> Result<Cow<'_, Value>, SchemaError> {
    if profile == ProviderProfile::Generic && is_normal(schema) {
        check(schema)?;
        check_generic_top(schema)?;
        return Ok(Cow::Borrowed(schema));
    }
    for_profile_owned(normalize(schema), profile).map(Cow::Owned)
}

/// Whether [`normalize`] would return `schema` unchanged. Mirrors
/// `normalize_in_place`; a top level that is not an object counts as not
/// normal.
fn is_normal(schema: &Value) -> bool {
    matches!(schema, Value::Object(map) if map.contains_key("type")) && is_normal_at(schema, 0)
}

fn is_normal_at(schema: &Value, depth: usize) -> bool {
    let Value::Object(map) = schema else {
        return true;
    };
    if depth > MAX_DEPTH {
        return map.is_empty();
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

/// Resolves a local `$ref` (`#`, `#/$defs/…`, `#/definitions/…`).
fn resolve_local<'a>(root: &'a Value, reference: &str) -> Option<&'a Value> {
    let pointer = reference.strip_prefix('#')?;
    if pointer.is_empty() {
        return Some(root);
    }
    root.pointer(pointer)
}

fn definitions(root: &Value) -> Value {
    let mut defs = Map::new();
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(map)) = root.get(keyword) {
            defs.insert(keyword.to_owned(), Value::Object(map.clone()));
        }
    }
    Value::Object(defs)
}

/// Whether a schema describes an object (explicitly or by its keywords).
fn is_object_like(schema: &Value) -> bool {
    schema.as_object().is_some_and(is_object_like_map)
}

fn is_object_like_map(schema: &Map<String, Value>) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "object",
        Some(_) => false,
        None => schema.get("properties").is_some() || schema.get("required").is_some(),
    }
}

/// Merges object schemas into one. `all` = `allOf` (a property is required
/// when any branch requires it); otherwise `anyOf`/`oneOf` (required only
/// when every branch requires it).
fn merge_objects(branches: &[Value], all: bool) -> Map<String, Value> {
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
                    Some(existing) => {
                        let mut options = match existing.get("anyOf") {
                            Some(Value::Array(options))
                                if existing.as_object().map(Map::len) == Some(1) =>
                            {
                                options.clone()
                            }
                            _ => vec![existing.clone()],
                        };
                        if !options.contains(schema) {
                            options.push(schema.clone());
                        }
                        *existing = json!({ "anyOf": options });
                    }
                }
            }
        }
        let branch_required: Vec<String> = branch
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
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
fn flatten_top_level(schema: Value) -> Result<Value, SchemaError> {
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
            if branch == &Value::Bool(true) {
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

fn openai_strict(
    schema: &mut Value,
    defs: &Value,
    path: &Path<'_>,
    depth: usize,
) -> Result<(), SchemaError> {
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
    if let Some(one_of) = map.remove("oneOf") {
        // `anyOf` accepts more than `oneOf`; the server's schema still
        // decides at call time.
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
        let required: Vec<String> = map
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
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
            openai_strict(property, defs, &path.key("properties").key(name), depth + 1)?;
            if !required.contains(name) && !accepts_null(property) {
                let inner = std::mem::take(property);
                *property = json!({ "anyOf": [inner, {"type": "null"}] });
            }
            all.push(Value::String(name.clone()));
        }
        map.insert("required".into(), Value::Array(all));
    }
    if let Some(items) = map.get_mut("items") {
        openai_strict(items, defs, &path.key("items"), depth + 1)?;
    }
    if let Some(Value::Array(branches)) = map.get_mut("anyOf") {
        for (i, branch) in branches.iter_mut().enumerate() {
            openai_strict(branch, defs, &path.key("anyOf").index(i), depth + 1)?;
        }
    }
    for keyword in ["$defs", "definitions"] {
        if let Some(Value::Object(children)) = map.get_mut(keyword) {
            for (name, child) in children.iter_mut() {
                openai_strict(child, defs, &path.key(keyword).key(name), depth + 1)?;
            }
        }
    }
    Ok(())
}

/// The object a provider rewrite works on. A `true` schema becomes
/// `accept_all` (`None`: nothing more to rewrite); `false`, a non-schema
/// and nesting deeper than [`MAX_DEPTH`] are refused.
fn provider_object<'s>(
    schema: &'s mut Value,
    accept_all: impl FnOnce() -> Value,
    provider: &str,
    path: &Path<'_>,
    depth: usize,
) -> Result<Option<&'s mut Map<String, Value>>, SchemaError> {
    if depth > MAX_DEPTH {
        return Err(schema_error(&path.render(), "schema nests too deeply"));
    }
    match schema {
        Value::Object(map) => Ok(Some(map)),
        Value::Bool(true) => {
            *schema = accept_all();
            Ok(None)
        }
        _ => Err(schema_error(
            &path.render(),
            format!("{provider} cannot express a `false` schema"),
        )),
    }
}

fn scalar_types() -> Value {
    json!([{"type": "string"}, {"type": "number"}, {"type": "boolean"}, {"type": "null"}])
}

/// Whether a (strict) schema already accepts `null`.
fn accepts_null(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "null",
        Some(Value::Array(types)) => types.contains(&json!("null")),
        _ => schema
            .get("anyOf")
            .and_then(Value::as_array)
            .is_some_and(|branches| branches.iter().any(accepts_null)),
    }
}

fn escape_pointer(segment: &str) -> String {
    segment.replace('~', "~0").replace('/', "~1")
}

/// Replaces every local `$ref` with the schema it points to. A reference
/// cycle cannot be inlined and is refused.
fn inline_refs(
    schema: &Value,
    root: &Value,
    path: &Path<'_>,
    stack: &mut Vec<String>,
    depth: usize,
) -> Result<Value, SchemaError> {
    if depth > MAX_DEPTH {
        return Err(schema_error(&path.render(), "schema nests too deeply"));
    }
    let Value::Object(map) = schema else {
        return Ok(schema.clone());
    };
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
        let mut inlined = inline_refs(target, root, path, stack, depth + 1)?;
        stack.pop();
        // Siblings of `$ref` (often a description) stay.
        if let Value::Object(inlined_map) = &mut inlined {
            for (key, value) in map {
                if key != "$ref" {
                    let value = inline_refs(value, root, path, stack, depth + 1)?;
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
                            inline_refs(child, root, &grandchild, stack, depth + 1)?,
                        );
                    }
                    Value::Object(inlined)
                }
                other => other.clone(),
            }
        } else if keyword(key).is_some() {
            match value {
                Value::Array(children) => Value::Array(
                    children
                        .iter()
                        .enumerate()
                        .map(|(i, c)| inline_refs(c, root, &child_path.index(i), stack, depth + 1))
                        .collect::<Result<_, _>>()?,
                ),
                other => inline_refs(other, root, &child_path, stack, depth + 1)?,
            }
        } else {
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

fn gemini(schema: &mut Value, path: &Path<'_>, depth: usize) -> Result<(), SchemaError> {
    let Some(map) = provider_object(schema, || json!({}), "gemini", path, depth)? else {
        return Ok(());
    };
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
