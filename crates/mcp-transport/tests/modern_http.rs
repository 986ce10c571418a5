//! Streamable HTTP at MCP 2026-07-28, straight through the transport:
//! the request metadata headers (`MCP-Protocol-Version`, `Mcp-Method`,
//! `Mcp-Name`, `Mcp-Param-*`) and their value encoding, the `x-mcp-header`
//! rejection rules, refusals delivered as the request's JSON-RPC error, and
//! a broken response stream (re-issued once under a new id when the request
//! is safe to repeat, else failed as `StreamBroken`). The server is a
//! scripted HTTP/1.1 responder on 127.0.0.1 that records each request, as
//! in `http_net.rs`; requests are modern because their `_meta` says so.

#![allow(clippy::unwrap_used)]
// 3.14159 is the suite's and the specification's example value, not pi.
#![allow(clippy::approx_constant)]

use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use mcp_transport::HttpOptions;
use mcp_transport::kinds::StreamableHttpTransport;
use mcp_transport::param_headers::{
    ParamHeaders, ToolHeaderTable, encode_header_value, header_value,
};
use mcp_transport::wire::TRANSPORT_ERROR_CODE;
use mcp_transport::{
    HttpFailure, JsonRpcMessage, Notification, Request, RequestId, Response, Transport,
    TransportError, TransportErrorKind,
};
use serde_json::{Value, json};

const VERSION: &str = "2026-07-28";

mod support;
use support::loopback::{Answer, Script, Seen, server};
use support::queued::Queued;

fn json_answer(status: u16, body: Value) -> Answer {
    Answer {
        status,
        // Servers of this revision may still send a session id; it must be
        // ignored.
        headers: vec![
            ("content-type", "application/json".into()),
            ("mcp-session-id", "s-1".into()),
        ],
        parts: vec![body.to_string()],
        pause: Duration::ZERO,
    }
}

fn sse_answer(events: &[Value], pause: Duration) -> Answer {
    Answer {
        status: 200,
        headers: vec![("content-type", "text/event-stream".into())],
        parts: events
            .iter()
            .map(|e| format!("id: e-1\ndata: {e}\n\n"))
            .collect(),
        pause,
    }
}

fn result_for(seen: &Seen) -> Value {
    json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {"resultType": "complete"}})
}

/// A request of this revision: its `_meta` names the version.
fn modern(id: i64, method: &str, params: Value) -> JsonRpcMessage {
    let mut params = params;
    params["_meta"] = json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientInfo": {"name": "t", "version": "1"},
        "io.modelcontextprotocol/clientCapabilities": {},
    });
    JsonRpcMessage::Request(Request {
        id: RequestId::Number(id),
        method: method.into(),
        params: Some(params),
    })
}

async fn connect(url: &str) -> Queued<StreamableHttpTransport> {
    Queued::new(
        StreamableHttpTransport::connect(HttpOptions::new("files", url))
            .await
            .unwrap(),
    )
}

async fn next_message(transport: &mut Queued<StreamableHttpTransport>) -> JsonRpcMessage {
    tokio::time::timeout(Duration::from_secs(10), transport.receive())
        .await
        .unwrap()
        .unwrap()
        .unwrap()
}

async fn next_response(transport: &mut Queued<StreamableHttpTransport>) -> Response {
    loop {
        if let JsonRpcMessage::Response(r) = next_message(transport).await {
            return r;
        }
    }
}

/// The error the session makes of an error answer to `method`.
fn session_error(method: &str, response: Response) -> TransportErrorKind {
    TransportError::from_error_response("files", method, response.outcome.unwrap_err()).into_kind()
}

/// Sends one modern request to a server that answers it with `result`,
/// and returns what the server saw.
/// The session's table holds the suite's `test_custom_headers` tool.
async fn exchange(method: &str, params: Value) -> Seen {
    let (url, seen) = server(Arc::new(|s: &Seen, _| json_answer(200, result_for(s)))).await;
    let mut transport = connect(&url).await;
    let headers = ParamHeaders::from_input_schema(&custom_schema())
        .unwrap()
        .unwrap();
    let table: ToolHeaderTable = transport.info().tool_headers.unwrap();
    table.replace(HashMap::from([("test_custom_headers".to_owned(), headers)]));
    transport.send(modern(1, method, params)).await.unwrap();
    let answer = next_response(&mut transport).await;
    assert_eq!(answer.id, Some(RequestId::Number(1)));
    assert!(answer.outcome.is_ok(), "{answer:?}");
    transport.close().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "one POST, no GET or DELETE: {seen:?}");
    seen.into_iter().next().unwrap()
}

