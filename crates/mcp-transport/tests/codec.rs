//! The JSON-RPC codec: data-driven decode cases through one `check` helper,
//! and properties (arbitrary bytes never panic; encode then decode is the
//! identity).

use mcp_transport::TransportErrorKind;
use mcp_transport::wire::{Codec, Decoded};
use mcp_transport::{ErrorObject, JsonRpcMessage, RequestId};
use proptest::prelude::*;
use serde_json::{Value, json};

/// Decodes `input` and compares a one-line rendering with `expected`.
#[track_caller]
fn check(input: &str, expected: &str) {
    let rendered = match Codec::new(1024).decode(input.as_bytes()) {
        Ok(Decoded::Single(message)) => render(&message),
        Ok(Decoded::Batch(messages)) => {
            let parts: Vec<String> = messages.iter().map(render).collect();
            format!("batch[{}]", parts.join(", "))
        }
        Err(error) => format!("error: {error}"),
    };
    assert_eq!(rendered, expected, "input: {input}");
}

fn render(message: &JsonRpcMessage) -> String {
    match message {
        JsonRpcMessage::Request(r) => format!(
            "request {} {} {}",
            r.id,
            r.method,
            r.params.as_ref().map_or("-".to_string(), Value::to_string)
        ),
        JsonRpcMessage::Notification(n) => format!(
            "notification {} {}",
            n.method,
            n.params.as_ref().map_or("-".to_string(), Value::to_string)
        ),
        JsonRpcMessage::Response(r) => {
            let id =
                r.id.as_ref()
                    .map_or("null".to_string(), ToString::to_string);
            match &r.outcome {
                Ok(result) => format!("result {id} {result}"),
                Err(e) => format!("error-response {id} {} {}", e.code, e.message),
            }
        }
    }
}

#[test]
fn decodes_every_message_shape() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        "request 1 tools/list -",
    );
    check(
        r#"{"jsonrpc":"2.0","id":"a-1","method":"ping","params":{}}"#,
        r#"request "a-1" ping {}"#,
    );
    check(
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
        "notification notifications/initialized -",
    );
    check(
        r#"{"jsonrpc":"2.0","id":7,"result":{"tools":[]}}"#,
        r#"result 7 {"tools":[]}"#,
    );
    check(r#"{"jsonrpc":"2.0","id":7,"result":null}"#, "result 7 null");
    check(
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
        "error-response null -32700 parse error",
    );
    check(
        r#"  {"jsonrpc":"2.0","id":3,"error":{"code":-32601,"message":"nope","data":{"x":1}}}  "#,
        "error-response 3 -32601 nope",
    );
}

#[test]
fn ignores_unknown_members() {
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":"x","extra":{"deep":[1,2]},"other":true}"#,
        "request 1 x -",
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"result":{},"_meta":{}}"#,
        "result 1 {}",
    );
}

#[test]
fn accepts_batches() {
    check(
        r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"2.0","method":"n"}]"#,
        "batch[result 1 {}, notification n -]",
    );
    check("[]", "error: invalid JSON-RPC message: empty batch");
    check(
        r#"[{"jsonrpc":"2.0","id":1,"result":{}},{"jsonrpc":"1.0","method":"n"}]"#,
        r#"error: invalid JSON-RPC message: batch element 1: jsonrpc must be "2.0", not "1.0""#,
    );
}

