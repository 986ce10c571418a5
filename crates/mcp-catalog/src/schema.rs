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
use std::collections::HashMap;

use serde::Serialize;
use serde_json::{Map, Value, json};

use crate::deep;

/// How many subschema levels a schema may nest before it is refused
/// (hostile input): the recursive rewrites below never go deeper.
pub const MAX_DEPTH: usize = 64;

/// How many levels of JSON arrays and objects a schema may nest, whatever
/// keyword they sit under (`default`, `enum`, …). `serde_json`'s own
/// parser stops at the same depth.
pub const MAX_JSON_DEPTH: usize = 128;

/// Caps on one tool's input schema, checked (without recursion) before
/// anything else reads it. A schema over a cap leaves its tool out.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SchemaLimits {
    /// Approximate size as JSON text.
    pub max_bytes: usize,
    /// JSON values (every object, array, string, number, …).
    pub max_nodes: usize,
    /// Entries of every `properties` map together.
    pub max_properties: usize,
    /// Levels of JSON nesting; never above [`MAX_JSON_DEPTH`] in effect.
    pub max_depth: usize,
}

impl Default for SchemaLimits {
    /// Generous for any real tool (the largest schemas of public servers
    /// are tens of kilobytes), small enough that every profile's rewrite
    /// of a schema at the caps takes milliseconds.
    fn default() -> Self {
        SchemaLimits {
            max_bytes: 1 << 20,
            max_nodes: 100_000,
            max_properties: 10_000,
            max_depth: MAX_JSON_DEPTH,
        }
    }
}

/// Refuses a schema over `limits`, in one pass with an explicit stack that
/// stops at the first cap exceeded, so a 16 MiB schema costs no more than
/// the part below the caps. After this, every walk in this module may
/// recurse: JSON depth is at most [`MAX_JSON_DEPTH`] and subschema depth
/// at most [`MAX_DEPTH`].
pub fn check_limits(schema: &Value, limits: &SchemaLimits) -> Result<(), SchemaError> {
    /// What a value is to JSON Schema.
    #[derive(Clone, Copy)]
    enum Pos {
        /// A (sub)schema at this subschema depth.
        Schema(usize),
        /// An object of subschemas (`properties`, `$defs`, …).
        SchemaMap(usize),
        /// A list of subschemas (`anyOf`, `prefixItems`, …).
        SchemaList(usize),
        /// Anything else (`enum`, `default`, `required`, …).
        Data,
    }
    let max_depth = limits.max_depth.min(MAX_JSON_DEPTH);
    let too_big = |what: String| schema_error("", what);
    let mut nodes = 0usize;
    let mut bytes = 0usize;
    let mut properties = 0usize;
    let mut stack = vec![(schema, 0usize, Pos::Schema(0))];
    while let Some((value, depth, pos)) = stack.pop() {
        nodes += 1;
        if nodes > limits.max_nodes {
            return Err(too_big(format!(
                "has more than {} nodes (the limit per tool)",
                limits.max_nodes
            )));
        }
        bytes += match value {
            Value::Null | Value::Bool(_) => 5,
            Value::Number(n) => number_len(n),
            Value::String(s) => s.len() + 3,
            Value::Array(items) => 2 + items.len(),
            Value::Object(map) => 2 + map.keys().map(|k| k.len() + 4).sum::<usize>(),
        };
        if bytes > limits.max_bytes {
            return Err(too_big(format!(
                "is larger than {} bytes (the limit per tool)",
                limits.max_bytes
            )));
        }
        let depth = match value {
            Value::Array(_) | Value::Object(_) => depth + 1,
            _ => continue,
        };
        if depth > max_depth {
            return Err(too_big(format!(
                "nests deeper than {max_depth} levels of JSON"
            )));
        }
        if let Pos::Schema(level) = pos
            && level > MAX_DEPTH
        {
            return Err(too_big(format!(
                "nests deeper than {MAX_DEPTH} levels of subschemas"
            )));
        }
        match (value, pos) {
            (Value::Object(map), Pos::Schema(level)) => {
                for (key, child) in map {
                    let child_pos = match (keyword(key), child) {
                        (Some(Keyword::Map), _) => Pos::SchemaMap(level + 1),
                        (Some(Keyword::List), _) | (Some(Keyword::Single), Value::Array(_)) => {
                            Pos::SchemaList(level + 1)
                        }
                        (Some(Keyword::Single), _) => Pos::Schema(level + 1),
                        (None, _) => Pos::Data,
                    };
                    if key == "properties"
                        && let Value::Object(names) = child
                    {
                        properties += names.len();
                        if properties > limits.max_properties {
                            return Err(too_big(format!(
                                "has more than {} properties (the limit per tool)",
                                limits.max_properties
                            )));
                        }
                    }
                    stack.push((child, depth, child_pos));
                }
            }
            (Value::Object(map), Pos::SchemaMap(level)) => {
                stack.extend(map.values().map(|c| (c, depth, Pos::Schema(level))));
            }
            (Value::Array(items), Pos::SchemaList(level)) => {
                stack.extend(items.iter().map(|c| (c, depth, Pos::Schema(level))));
            }
            (Value::Object(map), _) => stack.extend(map.values().map(|c| (c, depth, Pos::Data))),
            (Value::Array(items), _) => stack.extend(items.iter().map(|c| (c, depth, Pos::Data))),
            _ => {}
        }
    }
    Ok(())
}

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

