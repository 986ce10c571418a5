//! The server side's revision rules, decided once for every server this
//! workspace runs (the in-process `ToolRouter` and the gateway):
//! which revision a request speaks, which one `initialize` settles on,
//! and how a result is marked at 2026-07-28.
//!
//! A 2026-07-28 request names its revision in `params._meta`
//! (`io.modelcontextprotocol/protocolVersion`) and needs no handshake; a
//! request without that key belongs to a session opened by `initialize`
//! at an older revision. A modern request at a revision this crate does
//! not know, or with a revision that is not a string, is refused with
//! `UnsupportedProtocolVersion` listing the supported ones.

use serde_json::{Map, Value, json};

use crate::error_codes::{
    HEADER_MISMATCH, INVALID_PARAMS, MISSING_REQUIRED_CLIENT_CAPABILITY,
    UNSUPPORTED_PROTOCOL_VERSION,
};
use crate::message::{ErrorObject, Notification, Request, RequestId};
use crate::param_headers::{ParamHeaders, decode_header_value, name_member};
use crate::protocol::{
    KNOWN_PROTOCOL_VERSIONS, META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, META_SERVER_INFO,
    is_modern,
};

/// The revision a request speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Revision {
    /// No revision in `_meta`: a request of a session that `initialize`
    /// opened (2025-11-25 and earlier).
    Session,
    /// A 2026-07-28 (or later, known) revision named in the request's
    /// `_meta`.
    Modern(&'static str),
}

/// The revision `params` (a request's) speaks, or the error that refuses
/// it: a modern revision this crate does not know, or a `_meta` revision
/// that is not a string.
pub fn request_revision(params: Option<&Value>) -> Result<Revision, ErrorObject> {
    let requested = params
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION));
    let Some(requested) = requested else {
        return Ok(Revision::Session);
    };
    let known = requested
        .as_str()
        .and_then(|version| KNOWN_PROTOCOL_VERSIONS.iter().find(|v| **v == version))
        .filter(|version| is_modern(version));
    match known {
        Some(version) => Ok(Revision::Modern(version)),
        None => Err(unsupported_version(requested)),
    }
}

/// The `UnsupportedProtocolVersion` error for `requested`, listing the
/// revisions this crate serves.
pub fn unsupported_version(requested: &Value) -> ErrorObject {
    ErrorObject {
        code: UNSUPPORTED_PROTOCOL_VERSION,
        message: format!("unsupported protocol version {requested}"),
        data: Some(json!({"supported": KNOWN_PROTOCOL_VERSIONS, "requested": requested})),
    }
}

/// The revision an `initialize` answer settles on: the one the client
/// proposed when it is an older revision this crate knows, else the
/// newest older one (the client then decides whether it can go on).
pub fn initialize_version(params: Option<&Value>) -> &'static str {
    let proposed = params
        .and_then(|params| params.get("protocolVersion"))
        .and_then(Value::as_str);
    let legacy = |version: &&'static str| !is_modern(version);
    proposed
        .and_then(|proposed| {
            KNOWN_PROTOCOL_VERSIONS
                .iter()
                .copied()
                .filter(legacy)
                .find(|known| *known == proposed)
        })
        .or_else(|| KNOWN_PROTOCOL_VERSIONS.iter().copied().find(legacy))
        .unwrap_or_default()
}

/// Methods 2026-07-28 removed (the handshake and the session-scoped
/// utilities): a modern request for one is an unknown method.
pub const REMOVED_IN_MODERN: [&str; 6] = [
    "initialize",
    "notifications/initialized",
    "ping",
    "logging/setLevel",
    "resources/subscribe",
    "resources/unsubscribe",
];

/// Methods that exist only at 2026-07-28: a request for one without a
/// revision in `_meta` is missing it, not a session's.
pub const MODERN_ONLY: [&str; 2] = ["server/discover", "subscriptions/listen"];

