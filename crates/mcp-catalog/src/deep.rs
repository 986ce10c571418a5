//! Walks over JSON values that never recurse, for values a server sent.
//!
//! A message within the transport's size cap may nest millions of levels,
//! and `serde_json`'s own `Drop`, `Clone`, `PartialEq` and serialiser
//! recurse once per level. Everything here uses an explicit stack, so a
//! server's value can be measured, cut, printed and dropped on any thread.
//! The rest of the crate measures a value with these before it runs any
//! recursive code on it.

use serde_json::Value;

/// Drops `value` without recursion, however deep it is.
pub fn dispose(value: Value) {
    let mut stack = vec![value];
    while let Some(value) = stack.pop() {
        match value {
            Value::Array(items) => stack.extend(items),
            Value::Object(map) => stack.extend(map.into_iter().map(|(_, v)| v)),
            _ => {}
        }
    }
}

/// How many levels of arrays and objects `value` nests (a scalar is 0,
/// `[]` is 1), counting no further than `cap + 1`: a value nesting
/// deeper than `cap` costs at most the part above the cap.
pub fn depth_capped(value: &Value, cap: usize) -> usize {
    let mut deepest = 0;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        if !matches!(value, Value::Array(_) | Value::Object(_)) {
            continue;
        }
        let depth = depth + 1;
        deepest = deepest.max(depth);
        if depth > cap {
            return depth;
        }
        match value {
            Value::Array(items) => stack.extend(items.iter().map(|child| (child, depth))),
            Value::Object(map) => stack.extend(map.values().map(|child| (child, depth))),
            _ => {}
        }
    }
    deepest
}

/// Whether `value` nests deeper than `cap` levels.
pub fn exceeds_depth(value: &Value, cap: usize) -> bool {
    depth_capped(value, cap) > cap
}

/// Empties every array and object below `max` levels, dropping what was
/// there without recursion; returns whether anything was cut. What is left
/// nests at most `max` levels, so ordinary (recursive) code can handle it.
pub fn cut_below(value: &mut Value, max: usize) -> bool {
    if !exceeds_depth(value, max) {
        return false;
    }
    let mut cut = false;
    let mut stack = vec![(value, 0usize)];
    while let Some((value, depth)) = stack.pop() {
        let depth = depth + 1;
        match value {
            Value::Array(items) if depth >= max => {
                cut |= !items.is_empty();
                std::mem::take(items).into_iter().for_each(dispose);
            }
            Value::Object(map) if depth >= max => {
                cut |= !map.is_empty();
                std::mem::take(map)
                    .into_iter()
                    .for_each(|(_, v)| dispose(v));
            }
            Value::Array(items) => stack.extend(items.iter_mut().map(|v| (v, depth))),
            Value::Object(map) => stack.extend(map.values_mut().map(|v| (v, depth))),
            _ => {}
        }
    }
    cut
}

/// `value` as JSON text, the way `serde_json::to_string` (or, `pretty`,
/// `to_string_pretty`) writes it, at any depth.
pub fn to_json(value: &Value, pretty: bool) -> String {
    to_json_capped(value, pretty, usize::MAX)
}

/// [`to_json`], stopping soon after `max_len` bytes: the text is then cut
/// (and no longer JSON). Pretty text of a deep value grows with the square
/// of its depth (every line is indented), so text for a reader is always
/// written with a cap.
pub fn to_json_capped(value: &Value, pretty: bool, max_len: usize) -> String {
    enum Step<'a> {
        Value(&'a Value, usize),
        Key(&'a str),
        Text(&'static str),
        Indent(usize),
        Close(char, usize),
    }
    let mut out = String::new();
    let mut stack = vec![Step::Value(value, 0)];
    let newline = |out: &mut String, indent: usize| {
        if pretty {
            out.push('\n');
            // Never far past the cap, however deep the indent.
            let room = max_len.saturating_sub(out.len()) / 2 + 1;
            for _ in 0..indent.min(room) {
                out.push_str("  ");
            }
        }
    };
    while let Some(step) = stack.pop() {
        if out.len() > max_len {
            break;
        }
        match step {
            Step::Text(text) => out.push_str(text),
            Step::Key(key) => {
                push_string(&mut out, key);
                out.push_str(if pretty { ": " } else { ":" });
            }
            Step::Close(c, indent) => {
                newline(&mut out, indent);
                out.push(c);
            }
            Step::Value(value, indent) => match value {
                Value::Null => out.push_str("null"),
                Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
                Value::Number(n) => out.push_str(&n.to_string()),
                Value::String(s) => push_string(&mut out, s),
                Value::Array(items) if items.is_empty() => out.push_str("[]"),
                Value::Object(map) if map.is_empty() => out.push_str("{}"),
                Value::Array(items) => {
                    out.push('[');
                    stack.push(Step::Close(']', indent));
                    for (i, item) in items.iter().enumerate().rev() {
                        stack.push(Step::Value(item, indent + 1));
                        stack.push(Step::Indent(indent + 1));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
                Value::Object(map) => {
                    out.push('{');
                    stack.push(Step::Close('}', indent));
                    let entries: Vec<_> = map.iter().collect();
                    for (i, (key, item)) in entries.into_iter().enumerate().rev() {
                        stack.push(Step::Value(item, indent + 1));
                        stack.push(Step::Key(key));
                        stack.push(Step::Indent(indent + 1));
                        if i > 0 {
                            stack.push(Step::Text(","));
                        }
                    }
                }
            },
            Step::Indent(indent) => newline(&mut out, indent),
        }
    }
    out
}

fn push_string(out: &mut String, text: &str) {
    // A string serialises without recursion and cannot fail.
    out.push_str(&serde_json::to_string(text).unwrap_or_default());
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn to_json_writes_what_serde_json_writes() {
        let values = [
            json!(null),
            json!([]),
            json!({}),
            json!({"a": [1, 2.5, "x\n\"y\""], "b": {"c": {}, "d": [[]]}, "e": [{"f": null}], "g": true}),
            json!([[1, [2, [3]]], {"k": "v"}]),
            json!("\u{1b}[31m"),
        ];
        for value in values {
            assert_eq!(
                to_json(&value, false),
                serde_json::to_string(&value).unwrap_or_default()
            );
            assert_eq!(
                to_json(&value, true),
                serde_json::to_string_pretty(&value).unwrap_or_default()
            );
        }
    }

    #[test]
    fn capped_text_stops_near_the_cap() {
        let mut deep = json!(1);
        for _ in 0..20_000 {
            deep = Value::Array(vec![deep]);
        }
        let text = to_json_capped(&deep, true, 1000);
        assert!(text.len() > 1000 && text.len() < 1100, "{}", text.len());
        assert!(text.starts_with("[\n  [\n    ["));
        dispose(deep);
    }

    #[test]
    fn depth_and_cut() {
        let mut value = json!({"a": [[1], {"b": [2]}], "c": 3});
        assert_eq!(depth_capped(&value, 10), 4);
        assert_eq!(depth_capped(&json!(1), 10), 0);
        assert!(exceeds_depth(&value, 3));
        assert!(!exceeds_depth(&value, 4));
        assert!(cut_below(&mut value, 2));
        assert_eq!(value, json!({"a": [], "c": 3}));
        assert!(!cut_below(&mut value, 2));
    }
}
