//! What a provider's subset cannot express, shared by the OpenAI and
//! Gemini rewrites: keywords whose loss would change what arguments mean,
//! and `oneOf` branches that may both match (so `anyOf` cannot stand in).

use serde_json::{Map, Value};

use super::check::TYPE_NAMES;
use super::limits::MAX_DEPTH;
use super::{CatalogError, Path, resolve_local, schema_error};

/// Most `oneOf` branches one pair check stays cheap for.
const MAX_ONE_OF_BRANCHES: usize = 256;

/// `oneOf` may become `anyOf` only when no value can match two branches,
/// which is provable here for branches of distinct types, distinct
/// constants, or objects told apart by a required discriminator property.
pub(super) fn refuse_overlapping_one_of(
    branches: &[Value],
    root: &Value,
    target: &str,
    path: &str,
) -> Result<(), CatalogError> {
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
pub(super) fn refuse_lost_logic(
    map: &Map<String, Value>,
    root: &Value,
    provider: &str,
    path: &Path<'_>,
) -> Result<(), CatalogError> {
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

/// The object a provider rewrite works on. A `true` schema becomes
/// `accept_all` (`None`: nothing more to rewrite); `false`, a non-schema
/// and nesting deeper than [`MAX_DEPTH`] are refused.
pub(super) fn provider_object<'s>(
    schema: &'s mut Value,
    accept_all: impl FnOnce() -> Value,
    provider: &str,
    path: &Path<'_>,
    depth: usize,
) -> Result<Option<&'s mut Map<String, Value>>, CatalogError> {
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
