//! Bytes to [`JsonRpcMessage`] and back, with a size cap.
//!
//! Every transport frames messages differently (stdio: one per line; HTTP:
//! one per body or SSE event; WebSocket: one per text frame) but decodes the
//! frame the same way, here:
//!
//! - unknown members are ignored, so a server that adds a field never makes
//!   a message unreadable;
//! - a batch (`[...]`) is accepted on input and yields its messages in order;
//! - a frame larger than [`Codec::max_message_bytes`] is refused before it is
//!   parsed, and transports that read incrementally (stdio) use the same cap
//!   to stop buffering;
//! - a frame that is not a JSON-RPC message gets a [`TransportErrorKind`]
//!   that says what is wrong (not JSON at all, or which member is missing or
//!   mistyped), which the transport puts into a [`crate::TransportError`]
//!   naming the server.
//!
//! Decoding goes straight from bytes into the typed message through one
//! `serde` pass (no intermediate `Value` for the envelope); the session's
//! transports ([`Codec::decode_incoming`]) leave a successful answer's
//! `result` as the raw JSON `serde_json` checked, for the waiting caller to
//! decode into the type it asked for.
//!
//! # Depth
//!
//! A message is decoded at any depth up to [`MAX_DEPTH`], well past
//! `serde_json`'s default limit of 128 (a 65-level tool schema nests about
//! 135 levels): a message the default parse refuses is measured by a scan
//! that never recurses ([`crate::scan`]) and, when it nests deeper than 128
//! but not past [`MAX_DEPTH`], parsed again without the limit, on a stack
//! that `serde_stacker` grows on the heap as needed. A message deeper than
//! [`MAX_DEPTH`] (a 16 MiB message can nest eight million levels) is refused
//! with [`TransportErrorKind::TooDeep`] without building anything. The ceiling
//! exists for the values handed to callers: `serde_json::Value`'s `Clone`,
//! `PartialEq`, `Drop` and `Serialize` recurse, and at [`MAX_DEPTH`] they
//! stay well within a 2 MiB thread stack even in a debug build, where a
//! `Clone` of a few thousand nested objects would not.
//!
//! # Undecodable answers
//!
//! [`Codec::decode_salvaging`] is what transports call: when a frame cannot
//! be decoded (too deep, too large, not JSON, not JSON-RPC), the scan still
//! finds the ids of the answers it carries, and each becomes an error
//! answer ([`undecodable_answer`]) so the request fails at once, saying
//! why, instead of waiting out its timeout; the good elements of a batch
//! are kept.

use std::fmt::Display;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;

use crate::depth::{MAX_DEPTH, SERDE_DEFAULT_DEPTH};
use crate::error::TransportErrorKind;
use crate::error_codes;
use crate::message::{ErrorObject, Incoming, JsonRpcMessage, RawEnvelope, RawMessage, RequestId};
use crate::scan::{self, AnswerScan};

/// Default cap on one message: large enough for big tool results (images
/// as base64), small enough that a runaway server cannot exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// A frame that could not be decoded, and what could be saved from it.
#[derive(Debug, Clone, PartialEq)]
pub struct Undecodable {
    /// Why the frame (or its first bad batch element) could not be decoded.
    pub error: TransportErrorKind,
    /// The batch elements that did decode, and an error answer (JSON-RPC parse error)
    /// for each answer whose id was found in what did not, in order.
    pub salvaged: Vec<JsonRpcMessage>,
}

/// The error answer that stands for an answer that could not be decoded:
/// its request fails at once with `reason` (JSON-RPC parse error code).
pub(crate) fn undecodable_answer(id: RequestId, reason: &dyn Display) -> JsonRpcMessage {
    JsonRpcMessage::error(Some(id), undecodable_error(reason))
}

/// The error object of [`undecodable_answer`].
pub(crate) fn undecodable_error(reason: &dyn Display) -> ErrorObject {
    ErrorObject::new(
        error_codes::PARSE_ERROR,
        format!("the answer could not be decoded: {reason}"),
    )
}

/// Why a raw result did not decode into the type asked for.
#[derive(Debug)]
pub(crate) enum ResultError {
    /// The answer is refused as [`Codec::decode_salvaging`] refuses a frame
    /// (too deep): its request fails with [`undecodable_answer`]'s error.
    Refused(TransportErrorKind),
    /// Valid JSON of the wrong shape for the type.
    Invalid(serde_json::Error),
}

