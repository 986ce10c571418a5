//! Arguments on their way to the server: what the `openai-strict`
//! rewrite made the model send is taken back out, so the server sees the
//! arguments its own schema describes; and top-level argument names the
//! schema does not describe are found, to be warned on (or refused, when
//! the schema closes the object).

use std::collections::BTreeSet;

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

/// Top-level argument names a tool's schema does not describe.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownArguments {
    /// The names given that the schema does not know, sorted.
    pub names: Vec<String>,
    /// The names the schema knows, sorted.
    pub known: Vec<String>,
    /// Whether the schema refuses other names (`additionalProperties` or
    /// `unevaluatedProperties` is `false` at the top).
    pub closed: bool,
}

/// The keywords whose branches may describe more top-level properties.
const BRANCHES: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const SINGLE_BRANCHES: [&str; 3] = ["if", "then", "else"];

/// The names in `arguments` (an object) that `schema` does not describe,
/// or `None` when all are described or the schema cannot tell: it names
/// no properties and leaves the object open, takes names by pattern, or
/// allows other names through `additionalProperties` (`true` or a
/// schema).
/// Properties of `allOf`/`anyOf`/`oneOf`/`if`/`then`/`else` branches and a
/// top-level `$ref` count as described.
pub fn unknown_arguments(schema: &Value, arguments: &Value) -> Option<UnknownArguments> {
    let Value::Object(given) = arguments else {
        return None;
    };
    let top = follow(schema, schema)?;
    let closed = ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|key| top.get(*key) == Some(&Value::Bool(false)));
    if !closed && top.get("additionalProperties").is_some() {
        // Other names are allowed on purpose (`true`, or a schema of
        // their own).
        return None;
    }
    let mut known = BTreeSet::new();
    let mut open_ended = false;
    let mut described = false;
    let mut branches = vec![top];
    for key in BRANCHES {
        if let Some(Value::Array(items)) = top.get(key) {
            branches.extend(items.iter().filter_map(|b| follow(schema, b)));
        }
    }
    for key in SINGLE_BRANCHES {
        if let Some(branch) = top.get(key).and_then(|b| follow(schema, b)) {
            branches.push(branch);
        }
    }
    for branch in branches {
        if let Some(Value::Object(properties)) = branch.get("properties") {
            described = true;
            known.extend(properties.keys().map(String::as_str));
        }
        if branch.get("patternProperties").is_some() || branch.get("dependentSchemas").is_some() {
            open_ended = true;
        }
    }
    if open_ended || (!described && !closed) {
        return None;
    }
    let mut names: Vec<String> = given
        .keys()
        .filter(|name| !known.contains(name.as_str()))
        .cloned()
        .collect();
    names.sort();
    if names.is_empty() {
        return None;
    }
    Some(UnknownArguments {
        names,
        known: known.into_iter().map(str::to_owned).collect(),
        closed,
    })
}

/// `schema` as an object, through one local `$ref`.
/// The checks that stand in for JSON Schema validation in a build without
/// the `validation` feature: the arguments are an object when the schema's
/// top level asks for one, and carry every name its `required` lists.
/// `Err` holds the failing path and why; anything deeper is left to the
/// server. (Compiled in every build so its tests run with the defaults.)
#[cfg_attr(feature = "validation", allow(dead_code))]
pub(crate) fn cheap_violation(schema: &Value, arguments: &Value) -> Result<(), (String, String)> {
    let Some(top) = follow(schema, schema) else {
        return Ok(());
    };
    let wants_object = match top.get("type") {
        Some(Value::String(kind)) => kind == "object",
        Some(Value::Array(kinds)) => kinds.iter().all(|k| k == "object"),
        _ => false,
    };
    let Value::Object(given) = arguments else {
        return if wants_object {
            Err(("/".to_owned(), "the arguments are not an object".to_owned()))
        } else {
            Ok(())
        };
    };
    if let Some(Value::Array(required)) = top.get("required")
        && let Some(missing) = required
            .iter()
            .filter_map(Value::as_str)
            .find(|name| !given.contains_key(*name))
    {
        return Err((
            "/".to_owned(),
            format!("required argument `{missing}` is missing"),
        ));
    }
    Ok(())
}