/// About how many bytes a number takes as text, without writing it.
fn number_len(n: &serde_json::Number) -> usize {
    let digits = |mut v: u64| {
        let mut len = 1;
        while v >= 10 {
            v /= 10;
            len += 1;
        }
        len
    };
    if let Some(v) = n.as_u64() {
        digits(v) + 1
    } else if let Some(v) = n.as_i64() {
        digits(v.unsigned_abs()) + 2
    } else {
        24
    }
}

/// Normalises a tool's input schema (REFERENCE §3.4). Idempotent. A
/// schema nesting deeper than [`MAX_JSON_DEPTH`] is not read at all and
/// becomes `false` (accepts nothing), which every profile refuses.
pub fn normalize(schema: &Value) -> Value {
    if deep::exceeds_depth(schema, MAX_JSON_DEPTH) {
        return Value::Bool(false);
    }
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
        // Deeper than any profile accepts (`check_limits` refuses it):
        // left as it is, so the refusal names its real depth.
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

/// Rewrites a normalised schema for `profile`, within the default
/// [`SchemaLimits`].
pub fn for_profile(normalized: &Value, profile: ProviderProfile) -> Result<Value, SchemaError> {
    let limits = SchemaLimits::default();
    check_limits(normalized, &limits)?;
    for_profile_owned(normalized.clone(), profile, &limits)
}

fn for_profile_owned(
    normalized: Value,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<Value, SchemaError> {
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
            let mut budget = Budget::new(limits.max_nodes);
            openai_strict(&mut flat, &defs, &Path::ROOT, 0, &mut budget)?;
            openai_limits(&flat)?;
            Ok(flat)
        }
        ProviderProfile::Gemini => {
            let flat = flatten_top_level(normalized)?;
            let mut inlined = if contains_ref(&flat, 0) {
                let mut budget = Budget::new(limits.max_nodes);
                inline_refs(&flat, &flat, &Path::ROOT, &mut Vec::new(), 0, &mut budget)?
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
    let anchors = anchors(normalized);
    check_refs(normalized, normalized, &anchors, &Path::ROOT, 0)?;
    check_ref_cycles(normalized)
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

/// Keywords that point at another schema.
const REFERENCE_KEYWORDS: [&str; 3] = ["$ref", "$dynamicRef", "$recursiveRef"];

/// Refuses a reference that does not resolve inside the schema: a missing
/// pointer or anchor, or a remote reference (never fetched).
fn check_refs(
    root: &Value,
    schema: &Value,
    anchors: &HashMap<&str, &Value>,
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
        if REFERENCE_KEYWORDS.contains(&key.as_str()) {
            if resolve_reference(root, anchors, value).is_none() {
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
                    check_refs(root, child, anchors, &here.key(name), depth + 1)?;
                }
            }
            (Some(_), Value::Array(children)) => {
                for (i, child) in children.iter().enumerate() {
                    check_refs(root, child, anchors, &here.index(i), depth + 1)?;
                }
            }
            (Some(Keyword::Single), child) => check_refs(root, child, anchors, &here, depth + 1)?,
            _ => {}
        }
    }
    Ok(())
}

/// Every `$anchor` and `$dynamicAnchor` of a schema, found without
/// recursion.
fn anchors(root: &Value) -> HashMap<&str, &Value> {
    let mut found = HashMap::new();
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(name)) = map.get(key) {
                        found.entry(name.as_str()).or_insert(value);
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    found
}

/// What a reference points at inside `root`: `#`, a JSON pointer `#/…` or
/// an anchor `#name`. Anything else (another document, a url) is `None`:
/// nothing is ever fetched.
fn resolve_reference<'a>(
    root: &'a Value,
    anchors: &HashMap<&str, &'a Value>,
    reference: &Value,
) -> Option<&'a Value> {
    let reference = reference.as_str()?;
    let fragment = reference.strip_prefix('#')?;
    if fragment.is_empty() || fragment.starts_with('/') {
        resolve_local(root, reference)
    } else {
        anchors.get(fragment).copied()
    }
}

