//! The checks every profile starts with: the structure a validator
//! compiles, references that resolve inside the schema (nothing is ever
//! fetched), and no reference cycle that never reaches a property or an
//! item.

use std::cell::OnceCell;
use std::collections::HashMap;
use std::collections::hash_map::Entry;

use serde_json::Value;

use super::limits::{MAX_DEPTH, SchemaLimits, check_limits};
use super::{
    CatalogError, Keyword, Path, Segment, escape_pointer, keyword, percent_decode, push_segments,
    resolve_local, same_document_fragment, schema_error,
};

/// The checks every profile starts with: structure, then references, then
/// how much the composition keywords make a validator evaluate.
pub(super) fn check(normalized: &Value, limits: &SchemaLimits) -> Result<(), CatalogError> {
    check_structure(normalized, &Path::ROOT, 0)?;
    let anchors = Anchors::of(normalized);
    check_refs(normalized, normalized, &anchors, &Path::ROOT, 0)?;
    check_composition(normalized, limits)
}

/// Vets a tool's `outputSchema` before any result is checked against it:
/// a JSON Schema (object or boolean; any type of value may be described,
/// SEP-2106) within `limits`, whose references all resolve inside it and
/// whose composition stays within the bound. A schema that fails leaves
/// its tool out: a result could not be checked against it, and the SEP
/// asks for rejection rather than a permissive reading.
pub fn check_output_schema(schema: &Value, limits: &SchemaLimits) -> Result<(), CatalogError> {
    match schema {
        Value::Bool(_) => return Ok(()),
        Value::Object(_) => {}
        other => {
            return Err(schema_error(
                "",
                format!("{} is not a JSON Schema", json_kind(other)),
            ));
        }
    }
    check_limits(schema, limits)?;
    let anchors = Anchors::of(schema);
    check_refs(schema, schema, &anchors, &Path::ROOT, 0)?;
    check_composition(schema, limits)
}

fn json_kind(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "a list",
        Value::Object(_) => "an object",
    }
}

/// MCP requires an object at the top; combinators may stay.
pub(super) fn check_generic_top(normalized: &Value) -> Result<(), CatalogError> {
    match normalized.get("type") {
        Some(Value::String(t)) if t == "object" => Ok(()),
        Some(other) => Err(schema_error(
            "/type",
            format!("the input schema must describe an object, not {other}"),
        )),
        None => Err(schema_error("", "the input schema is not an object schema")),
    }
}

pub(super) const TYPE_NAMES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "string", "integer",
];

/// Refuses a schema a validator would not compile: a subschema that is not
/// an object or boolean, an unknown type, a malformed `required` or `enum`.
fn check_structure(schema: &Value, path: &Path<'_>, depth: usize) -> Result<(), CatalogError> {
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
fn check_refs<'a>(
    root: &'a Value,
    schema: &Value,
    anchors: &Anchors<'a>,
    path: &Path<'_>,
    depth: usize,
) -> Result<(), CatalogError> {
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

/// The `$anchor`s and `$dynamicAnchor`s of a schema, found on first
/// use: most references are pointers and never need them.
struct Anchors<'a> {
    root: &'a Value,
    found: OnceCell<HashMap<&'a str, &'a Value>>,
}

impl<'a> Anchors<'a> {
    fn of(root: &'a Value) -> Self {
        Anchors {
            root,
            found: OnceCell::new(),
        }
    }

    fn get(&self, name: &str) -> Option<&'a Value> {
        self.found
            .get_or_init(|| anchors(self.root))
            .get(name)
            .copied()
    }
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

/// What a reference points at inside `root`: `#`, a JSON pointer `#/…`
/// or an anchor `#name`, also written after the root's absolute `$id`.
/// Anything else (another document, a url, a file) is `None`: nothing is
/// ever fetched (SEP-2106).
fn resolve_reference<'a>(
    root: &'a Value,
    anchors: &Anchors<'a>,
    reference: &Value,
) -> Option<&'a Value> {
    let reference = reference.as_str()?;
    let fragment = same_document_fragment(root, reference)?;
    if fragment.is_empty() || fragment.starts_with('/') {
        resolve_local(root, reference)
    } else {
        anchors.get(percent_decode(fragment)?.as_ref())
    }
}

