//! `x-mcp-header` (SEP-2243, MCP 2026-07-28): tool parameters a server asks
//! the client to mirror into `Mcp-Param-{Name}` HTTP headers so
//! intermediaries can route on them without reading the body.
//!
//! Three steps, kept apart so each has one home: [`ParamHeaders::from_input_schema`]
//! validates a tool's annotations exactly as the specification lists them
//! (a tool with an invalid one must be left out of the listing, so the
//! reason is returned rather than the annotation skipped);
//! [`ParamHeaders::headers_for`] reads the annotated values from a call's
//! arguments; [`encode_header_value`] applies the value encoding (the
//! `=?base64?…?=` sentinel for anything not plain visible ASCII), which
//! `Mcp-Name` shares. [`ToolHeaderTable`] is the shared map the session
//! fills after each `tools/list` and the streamable HTTP transport reads
//! for each `tools/call`; it also remembers which tools are safe to re-issue
//! when a response stream breaks.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, RwLock};

use base64::Engine;
use serde_json::Value;

/// The keyword naming a parameter's header.
pub const ANNOTATION: &str = "x-mcp-header";

/// The prefix of every custom parameter header.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// Keywords whose values are data, not schemas: an `x-mcp-header` key
/// inside them is an ordinary JSON member.
const DATA_KEYWORDS: &[&str] = &["const", "enum", "default", "examples"];

/// Keywords whose value is a map from names to schemas.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "$defs",
    "definitions",
    "patternProperties",
    "dependentSchemas",
];

/// The valid `x-mcp-header` annotations of one tool, in schema order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ParamHeaders {
    params: Vec<ParamHeader>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
struct ParamHeader {
    /// The header name, `Mcp-Param-{annotation}`.
    header: String,
    /// The chain of `properties` keys leading to the parameter.
    path: Vec<String>,
}

/// An annotation found while walking a schema, before its checks.
struct Found<'a> {
    path: Vec<String>,
    node: &'a serde_json::Map<String, Value>,
}

impl ParamHeaders {
    /// The annotations of a tool's `inputSchema`: `Ok(None)` when it has
    /// none, `Err(reason)` when any violates the specification's
    /// constraints (then the whole tool must be rejected).
    ///
    /// The constraints: the value is a non-empty string of HTTP token
    /// characters (RFC 9110 `tchar`: no space, colon, control or non-ASCII
    /// character), unique among the tool's annotations ignoring case, on a
    /// parameter of type string, integer or boolean (`number`, `object`,
    /// `array` and `null` are refused), reached from the schema root by
    /// `properties` keys alone (never through `items`, `anyOf`, `$ref`,
    /// `$defs`, `if`/`then`/`else` or any other keyword).
    pub fn from_input_schema(schema: &Value) -> Result<Option<ParamHeaders>, String> {
        let mut found = Vec::new();
        walk(schema, Some(Vec::new()), "", &mut found)?;
        if found.is_empty() {
            return Ok(None);
        }
        let mut seen = HashSet::new();
        let mut params = Vec::with_capacity(found.len());
        for Found { path, node } in found {
            let at = if path.is_empty() {
                return Err(format!("{ANNOTATION} on the schema root"));
            } else {
                path.join(".")
            };
            let name = match node.get(ANNOTATION) {
                Some(Value::String(name)) => name,
                Some(other) => {
                    return Err(format!(
                        "{ANNOTATION} of `{at}` must be a string, not {}",
                        json_type(other)
                    ));
                }
                None => continue,
            };
            if name.is_empty() {
                return Err(format!("{ANNOTATION} of `{at}` is empty"));
            }
            if let Some(bad) = name.chars().find(|c| !is_tchar(*c)) {
                return Err(format!(
                    "{ANNOTATION} \"{}\" of `{at}` is not an HTTP header token (it contains {:?})",
                    name.escape_debug(),
                    bad
                ));
            }
            check_primitive(schema, node, &at)?;
            if !seen.insert(name.to_ascii_lowercase()) {
                return Err(format!(
                    "{ANNOTATION} \"{name}\" is used by more than one parameter (names are compared ignoring case)"
                ));
            }
            params.push(ParamHeader {
                header: format!("{PARAM_HEADER_PREFIX}{name}"),
                path,
            });
        }
        Ok(Some(ParamHeaders { params }))
    }