/// Keywords that apply a subschema to the same value, not to a part of
/// it: a cycle made of these alone never reaches a schema that decides
/// anything, and evaluating it never ends (the `jsonschema` crate then
/// overflows its stack at the first call). `$ref` and friends are added
/// to these by [`check_ref_cycles`].
fn in_place(key: &str) -> Option<Keyword> {
    match key {
        "allOf" | "anyOf" | "oneOf" => Some(Keyword::List),
        "not" | "if" | "then" | "else" => Some(Keyword::Single),
        "dependentSchemas" | "dependencies" => Some(Keyword::Map),
        _ => None,
    }
}

/// Refuses a reference cycle that never descends into a property or an
/// item: `A: {$ref: B}, B: {$ref: A}`, `{allOf: [{$ref: "#"}]}`, an anchor
/// that points at its own `oneOf`. Recursion through `properties`,
/// `items` and the other keywords that apply to a part of the value (a
/// tree whose `children` are items of the node type) is a valid recursive
/// schema and stays: the value is finite, so its validation ends.
///
/// Without recursion: schemas are numbered by address, edges are the
/// in-place applicators and resolved references, and an iterative
/// depth-first search looks for a cycle.
pub fn check_ref_cycles(root: &Value) -> Result<(), SchemaError> {
    if !has_reference(root) {
        return Ok(());
    }
    let anchors = anchors(root);
    let mut ids: HashMap<*const Value, usize> = HashMap::new();
    let mut nodes: Vec<(&Value, String)> = Vec::new();
    index_schemas(root, String::new(), &mut ids, &mut nodes);
    // An `$id` below the root starts a new resource, against which a
    // validator resolves `#…` differently from the walk here; such a
    // schema could hide a cycle from this check, so it is refused.
    let draft4 = root
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("draft-04"));
    for (value, pointer) in &nodes[1..] {
        let nested_id =
            value.get("$id").is_some() || (draft4 && value.get("id").is_some_and(Value::is_string));
        if nested_id {
            return Err(schema_error(
                pointer,
                "a schema resource with its own $id inside a schema that uses $ref is not supported",
            ));
        }
    }

    // Edges: in-place subschemas and reference targets. A reference into
    // a place no keyword makes a schema is read as a schema all the same
    // (as a validator would) and numbered when first seen.
    let mut edges: Vec<Vec<usize>> = Vec::new();
    let mut i = 0;
    while i < nodes.len() {
        let (value, _) = nodes[i];
        let mut targets = Vec::new();
        if let Value::Object(map) = value {
            for (key, child) in map {
                if REFERENCE_KEYWORDS.contains(&key.as_str()) {
                    if let Some(target) = resolve_reference(root, &anchors, child) {
                        if !ids.contains_key(&(target as *const Value)) {
                            let pointer = child.as_str().unwrap_or("").trim_start_matches('#');
                            index_schemas(target, pointer.to_owned(), &mut ids, &mut nodes);
                        }
                        targets.extend(ids.get(&(target as *const Value)).copied());
                    }
                    continue;
                }
                let children: Vec<&Value> = match (in_place(key), child) {
                    (Some(Keyword::Map), Value::Object(children)) => children.values().collect(),
                    (Some(_), Value::Array(children)) => children.iter().collect(),
                    (Some(Keyword::Single), child) => vec![child],
                    _ => Vec::new(),
                };
                targets.extend(
                    children
                        .into_iter()
                        .filter_map(|c| ids.get(&(c as *const Value)).copied()),
                );
            }
        }
        edges.push(targets);
        i += 1;
    }

    // Iterative depth-first search; `on_path` marks the current path.
    let mut done = vec![false; nodes.len()];
    let mut on_path = vec![false; nodes.len()];
    for start in 0..nodes.len() {
        if done[start] {
            continue;
        }
        let mut path: Vec<(usize, usize)> = vec![(start, 0)];
        on_path[start] = true;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&target) = edges[node].get(*next) {
                *next += 1;
                if on_path[target] {
                    let from = path.iter().position(|(n, _)| *n == target).unwrap_or(0);
                    let mut cycle: Vec<String> = path[from..]
                        .iter()
                        .map(|(n, _)| pointer_or_root(&nodes[*n].1))
                        .collect();
                    cycle.push(pointer_or_root(&nodes[target].1));
                    return Err(schema_error(
                        &nodes[target].1,
                        format!(
                            "$ref cycle {} never reaches a property or item, so it resolves to no schema",
                            cycle.join(" -> ")
                        ),
                    ));
                }
                if !done[target] {
                    on_path[target] = true;
                    path.push((target, 0));
                }
            } else {
                on_path[node] = false;
                done[node] = true;
                path.pop();
            }
        }
    }
    Ok(())
}

