//! JSON-RPC 2.0 messages as MCP uses them.
//!
//! Unknown fields are ignored everywhere: a server that adds a field must
//! never make a message unreadable. [`JsonRpcMessage`] serialises to and
//! from the wire shape directly (`serde`); the [`crate::codec`] adds size
//! limits, batches and error messages that name the problem.

use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;

use crate::error_codes;

/// A request id: MCP allows numbers and strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    /// A numeric id (what this client sends).
    Number(i64),
    /// A string id (some servers use UUIDs).
    String(String),
}

impl std::fmt::Display for RequestId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RequestId::Number(n) => write!(f, "{n}"),
            RequestId::String(s) => write!(f, "{s:?}"),
        }
    }
}

/// A request that expects an answer.
#[derive(Debug, Clone, PartialEq)]
pub struct Request {
    /// Correlates the answer.
    pub id: RequestId,
    /// The method name, e.g. `tools/call`.
    pub method: String,
    /// The parameters, usually an object.
    pub params: Option<Value>,
}

/// A one-way message.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method name, e.g. `notifications/progress`.
    pub method: String,
    /// The parameters, usually an object.
    pub params: Option<Value>,
}

/// The JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    /// The error code (`-32601` method not found, ...).
    pub code: i64,
    /// A short human description.
    pub message: String,
    /// Anything else the peer attached.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

impl ErrorObject {
    /// A `-32601 method not found` error naming the method.
    pub fn method_not_found(method: &str) -> Self {
        ErrorObject {
            code: error_codes::METHOD_NOT_FOUND,
            message: format!("method not found: {method}"),
            data: None,
        }
    }

    /// An error with the given code and message.
    pub fn new(code: i64, message: impl Into<String>) -> Self {
        ErrorObject {
            code,
            message: message.into(),
            data: None,
        }
    }
}

/// An answer to a request: a result or an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// `None` only for errors the peer could not attribute to a request.
    pub id: Option<RequestId>,
    /// The `result` or the `error`.
    pub outcome: Result<Value, ErrorObject>,
}

/// A message as the session's driver takes it from a transport: a
/// successful answer keeps its `result` as the bytes it arrived in, so the
/// waiting caller decodes it straight into the type it asked for (one
/// `serde` pass, no `Value` tree built on the reading task).
#[non_exhaustive]
#[derive(Debug, Clone)]
pub enum Incoming {
    /// Any message, decoded.
    Message(JsonRpcMessage),
    /// A successful answer, its result undecoded (valid JSON, at any depth:
    /// the caller's decode applies [`crate::depth::MAX_DEPTH`]).
    Answer(RawAnswer),
}

/// A successful answer whose result is still raw JSON.
#[derive(Debug, Clone)]
pub struct RawAnswer {
    /// The id of the request it answers.
    pub id: RequestId,
    /// The `result` member, exactly as it was sent.
    pub result: RawJson,
}

/// The text of one valid JSON value, kept as it arrived (a [`RawValue`]
/// that `serde_json` checked).
#[derive(Clone)]
pub struct RawJson {
    text: Box<str>,
}

impl RawJson {
    /// The JSON text.
    pub fn get(&self) -> &str {
        &self.text
    }
}

impl PartialEq for RawJson {
    fn eq(&self, other: &Self) -> bool {
        self.text == other.text
    }
}

impl Eq for RawJson {}

impl From<Box<RawValue>> for RawJson {
    fn from(raw: Box<RawValue>) -> Self {
        RawJson { text: raw.into() }
    }
}

impl std::fmt::Debug for RawJson {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RawJson")
            .field(&format_args!("{}", self.text))
            .finish()
    }
}

impl From<JsonRpcMessage> for Incoming {
    fn from(message: JsonRpcMessage) -> Self {
        Incoming::Message(message)
    }
}

impl Incoming {
    /// The id of the answer this is, if it is one.
    pub fn response_id(&self) -> Option<&RequestId> {
        match self {
            Incoming::Answer(answer) => Some(&answer.id),
            Incoming::Message(JsonRpcMessage::Response(response)) => response.id.as_ref(),
            Incoming::Message(_) => None,
        }
    }
}

