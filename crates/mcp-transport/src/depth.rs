//! Decoding a `Value` at any depth up to [`MAX_DEPTH`] without
//! overflowing the stack: the depth rules every decode of this crate
//! shares (see [`crate::codec`] for where they apply to bytes).

use serde::de::DeserializeOwned;

/// Deepest nesting of arrays and objects in a decoded message (the
/// envelope counts as one level). Deeper messages are refused with
/// [`TransportErrorKind::TooDeep`](crate::TransportErrorKind::TooDeep); see the codec's docs for why there is one.
pub const MAX_DEPTH: usize = 512;

/// Messages nesting less than this are parsed with `serde_json`'s default
/// recursion limit (128); only deeper ones need the unbounded parse.
pub(crate) const SERDE_DEFAULT_DEPTH: usize = 100;

/// `serde_json::from_value` that cannot overflow the stack on a deep value
/// (the session converts results with it). A value within `serde_json`'s
/// default depth is converted directly, as the default parse would have
/// recursed as deep; only a deeper one goes through `serde_stacker`, whose
/// first use on a thread asks the system for the thread's stack bounds (on
/// the main thread glibc reads `/proc/self/maps` for that).
pub(crate) fn from_value<T: DeserializeOwned>(
    value: serde_json::Value,
) -> Result<T, serde_json::Error> {
    if nests_within(&value, SERDE_DEFAULT_DEPTH) {
        return T::deserialize(value);
    }
    T::deserialize(serde_stacker::Deserializer::new(value))
}

/// Whether `value` nests at most `levels` arrays and objects. The walk
/// stops at the limit, so it recurses at most `levels` deep itself.
fn nests_within(value: &serde_json::Value, levels: usize) -> bool {
    match value {
        serde_json::Value::Array(items) => {
            levels > 0 && items.iter().all(|item| nests_within(item, levels - 1))
        }
        serde_json::Value::Object(map) => {
            levels > 0 && map.values().all(|member| nests_within(member, levels - 1))
        }
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    /// `levels` arrays nested around a number.
    fn nested(levels: usize) -> Value {
        (0..levels).fold(json!(1), |inner, _| json!([inner]))
    }

    #[test]
    fn a_value_is_converted_directly_within_the_default_depth_and_on_a_grown_stack_past_it() {
        for (levels, direct) in [
            (0, true),
            (1, true),
            (SERDE_DEFAULT_DEPTH, true),
            (SERDE_DEFAULT_DEPTH + 1, false),
            (MAX_DEPTH, false),
        ] {
            let value = nested(levels);
            assert_eq!(
                nests_within(&value, SERDE_DEFAULT_DEPTH),
                direct,
                "{levels} levels"
            );
            let converted: Value = from_value(value.clone()).unwrap();
            assert_eq!(converted, value, "{levels} levels");
        }
        let object = json!({"a": {"b": [{"c": 1}]}});
        assert!(nests_within(&object, 4) && !nests_within(&object, 3));
    }
}