/// The `test_custom_headers` tool of the suite's `http-custom-headers`.
fn custom_schema() -> Value {
    let mut properties = serde_json::Map::new();
    for (name, kind, header) in [
        ("region", "string", Some("Region")),
        ("priority", "integer", Some("Priority")),
        ("verbose", "boolean", Some("Verbose")),
        ("debug", "boolean", Some("Debug")),
        ("empty_val", "string", Some("EmptyVal")),
        ("method_val", "string", Some("Method")),
        ("float_val", "number", None),
        ("non_ascii_val", "string", Some("NonAscii")),
        ("whitespace_val", "string", Some("Whitespace")),
        ("leading_space_val", "string", Some("LeadingSpace")),
        ("trailing_space_val", "string", Some("TrailingSpace")),
        ("internal_space_val", "string", Some("InternalSpace")),
        ("control_char_val", "string", Some("ControlChar")),
        ("crlf_val", "string", Some("CrLf")),
        ("tab_val", "string", Some("Tab")),
        ("query", "string", None),
    ] {
        let mut property = json!({"type": kind});
        if let Some(header) = header {
            property["x-mcp-header"] = json!(header);
        }
        properties.insert(name.to_owned(), property);
    }
    json!({"type": "object", "properties": properties, "required": ["region", "priority", "query"]})
}

/// What one modern request must carry: the standard headers (`name` is the
/// expected `Mcp-Name`, `None` when it must be absent) and exactly the
/// `Mcp-Param-*` headers in `params`.
async fn check(method: &str, call: Value, name: Option<&str>, params: &[(&str, &str)]) {
    let seen = exchange(method, call.clone()).await;
    let context = format!("{method} {call}");
    assert_eq!(seen.method, "POST", "{context}");
    assert_eq!(
        seen.header("mcp-protocol-version"),
        Some(VERSION),
        "{context}"
    );
    assert_eq!(seen.header("mcp-method"), Some(method), "{context}");
    assert_eq!(seen.header("mcp-name"), name, "{context}");
    assert_eq!(
        seen.header("accept"),
        Some("application/json, text/event-stream"),
        "{context}"
    );
    for absent in ["mcp-session-id", "last-event-id"] {
        assert_eq!(seen.header(absent), None, "{context}");
    }
    let expected: BTreeMap<String, String> = params
        .iter()
        .map(|(k, v)| {
            (
                format!("mcp-param-{}", k.to_ascii_lowercase()),
                (*v).to_owned(),
            )
        })
        .collect();
    assert_eq!(seen.param_headers(), expected, "{context}");
}

#[tokio::test]
async fn standard_headers_mirror_the_method_and_the_name() {
    check("server/discover", json!({}), None, &[]).await;
    check("tools/list", json!({"cursor": "c"}), None, &[]).await;
    check("resources/list", json!({}), None, &[]).await;
    check("prompts/list", json!({}), None, &[]).await;
    let call = |name: &str| json!({"name": name, "arguments": {}});
    check(
        "tools/call",
        call("test_headers"),
        Some("test_headers"),
        &[],
    )
    .await;
    check(
        "tools/call",
        call("my-hyphenated-tool"),
        Some("my-hyphenated-tool"),
        &[],
    )
    .await;
    check(
        "tools/call",
        call("my_tool_name"),
        Some("my_tool_name"),
        &[],
    )
    .await;
    check("prompts/get", call("test_prompt"), Some("test_prompt"), &[]).await;
    for uri in [
        "file:///path/to/file%20name.txt",
        "https://example.com/resource?id=123",
    ] {
        check("resources/read", json!({"uri": uri}), Some(uri), &[]).await;
    }
    // A name outside the safe set travels in the Base64 sentinel.
    check("tools/call", call("天気"), Some("=?base64?5aSp5rCX?="), &[]).await;
    check(
        "prompts/get",
        call(" padded"),
        Some("=?base64?IHBhZGRlZA==?="),
        &[],
    )
    .await;
}

#[tokio::test]
async fn annotated_parameters_become_mcp_param_headers() {
    // The call and the expectations of the suite's `http-custom-headers`.
    let arguments = json!({
        "region": "us-west1", "priority": 42, "verbose": false, "debug": true,
        "empty_val": "", "method_val": "test-method", "float_val": 3.14159,
        "non_ascii_val": "Hello, 世界", "whitespace_val": " padded ",
        "leading_space_val": " us-west1", "trailing_space_val": "us-west1 ",
        "internal_space_val": "us west 1", "control_char_val": "line1\nline2",
        "crlf_val": "line1\r\nline2", "tab_val": "\tindented",
        "query": "SELECT * FROM users",
    });
    let call = json!({"name": "test_custom_headers", "arguments": arguments});
    check(
        "tools/call",
        call,
        Some("test_custom_headers"),
        &[
            ("Region", "us-west1"),
            ("Priority", "42"),
            ("Verbose", "false"),
            ("Debug", "true"),
            ("EmptyVal", ""),
            ("Method", "test-method"),
            ("NonAscii", "=?base64?SGVsbG8sIOS4lueVjA==?="),
            ("Whitespace", "=?base64?IHBhZGRlZCA=?="),
            ("LeadingSpace", "=?base64?IHVzLXdlc3Qx?="),
            ("TrailingSpace", "=?base64?dXMtd2VzdDEg?="),
            ("InternalSpace", "us west 1"),
            ("ControlChar", "=?base64?bGluZTEKbGluZTI=?="),
            ("CrLf", "=?base64?bGluZTENCmxpbmUy?="),
            ("Tab", "=?base64?CWluZGVudGVk?="),
        ],
    )
    .await;
    // Null or missing values: no header.
    let call = json!({"name": "test_custom_headers", "arguments": {
        "region": "us-east1", "priority": 1, "verbose": null, "query": "SELECT 1"}});
    check(
        "tools/call",
        call,
        Some("test_custom_headers"),
        &[("Region", "us-east1"), ("Priority", "1")],
    )
    .await;
    // A tool the table does not know carries no parameter headers.
    let call = json!({"name": "unknown", "arguments": {"region": "us-west1"}});
    check("tools/call", call, Some("unknown"), &[]).await;
}