/// Decodes a raw result (see [`Incoming::Answer`]) into `T` in one pass,
/// under the depth rules of the module docs: the message it came in counts
/// one level more, a message past [`MAX_DEPTH`] is refused, one nesting
/// past `serde_json`'s default limit is parsed on a growing stack.
pub(crate) fn decode_result<T: DeserializeOwned>(text: &str) -> Result<T, ResultError> {
    let measure = || scan::depth(text.as_bytes()) + 1;
    let depth = refuse_too_deep(text)?;
    let error = match serde_json::from_str::<T>(text) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    if depth.unwrap_or_else(measure) < SERDE_DEFAULT_DEPTH {
        return Err(ResultError::Invalid(error));
    }
    let mut deserializer = serde_json::Deserializer::from_str(text);
    deserializer.disable_recursion_limit();
    let value = T::deserialize(serde_stacker::Deserializer::new(&mut deserializer))
        .map_err(ResultError::Invalid)?;
    deserializer.end().map_err(ResultError::Invalid)?;
    Ok(value)
}

/// The depth of a raw result with its message's level, when it is long
/// enough to need measuring; a result past [`MAX_DEPTH`] is refused.
fn refuse_too_deep(text: &str) -> Result<Option<usize>, ResultError> {
    // Nesting `MAX_DEPTH` levels takes at least twice as many bytes, so a
    // short result (every ordinary one) needs no scan.
    if text.len() < 2 * MAX_DEPTH {
        return Ok(None);
    }
    let measured = scan::depth(text.as_bytes()) + 1;
    if measured > MAX_DEPTH {
        return Err(ResultError::Refused(TransportErrorKind::TooDeep {
            depth: measured,
            max: MAX_DEPTH,
        }));
    }
    Ok(Some(measured))
}

/// Decodes the top of a raw result through `seed`, under the depth rule of
/// [`decode_result`]. The seed must read only a few levels itself and
/// borrow or skip what lies deeper (`&RawValue`, `IgnoredAny`), which
/// `serde_json` reads without recursing: that is why no growing stack is
/// needed here.
pub(crate) fn decode_result_seed<'de, S: serde::de::DeserializeSeed<'de>>(
    text: &'de str,
    seed: S,
) -> Result<S::Value, ResultError> {
    refuse_too_deep(text)?;
    let mut deserializer = serde_json::Deserializer::from_str(text);
    let value = seed
        .deserialize(&mut deserializer)
        .map_err(ResultError::Invalid)?;
    deserializer.end().map_err(ResultError::Invalid)?;
    Ok(value)
}

/// Parses `frame` at any depth up to [`MAX_DEPTH`].
fn parse<T: DeserializeOwned>(frame: &[u8]) -> Result<T, TransportErrorKind> {
    let error = match serde_json::from_slice::<T>(frame) {
        Ok(value) => return Ok(value),
        Err(error) => error,
    };
    let depth = scan::depth(frame);
    if depth < SERDE_DEFAULT_DEPTH {
        return Err(classify(error));
    }
    if depth > MAX_DEPTH {
        return Err(TransportErrorKind::TooDeep {
            depth,
            max: MAX_DEPTH,
        });
    }
    let mut deserializer = serde_json::Deserializer::from_slice(frame);
    deserializer.disable_recursion_limit();
    let value =
        T::deserialize(serde_stacker::Deserializer::new(&mut deserializer)).map_err(classify)?;
    deserializer.end().map_err(classify)?;
    Ok(value)
}

/// The messages of one frame: one, or a batch.
#[derive(Debug, Clone, PartialEq)]
pub enum Decoded {
    /// A single message (the common case; no allocation for a list).
    Single(JsonRpcMessage),
    /// The messages of a batch, in order.
    Batch(Vec<JsonRpcMessage>),
}

impl IntoIterator for Decoded {
    type Item = JsonRpcMessage;
    type IntoIter = DecodedIter;

    fn into_iter(self) -> DecodedIter {
        match self {
            Decoded::Single(message) => DecodedIter::Single(Some(message)),
            Decoded::Batch(messages) => DecodedIter::Batch(messages.into_iter()),
        }
    }
}