/// Numbers every schema object under `start` (`start` included) that has
/// no number yet, by address, with its JSON pointer.
fn index_schemas<'a>(
    start: &'a Value,
    pointer: String,
    ids: &mut HashMap<*const Value, usize>,
    nodes: &mut Vec<(&'a Value, String)>,
) {
    let mut stack = vec![(start, pointer)];
    while let Some((value, pointer)) = stack.pop() {
        let Value::Object(map) = value else {
            continue;
        };
        if ids.contains_key(&(value as *const Value)) {
            continue;
        }
        ids.insert(value as *const Value, nodes.len());
        for (key, child) in map {
            let here = format!("{pointer}/{}", escape_pointer(key));
            let kind = keyword(key).or_else(|| in_place(key));
            match (kind, child) {
                (Some(Keyword::Map), Value::Object(children)) => {
                    for (name, grandchild) in children {
                        stack.push((grandchild, format!("{here}/{}", escape_pointer(name))));
                    }
                }
                (Some(_), Value::Array(children)) => {
                    for (i, grandchild) in children.iter().enumerate() {
                        stack.push((grandchild, format!("{here}/{i}")));
                    }
                }
                (Some(Keyword::Single), child) => stack.push((child, here)),
                _ => {}
            }
        }
        nodes.push((value, pointer));
    }
}

fn pointer_or_root(pointer: &str) -> String {
    if pointer.is_empty() {
        "#".to_owned()
    } else {
        format!("#{pointer}")
    }
}

