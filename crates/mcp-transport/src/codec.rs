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
//! - a frame that is not a JSON-RPC message gets a [`DecodeError`] that says
//!   what is wrong (not JSON at all, or which member is missing or mistyped),
//!   which the transport wraps into a [`crate::TransportError`] naming the
//!   server.
//!
//! Decoding goes straight from bytes into the typed message through one
//! `serde` pass (no intermediate `Value` for the envelope).

use crate::message::{JsonRpcMessage, RawMessage};

/// Default cap on one message: large enough for big tool results (images
/// as base64), small enough that a runaway server cannot exhaust memory.
pub const DEFAULT_MAX_MESSAGE_BYTES: usize = 16 * 1024 * 1024;

/// Why a frame could not be decoded. Transports wrap it into a
/// [`crate::TransportError`] that names the server.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The frame exceeds the size cap.
    #[error("message too large: {size} bytes (limit {max})")]
    TooLarge { size: usize, max: usize },
    /// The frame is not JSON (a banner line, a log line, truncated output).
    #[error("not JSON: {0}")]
    NotJson(String),
    /// The frame is JSON but not a JSON-RPC 2.0 message.
    #[error("invalid JSON-RPC message: {0}")]
    Invalid(String),
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
    pub fn decode(&self, frame: &[u8]) -> Result<Decoded, DecodeError> {
        if frame.len() > self.max_message_bytes {
            return Err(DecodeError::TooLarge {
                size: frame.len(),
                max: self.max_message_bytes,
            });
        }
        let first = frame.iter().find(|b| !b.is_ascii_whitespace());
        match first {
            None => Err(DecodeError::NotJson("empty message".to_string())),
            Some(b'[') => self.decode_batch(frame),
            Some(b'{') => {
                let raw: RawMessage = serde_json::from_slice(frame).map_err(classify)?;
                raw.into_message()
                    .map(Decoded::Single)
                    .map_err(DecodeError::Invalid)
            }
            Some(_) => match serde_json::from_slice::<serde::de::IgnoredAny>(frame) {
                Ok(_) => Err(DecodeError::Invalid(
                    "expected an object or a batch array".to_string(),
                )),
                Err(e) => Err(DecodeError::NotJson(e.to_string())),
            },
        }
    }

    fn decode_batch(&self, frame: &[u8]) -> Result<Decoded, DecodeError> {
        let raws: Vec<RawMessage> = serde_json::from_slice(frame).map_err(classify)?;
        if raws.is_empty() {
            return Err(DecodeError::Invalid("empty batch".to_string()));
        }
        let mut messages = Vec::with_capacity(raws.len());
        for (index, raw) in raws.into_iter().enumerate() {
            let message = raw
                .into_message()
                .map_err(|e| DecodeError::Invalid(format!("batch element {index}: {e}")))?;
            messages.push(message);
        }
        Ok(Decoded::Batch(messages))
    }

    /// Encodes one message as compact JSON (never containing a raw newline)
    /// and appends it to `out`.
    pub fn encode_into(&self, message: &JsonRpcMessage, out: &mut Vec<u8>) {
        // Serialising a `JsonRpcMessage` into a Vec cannot fail: every key is
        // a string and `Value` has no failing cases.
        if let Err(e) = serde_json::to_writer(&mut *out, message) {
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

/// Syntax and end-of-input errors mean "not JSON"; data errors mean the JSON
/// has the wrong shape.
fn classify(error: serde_json::Error) -> DecodeError {
    match error.classify() {
        serde_json::error::Category::Data => DecodeError::Invalid(error.to_string()),
        _ => DecodeError::NotJson(error.to_string()),
    }
}