/// Iterator over a [`Decoded`] frame.
#[derive(Debug)]
pub enum DecodedIter {
    /// Yields the one message.
    Single(Option<JsonRpcMessage>),
    /// Yields the batch.
    Batch(std::vec::IntoIter<JsonRpcMessage>),
}

impl Iterator for DecodedIter {
    type Item = JsonRpcMessage;

    fn next(&mut self) -> Option<JsonRpcMessage> {
        match self {
            DecodedIter::Single(message) => message.take(),
            DecodedIter::Batch(messages) => messages.next(),
        }
    }
}

/// Decodes and encodes JSON-RPC frames with a size cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Codec {
    max_message_bytes: usize,
}

impl Default for Codec {
    fn default() -> Self {
        Codec::new(DEFAULT_MAX_MESSAGE_BYTES)
    }
}

impl Codec {
    /// A codec that refuses frames larger than `max_message_bytes`.
    pub fn new(max_message_bytes: usize) -> Self {
        Codec { max_message_bytes }
    }

    /// The size cap in bytes.
    pub fn max_message_bytes(&self) -> usize {
        self.max_message_bytes
    }

    /// Decodes one frame (a message or a batch). Surrounding whitespace is
    /// ignored.
    pub fn decode(&self, frame: &[u8]) -> Result<Decoded, TransportErrorKind> {
        if frame.len() > self.max_message_bytes {
            return Err(TransportErrorKind::FrameTooLarge {
                size: frame.len(),
                max: self.max_message_bytes,
            });
        }
        let first = frame.iter().find(|b| !b.is_ascii_whitespace());
        match first {
            None => Err(TransportErrorKind::NotJson {
                reason: "empty message".to_string(),
            }),
            Some(b'[') => self.decode_batch(frame),
            Some(b'{') => {
                let raw: RawMessage = parse(frame)?;
                raw.into_message()
                    .map(Decoded::Single)
                    .map_err(|reason| TransportErrorKind::InvalidMessage { reason })
            }
            // `IgnoredAny` parses without recursing, at any depth.
            Some(_) => match serde_json::from_slice::<serde::de::IgnoredAny>(frame) {
                Ok(_) => Err(TransportErrorKind::InvalidMessage {
                    reason: "expected an object or a batch array".to_string(),
                }),
                Err(e) => Err(TransportErrorKind::NotJson {
                    reason: e.to_string(),
                }),
            },
        }
    }

    fn decode_batch(&self, frame: &[u8]) -> Result<Decoded, TransportErrorKind> {
        let raws: Vec<RawMessage> = parse(frame)?;
        if raws.is_empty() {
            return Err(TransportErrorKind::InvalidMessage {
                reason: "empty batch".to_string(),
            });
        }
        let mut messages = Vec::with_capacity(raws.len());
        for (index, raw) in raws.into_iter().enumerate() {
            let message = raw
                .into_message()
                .map_err(|e| TransportErrorKind::InvalidMessage {
                    reason: format!("batch element {index}: {e}"),
                })?;
            messages.push(message);
        }
        Ok(Decoded::Batch(messages))
    }

