//! Content identity of JSON values, for hash-consing prepared schemas.
//!
//! Many tools share one schema (the same tool on several servers, or a
//! generator that writes the same shape for a family of tools), and
//! preparing a schema for a profile is the costliest step of a build. The
//! build keys what it prepared by [`content_hash`] and, on a hit, confirms
//! with [`same_content`], so a schema is normalised and rewritten once
//! per distinct content. Both read object keys in their stored order and
//! floats by their text: two values they call the same serialise to the
//! same bytes, which `Value`'s own `PartialEq` (order-blind under
//! `preserve_order`, `0.0 == -0.0`) does not promise. Neither recurses:
//! they run before the limits are checked.

use std::hash::{Hash, Hasher};

use serde_json::{Number, Value};

/// A multiply-rotate hash (the one `rustc` uses for its own tables): a
/// few times faster than SipHash on the short strings schemas are made
/// of. A collision costs one [`same_content`] walk, and the table caps
/// how many schemas share one hash (see `MAX_PER_HASH`), so inputs made
/// to collide cost no more than preparing them.
#[derive(Default)]
struct FastHasher(u64);

impl FastHasher {
    fn add(&mut self, word: u64) {
        self.0 = (self.0.rotate_left(5) ^ word).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
}

impl Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        let mut chunks = bytes.chunks_exact(8);
        for chunk in &mut chunks {
            let mut word = [0u8; 8];
            word.copy_from_slice(chunk);
            self.add(u64::from_le_bytes(word));
        }
        let tail = chunks.remainder();
        self.add(short_word(tail) ^ ((tail.len() as u64) << 61));
    }

    fn write_u8(&mut self, n: u8) {
        self.add(u64::from(n));
    }

    fn write_u64(&mut self, n: u64) {
        self.add(n);
    }

    fn write_usize(&mut self, n: usize) {
        self.add(n as u64);
    }

    fn finish(&self) -> u64 {
        self.0
    }
}

/// Room for the values a walk has yet to visit in a typical schema, so
/// the walk allocates once instead of growing its stack step by step.
const STACK_CAPACITY: usize = 32;

/// A hash of `value`'s content, key order included.
pub(super) fn content_hash(value: &Value) -> u64 {
    let mut hasher = FastHasher::default();
    let mut stack = Vec::with_capacity(STACK_CAPACITY);
    stack.push(value);
    while let Some(value) = stack.pop() {
        match value {
            Value::Null => hasher.write_u8(0),
            Value::Bool(b) => hasher.write_u8(1 + u8::from(*b)),
            Value::Number(n) => {
                hasher.write_u8(3);
                hash_number(n, &mut hasher);
            }
            Value::String(s) => {
                hasher.write_u8(4);
                s.hash(&mut hasher);
            }
            Value::Array(items) => {
                hasher.write_u8(5);
                hasher.write_usize(items.len());
                // Reversed, so the walk visits items in order.
                stack.extend(items.iter().rev());
            }
            Value::Object(map) => {
                hasher.write_u8(6);
                hasher.write_usize(map.len());
                for key in map.keys() {
                    key.hash(&mut hasher);
                }
                stack.extend(map.values().rev());
            }
        }
    }
    hasher.finish()
}

fn hash_number(n: &Number, hasher: &mut FastHasher) {
    if let Some(u) = n.as_u64() {
        hasher.write_u8(0);
        hasher.write_u64(u);
    } else if let Some(i) = n.as_i64() {
        hasher.write_u8(1);
        hasher.write_i64(i);
    } else {
        hasher.write_u8(2);
        hasher.write_u64(n.as_f64().map_or(0, f64::to_bits));
    }
}

/// Whether `a` and `b` serialise to the same JSON text: the same values,
/// with object keys in the same order.
pub(super) fn same_content(a: &Value, b: &Value) -> bool {
    let mut stack = Vec::with_capacity(STACK_CAPACITY);
    stack.push((a, b));
    while let Some((a, b)) = stack.pop() {
        if std::ptr::eq(a, b) {
            continue;
        }
        match (a, b) {
            (Value::Null, Value::Null) => {}
            (Value::Bool(a), Value::Bool(b)) if a == b => {}
            (Value::Number(a), Value::Number(b)) if same_number(a, b) => {}
            (Value::String(a), Value::String(b)) if same_text(a, b) => {}
            (Value::Array(a), Value::Array(b)) if a.len() == b.len() => {
                stack.extend(a.iter().zip(b));
            }
            (Value::Object(a), Value::Object(b)) if a.len() == b.len() => {
                for ((key_a, a), (key_b, b)) in a.iter().zip(b) {
                    if !same_text(key_a, key_b) {
                        return false;
                    }
                    stack.push((a, b));
                }
            }
            _ => return false,
        }
    }
    true
}