/// Rewrites every reference that resolves inside the schema through an
/// anchor or through the root's `$id` into the plain pointer form `#/…`
/// that the provider rewrites follow. The target stays the same, so the
/// meaning does. Returns whether anything changed. Runs after
/// [`check`], so every reference resolves and the walk is bounded.
pub(super) fn pointer_refs(schema: &mut Value) -> bool {
    if !has_non_pointer_ref(schema) {
        return false;
    }
    let rewrites = pointer_rewrites(schema);
    if rewrites.is_empty() {
        return false;
    }
    let mut stack = vec![schema];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for key in REFERENCE_KEYWORDS {
                    if let Some(Value::String(reference)) = map.get_mut(key)
                        && let Some(pointer) = rewrites.get(reference.as_str())
                    {
                        *reference = pointer.clone();
                    }
                }
                stack.extend(map.values_mut());
            }
            Value::Array(items) => stack.extend(items.iter_mut()),
            _ => {}
        }
    }
    true
}

/// Whether any reference of the schema is not yet `#` or `#/…`.
pub(super) fn has_non_pointer_ref(root: &Value) -> bool {
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                let found = REFERENCE_KEYWORDS.iter().any(|key| {
                    map.get(*key)
                        .and_then(Value::as_str)
                        .is_some_and(|r| !is_pointer_ref(r))
                });
                if found {
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

/// For [`pointer_refs`]: each reference not yet in pointer form that
/// resolves, with the pointer reference it becomes.
fn pointer_rewrites(root: &Value) -> HashMap<String, String> {
    let mut wanted: Vec<&str> = Vec::new();
    let mut stack = vec![root];
    while let Some(value) = stack.pop() {
        match value {
            Value::Object(map) => {
                for key in REFERENCE_KEYWORDS {
                    if let Some(Value::String(reference)) = map.get(key)
                        && !is_pointer_ref(reference)
                    {
                        wanted.push(reference);
                    }
                }
                stack.extend(map.values());
            }
            Value::Array(items) => stack.extend(items),
            _ => {}
        }
    }
    if wanted.is_empty() {
        return HashMap::new();
    }
    // Anchors with their pointers, found in the order `anchors` finds
    // them, so the first of two equal anchors wins in both.
    let mut anchored: HashMap<&str, String> = HashMap::new();
    let mut stack = vec![(root, String::new())];
    while let Some((value, pointer)) = stack.pop() {
        match value {
            Value::Object(map) => {
                for key in ["$anchor", "$dynamicAnchor"] {
                    if let Some(Value::String(name)) = map.get(key) {
                        anchored
                            .entry(name.as_str())
                            .or_insert_with(|| pointer.clone());
                    }
                }
                stack.extend(
                    map.iter()
                        .map(|(k, v)| (v, format!("{pointer}/{}", escape_pointer(k)))),
                );
            }
            Value::Array(items) => stack.extend(
                items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| (v, format!("{pointer}/{i}"))),
            ),
            _ => {}
        }
    }
    let mut rewrites = HashMap::new();
    for reference in wanted {
        let Some(fragment) = same_document_fragment(root, reference) else {
            continue;
        };
        let pointer = if fragment.is_empty() || fragment.starts_with('/') {
            Some(fragment.to_owned())
        } else {
            percent_decode(fragment)
                .and_then(|name| anchored.get(name.as_ref()).map(|p| percent_encode(p)))
        };
        if let Some(pointer) = pointer {
            rewrites.insert(reference.to_owned(), format!("#{pointer}"));
        }
    }
    rewrites
}

/// Whether a reference already is `#` or `#/…`.
fn is_pointer_ref(reference: &str) -> bool {
    reference
        .strip_prefix('#')
        .is_some_and(|f| f.is_empty() || f.starts_with('/'))
}

/// A JSON pointer written as a URI fragment: every byte outside the
/// characters a fragment may hold as they are is `%XX`-escaped, so
/// [`resolve_local`] decodes it back to the same pointer.
fn percent_encode(pointer: &str) -> String {
    let mut out = String::with_capacity(pointer.len());
    for byte in pointer.bytes() {
        let plain = byte.is_ascii_alphanumeric() || b"-._~!$&'()*+,;=:@/?".contains(&byte);
        if plain {
            out.push(char::from(byte));
        } else {
            out.push_str(&format!("%{byte:02X}"));
        }
    }
    out
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
pub fn check_ref_cycles(root: &Value) -> Result<(), CatalogError> {
    check_graph(root, usize::MAX)
}

/// [`check_ref_cycles`], and the composition bound of SEP-2106: how many
/// subschemas the in-place keywords (`allOf`, `anyOf`, `oneOf`, `not`,
/// `if`/`then`/`else`, `dependentSchemas`) and references apply to one
/// value, counted through every reference, may not pass
/// [`SchemaLimits::max_applied_subschemas`]. References let a small
/// schema apply exponentially many (`A: anyOf [B, B]`, `B: anyOf [C, C]`,
/// …), which the node cap alone does not see; a validator would evaluate
/// each of them for every value.
pub fn check_composition(root: &Value, limits: &SchemaLimits) -> Result<(), CatalogError> {
    check_graph(root, limits.max_applied_subschemas)
}

fn check_graph(root: &Value, max_applied: usize) -> Result<(), CatalogError> {
    if !has_reference(root) {
        // Without references every subschema is applied at most once,
        // and the node cap bounds them.
        return Ok(());
    }
    let anchors = Anchors::of(root);
    let mut graph = Graph::with_capacity(32);
    graph.index(root, Origin::Start(""));
    // An `$id` below the root starts a new resource, against which a
    // validator resolves `#…` differently from the walk here; such a
    // schema could hide a cycle from this check, so it is refused.
    let draft4 = root
        .get("$schema")
        .and_then(Value::as_str)
        .is_some_and(|s| s.contains("draft-04"));
    for (node, (value, _)) in graph.nodes.iter().enumerate().skip(1) {
        let nested_id =
            value.get("$id").is_some() || (draft4 && value.get("id").is_some_and(Value::is_string));
        if nested_id {
            return Err(schema_error(
                &graph.pointer(node),
                "a schema resource with its own $id inside a schema that uses $ref is not supported",
            ));
        }
    }

    // Edges: in-place subschemas and reference targets, node by node in
    // one flat list (`edge_ends[n]` is where node `n`'s edges end). A
    // reference into a place no keyword makes a schema is read as a
    // schema all the same (as a validator would) and numbered when first
    // seen.
    let mut edges: Vec<usize> = Vec::with_capacity(graph.nodes.len());
    let mut edge_ends: Vec<usize> = Vec::with_capacity(graph.nodes.len());
    let mut i = 0;
    while i < graph.nodes.len() {
        let (value, _) = graph.nodes[i];
        if let Value::Object(map) = value {
            for (key, child) in map {
                if REFERENCE_KEYWORDS.contains(&key.as_str()) {
                    if let Some(target) = resolve_reference(root, &anchors, child) {
                        let reference = child.as_str().unwrap_or("");
                        graph.index(target, Origin::Start(reference.trim_start_matches('#')));
                        edges.extend(graph.id(target));
                    }
                    continue;
                }
                match (in_place(key), child) {
                    (Some(Keyword::Map), Value::Object(children)) => {
                        edges.extend(children.values().filter_map(|c| graph.id(c)));
                    }
                    (Some(_), Value::Array(children)) => {
                        edges.extend(children.iter().filter_map(|c| graph.id(c)));
                    }
                    (Some(Keyword::Single), child) => edges.extend(graph.id(child)),
                    _ => {}
                }
            }
        }
        edge_ends.push(edges.len());
        i += 1;
    }
    let edges_of = |node: usize| {
        let start = if node == 0 { 0 } else { edge_ends[node - 1] };
        &edges[start..edge_ends[node]]
    };

    // Iterative depth-first search; `on_path` marks the current path.
    // Finishing a node (all its edges done) gives how many subschemas it
    // applies to one value: itself and what its edges apply.
    let count = graph.nodes.len();
    let mut visits = vec![Visit::New; count];
    let mut path: Vec<(usize, usize)> = Vec::with_capacity(16);
    for start in 0..count {
        if matches!(visits[start], Visit::Done(_)) {
            continue;
        }
        path.clear();
        path.push((start, 0));
        visits[start] = Visit::OnPath;
        while let Some(&mut (node, ref mut next)) = path.last_mut() {
            if let Some(&target) = edges_of(node).get(*next) {
                *next += 1;
                if visits[target] == Visit::OnPath {
                    let from = path.iter().position(|(n, _)| *n == target).unwrap_or(0);
                    let mut cycle: Vec<String> = path[from..]
                        .iter()
                        .map(|(n, _)| pointer_or_root(&graph.pointer(*n)))
                        .collect();
                    let target_pointer = graph.pointer(target);
                    cycle.push(pointer_or_root(&target_pointer));
                    return Err(schema_error(
                        &target_pointer,
                        format!(
                            "$ref cycle {} never reaches a property or item, so it resolves to no schema",
                            cycle.join(" -> ")
                        ),
                    ));
                }
                if visits[target] == Visit::New {
                    visits[target] = Visit::OnPath;
                    path.push((target, 0));
                }
            } else {
                let total = edges_of(node)
                    .iter()
                    .fold(1usize, |sum, &t| sum.saturating_add(visits[t].applied()));
                if total > max_applied {
                    return Err(schema_error(
                        &graph.pointer(node),
                        format!(
                            "composition keywords and $ref apply more than {max_applied} subschemas to one value (the limit per tool)"
                        ),
                    ));
                }
                visits[node] = Visit::Done(total);
                path.pop();
            }
        }
    }
    Ok(())
}

/// Every schema object of a schema, numbered by address, with where it
/// was found. The JSON pointer of a node is rendered only for an error:
/// most schemas pass, and writing a pointer for each of their objects
/// was most of this check's allocations.
struct Graph<'a> {
    ids: SchemaIds,
    nodes: Vec<(&'a Value, Origin<'a>)>,
}

/// Where a node of a [`Graph`] was found.
#[derive(Clone, Copy)]
enum Origin<'a> {
    /// The root, or the target of a reference, with the pointer it was
    /// reached by (`""` for the root).
    Start(&'a str),
    /// Under keyword `key` of node `parent`, at `step` inside the
    /// keyword's map or list (none for a keyword holding one subschema).
    Under {
        parent: usize,
        key: &'a str,
        step: Option<Segment<'a>>,
    },
}

/// Schema objects by address. The keys are addresses, not input, so the
/// fast hash is safe here.
type SchemaIds = HashMap<*const Value, usize, foldhash::fast::RandomState>;

/// Where the depth-first search stands with a node.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Visit {
    New,
    /// On the current path.
    OnPath,
    /// Finished, applying this many subschemas to one value.
    Done(usize),
}