/// What is wrong with a 2026-07-28 request (at `version`) as it came over
/// HTTP (SEP-2243), given `header` to read its headers by name (any case):
/// `MCP-Protocol-Version` must agree with the body, `Mcp-Method` must be
/// there and name the method, `Mcp-Name` must be there and carry the
/// name, URI or task id when the body has one, and for a tool call with
/// `tool_headers` (its `x-mcp-header` annotations) every `Mcp-Param-*`
/// header must carry its parameter's value; each disagreement is a header
/// mismatch. A `_meta` without client capabilities is invalid params.
/// `None` when it may be answered.
pub fn check_modern_request<'h>(
    request: &Request,
    version: &str,
    header: impl Fn(&str) -> Option<&'h str>,
    tool_headers: Option<&ParamHeaders>,
) -> Option<ErrorObject> {
    let mismatch = |why: String| Some(ErrorObject::new(HEADER_MISMATCH, why));
    let agrees = |name: &str, body: &str| match header(name).map(decode_header_value) {
        None => Err(format!("the {name} header is missing")),
        Some(Err(why)) => Err(format!("the {name} header {why}")),
        Some(Ok(sent)) if sent != body => {
            Err(format!("the {name} header does not match the request body"))
        }
        Some(Ok(_)) => Ok(()),
    };
    if header("mcp-protocol-version").is_some_and(|sent| sent.trim() != version) {
        return mismatch("the MCP-Protocol-Version header does not match the request body".into());
    }
    if let Err(why) = agrees("Mcp-Method", &request.method) {
        return mismatch(why);
    }
    let params = request.params.as_ref();
    let named = name_member(&request.method)
        .and_then(|member| params.and_then(|params| params.get(member)))
        .and_then(Value::as_str);
    if let Some(named) = named
        && let Err(why) = agrees("Mcp-Name", named)
    {
        return mismatch(why);
    }
    if let Some(tool_headers) = tool_headers
        && let Err(why) = tool_headers.check(params.and_then(|p| p.get("arguments")), &header)
    {
        return mismatch(why);
    }
    let capabilities = params
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(META_CLIENT_CAPABILITIES));
    if !capabilities.is_some_and(Value::is_object) {
        return Some(ErrorObject::new(
            INVALID_PARAMS,
            format!("_meta must carry {META_CLIENT_CAPABILITIES} (an object)"),
        ));
    }
    None
}

/// The error for a request that names no revision where one is needed
/// (a method of 2026-07-28 only, or no session to belong to).
pub fn missing_revision() -> ErrorObject {
    ErrorObject::new(
        INVALID_PARAMS,
        format!("_meta must name the protocol revision ({META_PROTOCOL_VERSION})"),
    )
}

/// Whether `code` refuses a request as sent (bad params, a header
/// mismatch, a missing client capability, an unsupported revision): over
/// HTTP at 2026-07-28 such an answer goes with status 400.
pub fn is_request_refusal(code: i64) -> bool {
    matches!(
        code,
        INVALID_PARAMS
            | HEADER_MISMATCH
            | MISSING_REQUIRED_CLIENT_CAPABILITY
            | UNSUPPORTED_PROTOCOL_VERSION
    )
}

/// The revisions `server/discover` lists as supported.
pub fn supported_versions() -> &'static [&'static str] {
    KNOWN_PROTOCOL_VERSIONS
}

/// `result` as a 2026-07-28 answer gives it: marked complete, unless it
/// is already marked (an `input_required` round passed on).
pub fn complete(mut result: Value) -> Value {
    if let Value::Object(map) = &mut result {
        map.entry("resultType")
            .or_insert_with(|| Value::from("complete"));
    }
    result
}

/// Methods whose 2026-07-28 results carry caching hints (`ttlMs`,
/// `cacheScope`).
pub const CACHEABLE: [&str; 6] = [
    "server/discover",
    "tools/list",
    "prompts/list",
    "resources/list",
    "resources/templates/list",
    "resources/read",
];

/// `result` of `method` as a 2026-07-28 answer gives it: marked complete,
/// and for a cacheable method with caching hints, `ttlMs: 0` and
/// `cacheScope: "private"` (cache nothing, share nothing) where the
/// result has none of its own.
pub fn complete_for(method: &str, result: Value) -> Value {
    let mut result = complete(result);
    if CACHEABLE.contains(&method)
        && let Value::Object(map) = &mut result
    {
        map.entry("ttlMs").or_insert(Value::from(0));
        map.entry("cacheScope").or_insert(Value::from("private"));
    }
    result
}

