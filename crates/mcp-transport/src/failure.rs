//! The error answers a transport makes up for a request whose real answer
//! is lost (an HTTP status, a broken stream), and reading them back: at
//! 2026-07-28 they name their [`TransportErrorKind`]
//! ([`TRANSPORT_FAILURE_KEY`]), which [`TransportError::from_error_response`]
//! turns back into that kind.

// Streamable HTTP makes the marked answers up, and the remote kinds the
// plain ones; the session reads them back for every kind.
#![cfg_attr(not(feature = "streamable-http"), allow(dead_code))]

use crate::error::{HttpFailure, TransportError, TransportErrorKind};
use crate::message::{ErrorObject, JsonRpcMessage, RequestId, Response};

/// JSON-RPC error code of answers the transport makes up itself when a request
/// could not be delivered or its answer was lost (HTTP error, broken stream).
pub const TRANSPORT_ERROR_CODE: i64 = -32000;

/// The `data` member that marks an error answer the streamable HTTP
/// transport made up, at 2026-07-28 and later, for a request it could not
/// complete, and names why: `{"kind": "streamBroken"}` or
/// `{"kind": "httpStatus", "status": 400}`.
/// [`TransportError::from_error_response`](crate::TransportError::from_error_response) turns such an answer back into
/// the named [`TransportErrorKind`]. The transport removes the member from
/// every error a server sends, so a server cannot forge one.
pub const TRANSPORT_FAILURE_KEY: &str = "io.github.mcp-transport/failure";

/// An answer standing for a request that failed with `kind` (one of the
/// kinds [`transport_failure`] reads back), saying `message`.
pub(crate) fn failure_answer(
    id: RequestId,
    kind: &TransportErrorKind,
    message: String,
) -> JsonRpcMessage {
    let failure = match kind {
        TransportErrorKind::StreamBroken { .. } => serde_json::json!({"kind": "streamBroken"}),
        TransportErrorKind::Http {
            failure: HttpFailure::Status(status),
            detail,
        } => serde_json::json!({"kind": "httpStatus", "status": status, "detail": detail}),
        _ => return synthetic_error(id, message),
    };
    JsonRpcMessage::Response(Response {
        id: Some(id),
        outcome: Err(ErrorObject {
            code: TRANSPORT_ERROR_CODE,
            message,
            data: Some(serde_json::json!({ TRANSPORT_FAILURE_KEY: failure })),
        }),
    })
}

/// The kind a made-up answer of [`failure_answer`] names, for `method`.
pub(crate) fn transport_failure(method: &str, error: &ErrorObject) -> Option<TransportErrorKind> {
    if error.code != TRANSPORT_ERROR_CODE {
        return None;
    }
    let failure = error.data.as_ref()?.get(TRANSPORT_FAILURE_KEY)?;
    match failure.get("kind")?.as_str()? {
        "streamBroken" => Some(TransportErrorKind::StreamBroken {
            method: method.to_owned(),
        }),
        "httpStatus" => Some(TransportErrorKind::Http {
            failure: HttpFailure::Status(u16::try_from(failure.get("status")?.as_u64()?).ok()?),
            detail: failure
                .get("detail")
                .and_then(serde_json::Value::as_str)
                .unwrap_or_default()
                .to_owned(),
        }),
        _ => None,
    }
}

/// Removes [`TRANSPORT_FAILURE_KEY`] from an error a server sent.
pub(crate) fn strip_failure_marker(message: &mut JsonRpcMessage) {
    if let JsonRpcMessage::Response(Response {
        outcome:
            Err(ErrorObject {
                data: Some(serde_json::Value::Object(data)),
                ..
            }),
        ..
    }) = message
    {
        data.remove(TRANSPORT_FAILURE_KEY);
    }
}

/// An answer the transport makes up for a request whose real answer is lost.
pub(crate) fn synthetic_error(id: RequestId, message: String) -> JsonRpcMessage {
    JsonRpcMessage::Response(Response {
        id: Some(id),
        outcome: Err(ErrorObject {
            code: TRANSPORT_ERROR_CODE,
            message,
            data: None,
        }),
    })
}

impl TransportError {
    /// The error a caller of `method` gets for the JSON-RPC error answer
    /// `error`: [`TransportErrorKind::Rpc`] for a server's error, or the
    /// kind a transport named when the answer is one it made up for a
    /// request it could not complete (see
    /// [`TRANSPORT_FAILURE_KEY`]).
    pub fn from_error_response(
        server: impl Into<String>,
        method: &str,
        error: ErrorObject,
    ) -> Self {
        let kind = transport_failure(method, &error).unwrap_or_else(|| TransportErrorKind::Rpc {
            method: method.to_string(),
            code: error.code,
            message: error.message,
            data: error.data.map(Box::new),
        });
        TransportError::new(server, kind)
    }
}