    /// The header names, `Mcp-Param-{Name}`, in schema order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.params.iter().map(|p| p.header.as_str())
    }

    /// The headers a call with `arguments` carries: one per annotated
    /// parameter whose value is present and not null, encoded. A value of
    /// a type the header cannot carry (an object or an array) is left out
    /// too; the server's own validation refuses such a call.
    pub fn headers_for(&self, arguments: Option<&Value>) -> Vec<(String, String)> {
        let Some(arguments) = arguments else {
            return Vec::new();
        };
        self.params
            .iter()
            .filter_map(|param| {
                let value = param
                    .path
                    .iter()
                    .try_fold(arguments, |value, key| value.get(key))?;
                Some((param.header.clone(), header_value(value)?))
            })
            .collect()
    }
}

impl ParamHeaders {
    /// What is wrong with the `Mcp-Param-*` headers of a call with
    /// `arguments`, as a server checks them (`header` reads one request
    /// header by name, any case): each annotated parameter present in the
    /// body needs its header, and the header's value, decoded
    /// ([`decode_header_value`]), must be the body's; a header for a
    /// parameter the body lacks disagrees with it too.
    pub fn check<'h>(
        &self,
        arguments: Option<&Value>,
        header: impl Fn(&str) -> Option<&'h str>,
    ) -> Result<(), String> {
        for param in &self.params {
            let value = arguments.and_then(|arguments| {
                param
                    .path
                    .iter()
                    .try_fold(arguments, |value, key| value.get(key))
            });
            let body = value.and_then(header_text);
            match (header(&param.header), body) {
                (None, None) => {}
                (None, Some(_)) => {
                    return Err(format!("the {} header is missing", param.header));
                }
                (Some(_), None) => {
                    return Err(format!(
                        "the {} header names a value the body does not have",
                        param.header
                    ));
                }
                (Some(sent), Some(body)) => {
                    let sent = decode_header_value(sent)
                        .map_err(|why| format!("the {} header {why}", param.header))?;
                    if sent != body {
                        return Err(format!(
                            "the {} header does not match the request body",
                            param.header
                        ));
                    }
                }
            }
        }
        Ok(())
    }
}

/// A header value as the text it carries: whitespace around it dropped
/// (RFC 9110), then a `=?base64?…?=` value decoded (strict Base64 with
/// its padding, then UTF-8); anything else is the text itself.
pub fn decode_header_value(value: &str) -> Result<String, String> {
    let value = value.trim_matches([' ', '\t']);
    let Some(encoded) = value
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    else {
        return Ok(value.to_owned());
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded)
        .map_err(|_| "is not valid Base64".to_owned())?;
    String::from_utf8(bytes).map_err(|_| "does not decode to UTF-8 text".to_owned())
}

/// A parameter value as the text its header carries, before encoding.
fn header_text(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => Some(s.clone()),
        Value::Bool(b) => Some(b.to_string()),
        Value::Number(n) => match n.as_f64() {
            // 42.0 is the integer 42: written without the fraction.
            Some(f)
                if !n.is_i64() && !n.is_u64() && f.fract() == 0.0 && f.abs() < 2f64.powi(53) =>
            {
                Some(format!("{f:.0}"))
            }
            _ => Some(n.to_string()),
        },
        Value::Null | Value::Array(_) | Value::Object(_) => None,
    }
}

