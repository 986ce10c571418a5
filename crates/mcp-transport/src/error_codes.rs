//! The JSON-RPC error codes this crate sends and reads: the standard
//! JSON-RPC 2.0 codes and the ones MCP adds. They are plain `i64`
//! constants, compared against [`ErrorObject::code`](crate::ErrorObject),
//! and live in one namespace so a host writing `error_codes::INVALID_PARAMS`
//! never wonders which of two lists it came from.
//!
//! The code of the answers a transport makes up itself, when a request
//! could not be delivered or its answer was lost, is
//! [`TRANSPORT_ERROR_CODE`](crate::failure::TRANSPORT_ERROR_CODE).

/// The message was not valid JSON (JSON-RPC).
pub const PARSE_ERROR: i64 = -32700;
/// The message was not a valid request (JSON-RPC).
pub const INVALID_REQUEST: i64 = -32600;
/// The method does not exist or is not available (JSON-RPC).
pub const METHOD_NOT_FOUND: i64 = -32601;
/// Invalid method parameters (JSON-RPC); since 2026-07-28 also a missing
/// resource.
pub const INVALID_PARAMS: i64 = -32602;
/// An error inside the peer while it handled the request (JSON-RPC).
pub const INTERNAL_ERROR: i64 = -32603;
/// A missing resource before 2026-07-28.
pub const LEGACY_RESOURCE_NOT_FOUND: i64 = -32002;
/// HTTP headers and body disagree (2026-07-28).
pub const HEADER_MISMATCH: i64 = -32020;
/// The request needs a client capability it did not declare (2026-07-28).
pub const MISSING_REQUIRED_CLIENT_CAPABILITY: i64 = -32021;
/// The server does not speak the requested revision (2026-07-28);
/// `data.supported` lists what it does.
pub const UNSUPPORTED_PROTOCOL_VERSION: i64 = -32022;

/// Whether `code` is one of the errors only a modern server sends, the
/// mark of a modern server in era detection.
pub fn is_modern_error(code: i64) -> bool {
    matches!(
        code,
        HEADER_MISMATCH | MISSING_REQUIRED_CLIENT_CAPABILITY | UNSUPPORTED_PROTOCOL_VERSION
    )
}