/// `a == b`, with short texts (most keys and values of a schema) compared
/// inline, in two words, instead of by a call to `memcmp`.
fn same_text(a: &str, b: &str) -> bool {
    let (a, b) = (a.as_bytes(), b.as_bytes());
    if a.len() != b.len() {
        return false;
    }
    match a.len() {
        0..=8 => short_word(a) == short_word(b),
        9..=16 => {
            // The first eight bytes and the last eight, which overlap.
            let ends = |bytes: &[u8]| (first_eight(bytes), first_eight(&bytes[bytes.len() - 8..]));
            ends(a) == ends(b)
        }
        _ => a == b,
    }
}

/// Up to eight bytes as one word, read in at most two loads (a copy of
/// a length known only at run time would be a call to `memcpy`). Two
/// inputs of the same length give the same word only if they are equal.
fn short_word(bytes: &[u8]) -> u64 {
    match bytes.len() {
        8 => first_eight(bytes),
        4..=7 => {
            let four = |bytes: &[u8]| {
                let mut word = [0u8; 4];
                word.copy_from_slice(&bytes[..4]);
                u64::from(u32::from_le_bytes(word))
            };
            four(bytes) | (four(&bytes[bytes.len() - 4..]) << 32)
        }
        _ => bytes
            .iter()
            .fold(0u64, |word, &byte| (word << 8) | u64::from(byte)),
    }
}

fn first_eight(bytes: &[u8]) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[..8]);
    u64::from_le_bytes(word)
}

fn same_number(a: &Number, b: &Number) -> bool {
    match (a.as_u64(), b.as_u64(), a.as_i64(), b.as_i64()) {
        (Some(a), Some(b), _, _) => a == b,
        (None, None, Some(a), Some(b)) => a == b,
        (None, None, None, None) => a.to_string() == b.to_string(),
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Whether `a` and `b` count as the same content, and whether that
    /// agrees with their text.
    fn check(a: Value, b: Value, same: bool) {
        assert_eq!(same_content(&a, &b), same, "{a} vs {b}");
        let (text_a, text_b) = (a.to_string(), b.to_string());
        assert_eq!(text_a == text_b, same, "{a} vs {b}");
        if same {
            assert_eq!(content_hash(&a), content_hash(&b), "{a} vs {b}");
        }
    }

    #[test]
    fn content_is_the_serialised_text() {
        check(
            json!({"a": 1, "b": [1, 2]}),
            json!({"a": 1, "b": [1, 2]}),
            true,
        );
        check(json!({"a": 1, "b": 2}), json!({"b": 2, "a": 1}), false);
        check(json!([1, 2]), json!([2, 1]), false);
        check(json!(1), json!(1.0), false);
        check(json!(0.0), json!(-0.0), false);
        check(json!(-3), json!(-3), true);
        check(json!(2.5), json!(2.5), true);
        check(json!("x"), json!(["x"]), false);
        check(json!({"a": {}}), json!({"a": []}), false);
        check(json!(null), json!(false), false);
    }

    #[test]
    fn the_hash_tells_apart_what_differs() {
        let a = json!({"type": "object", "properties": {"q": {"type": "string"}}});
        let b = json!({"type": "object", "properties": {"q": {"type": "integer"}}});
        assert_ne!(content_hash(&a), content_hash(&b));
        assert_ne!(
            content_hash(&json!([[1], 2])),
            content_hash(&json!([[1, 2]]))
        );
    }

    #[test]
    fn texts_compare_as_bytes_at_every_length() {
        // Each length the inline comparison treats differently, with the
        // difference at each position (first and last words overlap).
        for len in 0..=24usize {
            let text: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(same_text(&text, &text.clone()), "{text:?}");
            for at in 0..len {
                let mut other = text.clone().into_bytes();
                other[at] = b'#';
                let other = String::from_utf8(other).unwrap_or_default();
                assert!(!same_text(&text, &other), "{text:?} vs {other:?}");
                assert_ne!(
                    content_hash(&json!(text)),
                    content_hash(&json!(other)),
                    "{text:?} vs {other:?}"
                );
            }
            let longer = format!("{text}a");
            assert!(!same_text(&text, &longer), "{text:?} vs {longer:?}");
        }
        check(json!(["a\0"]), json!(["a"]), false);
        check(json!({"ab": 1}), json!({"ab\0": 1}), false);
    }
}