/// Collects every `x-mcp-header` in `schema`; `path` is the chain of
/// `properties` keys while the node is still statically reachable, `None`
/// once the walk went through any other keyword (an annotation there is an
/// error). `pointer` locates the node for the error message.
fn walk<'a>(
    schema: &'a Value,
    path: Option<Vec<String>>,
    pointer: &str,
    found: &mut Vec<Found<'a>>,
) -> Result<(), String> {
    let node = match schema {
        Value::Object(node) => node,
        Value::Array(items) => {
            for (i, item) in items.iter().enumerate() {
                walk(item, None, &format!("{pointer}/{i}"), found)?;
            }
            return Ok(());
        }
        _ => return Ok(()),
    };
    if node.contains_key(ANNOTATION) {
        match &path {
            Some(path) => found.push(Found {
                path: path.clone(),
                node,
            }),
            None => {
                return Err(format!(
                    "{ANNOTATION} at `{}` is not reachable from the schema root through `properties` alone",
                    if pointer.is_empty() { "/" } else { pointer }
                ));
            }
        }
    }
    for (keyword, value) in node {
        let here = format!("{pointer}/{}", escape_pointer(keyword));
        match keyword.as_str() {
            ANNOTATION => {}
            k if DATA_KEYWORDS.contains(&k) => {}
            "properties" => {
                let Value::Object(properties) = value else {
                    continue;
                };
                for (name, sub) in properties {
                    let sub_path = path.as_ref().map(|p| {
                        let mut p = p.clone();
                        p.push(name.clone());
                        p
                    });
                    walk(
                        sub,
                        sub_path,
                        &format!("{here}/{}", escape_pointer(name)),
                        found,
                    )?;
                }
            }
            k if SCHEMA_MAP_KEYWORDS.contains(&k) => {
                let Value::Object(map) = value else { continue };
                for (name, sub) in map {
                    walk(
                        sub,
                        None,
                        &format!("{here}/{}", escape_pointer(name)),
                        found,
                    )?;
                }
            }
            _ => walk(value, None, &here, found)?,
        }
    }
    Ok(())
}

fn escape_pointer(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// RFC 9110 `tchar`.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-.^_`|~".contains(c)
}

/// How many same-document `$ref`s are followed to find a parameter's type
/// (a cycle must not loop).
const MAX_REF_HOPS: usize = 8;

/// Refuses an annotated parameter whose declared type is not string,
/// integer or boolean (null allowed only beside one of them: the header is
/// then omitted for a null value).
fn check_primitive(
    root: &Value,
    node: &serde_json::Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    let types = declared_types(root, node, MAX_REF_HOPS);
    if types.is_empty() {
        return Err(format!(
            "`{at}` declares no type; {ANNOTATION} needs a string, integer or boolean parameter"
        ));
    }
    if let Some(bad) = types
        .iter()
        .find(|t| !matches!(t.as_str(), "string" | "integer" | "boolean" | "null"))
    {
        return Err(format!(
            "`{at}` has type {bad}; {ANNOTATION} needs a string, integer or boolean parameter"
        ));
    }
    if types.iter().all(|t| t == "null") {
        return Err(format!(
            "`{at}` has type null; {ANNOTATION} needs a string, integer or boolean parameter"
        ));
    }
    Ok(())
}

/// The JSON types a parameter's schema allows: its `type`, else the union
/// of its `anyOf`/`oneOf` branches' types, else the types of its `const`
/// or `enum` values, else those of the same-document schema its `$ref`
/// names (an enum in `$defs`, as schema generators write it); empty when
/// it says nothing (or something unreadable).
fn declared_types(root: &Value, node: &serde_json::Map<String, Value>, hops: usize) -> Vec<String> {
    match node.get("type") {
        Some(Value::String(t)) => return vec![t.clone()],
        Some(Value::Array(ts)) => {
            return ts
                .iter()
                .map(|t| t.as_str().unwrap_or("unreadable").to_owned())
                .collect();
        }
        Some(other) => return vec![json_type(other).to_owned()],
        None => {}
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(Value::Array(branches)) = node.get(keyword) {
            let mut types = Vec::new();
            for branch in branches {
                let branch_types = match branch {
                    Value::Object(branch) => declared_types(root, branch, hops),
                    _ => Vec::new(),
                };
                if branch_types.is_empty() {
                    return Vec::new();
                }
                types.extend(branch_types);
            }
            return types;
        }
    }
    if let Some(value) = node.get("const") {
        return vec![value_type(value).to_owned()];
    }
    if let Some(Value::Array(values)) = node.get("enum") {
        return values.iter().map(|v| value_type(v).to_owned()).collect();
    }
    let target = node
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix('#'))
        .filter(|_| hops > 0)
        .and_then(|pointer| root.pointer(pointer));
    match target {
        Some(Value::Object(target)) => declared_types(root, target, hops - 1),
        _ => Vec::new(),
    }
}