impl Visit {
    fn applied(self) -> usize {
        match self {
            Visit::Done(applied) => applied,
            Visit::New | Visit::OnPath => 0,
        }
    }
}

impl<'a> Graph<'a> {
    /// Room for `nodes` schema objects: most tool schemas have a few
    /// dozen, so the tables do not grow step by step.
    fn with_capacity(nodes: usize) -> Self {
        Graph {
            ids: SchemaIds::with_capacity_and_hasher(nodes, Default::default()),
            nodes: Vec::with_capacity(nodes),
        }
    }

    fn id(&self, value: &Value) -> Option<usize> {
        self.ids.get(&(value as *const Value)).copied()
    }

    /// Numbers every schema object under `start` (`start` included) that
    /// has no number yet.
    fn index(&mut self, start: &'a Value, origin: Origin<'a>) {
        let mut stack = Vec::with_capacity(32);
        stack.push((start, origin));
        while let Some((value, origin)) = stack.pop() {
            let Value::Object(map) = value else {
                continue;
            };
            let node = self.nodes.len();
            if let Entry::Vacant(slot) = self.ids.entry(value as *const Value) {
                slot.insert(node);
                for (key, child) in map {
                    let Some(kind) = keyword(key).or_else(|| in_place(key)) else {
                        continue;
                    };
                    let under = |step| Origin::Under {
                        parent: node,
                        key,
                        step,
                    };
                    match (kind, child) {
                        (Keyword::Map, Value::Object(children)) => stack.extend(
                            children
                                .iter()
                                .map(|(name, c)| (c, under(Some(Segment::Key(name))))),
                        ),
                        (_, Value::Array(children)) => stack.extend(
                            children
                                .iter()
                                .enumerate()
                                .map(|(i, c)| (c, under(Some(Segment::Index(i))))),
                        ),
                        (Keyword::Single, child) => stack.push((child, under(None))),
                        _ => {}
                    }
                }
                self.nodes.push((value, origin));
            }
        }
    }

    /// The JSON pointer of node `node`, as the walk reached it.
    fn pointer(&self, node: usize) -> String {
        // Leaf first, as the walk up finds them.
        let mut segments: Vec<Segment<'_>> = Vec::new();
        let mut at = node;
        let start = loop {
            match self.nodes[at].1 {
                Origin::Start(pointer) => break pointer,
                Origin::Under { parent, key, step } => {
                    segments.extend(step);
                    segments.push(Segment::Key(key));
                    at = parent;
                }
            }
        };
        let mut out = start.to_owned();
        push_segments(&mut out, segments.into_iter().rev());
        out
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
    let mut stack = Vec::with_capacity(32);
    stack.push(root);
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

pub(super) fn contains_ref(schema: &Value, depth: usize) -> bool {
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
