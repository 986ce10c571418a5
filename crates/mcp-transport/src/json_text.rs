//! Compact JSON text written straight into a buffer: the bytes
//! `serde_json::to_writer` writes for a string or a [`Value`], without its
//! `io::Write` call per fragment and its byte-by-byte escape table. A
//! request is written per call, and most of one is short strings (method,
//! tool name, argument keys and values).

use serde_json::Value;

use crate::codec::WriteJson;
use crate::scan::special_byte;

/// Containers nested deeper than this are handed to `serde_json`, which
/// writes them the same way: the walk here never recurses past it.
const MAX_OWN_NESTING: u32 = 32;

/// Appends `text` as a JSON string, escaped as `serde_json` escapes it.
pub(crate) fn write_str(out: &mut Vec<u8>, text: &str) {
    let mut rest = text.as_bytes();
    out.reserve(rest.len() + 2);
    out.push(b'"');
    while let Some(at) = special_byte(rest) {
        out.extend_from_slice(&rest[..at]);
        write_escape(out, rest[at]);
        rest = &rest[at + 1..];
    }
    out.extend_from_slice(rest);
    out.push(b'"');
}

/// Appends the escape of `byte`, a quote, a backslash or a control
/// character: the short form where JSON has one, else `\u00XX`.
fn write_escape(out: &mut Vec<u8>, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        0x08 => b'b',
        0x0c => b'f',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        _ => {
            let (high, low) = (HEX[usize::from(byte >> 4)], HEX[usize::from(byte & 0xf)]);
            out.extend_from_slice(&[b'\\', b'u', b'0', b'0', high, low]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Appends `value` as compact JSON, members in their map's order.
pub(crate) fn write_value(out: &mut Vec<u8>, value: &Value) -> serde_json::Result<()> {
    write_nested(out, value, 0)
}

impl WriteJson for Value {
    fn write_json(&self, out: &mut Vec<u8>) -> serde_json::Result<()> {
        write_value(out, self)
    }
}

fn write_nested(out: &mut Vec<u8>, value: &Value, depth: u32) -> serde_json::Result<()> {
    match value {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(true) => out.extend_from_slice(b"true"),
        Value::Bool(false) => out.extend_from_slice(b"false"),
        Value::String(text) => write_str(out, text),
        Value::Array(items) if depth < MAX_OWN_NESTING => {
            out.push(b'[');
            for (index, item) in items.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_nested(out, item, depth + 1)?;
            }
            out.push(b']');
        }
        Value::Object(members) if depth < MAX_OWN_NESTING => {
            out.push(b'{');
            for (index, (key, member)) in members.iter().enumerate() {
                if index > 0 {
                    out.push(b',');
                }
                write_str(out, key);
                out.push(b':');
                write_nested(out, member, depth + 1)?;
            }
            out.push(b'}');
        }
        // Numbers (their formatting is `serde_json`'s own) and what nests
        // deeper than the walk goes.
        other => serde_json::to_writer(&mut *out, other)?,
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;

    /// Written here, the bytes `serde_json` writes.
    fn check(value: &Value) {
        let mut written = Vec::new();
        write_value(&mut written, value).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&written),
            serde_json::to_string(value).unwrap()
        );
    }

    #[test]
    fn values_are_written_as_serde_json_writes_them() {
        check(&json!(null));
        check(&json!({"message": "hello", "n": [1, -2, 2.5, 1e300, true, false, null], "o": {}}));
        check(&json!([]));
        check(&json!("quote \" backslash \\ slash / del \u{7f} é 😀"));
        let controls: String = (0u8..0x20).map(char::from).collect();
        check(&json!({ controls.clone(): controls }));
        let mut deep = json!("leaf");
        for level in 0..100 {
            deep = if level % 2 == 0 {
                json!([deep])
            } else {
                json!({ "k": deep })
            };
        }
        check(&deep);
    }

    fn value() -> impl Strategy<Value = Value> {
        let text = "[ -~\\x00-\\x1f\u{7f}é\u{2028}😀\"\\\\]{0,24}";
        let leaf = prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(Value::from),
            any::<f64>().prop_map(Value::from),
            text.prop_map(Value::String),
        ];
        leaf.prop_recursive(4, 32, 6, move |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
                prop::collection::vec((text, inner), 0..6)
                    .prop_map(|members| Value::Object(members.into_iter().collect())),
            ]
        })
    }

    proptest! {
        #[test]
        fn any_value_is_written_as_serde_json_writes_it(value in value()) {
            check(&value);
        }
    }
}