/// Any message on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonRpcMessage {
    /// Expects a [`Response`] with the same id.
    Request(Request),
    /// One-way.
    Notification(Notification),
    /// Answers a [`Request`].
    Response(Response),
}

impl JsonRpcMessage {
    /// A request.
    pub fn request(id: RequestId, method: impl Into<String>, params: Option<Value>) -> Self {
        JsonRpcMessage::Request(Request {
            id,
            method: method.into(),
            params,
        })
    }

    /// A notification.
    pub fn notification(method: impl Into<String>, params: Option<Value>) -> Self {
        JsonRpcMessage::Notification(Notification {
            method: method.into(),
            params,
        })
    }

    /// A successful response.
    pub fn result(id: RequestId, result: Value) -> Self {
        JsonRpcMessage::Response(Response {
            id: Some(id),
            outcome: Ok(result),
        })
    }

    /// An error response.
    pub fn error(id: Option<RequestId>, error: ErrorObject) -> Self {
        JsonRpcMessage::Response(Response {
            id,
            outcome: Err(error),
        })
    }

    /// The method of a request or notification.
    pub fn method(&self) -> Option<&str> {
        match self {
            JsonRpcMessage::Request(r) => Some(&r.method),
            JsonRpcMessage::Notification(n) => Some(&n.method),
            JsonRpcMessage::Response(_) => None,
        }
    }
}

/// A request serialised from borrows: the wire shape of
/// [`JsonRpcMessage::Request`], for a caller that sends the same method and
/// parameters under an id of its own without copying them.
/// `P` is anything that serialises as the parameters (a session splices
/// its own `_meta` into them as they are written).
#[derive(Debug, Clone, Copy)]
pub(crate) struct RequestRef<'a, P: ?Sized = Value> {
    pub(crate) id: &'a RequestId,
    pub(crate) method: &'a str,
    pub(crate) params: Option<&'a P>,
}

/// What a [`RequestRef`] written as compact JSON starts with, its id
/// right after (a re-issue swaps the id in the written bytes).
#[cfg_attr(not(feature = "streamable-http"), allow(dead_code))]
pub(crate) const REQUEST_START: &[u8] = br#"{"jsonrpc":"2.0","id":"#;

impl<P: Serialize + ?Sized> Serialize for RequestRef<'_, P> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        map.serialize_entry("id", self.id)?;
        map.serialize_entry("method", self.method)?;
        if let Some(params) = self.params {
            map.serialize_entry("params", params)?;
        }
        map.end()
    }
}

impl Serialize for JsonRpcMessage {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if let JsonRpcMessage::Request(r) = self {
            let request = RequestRef {
                id: &r.id,
                method: &r.method,
                params: r.params.as_ref(),
            };
            return request.serialize(serializer);
        }
        let mut map = serializer.serialize_map(None)?;
        map.serialize_entry("jsonrpc", "2.0")?;
        match self {
            JsonRpcMessage::Request(_) => {}
            JsonRpcMessage::Notification(n) => {
                map.serialize_entry("method", &n.method)?;
                if let Some(params) = &n.params {
                    map.serialize_entry("params", params)?;
                }
            }
            JsonRpcMessage::Response(r) => {
                map.serialize_entry("id", &r.id)?;
                match &r.outcome {
                    Ok(result) => map.serialize_entry("result", result)?,
                    Err(error) => map.serialize_entry("error", error)?,
                }
            }
        }
        map.end()
    }
}

/// The wire shape before validation: every member optional, unknown members
/// ignored. `R` is what a `result` is read as: a `Value`, or raw bytes
/// ([`RawEnvelope`]); `V` what `jsonrpc` is read as: a `Value`, or
/// [`VersionTwo`], which takes nothing but `"2.0"`.
#[derive(Deserialize)]
#[serde(bound(deserialize = "R: Deserialize<'de>, V: Deserialize<'de>"))]
pub(crate) struct RawMessage<R = Value, V = Value> {
    #[serde(default, deserialize_with = "present")]
    jsonrpc: Option<V>,
    #[serde(default, deserialize_with = "present")]
    id: Option<Value>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Value>,
    #[serde(default, deserialize_with = "present")]
    result: Option<R>,
    #[serde(default, deserialize_with = "present")]
    error: Option<Value>,
}

