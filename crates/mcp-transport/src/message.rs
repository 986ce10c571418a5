//! JSON-RPC 2.0 messages as MCP uses them.
//!
//! Unknown fields are ignored everywhere: a server that adds a field must
//! never make a message unreadable.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A request id: MCP allows numbers and strings.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum RequestId {
    Number(i64),
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
    pub id: RequestId,
    pub method: String,
    pub params: Option<Value>,
}

/// A one-way message.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    pub method: String,
    pub params: Option<Value>,
}

/// The JSON-RPC error object.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ErrorObject {
    pub code: i64,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
}

/// An answer to a request: a result or an error.
#[derive(Debug, Clone, PartialEq)]
pub struct Response {
    /// `None` only for errors the peer could not attribute to a request.
    pub id: Option<RequestId>,
    pub outcome: Result<Value, ErrorObject>,
}

/// Any message on the wire.
#[derive(Debug, Clone, PartialEq)]
pub enum JsonRpcMessage {
    Request(Request),
    Notification(Notification),
    Response(Response),
}