#[test]
fn values_are_encoded_as_the_specification_tables_say() {
    for (value, header) in [
        (json!("us-west1"), Some("us-west1")),
        (json!(" us-west1"), Some("=?base64?IHVzLXdlc3Qx?=")),
        (json!("us-west1 "), Some("=?base64?dXMtd2VzdDEg?=")),
        (json!(" us-west1 "), Some("=?base64?IHVzLXdlc3QxIA==?=")),
        (json!("us west 1"), Some("us west 1")),
        (json!(true), Some("true")),
        (json!(false), Some("false")),
        (json!(42), Some("42")),
        (json!(-7), Some("-7")),
        (json!(42.0), Some("42")),
        (json!(3.14159), Some("3.14159")),
        (json!("日本語"), Some("=?base64?5pel5pys6Kqe?=")),
        (json!("line1\nline2"), Some("=?base64?bGluZTEKbGluZTI=?=")),
        (json!("line1\r\nline2"), Some("=?base64?bGluZTENCmxpbmUy?=")),
        (json!("\tindented"), Some("=?base64?CWluZGVudGVk?=")),
        (json!(""), Some("")),
        (
            json!("Hello, 世界"),
            Some("=?base64?SGVsbG8sIOS4lueVjA==?="),
        ),
        (json!(" padded "), Some("=?base64?IHBhZGRlZCA=?=")),
        // A literal that looks like the sentinel is encoded too.
        (
            json!("=?base64?literal?="),
            Some("=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
        ),
        (json!("=?base64?SGVsbG8="), Some("=?base64?SGVsbG8=")),
        (json!("a\u{7f}b"), Some("=?base64?YX9i?=")),
        (json!(null), None),
        (json!([1]), None),
        (json!({"a": 1}), None),
    ] {
        assert_eq!(header_value(&value).as_deref(), header, "{value}");
    }
    assert_eq!(encode_header_value("tools/call"), "tools/call");
}

/// `Ok(names)`: the schema is valid with these header names (none: `Ok(None)`);
/// `Err(part)`: it is rejected with a reason containing `part`.
fn check_schema(schema: Value, expect: Result<&[&str], &str>) {
    let got = ParamHeaders::from_input_schema(&schema);
    match (got, expect) {
        (Ok(None), Ok(names)) => assert!(names.is_empty(), "{schema}: no annotations found"),
        (Ok(Some(headers)), Ok(names)) => {
            // Headers follow the schema's property order, which `json!`
            // keeps only with serde_json's `preserve_order`.
            let mut got: Vec<_> = headers.names().collect();
            let mut names = names.to_vec();
            got.sort_unstable();
            names.sort_unstable();
            assert_eq!(got, names, "{schema}")
        }
        (Err(reason), Err(part)) => assert!(reason.contains(part), "{schema}: {reason}"),
        (got, expect) => panic!("{schema}: got {got:?}, expected {expect:?}"),
    }
}

fn property(p: Value) -> Value {
    json!({"type": "object", "properties": {"value": p}})
}

#[test]
fn invalid_annotations_reject_the_tool_with_a_reason() {
    // The tools of the suite's `http-invalid-tool-headers`, and more.
    let charset = "is not an HTTP header token";
    let primitive = "needs a string, integer or boolean parameter";
    let unreachable = "is not reachable from the schema root";
    for (schema, expect) in [
        (
            property(json!({"type": "string", "x-mcp-header": ""})),
            Err("is empty"),
        ),
        (
            property(json!({"type": "object", "x-mcp-header": "Data"})),
            Err("has type object"),
        ),
        (
            property(
                json!({"type": "array", "items": {"type": "string"}, "x-mcp-header": "Items"}),
            ),
            Err("has type array"),
        ),
        (
            property(json!({"type": "null", "x-mcp-header": "Nil"})),
            Err("has type null"),
        ),
        (
            property(json!({"type": "number", "x-mcp-header": "Score"})),
            Err("has type number"),
        ),
        (
            json!({"properties": {
                "field1": {"type": "string", "x-mcp-header": "Region"},
                "field2": {"type": "string", "x-mcp-header": "Region"}}}),
            Err("used by more than one parameter"),
        ),
        (
            json!({"properties": {
                "field1": {"type": "string", "x-mcp-header": "MyField"},
                "field2": {"type": "string", "x-mcp-header": "myfield"}}}),
            Err("used by more than one parameter"),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": "My Region"})),
            Err(charset),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": "Region:Primary"})),
            Err(charset),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": "Région"})),
            Err(charset),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": "Region\t1"})),
            Err(charset),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": "Region\r\n"})),
            Err(charset),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": 7})),
            Err("must be a string, not number"),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": null})),
            Err("must be a string, not null"),
        ),
        (
            property(json!({"type": "string", "x-mcp-header": {}})),
            Err("must be a string, not object"),
        ),
        (
            property(json!({"x-mcp-header": "Value"})),
            Err("declares no type"),
        ),
        (
            property(json!({"$ref": "#/$defs/r", "x-mcp-header": "Value"})),
            Err("declares no type"),
        ),
        (
            json!({"$defs": {"r": {"type": "object"}},
                   "properties": {"r": {"$ref": "#/$defs/r", "x-mcp-header": "R"}}}),
            Err("has type object"),
        ),
        (
            json!({"$defs": {"a": {"$ref": "#/$defs/a"}},
                   "properties": {"r": {"$ref": "#/$defs/a", "x-mcp-header": "R"}}}),
            Err("declares no type"),
        ),
        (
            json!({"properties": {"r": {"$ref": "https://example.com/s.json", "x-mcp-header": "R"}}}),
            Err("declares no type"),
        ),
        (
            property(json!({"type": ["string", "number"], "x-mcp-header": "V"})),
            Err(primitive),
        ),
        (
            json!({"type": "object", "x-mcp-header": "Root"}),
            Err("on the schema root"),
        ),
        // Reachable through `properties` alone, or not at all.
        (
            property(json!({"type": "array", "items": {"type": "string", "x-mcp-header": "I"}})),
            Err(unreachable),
        ),
        (
            property(json!({"anyOf": [{"type": "string", "x-mcp-header": "A"}]})),
            Err(unreachable),
        ),
        (
            json!({"allOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
            Err(unreachable),
        ),
        (
            json!({"$defs": {"r": {"type": "string", "x-mcp-header": "R"}},
                   "properties": {"r": {"$ref": "#/$defs/r"}}}),
            Err(unreachable),
        ),
        (
            json!({"if": {"properties": {"a": {"const": 1}}},
                   "then": {"properties": {"b": {"type": "string", "x-mcp-header": "B"}}}}),
            Err(unreachable),
        ),
        (
            property(json!({"not": {"type": "string", "x-mcp-header": "N"}})),
            Err(unreachable),
        ),
        (
            json!({"additionalProperties": {"type": "string", "x-mcp-header": "A"}}),
            Err(unreachable),
        ),
        (
            json!({"patternProperties": {"^a": {"type": "string", "x-mcp-header": "A"}}}),
            Err(unreachable),
        ),
        (
            property(
                json!({"type": "array", "prefixItems": [{"type": "string", "x-mcp-header": "P"}]}),
            ),
            Err(unreachable),
        ),
    ] {
        check_schema(schema, expect);
    }
}

#[test]
fn valid_annotations_name_their_headers() {
    for (schema, names) in [
        (
            json!({"type": "object", "properties": {"a": {"type": "string"}}}),
            &[][..],
        ),
        (json!({}), &[]),
        (json!(true), &[]),
        (
            property(json!({"type": "string", "x-mcp-header": "Region"})),
            &["Mcp-Param-Region"],
        ),
        (
            property(json!({"type": "integer", "x-mcp-header": "N"})),
            &["Mcp-Param-N"],
        ),
        (
            property(json!({"type": "boolean", "x-mcp-header": "B"})),
            &["Mcp-Param-B"],
        ),
        // Producing Mcp-Param-Method, not Mcp-Method.
        (
            property(json!({"type": "string", "x-mcp-header": "Method"})),
            &["Mcp-Param-Method"],
        ),
        (
            property(json!({"type": "string", "x-mcp-header": "a!#$%&'*+-.^_`|~9"})),
            &["Mcp-Param-a!#$%&'*+-.^_`|~9"],
        ),
        (
            property(json!({"type": ["string", "null"], "x-mcp-header": "R"})),
            &["Mcp-Param-R"],
        ),
        (
            property(json!({"anyOf": [{"type": "string"}, {"type": "null"}], "x-mcp-header": "R"})),
            &["Mcp-Param-R"],
        ),
        (
            property(json!({"enum": ["eu", "us"], "x-mcp-header": "R"})),
            &["Mcp-Param-R"],
        ),
        (
            property(json!({"const": 3, "x-mcp-header": "R"})),
            &["Mcp-Param-R"],
        ),
        // The type of a same-document `$ref` (an enum in `$defs`).
        (
            json!({"$defs": {"Region": {"enum": ["eu", "us"], "type": "string"}},
                   "properties": {"r": {"$ref": "#/$defs/Region", "x-mcp-header": "R"}}}),
            &["Mcp-Param-R"],
        ),
        (
            json!({"properties": {"outer": {"type": "object", "properties": {
                "inner": {"type": "string", "x-mcp-header": "Inner"}}}}}),
            &["Mcp-Param-Inner"],
        ),
        (
            custom_schema(),
            &[
                "Mcp-Param-Region",
                "Mcp-Param-Priority",
                "Mcp-Param-Verbose",
                "Mcp-Param-Debug",
                "Mcp-Param-EmptyVal",
                "Mcp-Param-Method",
                "Mcp-Param-NonAscii",
                "Mcp-Param-Whitespace",
                "Mcp-Param-LeadingSpace",
                "Mcp-Param-TrailingSpace",
                "Mcp-Param-InternalSpace",
                "Mcp-Param-ControlChar",
                "Mcp-Param-CrLf",
                "Mcp-Param-Tab",
            ],
        ),
    ] {
        check_schema(schema, Ok(names));
    }
}

/// Sends `tools/list` to a server that refuses it with `status` and
/// `body`, and returns the answer the caller gets.
async fn refused(status: u16, body: Option<Value>) -> Response {
    let script: Script = Arc::new(move |_: &Seen, _| match &body {
        Some(body) => json_answer(status, body.clone()),
        None => Answer {
            status,
            headers: vec![],
            parts: vec![],
            pause: Duration::ZERO,
        },
    });
    let (url, _seen) = server(script).await;
    let mut transport = connect(&url).await;
    transport
        .send(modern(5, "tools/list", json!({})))
        .await
        .unwrap();
    let answer = next_response(&mut transport).await;
    assert_eq!(answer.id, Some(RequestId::Number(5)));
    answer
}

#[tokio::test]
async fn a_refusal_with_a_json_rpc_error_is_the_requests_answer() {
    let supported = json!({"supported": ["2025-11-25"], "requested": VERSION});
    for (status, id, code, data) in [
        (400, json!(5), -32022, Some(supported)),
        (400, json!(null), -32020, None),
        (
            400,
            json!(5),
            -32021,
            Some(json!({"requiredCapabilities": {"sampling": {}}})),
        ),
        (404, json!(5), -32601, None),
        (405, json!(null), -32601, None),
        (500, json!(5), -32603, None),
    ] {
        let mut error = json!({"code": code, "message": "refused"});
        if let Some(data) = &data {
            error["data"] = data.clone();
        }
        let body = json!({"jsonrpc": "2.0", "id": id, "error": error});
        let answer = refused(status, Some(body)).await;
        let kind = session_error("tools/list", answer);
        assert_eq!(
            kind,
            TransportErrorKind::Rpc {
                method: "tools/list".into(),
                code,
                message: "refused".into(),
                data: data.map(Box::new),
            },
            "HTTP {status}"
        );
    }
}

#[tokio::test]
async fn a_refusal_without_one_fails_with_its_status() {
    let rpc = json!({"jsonrpc": "2.0", "id": 5, "error": {"code": -32001, "message": "auth"}});
    for (status, body, detail) in [
        (400, None, ""),
        (
            404,
            Some(json!({"error": "no such endpoint"})),
            r#"{"error":"no such endpoint"}"#,
        ),
        (405, None, ""),
        // 401 and 403 keep their HTTP meaning even with a JSON-RPC body.
        (401, Some(rpc.clone()), ""),
        (403, Some(rpc), ""),
    ] {
        let answer = refused(status, body).await;
        let error = answer.outcome.clone().unwrap_err();
        assert_eq!(error.code, TRANSPORT_ERROR_CODE);
        let reason = match status {
            400 => "Bad Request",
            401 => "Unauthorized",
            403 => "Forbidden",
            404 => "Not Found",
            _ => "Method Not Allowed",
        };
        assert!(
            error
                .message
                .starts_with(&format!("files: HTTP {status} {reason}")),
            "{}",
            error.message
        );
        let kind = session_error("tools/list", answer);
        let TransportErrorKind::Http {
            failure,
            detail: got,
        } = kind
        else {
            panic!("HTTP {status}: {kind:?}");
        };
        assert_eq!(failure, HttpFailure::Status(status));
        if !detail.is_empty() {
            assert_eq!(got, detail);
        }
        assert!(
            !TransportError::new(
                "files",
                TransportErrorKind::Http {
                    failure,
                    detail: got
                }
            )
            .is_fatal()
        );
    }
}

/// A redirect to `/next`, with nothing else.
fn redirect(status: u16) -> Answer {
    Answer {
        status,
        headers: vec![("location", "/next".into())],
        parts: Vec::new(),
        pause: Duration::ZERO,
    }
}

/// Sends `tools/list` requests 1..=`count` one after the other; their
/// answers, and the paths the server saw.
async fn one_by_one(script: Script, count: i64) -> (Vec<Response>, Vec<String>) {
    let (url, seen) = server(script).await;
    let mut transport = connect(&url).await;
    let mut answers = Vec::new();
    for id in 1..=count {
        transport
            .send(modern(id, "tools/list", json!({})))
            .await
            .unwrap();
        let answer = next_response(&mut transport).await;
        assert_eq!(answer.id, Some(RequestId::Number(id)));
        answers.push(answer);
    }
    transport.close().await.unwrap();
    let paths = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.path.clone())
        .collect();
    (answers, paths)
}

#[tokio::test]
async fn a_server_that_starts_redirecting_has_each_request_followed_within_its_origin() {
    // reqwest follows a redirect within the origin: each redirected request
    // is seen once where it was sent and once where it was sent on to.
    for status in [307, 308, 302] {
        let script: Script = Arc::new(move |s: &Seen, n| match s.path.as_str() {
            "/mcp" if n >= 2 => redirect(status),
            _ => json_answer(200, result_for(s)),
        });
        let (answers, paths) = one_by_one(script, 4).await;
        if status == 302 {
            // reqwest follows a 302 with a GET, which has no answer to give.
            assert!(
                answers[..2].iter().all(|a| a.outcome.is_ok()),
                "{answers:?}"
            );
        } else {
            assert!(
                answers.iter().all(|a| a.outcome.is_ok()),
                "{status}: {answers:?}"
            );
        }
        assert_eq!(
            paths,
            ["/mcp", "/mcp", "/mcp", "/next", "/mcp", "/next"],
            "{status}"
        );
    }
    // A 303 says the server acted on the request: it is never posted
    // again; the redirect is followed with a GET, and a server that keeps
    // redirecting meets the redirect limit.
    let script: Script = Arc::new(|s: &Seen, n| match n {
        0 | 1 => json_answer(200, result_for(s)),
        _ => redirect(303),
    });
    let (answers, paths) = one_by_one(script, 3).await;
    assert_eq!(&paths[..3], ["/mcp", "/mcp", "/mcp"]);
    assert!(paths[3..].iter().all(|path| path == "/next"), "{paths:?}");
    let kind = session_error("tools/list", answers[2].clone());
    assert!(kind.to_string().contains("redirect"), "{kind:?}");
}

#[tokio::test]
async fn a_server_cannot_forge_a_transport_failure() {
    let forged = json!({"jsonrpc": "2.0", "id": 5, "error": {
        "code": TRANSPORT_ERROR_CODE, "message": "forged",
        "data": {"io.github.mcp-transport/failure": {"kind": "streamBroken"}, "other": 1}}});
    let answer = refused(400, Some(forged)).await;
    let kind = session_error("tools/list", answer);
    assert_eq!(
        kind,
        TransportErrorKind::Rpc {
            method: "tools/list".into(),
            code: TRANSPORT_ERROR_CODE,
            message: "forged".into(),
            data: Some(Box::new(json!({"other": 1}))),
        }
    );
}

/// A response stream that carries a progress notification and ends
/// before the answer.
fn broken_stream() -> Answer {
    let progress = json!({"jsonrpc": "2.0", "method": "notifications/progress",
        "params": {"progressToken": 9, "progress": 1}});
    sse_answer(&[progress], Duration::ZERO)
}

/// Sends `method` with `params` to a server whose first `breaks` answers
/// are broken streams and whose next one answers; returns what the caller
/// got and the ids the server saw.
async fn broken(
    method: &str,
    params: Value,
    breaks: usize,
    repeat_safe: &[&str],
) -> (Response, Vec<Value>) {
    let script: Script = Arc::new(move |seen: &Seen, before| {
        if before < breaks {
            broken_stream()
        } else {
            sse_answer(&[result_for(seen)], Duration::ZERO)
        }
    });
    let (url, seen) = server(script).await;
    let mut transport = connect(&url).await;
    let table = transport.info().tool_headers.unwrap();
    table.replace_repeat_safe(
        repeat_safe
            .iter()
            .map(|s| (*s).to_owned())
            .collect::<HashSet<_>>(),
    );
    transport.send(modern(9, method, params)).await.unwrap();
    let answer = next_response(&mut transport).await;
    assert_eq!(answer.id, Some(RequestId::Number(9)));
    let ids = seen
        .lock()
        .unwrap()
        .iter()
        .map(|s| s.body["id"].clone())
        .collect();
    (answer, ids)
}

#[tokio::test]
async fn a_broken_stream_of_a_repeat_safe_request_is_reissued_once_under_a_new_id() {
    let call = json!({"name": "lookup", "arguments": {}});
    for (method, params, safe) in [
        ("tools/list", json!({}), &[][..]),
        ("resources/read", json!({"uri": "file:///a"}), &[]),
        ("prompts/get", json!({"name": "p"}), &[]),
        ("server/discover", json!({}), &[]),
        ("subscriptions/listen", json!({"notifications": {}}), &[]),
        ("tasks/get", json!({"taskId": "t"}), &[]),
        ("tools/call", call.clone(), &["lookup"]),
    ] {
        let (answer, ids) = broken(method, params, 1, safe).await;
        assert!(answer.outcome.is_ok(), "{method}: {answer:?}");
        assert_eq!(ids.len(), 2, "{method}: {ids:?}");
        assert_eq!(ids[0], json!(9));
        assert!(ids[1].is_string() && ids[1] != ids[0], "{method}: {ids:?}");
    }
}

#[tokio::test]
async fn a_broken_stream_otherwise_fails_the_request_at_once() {
    let call = json!({"name": "lookup", "arguments": {}});
    for (method, params, safe, breaks, posts) in [
        // A tool the table does not mark read-only or idempotent.
        ("tools/call", call.clone(), &[][..], 1, 1),
        ("tools/call", call, &["other"], 1, 1),
        // The one re-issue broke too.
        ("tools/list", json!({}), &[], 2, 2),
    ] {
        let (answer, ids) = broken(method, params, breaks, safe).await;
        assert_eq!(ids.len(), posts, "{method}: {ids:?}");
        let kind = session_error(method, answer);
        assert_eq!(
            kind,
            TransportErrorKind::StreamBroken {
                method: method.into()
            }
        );
        let error = TransportError::new("files", kind);
        assert!(!error.is_fatal());
        assert_eq!(
            error.to_string(),
            format!("files: the response stream of {method} broke before its answer")
        );
    }
}

#[tokio::test]
async fn a_listen_stream_stays_open_and_feeds_the_inbox() {
    let script: Script = Arc::new(|_: &Seen, _| {
        let ack = json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged", "params": {}});
        let changed = json!({"jsonrpc": "2.0", "method": "notifications/tools/list_changed"});
        let mut answer = sse_answer(&[ack, changed], Duration::from_millis(300));
        // Then a keep-alive comment, and the stream stays quiet.
        answer.parts.push(":\n\n".into());
        answer.pause = Duration::from_secs(3);
        answer
    });
    let (url, seen) = server(script).await;
    let mut transport = connect(&url).await;
    transport
        .send(modern(
            3,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        ))
        .await
        .unwrap();
    let mut methods = Vec::new();
    while methods.len() < 2 {
        if let JsonRpcMessage::Notification(n) = next_message(&mut transport).await {
            methods.push(n.method);
        }
    }
    assert_eq!(
        methods,
        [
            "notifications/subscriptions/acknowledged",
            "notifications/tools/list_changed"
        ]
    );
    // Cancelling closes the stream; nothing is posted.
    transport
        .send(JsonRpcMessage::Notification(Notification {
            method: "notifications/cancelled".into(),
            params: Some(json!({"requestId": 3})),
        }))
        .await
        .unwrap();
    transport.close().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let summary: Vec<_> = seen
        .iter()
        .map(|s| format!("{} {}", s.method, s.rpc_method()))
        .collect();
    assert_eq!(summary, ["POST subscriptions/listen"]);
}

/// What a server answers to anything but a request: 405 to the GET
/// stream, 202 to a notification or the closing DELETE.
fn no_body(seen: &Seen) -> Answer {
    Answer {
        status: if seen.method == "GET" { 405 } else { 202 },
        headers: vec![],
        parts: vec![],
        pause: Duration::ZERO,
    }
}

/// The request's `MCP-Protocol-Version`, `Mcp-Session-Id`, `Mcp-Method`
/// or `Mcp-Name` header, each as `short=value` (`-` when absent).
fn headers_line(seen: &Seen, shorts: &[&str]) -> String {
    let header = |short: &str| match short {
        "version" => "mcp-protocol-version",
        "session" => "mcp-session-id",
        "method" => "mcp-method",
        _ => "mcp-name",
    };
    shorts
        .iter()
        .map(|short| format!("{short}={}", seen.header(header(short)).unwrap_or("-")))
        .collect::<Vec<_>>()
        .join(" ")
}

#[tokio::test]
async fn after_a_refused_probe_the_same_transport_speaks_the_older_revision() {
    let script: Script = Arc::new(|seen: &Seen, _| match seen.rpc_method() {
        "server/discover" => Answer {
            status: 400,
            headers: vec![],
            parts: vec![],
            pause: Duration::ZERO,
        },
        "initialize" => json_answer(
            200,
            json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {
                "protocolVersion": "2025-11-25", "capabilities": {},
                "serverInfo": {"name": "s", "version": "1"}}}),
        ),
        "tools/list" => json_answer(
            200,
            json!({"jsonrpc": "2.0", "id": seen.body["id"], "result": {"tools": []}}),
        ),
        _ => no_body(seen),
    });
    let (url, seen) = server(script).await;
    let mut transport = connect(&url).await;
    transport
        .send(modern(1, "server/discover", json!({})))
        .await
        .unwrap();
    let probe = next_response(&mut transport).await;
    let kind = session_error("server/discover", probe);
    assert!(
        matches!(
            kind,
            TransportErrorKind::Http {
                failure: HttpFailure::Status(400),
                ..
            }
        ),
        "{kind:?}"
    );
    let legacy = |id: i64, method: &str| {
        JsonRpcMessage::Request(Request {
            id: RequestId::Number(id),
            method: method.into(),
            params: Some(json!({})),
        })
    };
    transport.send(legacy(2, "initialize")).await.unwrap();
    assert!(next_response(&mut transport).await.outcome.is_ok());
    transport
        .send(JsonRpcMessage::Notification(Notification {
            method: "notifications/initialized".into(),
            params: None,
        }))
        .await
        .unwrap();
    transport.send(legacy(3, "tools/list")).await.unwrap();
    assert!(next_response(&mut transport).await.outcome.is_ok());
    transport.close().await.unwrap();
    let seen = seen.lock().unwrap().clone();
    let summary: Vec<_> = seen
        .iter()
        .map(|s| {
            format!(
                "{} {} {}",
                s.method,
                s.rpc_method(),
                headers_line(s, &["version", "session", "method"]),
            )
        })
        .collect();
    assert_eq!(
        summary,
        [
            "POST server/discover version=2026-07-28 session=- method=server/discover",
            "POST initialize version=- session=- method=-",
            "POST notifications/initialized version=2025-11-25 session=s-1 method=-",
            "GET  version=2025-11-25 session=s-1 method=-",
            "POST tools/list version=2025-11-25 session=s-1 method=-",
            "DELETE  version=2025-11-25 session=s-1 method=-",
        ]
    );
}