fn follow<'a>(root: &'a Value, schema: &'a Value) -> Option<&'a Value> {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => resolve_local(root, reference)?,
        None => schema,
    };
    schema.is_object().then_some(schema)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `cheap_violation` on a table of schemas and arguments: `None` when
    /// they pass, else the reason.
    #[test]
    fn cheap_checks_refuse_a_non_object_and_a_missing_required_name() {
        fn check(schema: Value, arguments: Value, expected: Option<&str>) {
            let got = cheap_violation(&schema, &arguments)
                .err()
                .map(|(path, why)| {
                    assert_eq!(path, "/");
                    why
                });
            assert_eq!(got.as_deref(), expected, "{schema} / {arguments}");
        }
        let object =
            json!({"type": "object", "properties": {"q": {"type": "string"}}, "required": ["q"]});
        check(object.clone(), json!({"q": "x"}), None);
        check(
            object.clone(),
            json!({}),
            Some("required argument `q` is missing"),
        );
        check(object, json!([1]), Some("the arguments are not an object"));
        check(
            json!({"$ref": "#/$defs/a", "$defs": {"a": {"required": ["b"]}}}),
            json!({}),
            Some("required argument `b` is missing"),
        );
        check(json!({}), json!(3), None);
        check(json!(true), json!({}), None);
    }

    /// `arguments` against `schema`: the unknown names, the known ones and
    /// whether the object is closed, or `None`.
    fn check(schema: Value, arguments: Value, expect: Option<(&[&str], &[&str], bool)>) {
        let got = unknown_arguments(&schema, &arguments);
        let expect = expect.map(|(names, known, closed)| UnknownArguments {
            names: names.iter().map(|n| (*n).to_owned()).collect(),
            known: known.iter().map(|n| (*n).to_owned()).collect(),
            closed,
        });
        assert_eq!(got, expect, "{schema} with {arguments}");
    }

    #[test]
    fn unknown_argument_names() {
        let ab = json!({"type": "object", "properties": {"a": {}, "b": {}}});
        check(ab.clone(), json!({"a": 1}), None);
        check(
            ab.clone(),
            json!({"a": 1, "x": 2}),
            Some((&["x"], &["a", "b"], false)),
        );
        check(ab, json!([1]), None);
        let closed =
            json!({"type": "object", "properties": {"a": {}}, "additionalProperties": false});
        check(
            closed,
            json!({"z": 1, "y": 2}),
            Some((&["y", "z"], &["a"], true)),
        );
        let unevaluated = json!({"properties": {"a": {}}, "unevaluatedProperties": false});
        check(unevaluated, json!({"b": 1}), Some((&["b"], &["a"], true)));
        // explicitly open: no warning
        check(
            json!({"properties": {"a": {}}, "additionalProperties": true}),
            json!({"b": 1}),
            None,
        );
        check(
            json!({"properties": {"a": {}}, "additionalProperties": {"type": "string"}}),
            json!({"b": "x"}),
            None,
        );
        check(
            json!({"properties": {"a": {}}, "patternProperties": {"^x": {}}}),
            json!({"xb": 1}),
            None,
        );
        // no properties named: free-form unless closed
        check(json!({"type": "object"}), json!({"b": 1}), None);
        check(json!(true), json!({"b": 1}), None);
        check(
            json!({"type": "object", "additionalProperties": false}),
            json!({"b": 1}),
            Some((&["b"], &[], true)),
        );
        // properties of branches and of a top-level $ref count
        let branches = json!({
            "properties": {"a": {}},
            "allOf": [{"properties": {"b": {}}}],
            "anyOf": [{"$ref": "#/$defs/c"}],
            "if": {"properties": {"d": {}}},
            "$defs": {"c": {"properties": {"c": {}}}}
        });
        check(
            branches.clone(),
            json!({"a": 1, "b": 1, "c": 1, "d": 1}),
            None,
        );
        check(
            branches,
            json!({"e": 1}),
            Some((&["e"], &["a", "b", "c", "d"], false)),
        );
        let referenced = json!({"$ref": "#/$defs/args", "$defs": {"args": {"properties": {"q": {}}, "additionalProperties": false}}});
        check(referenced, json!({"r": 1}), Some((&["r"], &["q"], true)));
    }
}