/// `result` (one a server gave to `method`) without what belongs to the
/// revision and the server that answered rather than to the result:
/// `resultType` (but `input_required` and `task`, interim answers that
/// only a 2026-07-28 client is given), the caching hints of a cacheable
/// method (elsewhere `ttlMs` is the result's own: a task's lifetime) and
/// the answering server's identity in `_meta`. A server that passes a
/// result on (a gateway) answers at its own client's revision, as itself.
pub fn without_revision_members(method: &str, mut result: Value) -> Value {
    if let Value::Object(map) = &mut result {
        // An interim answer stays one: it is the request's answer for now.
        let interim = matches!(
            map.get("resultType").and_then(Value::as_str),
            Some("input_required" | "task")
        );
        if !interim {
            map.remove("resultType");
        }
        if CACHEABLE.contains(&method) {
            map.remove("ttlMs");
            map.remove("cacheScope");
        }
        if let Some(Value::Object(meta)) = map.get_mut("_meta") {
            meta.remove(META_SERVER_INFO);
            if meta.is_empty() {
                map.remove("_meta");
            }
        }
    }
    result
}

/// Whether a request's `MCP-Protocol-Version` header contradicts the
/// revision its `_meta` names (whatever that is): the header-mismatch
/// error, checked before the revision itself.
pub fn header_contradicts_meta(
    params: Option<&Value>,
    header: Option<&str>,
) -> Option<ErrorObject> {
    let named = params
        .and_then(|params| params.get("_meta"))
        .and_then(|meta| meta.get(META_PROTOCOL_VERSION))?;
    let header = header?;
    (named.as_str() != Some(header)).then(|| {
        ErrorObject::new(
            HEADER_MISMATCH,
            "the MCP-Protocol-Version header does not match the request body",
        )
    })
}

/// The request a `notifications/cancelled` names; `None` for any other
/// notification or one without a readable `requestId`.
pub fn cancelled_request(notification: &Notification) -> Option<RequestId> {
    if notification.method != "notifications/cancelled" {
        return None;
    }
    let id = notification.params.as_ref()?.get("requestId")?;
    serde_json::from_value(id.clone()).ok()
}

/// An empty object, the result of `ping` and of requests that only
/// acknowledge.
pub fn empty() -> Value {
    Value::Object(Map::new())
}