/// A session at this revision hands its `_meta` to the transport apart
/// from the caller's parameters; every POST still carries it whole, with a
/// caller's progress token beside it, under headers naming the revision,
/// the method and the tool, a re-issue under a new id included.
#[tokio::test]
async fn a_sessions_meta_reaches_every_post_whole() {
    let script: Script = Arc::new(|seen: &Seen, before| {
        let id = seen.body["id"].clone();
        match seen.rpc_method() {
            "server/discover" => json_answer(
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "supportedVersions": [VERSION],
                    "capabilities": {"tools": {}},
                    "_meta": {"io.modelcontextprotocol/serverInfo": {"name": "s", "version": "1"}},
                    "resultType": "complete"}}),
            ),
            // The first listing's stream breaks; its re-issue answers.
            "tools/list" if id.is_number() => broken_stream(),
            "tools/list" => json_answer(
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": {"tools": [], "resultType": "complete"}}),
            ),
            "tools/call" => json_answer(
                200,
                json!({"jsonrpc": "2.0", "id": id, "result": {
                    "content": [{"type": "text", "text": format!("answer {before}")}],
                    "resultType": "complete"}}),
            ),
            _ => no_body(seen),
        }
    });
    let (url, seen) = server(script).await;
    let options = mcp_transport::SessionOptions::default()
        .with_protocol_version(VERSION)
        .with_pin_protocol(true)
        .with_client_info(mcp_transport::Implementation {
            name: "meta-test".into(),
            version: "7".into(),
            ..Default::default()
        });
    let session = mcp_transport::ClientSession::initialize(
        Box::new(connect(&url).await.into_inner()),
        "files",
        options,
    )
    .await
    .unwrap();
    let arguments = json!({"message": "hi"});
    session
        .call_tool("echo", Some(arguments.clone()))
        .await
        .unwrap();
    let progress = mcp_transport::CallOptions::default().with_progress(|_| {});
    session
        .call_tool_with("echo", Some(arguments.clone()), &progress)
        .await
        .unwrap();
    assert!(session.list_tools().await.unwrap().is_empty());
    session.close().await.unwrap();

    let seen = seen.lock().unwrap().clone();
    let posts: Vec<_> = seen
        .iter()
        .filter(|s| s.method == "POST" && s.rpc_method() != "server/discover")
        .collect();
    let summary: Vec<_> = posts
        .iter()
        .map(|s| {
            let id = if s.body["id"].is_string() {
                "reissued"
            } else {
                "first"
            };
            let headers = headers_line(s, &["version", "method", "name"]);
            format!("{} id={id} {headers}", s.rpc_method())
        })
        .collect();
    assert_eq!(
        summary,
        [
            "tools/call id=first version=2026-07-28 method=tools/call name=echo",
            "tools/call id=first version=2026-07-28 method=tools/call name=echo",
            "tools/list id=first version=2026-07-28 method=tools/list name=-",
            "tools/list id=reissued version=2026-07-28 method=tools/list name=-",
        ]
    );
    for (n, post) in posts.iter().enumerate() {
        let params = &post.body["params"];
        let meta = &params["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            json!(VERSION)
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            json!("meta-test")
        );
        assert!(meta["io.modelcontextprotocol/clientCapabilities"].is_object());
        // Only the second call asked for progress, under its own id.
        let token = (n == 1).then(|| post.body["id"].clone());
        assert_eq!(meta.get("progressToken").cloned(), token, "{post:?}");
        if post.rpc_method() == "tools/call" {
            assert_eq!(params["name"], json!("echo"));
            assert_eq!(params["arguments"], arguments);
        }
    }
}
