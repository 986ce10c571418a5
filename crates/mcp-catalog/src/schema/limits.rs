//! Caps on one tool's input schema, checked without recursion before
//! anything else reads it, and the node budget a rewrite charges as it
//! builds. Every other walk of this module may recurse because of them.

use serde::Serialize;
use serde_json::Value;

use super::{CatalogError, Keyword, Path, keyword, schema_error};

/// How many subschema levels a schema may nest before it is refused
/// (hostile input): the recursive rewrites below never go deeper.
pub const MAX_DEPTH: usize = 64;

/// How many levels of JSON arrays and objects a schema may nest, whatever
/// keyword they sit under (`default`, `enum`, …). `serde_json`'s own
/// parser stops at the same depth.
pub const MAX_JSON_DEPTH: usize = 128;

/// Caps on one tool's input schema, checked (without recursion) before
/// anything else reads it. A schema over a cap leaves its tool out.
///
/// Made from [`SchemaLimits::default`] and the `with_*` methods.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[non_exhaustive]
pub struct SchemaLimits {
    /// Approximate size as JSON text.
    pub max_bytes: usize,
    /// JSON values (every object, array, string, number, …).
    pub max_nodes: usize,
    /// Entries of every `properties` map together.
    pub max_properties: usize,
    /// Levels of JSON nesting; never above [`MAX_JSON_DEPTH`] in effect.
    pub max_depth: usize,
    /// Subschemas the composition keywords and references may apply to
    /// one value, counted through every reference (SEP-2106's bound on
    /// composition; see [`super::check_composition`]).
    pub max_applied_subschemas: usize,
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
            // Far above what a real union applies (tens), far below what
            // makes one validation slow.
            max_applied_subschemas: 10_000,
        }
    }
}

impl SchemaLimits {
    /// The same limits, with at most `max_bytes` of JSON text.
    pub fn with_max_bytes(mut self, max_bytes: usize) -> Self {
        self.max_bytes = max_bytes;
        self
    }

    /// The same limits, with at most `max_nodes` JSON values.
    pub fn with_max_nodes(mut self, max_nodes: usize) -> Self {
        self.max_nodes = max_nodes;
        self
    }

    /// The same limits, with at most `max_properties` property entries.
    pub fn with_max_properties(mut self, max_properties: usize) -> Self {
        self.max_properties = max_properties;
        self
    }

    /// The same limits, with at most `max_depth` levels of nesting.
    pub fn with_max_depth(mut self, max_depth: usize) -> Self {
        self.max_depth = max_depth;
        self
    }

    /// The same limits, with at most `max` subschemas applied to one value.
    pub fn with_max_applied_subschemas(mut self, max: usize) -> Self {
        self.max_applied_subschemas = max;
        self
    }
}

/// Refuses a schema over `limits`, in one pass with an explicit stack that
/// stops at the first cap exceeded, so a 16 MiB schema costs no more than
/// the part below the caps. After this, every walk in this module may
/// recurse: JSON depth is at most [`MAX_JSON_DEPTH`] and subschema depth
/// at most [`MAX_DEPTH`].
pub fn check_limits(schema: &Value, limits: &SchemaLimits) -> Result<(), CatalogError> {
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

/// What inlining may still build, in JSON values.
pub(super) struct Budget {
    left: usize,
    limit: usize,
}

impl Budget {
    pub(super) fn new(limit: usize) -> Self {
        Budget { left: limit, limit }
    }

    pub(super) fn charge(
        &mut self,
        nodes: usize,
        path: &Path<'_>,
        what: &str,
    ) -> Result<(), CatalogError> {
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
pub(super) fn count_nodes(value: &Value) -> usize {
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