#[test]
fn names_the_problem_of_invalid_messages() {
    check("", "error: not JSON: empty message");
    check(
        "Server listening on stdio",
        "error: not JSON: expected value at line 1 column 1",
    );
    check(
        r#"{"jsonrpc":"2.0","id":1"#,
        "error: not JSON: EOF while parsing an object at line 1 column 23",
    );
    check(
        "42",
        "error: invalid JSON-RPC message: expected an object or a batch array",
    );
    check(
        r#"{"id":1,"method":"x"}"#,
        r#"error: invalid JSON-RPC message: missing "jsonrpc": "2.0""#,
    );
    // Every kind of JSON a server may put in `jsonrpc` is named; `None`:
    // the message is accepted.
    for (version, named) in [
        (r#""2\u002e0""#, None),
        (r#""2.0 ""#, Some(r#""2.0 ""#)),
        ("2.0", Some("2.0")),
        ("2", Some("2")),
        ("-2", Some("-2")),
        ("true", Some("true")),
        ("null", Some("null")),
        (r#"["2.0"]"#, Some(r#"["2.0"]"#)),
        (r#"{"v":"2.0","w":[1]}"#, Some(r#"{"v":"2.0","w":[1]}"#)),
    ] {
        let frame = format!(r#"{{"jsonrpc":{version},"id":1,"method":"x"}}"#);
        let expected = match named {
            None => "request 1 x -".to_owned(),
            Some(named) => {
                format!(r#"error: invalid JSON-RPC message: jsonrpc must be "2.0", not {named}"#)
            }
        };
        check(&frame, &expected);
    }
    // Past serde_json's own depth limit, read on a grown stack.
    let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
    check(
        &format!(r#"{{"jsonrpc":{deep},"id":1,"method":"x"}}"#),
        &format!(
            r#"error: invalid JSON-RPC message: jsonrpc must be "2.0", not {}..."#,
            "[".repeat(60)
        ),
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
        "error: invalid JSON-RPC message: method must be a string, not a number",
    );
    check(
        r#"{"jsonrpc":"2.0","id":1.5,"method":"x"}"#,
        "error: invalid JSON-RPC message: id 1.5 is not an integer",
    );
    check(
        r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#,
        "error: invalid JSON-RPC message: id must be a string or an integer, not an array",
    );
    check(
        r#"{"jsonrpc":"2.0","id":null,"method":"x"}"#,
        r#"error: invalid JSON-RPC message: request "x" has a null id"#,
    );
    check(
        r#"{"jsonrpc":"2.0","id":1}"#,
        "error: invalid JSON-RPC message: response has neither result nor error",
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"result":1,"error":{"code":1,"message":"m"}}"#,
        "error: invalid JSON-RPC message: response has both result and error",
    );
    check(
        r#"{"jsonrpc":"2.0","id":1,"error":{"message":"m"}}"#,
        "error: invalid JSON-RPC message: invalid error object: missing field `code`",
    );
    check(
        r#"{"jsonrpc":"2.0","result":{}}"#,
        "error: invalid JSON-RPC message: message has neither a method nor an id",
    );
    check(
        r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
        "error: invalid JSON-RPC message: successful response has a null id",
    );
}

#[test]
fn refuses_frames_past_the_cap_before_parsing() {
    let frame = format!(
        r#"{{"jsonrpc":"2.0","method":"n","params":{{"x":"{}"}}}}"#,
        "y".repeat(2000)
    );
    assert_eq!(
        Codec::new(1024).decode(frame.as_bytes()),
        Err(TransportErrorKind::FrameTooLarge {
            size: frame.len(),
            max: 1024
        })
    );
}

#[test]
fn encodes_the_wire_shape() {
    let codec = Codec::default();
    let cases = [
        (
            JsonRpcMessage::request(RequestId::Number(1), "tools/list", None),
            r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#,
        ),
        (
            JsonRpcMessage::notification("notifications/cancelled", Some(json!({"requestId": 1}))),
            r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}}"#,
        ),
        (
            JsonRpcMessage::result(RequestId::String("s".into()), json!({})),
            r#"{"jsonrpc":"2.0","id":"s","result":{}}"#,
        ),
        (
            JsonRpcMessage::error(None, ErrorObject::new(-32700, "parse error")),
            r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"parse error"}}"#,
        ),
    ];
    for (message, expected) in cases {
        assert_eq!(String::from_utf8(codec.encode(&message)).unwrap(), expected);
    }
}

fn arb_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        ".*".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::btree_map(".{0,8}", inner, 0..4)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn arb_id() -> impl Strategy<Value = RequestId> {
    prop_oneof![
        any::<i64>().prop_map(RequestId::Number),
        ".{0,12}".prop_map(RequestId::String),
    ]
}

fn arb_params() -> impl Strategy<Value = Option<Value>> {
    // `null` params decode as absent, so generate objects and arrays only.
    prop::option::of(prop_oneof![
        prop::collection::btree_map(".{0,8}", arb_value(), 0..4)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        prop::collection::vec(arb_value(), 0..4).prop_map(Value::Array),
    ])
}

fn arb_message() -> impl Strategy<Value = JsonRpcMessage> {
    prop_oneof![
        (arb_id(), ".{1,20}", arb_params())
            .prop_map(|(id, method, params)| JsonRpcMessage::request(id, method, params)),
        (".{1,20}", arb_params())
            .prop_map(|(method, params)| JsonRpcMessage::notification(method, params)),
        (arb_id(), arb_value()).prop_map(|(id, result)| JsonRpcMessage::result(id, result)),
        (
            prop::option::of(arb_id()),
            any::<i64>(),
            ".*",
            prop::option::of(arb_value())
        )
            .prop_map(|(id, code, message, data)| {
                JsonRpcMessage::error(
                    id,
                    ErrorObject {
                        code,
                        message,
                        data: data.filter(|d| !d.is_null()),
                    },
                )
            }),
    ]
}

proptest! {
    #[test]
    fn decoding_arbitrary_bytes_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Codec::new(256).decode(&bytes);
    }

    #[test]
    fn decoding_json_like_text_never_panics(text in r#"[\[\]{}":,0-9a-z .\-]{0,200}"#) {
        let _ = Codec::default().decode(text.as_bytes());
    }

    #[test]
    fn encode_then_decode_is_the_identity(message in arb_message()) {
        let codec = Codec::default();
        let bytes = codec.encode(&message);
        prop_assert!(!bytes.contains(&b'\n'));
        prop_assert_eq!(codec.decode(&bytes), Ok(Decoded::Single(message)));
    }
}