/// The logging levels from least to most severe (RFC 5424's, as MCP
/// names them).
pub const LOG_LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// Whether a `notifications/message` at `level` reaches a client that
/// asked for `threshold` and above. A level this revision does not name
/// is shown (it may be severe); a threshold it does not name shows all.
pub fn log_admitted(level: Option<&str>, threshold: &str) -> bool {
    let rank = |name: &str| LOG_LEVELS.iter().position(|known| *known == name);
    match (level.and_then(rank), rank(threshold)) {
        (Some(level), Some(threshold)) => level >= threshold,
        _ => true,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(params: Value, expected: Result<Revision, i64>) {
        let got = request_revision(Some(&params)).map_err(|error| error.code);
        assert_eq!(got, expected, "{params}");
    }

    #[test]
    fn a_request_speaks_the_revision_its_meta_names() {
        let meta = |version: Value| json!({"_meta": {META_PROTOCOL_VERSION: version}});
        check(json!({}), Ok(Revision::Session));
        check(json!({"_meta": {}}), Ok(Revision::Session));
        check(
            meta(json!("2026-07-28")),
            Ok(Revision::Modern("2026-07-28")),
        );
        for refused in [
            json!("2025-11-25"),
            json!("2099-01-01"),
            json!(""),
            json!(20260728),
            json!(null),
        ] {
            check(meta(refused), Err(UNSUPPORTED_PROTOCOL_VERSION));
        }
        assert_eq!(request_revision(None), Ok(Revision::Session));
    }

    #[test]
    fn a_passed_on_result_loses_its_revision_members_only() {
        let given = json!({
            "resources": [], "resultType": "complete", "ttlMs": 5, "cacheScope": "public",
            "_meta": {META_SERVER_INFO: {"name": "up"}, "other": 1},
        });
        assert_eq!(
            without_revision_members("resources/list", given),
            json!({"resources": [], "_meta": {"other": 1}})
        );
        let round =
            json!({"resultType": "input_required", "inputRequests": {}, "requestState": "s"});
        assert_eq!(without_revision_members("tools/call", round.clone()), round);
        assert_eq!(complete(round.clone()), round);
        // a task keeps its kind and its lifetime, in a call's answer and a
        // `tasks/get`'s
        let task =
            json!({"resultType": "task", "taskId": "t", "status": "working", "ttlMs": 60000});
        assert_eq!(without_revision_members("tools/call", task.clone()), task);
        assert_eq!(complete(task.clone()), task);
        let polled =
            json!({"resultType": "complete", "taskId": "t", "status": "working", "ttlMs": 9});
        assert_eq!(
            without_revision_members("tasks/get", polled),
            json!({"taskId": "t", "status": "working", "ttlMs": 9})
        );
        let only_identity = json!({"tools": [], "_meta": {META_SERVER_INFO: {}}});
        assert_eq!(
            without_revision_members("tools/list", only_identity),
            json!({"tools": []})
        );
        assert_eq!(
            without_revision_members("tools/call", json!([1])),
            json!([1])
        );
    }

    #[test]
    fn a_cancellation_names_its_request_or_nothing() {
        let read = |method: &str, params: Option<Value>| {
            cancelled_request(&Notification {
                method: method.into(),
                params,
            })
        };
        let cancelled = "notifications/cancelled";
        assert_eq!(
            read(cancelled, Some(json!({"requestId": 7}))),
            Some(RequestId::Number(7))
        );
        assert_eq!(
            read(cancelled, Some(json!({"requestId": "a"}))),
            Some(RequestId::String("a".into()))
        );
        for params in [
            None,
            Some(json!({})),
            Some(json!([7])),
            Some(json!({"requestId": [1]})),
        ] {
            assert_eq!(read(cancelled, params.clone()), None, "{params:?}");
        }
        assert_eq!(
            read("notifications/progress", Some(json!({"requestId": 7}))),
            None
        );
    }

    #[test]
    fn initialize_settles_on_a_known_older_revision() {
        let proposed =
            |version: Value| initialize_version(Some(&json!({"protocolVersion": version})));
        assert_eq!(proposed(json!("2025-03-26")), "2025-03-26");
        assert_eq!(proposed(json!("2024-11-05")), "2024-11-05");
        let newest_older = KNOWN_PROTOCOL_VERSIONS
            .iter()
            .copied()
            .find(|v| !is_modern(v))
            .unwrap();
        assert_eq!(proposed(json!("2026-07-28")), newest_older);
        assert_eq!(proposed(json!("1999-01-01")), newest_older);
        assert_eq!(proposed(json!(7)), newest_older);
        assert_eq!(initialize_version(None), newest_older);
    }

    #[test]
    fn a_log_message_reaches_a_client_at_or_above_its_level() {
        for (level, threshold, shown) in [
            (Some("error"), "warning", true),
            (Some("warning"), "warning", true),
            (Some("info"), "warning", false),
            (Some("debug"), "info", false),
            (Some("emergency"), "debug", true),
            // unnamed: shown rather than lost
            (Some("verbose"), "error", true),
            (None, "error", true),
            (Some("debug"), "loud", true),
        ] {
            assert_eq!(
                log_admitted(level, threshold),
                shown,
                "{level:?} at {threshold}"
            );
        }
    }

    /// The header check of one 2026-07-28 request: `None` when it passes,
    /// else the start of the reason.
    fn check_headers(
        method: &str,
        params: Value,
        headers: &[(&str, &str)],
        expected: Option<&str>,
    ) {
        let request = Request {
            id: RequestId::Number(1),
            method: method.to_owned(),
            params: Some(params),
        };
        let schema = json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "count": {"type": "integer", "x-mcp-header": "Count"},
        }});
        let tool = ParamHeaders::from_input_schema(&schema).unwrap().unwrap();
        let header = |name: &str| {
            headers
                .iter()
                .find(|(sent, _)| sent.eq_ignore_ascii_case(name))
                .map(|(_, value)| *value)
        };
        let tool = (method == "tools/call").then_some(&tool);
        let got = check_modern_request(&request, "2026-07-28", header, tool);
        match (got, expected) {
            (None, None) => {}
            (Some(error), Some(why)) => {
                assert_eq!(error.code, HEADER_MISMATCH, "{method} {headers:?}");
                assert!(error.message.starts_with(why), "{}", error.message);
            }
            (got, expected) => panic!("{method} {headers:?}: {got:?}, expected {expected:?}"),
        }
    }

    #[test]
    fn every_header_must_carry_what_the_body_says() {
        let meta = json!({META_CLIENT_CAPABILITIES: {}});
        let list = json!({"_meta": meta});
        let call = |arguments: Value| json!({"name": "t", "arguments": arguments, "_meta": meta});
        let both = [("Mcp-Method", "tools/call"), ("Mcp-Name", "t")];
        let with = |extra: &[(&'static str, &'static str)]| {
            let mut headers = both.to_vec();
            headers.extend_from_slice(extra);
            headers
        };
        // the method header: there, exact, any name case, spaces around
        check_headers(
            "tools/list",
            list.clone(),
            &[("mcp-method", "tools/list")],
            None,
        );
        check_headers(
            "tools/list",
            list.clone(),
            &[("MCP-METHOD", " tools/list ")],
            None,
        );
        check_headers(
            "tools/list",
            list.clone(),
            &[],
            Some("the Mcp-Method header is missing"),
        );
        check_headers(
            "tools/list",
            list.clone(),
            &[("Mcp-Method", "TOOLS/LIST")],
            Some("the Mcp-Method header does not match"),
        );
        check_headers(
            "tools/list",
            list.clone(),
            &[("Mcp-Method", "prompts/list")],
            Some("the Mcp-Method header does not match"),
        );
        check_headers(
            "tools/list",
            list.clone(),
            &[
                ("Mcp-Method", "tools/list"),
                ("MCP-Protocol-Version", "2025-11-25"),
            ],
            Some("the MCP-Protocol-Version header"),
        );
        // the name header, when the body names something
        check_headers("tools/call", call(json!({})), &both, None);
        check_headers(
            "tools/call",
            call(json!({})),
            &[("Mcp-Method", "tools/call")],
            Some("the Mcp-Name header is missing"),
        );
        check_headers(
            "tools/call",
            call(json!({})),
            &[("Mcp-Method", "tools/call"), ("Mcp-Name", "u")],
            Some("the Mcp-Name header does not match"),
        );
        check_headers(
            "tools/call",
            call(json!({})),
            &[
                ("Mcp-Method", "tools/call"),
                ("Mcp-Name", "=?base64?dA==?="),
            ],
            None,
        );
        check_headers(
            "resources/read",
            json!({"uri": "file:///é", "_meta": meta}),
            &[
                ("Mcp-Method", "resources/read"),
                ("Mcp-Name", "=?base64?ZmlsZTovLy/DqQ==?="),
            ],
            None,
        );
        // the tool's own headers: present, decoded, equal
        check_headers(
            "tools/call",
            call(json!({"region": "eu"})),
            &with(&[("Mcp-Param-Region", "eu")]),
            None,
        );
        check_headers(
            "tools/call",
            call(json!({"region": "Hello"})),
            &with(&[("mcp-param-region", "=?base64?SGVsbG8=?=")]),
            None,
        );
        check_headers(
            "tools/call",
            call(json!({"count": 42})),
            &with(&[("Mcp-Param-Count", "42")]),
            None,
        );
        check_headers(
            "tools/call",
            call(json!({"region": "SGVsbG8="})),
            &with(&[("Mcp-Param-Region", "SGVsbG8=")]),
            None,
        );
        check_headers(
            "tools/call",
            call(json!({"region": "=?base64?SGVsbG8="})),
            &with(&[("Mcp-Param-Region", "=?base64?SGVsbG8=")]),
            None,
        );
        check_headers(
            "tools/call",
            call(json!({"region": "eu"})),
            &both,
            Some("the Mcp-Param-Region header is missing"),
        );
        check_headers(
            "tools/call",
            call(json!({"region": "eu"})),
            &with(&[("Mcp-Param-Region", "us")]),
            Some("the Mcp-Param-Region header does not match"),
        );
        check_headers(
            "tools/call",
            call(json!({"region": "Hello"})),
            &with(&[("Mcp-Param-Region", "=?base64?SGVsbG8?=")]),
            Some("the Mcp-Param-Region header is not valid Base64"),
        );
        check_headers(
            "tools/call",
            call(json!({"region": "Hello"})),
            &with(&[("Mcp-Param-Region", "=?base64?SGVs!!!bG8=?=")]),
            Some("the Mcp-Param-Region header is not valid Base64"),
        );
        check_headers(
            "tools/call",
            call(json!({"region": "x"})),
            &with(&[("Mcp-Param-Region", "=?base64?/w==?=")]),
            Some("the Mcp-Param-Region header does not decode"),
        );
        check_headers(
            "tools/call",
            call(json!({})),
            &with(&[("Mcp-Param-Region", "eu")]),
            Some("the Mcp-Param-Region header names a value"),
        );
        check_headers("tools/call", call(json!({"region": null})), &both, None);
    }
}