/// A value's JSON Schema type (an integral number is an integer).
fn value_type(value: &Value) -> &'static str {
    match value {
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        other => json_type(other),
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// A parameter value as a header value: strings as they are, integers in
/// decimal, booleans as `true`/`false`, then [`encode_header_value`];
/// `None` for null, objects and arrays.
pub fn header_value(value: &Value) -> Option<String> {
    Some(encode_header_value(&header_text(value)?))
}

/// The value encoding of `Mcp-Name` and `Mcp-Param-*`: the text as it is
/// when it is plain visible ASCII (spaces allowed inside), else
/// `=?base64?{Base64 of its UTF-8}?=`. Leading or trailing spaces, any
/// control character (tab included), any non-ASCII character, and a text
/// that already looks like the sentinel are encoded.
pub fn encode_header_value(text: &str) -> String {
    encoded_header_value(text).into_owned()
}

/// [`encode_header_value`], borrowing a text that needs no encoding (a
/// request's method and name nearly always).
pub(crate) fn encoded_header_value(text: &str) -> std::borrow::Cow<'_, str> {
    let visible = text.bytes().all(|b| (0x20..=0x7e).contains(&b));
    let padded = text.starts_with(' ') || text.ends_with(' ');
    let sentinel = text.starts_with(SENTINEL_PREFIX) && text.ends_with(SENTINEL_SUFFIX);
    if visible && !padded && !sentinel {
        std::borrow::Cow::Borrowed(text)
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text.as_bytes());
        std::borrow::Cow::Owned(format!("{SENTINEL_PREFIX}{encoded}{SENTINEL_SUFFIX}"))
    }
}

/// The member of a request's params that its `Mcp-Name` header carries
/// (SEP-2243), by method: the tool or prompt name, the resource URI, or
/// (SEP-2663, so intermediaries route every request of a task) the task
/// id. The client sets the header from it and a server checks it.
pub(crate) fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        "tasks/get" | "tasks/update" | "tasks/cancel" => Some("taskId"),
        _ => None,
    }
}

/// Whether a tool's `annotations` promise that calling it again has no
/// further effect (`readOnlyHint` or `idempotentHint` true), so a call whose
/// response stream broke may be re-issued.
pub fn tool_is_repeat_safe(annotations: Option<&Value>) -> bool {
    let hint = |name: &str| {
        annotations
            .and_then(|a| a.get(name))
            .and_then(Value::as_bool)
            .unwrap_or(false)
    };
    hint("readOnlyHint") || hint("idempotentHint")
}

/// What the session knows about one server's tools that the HTTP
/// transport needs on each `tools/call`: each tool's [`ParamHeaders`] and
/// which tools are safe to re-issue. Cloning shares the table.
#[derive(Debug, Clone, Default)]
pub struct ToolHeaderTable {
    inner: Arc<RwLock<Tables>>,
}

#[derive(Debug, Default)]
struct Tables {
    headers: HashMap<String, ParamHeaders>,
    repeat_safe: HashSet<String>,
}

impl ToolHeaderTable {
    /// An empty table.
    pub fn new() -> Self {
        Self::default()
    }