    /// [`Codec::decode`] for transports: an undecodable frame still yields
    /// what can be saved from it (see [`Undecodable`]), so the requests it
    /// answers fail at once and the good elements of a batch arrive.
    pub fn decode_salvaging(&self, frame: &[u8]) -> Result<Decoded, Undecodable> {
        let error = match self.decode(frame) {
            Ok(decoded) => return Ok(decoded),
            Err(error) => error,
        };
        let mut salvaged = Vec::new();
        let is_batch = frame.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[');
        let fits = !matches!(error, TransportErrorKind::FrameTooLarge { .. });
        // `RawValue` splits a batch without recursing, at any depth.
        let elements = (is_batch && fits)
            .then(|| serde_json::from_slice::<Vec<&RawValue>>(frame).ok())
            .flatten();
        match elements {
            Some(elements) => {
                let mut first_error = None;
                for element in elements {
                    let bytes = element.get().as_bytes();
                    match self.decode(bytes) {
                        Ok(decoded) => salvaged.extend(decoded),
                        Err(e) => {
                            for id in AnswerScan::answers_in(bytes) {
                                salvaged.push(undecodable_answer(id, &e));
                            }
                            first_error.get_or_insert(e);
                        }
                    }
                }
                Err(Undecodable {
                    error: first_error.unwrap_or(error),
                    salvaged,
                })
            }
            None => {
                for id in AnswerScan::answers_in(frame) {
                    salvaged.push(undecodable_answer(id, &error));
                }
                Err(Undecodable { error, salvaged })
            }
        }
    }

    /// [`Codec::decode_salvaging`] for the session: appends the messages of
    /// `frame` to `out`, a single successful answer with its result left
    /// raw ([`Incoming::Answer`]). Returns the error of an undecodable
    /// frame (for the log) after appending what was salvaged.
    // Used by the transports that read a wire; none may be compiled in.
    #[cfg_attr(
        not(any(feature = "stdio", feature = "remote", feature = "ws")),
        allow(dead_code)
    )]
    pub(crate) fn decode_incoming(
        &self,
        frame: &[u8],
        out: &mut impl Extend<Incoming>,
    ) -> Result<(), TransportErrorKind> {
        let single = frame.len() <= self.max_message_bytes
            && frame.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'{');
        if single
            && let Ok(envelope) = parse::<RawEnvelope>(frame)
            && let Ok(incoming) = envelope.into_incoming()
        {
            out.extend(std::iter::once(incoming));
            return Ok(());
        }
        // Batches, and every frame that is refused: the general path says
        // why and salvages what it can.
        match self.decode_salvaging(frame) {
            Ok(decoded) => {
                out.extend(decoded.into_iter().map(Incoming::Message));
                Ok(())
            }
            Err(undecodable) => {
                out.extend(undecodable.salvaged.into_iter().map(Incoming::Message));
                Err(undecodable.error)
            }
        }
    }

    /// Encodes one message as compact JSON (never containing a raw newline)
    /// and appends it to `out`.
    pub fn encode_into(&self, message: &JsonRpcMessage, out: &mut Vec<u8>) {
        Codec::encode_serialized_into(message, out);
    }

    /// [`Codec::encode_into`] for anything that serialises as one message
    /// (a request written from borrows).
    pub(crate) fn encode_serialized_into<T: Serialize + ?Sized>(message: &T, out: &mut Vec<u8>) {
        let start = out.len();
        // Writing into a Vec cannot fail: every key is a string and
        // `Value` has no failing cases; if it ever did, nothing half
        // written is left behind.
        if let Err(e) = serde_json::to_writer(&mut *out, message) {
            out.truncate(start);
            tracing::error!(error = %e, "json-rpc message failed to serialise");
        }
    }

    /// Encodes one message as compact JSON.
    pub fn encode(&self, message: &JsonRpcMessage) -> Vec<u8> {
        let mut out = Vec::with_capacity(128);
        self.encode_into(message, &mut out);
        out
    }
}

impl Incoming {
    /// The decoded message: a raw result becomes a `Value` (at any depth up
    /// to [`crate::depth::MAX_DEPTH`]; past it, the answer becomes the same parse
    /// error answer [`crate::codec::Codec::decode_salvaging`] makes).
    pub fn into_message(self) -> JsonRpcMessage {
        match self {
            Incoming::Message(message) => message,
            Incoming::Answer(answer) => {
                match decode_result::<serde_json::Value>(answer.result.get()) {
                    Ok(value) => JsonRpcMessage::result(answer.id, value),
                    Err(ResultError::Refused(kind)) => undecodable_answer(answer.id, &kind),
                    // A `Value` takes any JSON.
                    Err(ResultError::Invalid(e)) => undecodable_answer(
                        answer.id,
                        &TransportErrorKind::NotJson {
                            reason: e.to_string(),
                        },
                    ),
                }
            }
        }
    }
}

