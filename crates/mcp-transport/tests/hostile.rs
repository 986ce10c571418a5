//! Hostile frames against the codec, on a 2 MiB stack (a tokio worker's)
//! in whatever build the tests run: a table through one `check` helper of
//! what [`Codec::decode_salvaging`] makes of deep, undecodable and batch
//! frames, and what a host may then do with a message at the depth ceiling.
//! The transports' end-to-end rows are in the workspace's
//! `tests/tests/hostile_transport.rs`.

#![allow(clippy::unwrap_used)]

use mcp_transport::JsonRpcMessage;
use mcp_transport::wire::MAX_DEPTH;
use mcp_transport::wire::{Codec, DEFAULT_MAX_MESSAGE_BYTES};

fn arrays(levels: usize) -> String {
    format!("{}1{}", "[".repeat(levels), "]".repeat(levels))
}

fn objects(levels: usize) -> String {
    format!("{}1{}", "{\"a\":".repeat(levels), "}".repeat(levels))
}

/// A response to `id` whose `result` holds `value` (two levels of envelope).
fn answer(id: u32, value: &str) -> String {
    format!(r#"{{"jsonrpc":"2.0","id":{id},"result":{{"v":{value}}}}}"#)
}

fn render(message: &JsonRpcMessage) -> String {
    match message {
        JsonRpcMessage::Request(r) => format!("request {}", r.method),
        JsonRpcMessage::Notification(n) => format!("notification {}", n.method),
        JsonRpcMessage::Response(r) => match &r.outcome {
            Ok(_) => format!("result {}", r.id.as_ref().unwrap()),
            Err(e) => format!("error {} {}: {}", r.id.as_ref().unwrap(), e.code, e.message),
        },
    }
}

/// Runs `f` on a thread with a 2 MiB stack, like a tokio worker's.
fn on_small_stack(f: impl FnOnce() + Send + 'static) {
    std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(f)
        .unwrap()
        .join()
        .unwrap();
}

/// What `decode_salvaging` makes of `frame`: the messages, or the error and
/// what was salvaged.
#[track_caller]
fn check(frame: String, expect: &[&str]) {
    let got: Vec<String> = match Codec::default().decode_salvaging(frame.as_bytes()) {
        Ok(decoded) => decoded.into_iter().map(|m| render(&m)).collect(),
        Err(undecodable) => std::iter::once(format!("undecodable: {}", undecodable.error))
            .chain(undecodable.salvaged.iter().map(render))
            .collect(),
    };
    let shown: String = frame.chars().take(80).collect();
    assert_eq!(got, expect, "{shown}");
}

const PARSE: i64 = -32700;

#[test]
fn deep_frames_decode_up_to_the_ceiling_and_fail_their_request_past_it() {
    on_small_stack(|| {
        let inner = MAX_DEPTH - 2;
        check(answer(1, &arrays(inner)), &["result 1"]);
        check(answer(1, &objects(inner)), &["result 1"]);
        let too_deep = format!(
            "error 2 {PARSE}: the answer could not be decoded: message nests {} levels deep (limit 512)",
            MAX_DEPTH + 1
        );
        check(
            answer(2, &arrays(inner + 1)),
            &[
                "undecodable: message nests 513 levels deep (limit 512)",
                &too_deep,
            ],
        );
        check(
            answer(2, &objects(inner + 1)),
            &[
                "undecodable: message nests 513 levels deep (limit 512)",
                &too_deep,
            ],
        );
        // The deepest frames within the cap: decoded without building a
        // value, nothing recursing.
        let envelope = answer(3, "").len();
        let levels = (DEFAULT_MAX_MESSAGE_BYTES - envelope - 1) / 2;
        let error = format!("message nests {} levels deep (limit 512)", levels + 2);
        check(
            answer(3, &arrays(levels)),
            &[
                &format!("undecodable: {error}"),
                &format!("error 3 {PARSE}: the answer could not be decoded: {error}"),
            ],
        );
        // One byte more is too large, and still fails its request.
        let large = "message too large: 16777217 bytes (limit 16777216)";
        check(
            answer(
                3,
                &format!(
                    "{}{}",
                    arrays(levels),
                    " ".repeat(DEFAULT_MAX_MESSAGE_BYTES + 1 - answer(3, &arrays(levels)).len())
                ),
            ),
            &[
                &format!("undecodable: {large}"),
                &format!("error 3 {PARSE}: the answer could not be decoded: {large}"),
            ],
        );
        let batch = arrays(DEFAULT_MAX_MESSAGE_BYTES / 2 - 1);
        // As a batch, the error is its one element's.
        check(
            batch,
            &[&format!(
                "undecodable: message nests {} levels deep (limit 512)",
                DEFAULT_MAX_MESSAGE_BYTES / 2 - 2
            )],
        );
        // A too-deep request from the server answers nothing of ours.
        check(
            format!(
                r#"{{"jsonrpc":"2.0","id":4,"method":"x","params":{}}}"#,
                arrays(600)
            ),
            &["undecodable: message nests 601 levels deep (limit 512)"],
        );
    });
}

#[test]
fn undecodable_frames_with_an_id_fail_that_request_and_keep_the_rest_of_a_batch() {
    on_small_stack(|| {
        check(
            r#"{"jsonrpc":"2.0","id":5,"result":nope}"#.to_owned(),
            &[
                "undecodable: not JSON: expected ident at line 1 column 35",
                &format!(
                    "error 5 {PARSE}: the answer could not be decoded: not JSON: expected ident at line 1 column 35"
                ),
            ],
        );
        check(
            r#"{"jsonrpc":"1.0","id":"x","result":{}}"#.to_owned(),
            &[
                "undecodable: invalid JSON-RPC message: jsonrpc must be \"2.0\", not \"1.0\"",
                &format!(
                    "error \"x\" {PARSE}: the answer could not be decoded: invalid JSON-RPC message: jsonrpc must be \"2.0\", not \"1.0\""
                ),
            ],
        );
        // A server's long value is cut short in the error.
        let cut = format!(
            "invalid JSON-RPC message: jsonrpc must be \"2.0\", not \"{}...",
            "v".repeat(59)
        );
        check(
            format!(
                r#"{{"jsonrpc":"{}","id":1,"result":{{}}}}"#,
                "v".repeat(100_000)
            ),
            &[
                &format!("undecodable: {cut}"),
                &format!("error 1 {PARSE}: the answer could not be decoded: {cut}"),
            ],
        );
        // A banner line: skipped, nothing to fail.
        check(
            "Server listening on stdio".to_owned(),
            &["undecodable: not JSON: expected value at line 1 column 1"],
        );
        // A batch: the good elements arrive, each bad answer fails its own
        // request, and the first bad element names the error.
        let batch = format!(
            r#"[{{"jsonrpc":"2.0","method":"notifications/message"}},{},{{"jsonrpc":"2.0","id":7,"result":{{}},"error":{{"code":1,"message":"x"}}}},{}]"#,
            answer(6, &arrays(600)),
            answer(8, "1"),
        );
        check(
            batch,
            &[
                "undecodable: message nests 602 levels deep (limit 512)",
                "notification notifications/message",
                &format!(
                    "error 6 {PARSE}: the answer could not be decoded: message nests 602 levels deep (limit 512)"
                ),
                &format!(
                    "error 7 {PARSE}: the answer could not be decoded: invalid JSON-RPC message: response has both result and error"
                ),
                "result 8",
            ],
        );
        // A batch that is not even JSON: the answers are still found.
        check(
            r#"[{"jsonrpc":"2.0","id":9,"result":{}},{"jsonrpc":"2.0","id":10,"result":x}]"#
                .to_owned(),
            &[
                "undecodable: not JSON: expected value at line 1 column 73",
                &format!(
                    "error 9 {PARSE}: the answer could not be decoded: not JSON: expected value at line 1 column 73"
                ),
                &format!(
                    "error 10 {PARSE}: the answer could not be decoded: not JSON: expected value at line 1 column 73"
                ),
            ],
        );
    });
}

#[test]
fn a_message_at_the_ceiling_survives_what_a_host_does_with_it() {
    on_small_stack(|| {
        let inner = MAX_DEPTH - 2;
        for value in [arrays(inner), objects(inner)] {
            let frame = answer(1, &value);
            let message = match Codec::default().decode(frame.as_bytes()).unwrap() {
                mcp_transport::wire::Decoded::Single(message) => message,
                other => panic!("{other:?}"),
            };
            let copy = message.clone();
            assert_eq!(copy, message);
            assert_eq!(Codec::default().encode(&copy), frame.as_bytes());
            assert!(format!("{copy:?}").len() > inner);
            drop(copy);
            drop(message);
        }
    });
}

/// A legacy in-process server whose every error after `initialize` carries
/// the mark streamable HTTP puts on its own failures.
struct Forger;

#[async_trait::async_trait]
impl mcp_transport::kinds::SdkServer for Forger {
    async fn serve(
        self: std::sync::Arc<Self>,
        mut connection: mcp_transport::kinds::SdkServerConnection,
    ) {
        use mcp_transport::{ErrorObject, JsonRpcMessage, Response};
        while let Some(message) = connection.incoming.recv().await {
            let JsonRpcMessage::Request(request) = message else {
                continue;
            };
            let outcome = match request.method.as_str() {
                "initialize" => Ok(serde_json::json!({
                    "protocolVersion": "2025-11-25",
                    "capabilities": {"tools": {}},
                    "serverInfo": {"name": "forger", "version": "1"}
                })),
                _ => Err(ErrorObject {
                    code: mcp_transport::wire::TRANSPORT_ERROR_CODE,
                    message: "disguised".into(),
                    data: Some(serde_json::json!({
                        mcp_transport::wire::TRANSPORT_FAILURE_KEY: {"kind": "streamBroken"}
                    })),
                }),
            };
            let reply = JsonRpcMessage::Response(Response {
                id: Some(request.id),
                outcome,
            });
            if connection.outgoing.send(reply).await.is_err() {
                return;
            }
        }
    }
}

#[tokio::test]
async fn only_a_transport_that_marks_its_failures_has_the_mark_read() {
    let transport = mcp_transport::kinds::SdkTransport::connect(
        "forger",
        std::sync::Arc::new(Forger),
        mcp_transport::kinds::SdkOptions::default(),
    );
    let session = mcp_transport::ClientSession::initialize(
        Box::new(transport),
        "forger",
        mcp_transport::SessionOptions::default(),
    )
    .await
    .unwrap();
    let error = session.call_tool("anything", None).await.unwrap_err();
    assert!(
        matches!(
            error.kind(),
            mcp_transport::TransportErrorKind::Rpc { code: -32000, .. }
        ),
        "{error:?}"
    );
}
