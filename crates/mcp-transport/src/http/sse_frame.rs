//! Server-sent events as JSON-RPC messages: the events of a response
//! body, which events carry a message, decoding their data, and the error
//! answers standing for events past the message cap.

use futures::{Stream, StreamExt};

use crate::codec::{Codec, DEFAULT_MAX_MESSAGE_BYTES, Undecodable};
use crate::error::{TransportError, TransportErrorKind};
use crate::event_stream::{Event, SseDecoder, SseItem};
use crate::failure::synthetic_error;
use crate::message::{JsonRpcMessage, RequestId};

/// The items of an SSE response body: events, and a report for each event
/// past the message cap (whose rest is skipped in bounded memory); a
/// broken connection ends the stream with its error.
pub(crate) fn sse_events(
    response: reqwest::Response,
) -> impl Stream<Item = Result<SseItem, reqwest::Error>> + Send {
    let decoder = SseDecoder::new(DEFAULT_MAX_MESSAGE_BYTES);
    futures::stream::unfold(
        (response.bytes_stream(), decoder, false),
        |(mut body, mut decoder, mut ended)| async move {
            loop {
                if let Some(item) = decoder.next_item() {
                    return Some((Ok(item), (body, decoder, ended)));
                }
                if ended {
                    return None;
                }
                match body.next().await {
                    Some(Ok(chunk)) => decoder.feed(&chunk),
                    Some(Err(e)) => return Some((Err(e), (body, decoder, true))),
                    None => {
                        decoder.end();
                        ended = true;
                    }
                }
            }
        },
    )
}

/// Decodes one JSON text (a message or a batch) into messages; an
/// undecodable one still yields what can be saved (see
/// [`Codec::decode_salvaging`]).
pub(crate) fn decode_payload(text: &[u8]) -> Result<Vec<JsonRpcMessage>, Undecodable> {
    Codec::default()
        .decode_salvaging(text)
        .map(|decoded| decoded.into_iter().collect())
}

/// The error answers that stand for answers past the message cap.
pub(crate) fn too_large_answers(
    server: &str,
    max: usize,
    answers: Vec<RequestId>,
) -> impl Iterator<Item = JsonRpcMessage> {
    let server = server.to_owned();
    answers.into_iter().map(move |id| {
        let error = TransportError::new(&*server, TransportErrorKind::MessageTooLarge { max });
        // Named like the transport's other made-up answers.
        synthetic_error(id, error.to_string())
    })
}

/// Decodes SSE bytes (as one body) into the JSON-RPC messages its events
/// carry, the way the HTTP transports read a stream: events named `message`
/// (or unnamed) with non-empty data are decoded; other events are skipped;
/// an event past the message cap is an error. Public for the fuzz target
/// and for tests; never panics.
#[cfg_attr(not(fuzzing), allow(dead_code, unreachable_pub))]
pub fn decode_sse_body(chunks: &[&[u8]]) -> Vec<Result<JsonRpcMessage, String>> {
    let mut decoder = SseDecoder::new(DEFAULT_MAX_MESSAGE_BYTES);
    let mut items = Vec::new();
    for chunk in chunks {
        decoder.feed(chunk);
        items.extend(std::iter::from_fn(|| decoder.next_item()));
    }
    decoder.end();
    items.extend(std::iter::from_fn(|| decoder.next_item()));
    let mut out = Vec::new();
    for item in items {
        match item {
            SseItem::Event(event) => {
                if is_message_event(&event) {
                    match decode_payload(event.data.as_bytes()) {
                        Ok(messages) => out.extend(messages.into_iter().map(Ok)),
                        Err(e) => out.push(Err(e.error.to_string())),
                    }
                }
            }
            SseItem::TooLarge { max, .. } => {
                out.push(Err(format!("message too large: more than {max} bytes")));
            }
        }
    }
    out
}

/// Whether an SSE event carries a JSON-RPC message (priming events have an
/// id, maybe a retry, and empty data).
pub(crate) fn is_message_event(event: &Event) -> bool {
    (event.event.is_empty() || event.event == "message") && !event.data.trim().is_empty()
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    proptest! {
        /// Arbitrary bytes never panic the decoder, and where a chunk
        /// boundary falls never changes what it decodes.
        #[test]
        fn chunk_boundaries_never_change_the_result(body in proptest::collection::vec(any::<u8>(), 0..400), at in any::<prop::sample::Index>()) {
            let at = at.index(body.len() + 1);
            let (a, b) = body.split_at(at);
            prop_assert_eq!(format!("{:?}", decode_sse_body(&[a, b])), format!("{:?}", decode_sse_body(&[&body])));
        }

        /// Messages framed as SSE events come back as they were.
        #[test]
        fn framed_messages_round_trip(methods in proptest::collection::vec("[a-z/]{1,12}", 1..5), crlf in any::<bool>()) {
            let eol = if crlf { "\r\n" } else { "\n" };
            let mut body = String::new();
            for method in &methods {
                body.push_str(&format!("event: message{eol}data: {{\"jsonrpc\":\"2.0\",\"method\":\"{method}\"}}{eol}{eol}"));
            }
            let got: Vec<String> = decode_sse_body(&[body.as_bytes()])
                .into_iter()
                .map(|m| match m {
                    Ok(JsonRpcMessage::Notification(n)) => n.method,
                    other => format!("{other:?}"),
                })
                .collect();
            prop_assert_eq!(got, methods);
        }
    }

    #[test]
    fn sse_bodies_decode_to_messages_split_anywhere() {
        let body = b"id: 1\nretry: 500\ndata: \n\n: comment\nevent: message\nid: 2\ndata: {\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{}}\n\nevent: ping\ndata: x\n\ndata: [{\"jsonrpc\":\"2.0\",\"method\":\"a\"},\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"b\"}]\n\n";
        for split in 0..body.len() {
            let (a, b) = body.split_at(split);
            let got = decode_sse_body(&[a, b]);
            assert_eq!(got.len(), 3, "split at {split}: {got:?}");
            assert!(got.iter().all(Result::is_ok), "split at {split}: {got:?}");
        }
        let crlf = b"data: {\"jsonrpc\":\"2.0\",\"method\":\"x\"}\r\n\r\n";
        assert_eq!(decode_sse_body(&[crlf]).len(), 1);
        assert!(decode_sse_body(&[b"data: nope\n\n"])[0].is_err());
    }
}