/// Syntax and end-of-input errors mean "not JSON"; data errors mean the JSON
/// has the wrong shape.
fn classify(error: serde_json::Error) -> TransportErrorKind {
    let reason = error.to_string();
    match error.classify() {
        serde_json::error::Category::Data => TransportErrorKind::InvalidMessage { reason },
        _ => TransportErrorKind::NotJson { reason },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The session's read of `frame` ([`Codec::decode_incoming`], raw
    /// results decoded afterwards) against the general one
    /// ([`Codec::decode_salvaging`]): the same messages and the same error,
    /// and `expect` (each message as JSON, then the error if any).
    #[track_caller]
    fn check(frame: &str, expect: &[&str]) {
        let codec = Codec::default();
        let mut incoming = Vec::new();
        let error = codec.decode_incoming(frame.as_bytes(), &mut incoming).err();
        let mut session: Vec<String> = incoming
            .into_iter()
            .map(|m| String::from_utf8(codec.encode(&m.into_message())).unwrap_or_default())
            .collect();
        session.extend(error.map(|e| format!("error: {e}")));
        let mut general: Vec<String> = match codec.decode_salvaging(frame.as_bytes()) {
            Ok(decoded) => decoded
                .into_iter()
                .map(|m| String::from_utf8(codec.encode(&m)).unwrap_or_default())
                .collect(),
            Err(undecodable) => undecodable
                .salvaged
                .iter()
                .map(|m| String::from_utf8(codec.encode(m)).unwrap_or_default())
                .chain(std::iter::once(format!("error: {}", undecodable.error)))
                .collect(),
        };
        // The general read names the error before what it salvaged.
        general.sort();
        let mut sorted = session.clone();
        sorted.sort();
        assert_eq!(sorted, general, "{frame}");
        assert_eq!(session, expect, "{frame}");
    }

    #[test]
    fn an_answer_reads_the_same_on_the_session_path_for_every_version_member() {
        let ok = r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}"#;
        check(r#"{"jsonrpc":"2.0","id":1,"result":{"a":[1]}}"#, &[ok]);
        // An escaped "2.0" is "2.0".
        check(r#"{"jsonrpc":"2\u002e0","id":1,"result":{"a":[1]}}"#, &[ok]);
        check(r#"{"result":{"a":[1]},"id":1,"jsonrpc":"2.0"}"#, &[ok]);
        for (version, named) in [
            (r#""1.0""#, r#""1.0""#),
            (r#""2.0 ""#, r#""2.0 ""#),
            ("2.0", "2.0"),
            ("null", "null"),
            ("true", "true"),
            (r#"["2.0"]"#, r#"["2.0"]"#),
            (r#"{"v":"2.0"}"#, r#"{"v":"2.0"}"#),
        ] {
            check_refused(
                &format!(r#"{{"jsonrpc":{version},"id":1,"result":{{}}}}"#),
                &format!(r#"jsonrpc must be "2.0", not {named}"#),
            );
        }
        // Hostile members: control characters, one huge string, nesting
        // past serde_json's own limit; each named by its start.
        let long = format!(r#""{}""#, "v".repeat(100_000));
        let deep = format!("{}{}", "[".repeat(300), "]".repeat(300));
        for (version, named) in [
            (
                r#""\u0000\u001b[2J""#.to_owned(),
                r#""\u0000\u001b[2J""#.to_owned(),
            ),
            (long, format!(r#""{}..."#, "v".repeat(59))),
            (deep, format!("{}...", "[".repeat(60))),
        ] {
            check_refused(
                &format!(r#"{{"jsonrpc":{version},"id":1,"result":{{}}}}"#),
                &format!(r#"jsonrpc must be "2.0", not {named}"#),
            );
        }
        check_refused(r#"{"id":1,"result":{}}"#, r#"missing "jsonrpc": "2.0""#);
        // Members given twice are refused by both reads.
        check_refused(
            r#"{"jsonrpc":"2.0","jsonrpc":"2.0","id":1,"result":{}}"#,
            "duplicate field `jsonrpc` at line 1 column 26",
        );
    }

    /// [`check`] for an answer to request 1 refused for `why`: it fails
    /// that request, and the frame's error says why.
    #[track_caller]
    fn check_refused(frame: &str, why: &str) {
        let reason = format!("invalid JSON-RPC message: {why}");
        let message = serde_json::to_string(&format!("the answer could not be decoded: {reason}"))
            .unwrap_or_default();
        let failed = format!(
            r#"{{"jsonrpc":"2.0","id":1,"error":{{"code":{},"message":{message}}}}}"#,
            error_codes::PARSE_ERROR,
        );
        check(frame, &[&failed, &format!("error: {reason}")]);
    }
}