/// [`RawMessage`] with the `result` left as raw bytes: what the session's
/// transports decode, so a result is never built into a tree on the
/// reading task.
// Used by the transports that read a wire; none may be compiled in.
#[cfg_attr(
    not(any(feature = "stdio", feature = "remote", feature = "ws")),
    allow(dead_code)
)]
pub(crate) type RawEnvelope = RawMessage<Box<RawValue>, VersionTwo>;

/// A `jsonrpc` member that is the string `"2.0"`, read without building a
/// string. Any other value fails the read: the envelope is for frames that
/// pass, and a frame that does not is read again by [`RawMessage`], which
/// says what is wrong with it.
#[derive(Debug, Clone, Copy)]
pub(crate) struct VersionTwo;

impl<'de> Deserialize<'de> for VersionTwo {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Two;
        impl serde::de::Visitor<'_> for Two {
            type Value = VersionTwo;

            fn expecting(&self, formatter: &mut std::fmt::Formatter) -> std::fmt::Result {
                formatter.write_str("\"2.0\"")
            }

            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<VersionTwo, E> {
                if v == "2.0" {
                    Ok(VersionTwo)
                } else {
                    Err(E::invalid_value(serde::de::Unexpected::Str(v), &self))
                }
            }
        }
        deserializer.deserialize_str(Two)
    }
}

#[cfg_attr(
    not(any(feature = "stdio", feature = "remote", feature = "ws")),
    allow(dead_code)
)]
impl RawEnvelope {
    /// Validates the JSON-RPC shape exactly as [`RawMessage::into_message`]
    /// does; a successful answer keeps its result raw.
    pub(crate) fn into_incoming(self) -> Result<Incoming, String> {
        if self.method.is_none()
            && self.error.is_none()
            && let Some(result) = self.result
        {
            if self.jsonrpc.is_none() {
                check_version(None)?;
            }
            let id = match self.id {
                Some(id) => parse_id(id)?,
                None => return Err("message has neither a method nor an id".to_string()),
            };
            let Some(id) = id else {
                return Err("successful response has a null id".to_string());
            };
            return Ok(Incoming::Answer(RawAnswer {
                id,
                result: result.into(),
            }));
        }
        // Every other shape: the result's content plays no part in how
        // these are read (or refused), so a marker stands in for it.
        RawMessage {
            jsonrpc: self.jsonrpc.map(|VersionTwo| Value::from("2.0")),
            id: self.id,
            method: self.method,
            params: self.params,
            result: self.result.map(|_| Value::Null),
            error: self.error,
        }
        .into_message()
        .map(Incoming::Message)
    }
}

/// Distinguishes a member that is `null` (`Some(Null)`, or a raw `null`)
/// from one that is absent (`None`).
fn present<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
    deserializer: D,
) -> Result<Option<T>, D::Error> {
    T::deserialize(deserializer).map(Some)
}

/// The `jsonrpc` member must be `"2.0"`.
fn check_version(jsonrpc: Option<Value>) -> Result<(), String> {
    match jsonrpc {
        Some(Value::String(two)) if two == "2.0" => Ok(()),
        Some(other) => Err(format!("jsonrpc must be \"2.0\", not {}", excerpt(&other))),
        None => Err("missing \"jsonrpc\": \"2.0\"".to_string()),
    }
}

fn parse_id(id: Value) -> Result<Option<RequestId>, String> {
    match id {
        Value::Null => Ok(None),
        Value::String(s) => Ok(Some(RequestId::String(s))),
        Value::Number(n) => match n.as_i64() {
            Some(n) => Ok(Some(RequestId::Number(n))),
            None => Err(format!("id {n} is not an integer")),
        },
        other => Err(format!(
            "id must be a string or an integer, not {}",
            json_type(&other)
        )),
    }
}