    /// Replaces every tool's headers with those of the latest listing
    /// (tools without annotations are simply absent).
    pub fn replace(&self, headers: HashMap<String, ParamHeaders>) {
        self.write().headers = headers;
    }

    /// Replaces the set of tools safe to re-issue (see
    /// [`tool_is_repeat_safe`]) with those of the latest listing.
    pub fn replace_repeat_safe(&self, tools: HashSet<String>) {
        self.write().repeat_safe = tools;
    }

    /// The headers of `tool`, if it has any.
    pub fn get(&self, tool: &str) -> Option<ParamHeaders> {
        self.read().headers.get(tool).cloned()
    }

    /// The `Mcp-Param-*` headers of a call to `tool` with `arguments`.
    pub fn headers_for(&self, tool: &str, arguments: Option<&Value>) -> Vec<(String, String)> {
        self.read()
            .headers
            .get(tool)
            .map(|h| h.headers_for(arguments))
            .unwrap_or_default()
    }

    /// Whether the latest listing marked `tool` read-only or idempotent.
    pub fn is_repeat_safe(&self, tool: &str) -> bool {
        self.read().repeat_safe.contains(tool)
    }

    fn read(&self) -> std::sync::RwLockReadGuard<'_, Tables> {
        self.inner
            .read()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn write(&self) -> std::sync::RwLockWriteGuard<'_, Tables> {
        self.inner
            .write()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn nested_properties_are_reachable_and_read_at_their_path() {
        let schema = json!({"type": "object", "properties": {
            "target": {"type": "object", "properties": {
                "region": {"type": "string", "x-mcp-header": "Region"}}}}});
        let headers = ParamHeaders::from_input_schema(&schema).unwrap().unwrap();
        assert_eq!(headers.names().collect::<Vec<_>>(), ["Mcp-Param-Region"]);
        let args = json!({"target": {"region": "eu"}, "region": "not this"});
        assert_eq!(
            headers.headers_for(Some(&args)),
            [("Mcp-Param-Region".to_owned(), "eu".to_owned())]
        );
        assert!(headers.headers_for(Some(&json!({"target": 1}))).is_empty());
    }

    #[test]
    fn data_keywords_and_property_names_are_not_annotations() {
        let schema = json!({"type": "object", "properties": {
            "x-mcp-header": {"type": "string", "default": {"x-mcp-header": 1}},
            "mode": {"enum": [{"x-mcp-header": "A"}], "const": {"x-mcp-header": "B"}}}});
        assert_eq!(ParamHeaders::from_input_schema(&schema), Ok(None));
    }

    #[test]
    fn a_table_is_shared_by_its_clones() {
        let table = ToolHeaderTable::new();
        let reader = table.clone();
        let schema = json!({"properties": {"r": {"type": "string", "x-mcp-header": "R"}}});
        let headers = ParamHeaders::from_input_schema(&schema).unwrap().unwrap();
        table.replace(HashMap::from([("t".to_owned(), headers)]));
        table.replace_repeat_safe(HashSet::from(["t".to_owned()]));
        assert_eq!(
            reader.headers_for("t", Some(&json!({"r": "x"}))),
            [("Mcp-Param-R".to_owned(), "x".to_owned())]
        );
        assert!(reader.is_repeat_safe("t"));
        assert!(!reader.is_repeat_safe("other"));
        assert!(
            reader
                .headers_for("other", Some(&json!({"r": "x"})))
                .is_empty()
        );
    }

    #[test]
    fn repeat_safety_follows_the_hints() {
        for (annotations, safe) in [
            (None, false),
            (Some(json!({})), false),
            (Some(json!({"readOnlyHint": true})), true),
            (
                Some(json!({"idempotentHint": true, "readOnlyHint": false})),
                true,
            ),
            (Some(json!({"destructiveHint": true})), false),
            (Some(json!({"readOnlyHint": "yes"})), false),
        ] {
            assert_eq!(
                tool_is_repeat_safe(annotations.as_ref()),
                safe,
                "{annotations:?}"
            );
        }
    }
}
