//! A number a server sends reaches the host as the same number: decoding
//! and encoding again gives the text shortest for the same `f64`, so a
//! result passed on to a model never drifts by a bit. That takes
//! serde_json's `float_roundtrip`, which changes every parse in the
//! process, so the crate leaves it to its host (the CLI enables it); these
//! tests enable it through the dev-dependencies.

// The helpers below run only inside tests; a failed decode is the test
// failing.
#![allow(clippy::expect_used)]

use mcp_transport::JsonRpcMessage;
use mcp_transport::wire::Codec;

fn one(codec: &Codec, frame: &[u8]) -> JsonRpcMessage {
    let mut messages: Vec<_> = codec.decode(frame).expect("decodes").into_iter().collect();
    assert_eq!(messages.len(), 1);
    messages.remove(0)
}

fn check(number: &str, shown: &str) {
    let codec = Codec::default();
    let frame = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"v":{number}}}}}"#);
    let decoded = one(&codec, frame.as_bytes());
    let encoded = String::from_utf8(codec.encode(&decoded)).expect("utf-8");
    let expected = format!(r#"{{"jsonrpc":"2.0","method":"n","params":{{"v":{shown}}}}}"#);
    assert_eq!(encoded, expected, "{number}");
    let again = one(&codec, encoded.as_bytes());
    assert_eq!(codec.encode(&again), encoded.as_bytes(), "{number}");
}

#[test]
fn numbers_keep_their_value_through_the_codec() {
    for (number, shown) in [
        ("0.000000000000000000000000000001", "1e-30"),
        ("1e-30", "1e-30"),
        ("0.1", "0.1"),
        ("123456789012345678901234567890.5", "1.2345678901234568e+29"),
        ("-9223372036854775809", "-9.223372036854776e+18"),
        ("18446744073709551615", "18446744073709551615"),
        ("-0", "-0.0"),
        ("2.2250738585072014e-308", "2.2250738585072014e-308"),
    ] {
        check(number, shown);
    }
}