/// The start of a value as JSON, for an error message: a server's value
/// may be megabytes long.
fn excerpt(value: &Value) -> String {
    const MAX: usize = 60;
    struct Bounded(Vec<u8>);
    impl std::io::Write for Bounded {
        fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
            let room = (MAX + 1).saturating_sub(self.0.len());
            if room == 0 {
                // Stops serde_json once enough is written.
                return Err(std::io::Error::other("long enough"));
            }
            let taken = buf.len().min(room);
            self.0.extend_from_slice(&buf[..taken]);
            Ok(taken)
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut out = Bounded(Vec::with_capacity(MAX + 1));
    let _ = serde_json::to_writer(&mut out, value);
    let mut text = String::from_utf8_lossy(&out.0).into_owned();
    if text.len() > MAX {
        let mut end = MAX;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
        text.push_str("...");
    }
    text
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

impl RawMessage {
    /// Validates the JSON-RPC shape; the error names the problem.
    pub(crate) fn into_message(self) -> Result<JsonRpcMessage, String> {
        let raw = self;
        check_version(raw.jsonrpc)?;
        if let Some(method) = raw.method {
            let Value::String(method) = method else {
                return Err(format!(
                    "method must be a string, not {}",
                    json_type(&method)
                ));
            };
            let params = raw.params.filter(|p| !p.is_null());
            return match raw.id {
                None => Ok(JsonRpcMessage::Notification(Notification {
                    method,
                    params,
                })),
                Some(id) => match parse_id(id)? {
                    Some(id) => Ok(JsonRpcMessage::Request(Request { id, method, params })),
                    None => Err(format!(
                        "request {} has a null id",
                        excerpt(&Value::String(method))
                    )),
                },
            };
        }
        let id = match raw.id {
            Some(id) => parse_id(id)?,
            None => return Err("message has neither a method nor an id".to_string()),
        };
        let outcome = match (raw.result, raw.error) {
            (Some(_), Some(_)) => return Err("response has both result and error".to_string()),
            (Some(result), None) => Ok(result),
            (None, Some(error)) => Err(crate::depth::from_value::<ErrorObject>(error)
                .map_err(|e| format!("invalid error object: {e}"))?),
            (None, None) => return Err("response has neither result nor error".to_string()),
        };
        if id.is_none() && outcome.is_ok() {
            return Err("successful response has a null id".to_string());
        }
        Ok(JsonRpcMessage::Response(Response { id, outcome }))
    }
}

impl<'de> Deserialize<'de> for JsonRpcMessage {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = RawMessage::deserialize(deserializer)?;
        raw.into_message().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::params::ParamsRef;
    use serde_json::json;

    /// Written as one message that reads back as the same message, a
    /// request with [`REQUEST_START`] first (a re-issue swaps the id after
    /// it).
    fn check<T: Serialize>(message: &T) {
        let written = serde_json::to_vec(message).unwrap();
        let read: JsonRpcMessage = serde_json::from_slice(&written).unwrap();
        assert_eq!(
            serde_json::to_value(&read).unwrap(),
            serde_json::to_value(message).unwrap()
        );
        if let JsonRpcMessage::Request(_) = read {
            assert!(
                written.starts_with(REQUEST_START),
                "{}",
                String::from_utf8_lossy(&written)
            );
        }
    }

    #[test]
    fn a_request_is_written_as_one_message_with_its_id_second() {
        let ids = [
            RequestId::Number(0),
            RequestId::Number(-5),
            RequestId::Number(i64::MAX),
            RequestId::String("a\"b\u{1}é".into()),
        ];
        let arguments = json!({"message": "hi\n", "n": [1, 2.5]});
        let params = [
            None,
            Some(json!({"name": "echo", "arguments": arguments})),
            Some(json!("text")),
        ];
        for id in &ids {
            for method in ["tools/call", "we\"ird\u{7f}\n"] {
                for params in &params {
                    let request = RequestRef {
                        id,
                        method,
                        params: params.as_ref(),
                    };
                    check(&request);
                    check(&JsonRpcMessage::Request(Request {
                        id: id.clone(),
                        method: method.to_owned(),
                        params: params.clone(),
                    }));
                }
                let tool_call = ParamsRef::ToolCall {
                    name: "echo \"x\"",
                    arguments: Some(&arguments),
                };
                check(&RequestRef {
                    id,
                    method,
                    params: Some(&tool_call),
                });
            }
        }
        check(&JsonRpcMessage::notification(
            "notifications/x",
            Some(json!({"a": 1})),
        ));
        check(&JsonRpcMessage::result(RequestId::Number(3), json!({})));
        check(&JsonRpcMessage::error(
            None,
            ErrorObject::method_not_found("nope"),
        ));
    }
}