/// Whether any object of the schema holds a reference keyword.
fn has_reference(root: &Value) -> bool {
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                if REFERENCE_KEYWORDS.iter().any(|k| map.contains_key(*k)) {
                    return true;
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    false
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
    prepare_shared_with(schema, profile, &SchemaLimits::default())
}

/// [`prepare_shared`] within `limits`. The limits are checked first,
/// without recursion, on the schema as sent and on its normal form; the
/// reference cycle check runs on both as well.
pub fn prepare_shared_with<'s>(
    schema: &'s Value,
    profile: ProviderProfile,
    limits: &SchemaLimits,
) -> Result<Cow<'s, Value>, SchemaError> {
    check_limits(schema, limits)?;
    let prepared = if profile == ProviderProfile::Generic && is_normal(schema) {
        check(schema)?;
        check_generic_top(schema)?;
        Cow::Borrowed(schema)
    } else {
        // Normalising may add levels (a type list becomes `anyOf`).
        let normalized = normalize(schema);
        check_limits(&normalized, limits)?;
        Cow::Owned(for_profile_owned(normalized, profile, limits)?)
    };
    // Calls are validated against the schema as sent: its references must
    // not loop either (normalising moves a few subschemas).
    check_ref_cycles(schema)?;
    Ok(prepared)
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
                    Some(existing) if all => {
                        // Both branches apply: the property must satisfy
                        // both schemas, never just one of them.
                        let mut both = match existing.get("allOf") {
                            Some(Value::Array(both))
                                if existing.as_object().map(Map::len) == Some(1) =>
                            {
                                both.clone()
                            }
                            _ => vec![existing.clone()],
                        };
                        if !both.contains(schema) {
                            both.push(schema.clone());
                        }
                        *existing = json!({ "allOf": both });
                    }
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
fn refuse_lossy_union(keyword: &str, branches: &[Value], root: &Value) -> Result<(), SchemaError> {
    let required_of = |branch: &Value| {
        let mut names: Vec<String> = branch
            .get("required")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
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

/// Most `oneOf` branches one pair check stays cheap for.
const MAX_ONE_OF_BRANCHES: usize = 256;

/// `oneOf` may become `anyOf` only when no value can match two branches,
/// which is provable here for branches of distinct types, distinct
/// constants, or objects told apart by a required discriminator property.
fn refuse_overlapping_one_of(
    branches: &[Value],
    root: &Value,
    target: &str,
    path: &str,
) -> Result<(), SchemaError> {
    if branches.len() > MAX_ONE_OF_BRANCHES {
        return Err(schema_error(
            path,
            format!(
                "{target} cannot express oneOf with more than {MAX_ONE_OF_BRANCHES} branches (anyOf would accept values valid for several)"
            ),
        ));
    }
    for i in 0..branches.len() {
        for j in i + 1..branches.len() {
            if !disjoint(&branches[i], &branches[j], root) {
                return Err(schema_error(
                    path,
                    format!(
                        "{target} cannot express oneOf whose branches {i} and {j} may both match (anyOf would accept a value valid for both)"
                    ),
                ));
            }
        }
    }
    Ok(())
}

/// Whether no value can match both schemas, by what is cheap to prove.
fn disjoint(a: &Value, b: &Value, root: &Value) -> bool {
    let (Some(a), Some(b)) = (follow_ref(a, root), follow_ref(b, root)) else {
        return false;
    };
    if !a.is_object() || !b.is_object() {
        return false;
    }
    if disjoint_values(a, b) {
        return true;
    }
    // A required property both branches pin to different values.
    let (Some(Value::Object(pa)), Some(Value::Object(pb))) =
        (a.get("properties"), b.get("properties"))
    else {
        return false;
    };
    let required = |s: &Value, name: &str| {
        s.get("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|n| n == name))
    };
    pa.iter().any(|(name, sa)| {
        required(a, name)
            && required(b, name)
            && pb.get(name).is_some_and(|sb| disjoint_values(sa, sb))
    })
}

/// `schema`, or what its `$ref` points at.
fn follow_ref<'a>(schema: &'a Value, root: &'a Value) -> Option<&'a Value> {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => resolve_local(root, reference),
        None => Some(schema),
    }
}

/// Disjoint by type or by constant values, looking at one schema object.
fn disjoint_values(a: &Value, b: &Value) -> bool {
    if let (Some(ta), Some(tb)) = (type_set(a), type_set(b))
        && !ta.iter().any(|x| tb.iter().any(|y| types_overlap(x, y)))
    {
        return true;
    }
    if let (Some(va), Some(vb)) = (value_set(a), value_set(b))
        && !va.iter().any(|x| vb.contains(x))
    {
        return true;
    }
    false
}

fn types_overlap(a: &str, b: &str) -> bool {
    a == b || matches!((a, b), ("integer", "number") | ("number", "integer"))
}

/// The JSON types a schema object allows, when it says.
fn type_set(schema: &Value) -> Option<Vec<&'static str>> {
    if let Some(Value::String(t)) = schema.get("type") {
        return TYPE_NAMES
            .iter()
            .find(|n| **n == t.as_str())
            .map(|n| vec![*n]);
    }
    value_set(schema).map(|values| values.into_iter().map(json_type).collect())
}

/// The values a schema object allows, when it lists them.
fn value_set(schema: &Value) -> Option<Vec<&Value>> {
    if let Some(constant) = schema.get("const") {
        return Some(vec![constant]);
    }
    schema
        .get("enum")
        .and_then(Value::as_array)
        .map(|values| values.iter().collect())
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Keywords a provider would drop whose loss changes what a value means,
/// not only how tightly it is bounded: a dropped `not` accepts what it
/// excluded, a dropped `if`/`then` or `dependentRequired` loses a
/// requirement, a tuple loses its positions. Refused, so the tool is left
/// out rather than described wrongly. Dropped bounds (`minLength`,
/// `uniqueItems`, …) only relax, and the server's schema still checks
/// every call.
fn refuse_lost_logic(
    map: &Map<String, Value>,
    root: &Value,
    provider: &str,
    path: &Path<'_>,
) -> Result<(), SchemaError> {
    for (key, what) in [
        ("not", "`not`"),
        ("if", "if/then/else"),
        ("then", "if/then/else"),
        ("else", "if/then/else"),
        ("dependentRequired", "dependentRequired"),
        ("dependentSchemas", "dependentSchemas"),
        ("dependencies", "dependencies"),
        ("prefixItems", "a tuple (prefixItems)"),
    ] {
        if map.contains_key(key) {
            return Err(schema_error(
                &path.key(key).render(),
                format!(
                    "{provider} cannot express {what}; dropping it would change what the arguments mean"
                ),
            ));
        }
    }
    if let Some(Value::Array(_)) = map.get("items") {
        return Err(schema_error(
            &path.key("items").render(),
            format!(
                "{provider} cannot express a tuple (prefixItems); dropping it would change what the arguments mean"
            ),
        ));
    }
    if let Some(Value::Array(branches)) = map.get("oneOf") {
        refuse_overlapping_one_of(branches, root, provider, &path.key("oneOf").render())?;
    }
    Ok(())
}

/// What inlining may still build, in JSON values.
struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    fn new(limit: usize) -> Self {
        Budget { left: limit, limit }
    }

    fn charge(&mut self, nodes: usize, path: &Path<'_>, what: &str) -> Result<(), SchemaError> {
        match self.left.checked_sub(nodes) {
            Some(left) => {
                self.left = left;
                Ok(())
            }
            None => Err(schema_error(
                &path.render(),
                format!(
                    "{what} would build more than {} nodes (the limit per tool)",
                    self.limit
                ),
            )),
        }
    }
}

/// JSON values in `value`, without recursion.
fn count_nodes(value: &Value) -> usize {
    let mut count = 0;
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        count += 1;
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.values()),
            _ => {}
        }
    }
    count
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
fn openai_limits(schema: &Value) -> Result<(), SchemaError> {
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

fn openai_strict(
    schema: &mut Value,
    defs: &Value,
    path: &Path<'_>,
    depth: usize,
    budget: &mut Budget,
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
    budget: &mut Budget,
) -> Result<Value, SchemaError> {
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

fn gemini(schema: &mut Value, path: &Path<'_>, depth: usize) -> Result<(), SchemaError> {
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
