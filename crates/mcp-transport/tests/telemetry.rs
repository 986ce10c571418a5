//! OpenTelemetry (feature `otel`): the span, the measurements and the
//! `_meta` trace context of each request, for every method the table
//! names, over stdio and streamable HTTP, at both wire generations. The
//! SDK's in-memory exporters read back what the session reported; the
//! servers (a Python script over stdio, a scripted loopback HTTP server)
//! record the `_meta` each request carried.
//!
//! The providers and the propagator are global, so every case runs under
//! its own remote parent (trace id) and reads back only its own trace.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use mcp_config::{RemoteConfig, ServerConfig, StdioConfig, TransportConfig};
use mcp_transport::telemetry::{ExecuteToolSpan, TelemetryOptions};
use mcp_transport::{ConnectOptions, connect};
use opentelemetry::baggage::BaggageExt;
use opentelemetry::context::FutureExt;
use opentelemetry::trace::{
    SpanContext, SpanId, SpanKind, Status, TraceContextExt, TraceFlags, TraceId, TraceState,
    Tracer, TracerProvider as _,
};
use opentelemetry::{Context, KeyValue, Value as OtelValue};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};

mod support;
use support::loopback::{Answer, Seen, server};

/// The exporters every case reads back from.
struct Sdk {
    spans: InMemorySpanExporter,
    tracer_provider: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

fn sdk() -> &'static Sdk {
    static SDK: OnceLock<Sdk> = OnceLock::new();
    SDK.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let tracer_provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        opentelemetry::global::set_tracer_provider(tracer_provider.clone());
        opentelemetry::global::set_meter_provider(meter_provider.clone());
        opentelemetry::global::set_text_map_propagator(
            opentelemetry::propagation::TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]),
        );
        Sdk {
            spans,
            tracer_provider,
            metrics,
            meter_provider,
        }
    })
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Kind {
    Stdio,
    Http,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Generation {
    Legacy,
    Modern,
}

impl Generation {
    fn version(self) -> &'static str {
        match self {
            Generation::Legacy => "2025-06-18",
            Generation::Modern => "2026-07-28",
        }
    }
}

/// What the test server answers `message` with: a result, or a JSON-RPC
/// error. The Python server over stdio answers the same.
fn answer(message: &Value, generation: Generation) -> Result<Value, (i64, &'static str)> {
    let params = &message["params"];
    let capabilities = json!({"tools": {}, "prompts": {}, "resources": {}});
    let info = json!({"name": "telemetry-server", "version": "1.0.0"});
    match message["method"].as_str().unwrap_or("") {
        "server/discover" if generation == Generation::Modern => Ok(json!({
            "supportedVersions": ["2026-07-28"],
            "capabilities": capabilities,
            "_meta": {"io.modelcontextprotocol/serverInfo": info},
        })),
        "initialize" => Ok(json!({
            "protocolVersion": params["protocolVersion"],
            "capabilities": capabilities,
            "serverInfo": info,
        })),
        "tools/list" => Ok(json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "fail", "inputSchema": {"type": "object"}},
        ]})),
        "tools/call" => match params["name"].as_str() {
            Some("echo") => Ok(json!({"content": [{"type": "text", "text": "echoed"}]})),
            Some("fail") => {
                Ok(json!({"content": [{"type": "text", "text": "no"}], "isError": true}))
            }
            _ => Err((-32602, "unknown tool")),
        },
        "prompts/get" => Ok(json!({"messages": []})),
        "resources/read" => Ok(json!({"contents": []})),
        "ping" => Ok(json!({})),
        _ => Err((-32601, "method not found")),
    }
}

/// A server of `kind` at `generation`: its entry, and the requests it saw.
struct Peer {
    config: ServerConfig,
    seen: Box<dyn Fn() -> Vec<Value> + Send + Sync>,
    port: Option<u16>,
    _dir: Option<tempfile::TempDir>,
}

fn python() -> String {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .output()
        .expect("python3 runs");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// The `Mcp-Session-Id` the HTTP peer gives a connection at `initialize`.
const HTTP_SESSION_ID: &str = "telemetry-session-7";

async fn peer(kind: Kind, generation: Generation) -> Peer {
    match kind {
        Kind::Stdio => {
            let dir = tempfile::tempdir().unwrap();
            let log = dir.path().join("seen.jsonl");
            let script =
                PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/support/telemetry_server.py");
            let mut stdio = StdioConfig::new(python());
            stdio.args = vec![
                script.display().to_string(),
                match generation {
                    Generation::Legacy => "legacy".into(),
                    Generation::Modern => "modern".into(),
                },
                log.display().to_string(),
            ];
            let read = log.clone();
            Peer {
                config: ServerConfig::new("telemetry", TransportConfig::Stdio(stdio)),
                seen: Box::new(move || {
                    std::fs::read_to_string(&read)
                        .unwrap_or_default()
                        .lines()
                        .map(|line| serde_json::from_str(line).unwrap())
                        .collect()
                }),
                port: None,
                _dir: Some(dir),
            }
        }
        Kind::Http => {
            let script = Arc::new(move |seen: &Seen, _: usize| {
                let body = &seen.body;
                if seen.method != "POST" {
                    return Answer {
                        status: if seen.method == "DELETE" { 200 } else { 405 },
                        headers: vec![],
                        parts: vec![],
                        pause: Duration::ZERO,
                    };
                }
                if body.get("id").is_none() {
                    return Answer {
                        status: 202,
                        headers: vec![],
                        parts: vec![],
                        pause: Duration::ZERO,
                    };
                }
                let reply = match answer(body, generation) {
                    Ok(result) => json!({"jsonrpc": "2.0", "id": body["id"], "result": result}),
                    Err((code, message)) => json!({"jsonrpc": "2.0", "id": body["id"],
                        "error": {"code": code, "message": message}}),
                };
                let mut headers = vec![("content-type", "application/json".into())];
                // A server of the older generation gives the connection a
                // session, which every later span names.
                if body["method"] == "initialize" {
                    headers.push(("mcp-session-id", HTTP_SESSION_ID.into()));
                }
                Answer {
                    status: 200,
                    headers,
                    parts: vec![reply.to_string()],
                    pause: Duration::ZERO,
                }
            });
            let (url, seen) = server(script).await;
            let port = url::Url::parse(&url).unwrap().port();
            let log: Arc<Mutex<Vec<Seen>>> = seen;
            Peer {
                config: ServerConfig::new(
                    "telemetry",
                    TransportConfig::Http(RemoteConfig::new(url)),
                ),
                seen: Box::new(move || {
                    log.lock()
                        .unwrap()
                        .iter()
                        .filter(|seen| seen.method == "POST")
                        .map(|seen| seen.body.clone())
                        .collect()
                }),
                port,
                _dir: None,
            }
        }
    }
}

fn options(generation: Generation, telemetry: TelemetryOptions) -> ConnectOptions {
    let mut options = ConnectOptions::default();
    options.session.protocol_version = generation.version().into();
    options.session.pin_protocol = generation == Generation::Legacy;
    options.session.telemetry = telemetry;
    options
}

/// A remote parent for one case: its own trace id, a trace state and a
/// baggage entry, all of which must reach the server.
fn parent(case: u128) -> Context {
    let parent = SpanContext::new(
        TraceId::from(0x0af7_6519_16cd_43dd_8448_eb21_1c80_0000 + case),
        SpanId::from(0x00f0_67aa_0ba9_02b7),
        TraceFlags::SAMPLED,
        true,
        TraceState::from_key_value([("vendor", "v1")]).unwrap(),
    );
    Context::new()
        .with_remote_span_context(parent)
        .with_baggage([KeyValue::new("case", case.to_string())])
}

/// The spans of the trace `cx` is in, as exported.
fn spans_of(cx: &Context) -> Vec<SpanData> {
    let trace_id = cx.span().span_context().trace_id();
    sdk().tracer_provider.force_flush().unwrap();
    sdk()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|span| span.span_context.trace_id() == trace_id)
        .collect()
}

fn attributes(span: &SpanData) -> BTreeMap<String, OtelValue> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.to_string(), kv.value.clone()))
        .collect()
}

/// One row: a request, and the span it must make.
struct Row {
    method: &'static str,
    params: Value,
    name: &'static str,
    /// The attributes besides those every span of the session has.
    extra: &'static [(&'static str, &'static str)],
    error: bool,
}

fn table() -> Vec<Row> {
    vec![
        Row {
            method: "tools/list",
            params: json!({}),
            name: "tools/list",
            extra: &[],
            error: false,
        },
        Row {
            method: "tools/call",
            params: json!({"name": "echo", "arguments": {"text": "secret-argument"}}),
            name: "tools/call echo",
            extra: &[
                ("gen_ai.tool.name", "echo"),
                ("gen_ai.operation.name", "execute_tool"),
            ],
            error: false,
        },
        Row {
            method: "tools/call",
            params: json!({"name": "fail", "arguments": {}}),
            name: "tools/call fail",
            extra: &[
                ("gen_ai.tool.name", "fail"),
                ("gen_ai.operation.name", "execute_tool"),
                ("error.type", "tool_error"),
            ],
            error: true,
        },
        Row {
            method: "tools/call",
            // a caller's stale trace context is replaced, not kept
            params: json!({"name": "missing", "_meta": {
                "traceparent": "00-11111111111111111111111111111111-2222222222222222-01",
                "tracestate": "stale=1",
            }}),
            name: "tools/call missing",
            extra: &[
                ("gen_ai.tool.name", "missing"),
                ("gen_ai.operation.name", "execute_tool"),
                ("error.type", "-32602"),
                ("rpc.response.status_code", "-32602"),
            ],
            error: true,
        },
        Row {
            method: "prompts/get",
            params: json!({"name": "review", "arguments": {}}),
            name: "prompts/get review",
            extra: &[("gen_ai.prompt.name", "review")],
            error: false,
        },
        Row {
            method: "resources/read",
            params: json!({"uri": "file:///private/notes.txt"}),
            name: "resources/read",
            extra: &[],
            error: false,
        },
        Row {
            method: "ping",
            params: json!({}),
            name: "ping",
            extra: &[],
            error: false,
        },
    ]
}

/// Runs every row over `kind` at `generation` and checks each span (name,
/// kind, parent, attributes, status) and the `_meta` the server received.
async fn check(kind: Kind, generation: Generation, case: u128) {
    sdk();
    let peer = peer(kind, generation).await;
    let cx = parent(case);
    let session = connect(
        &peer.config,
        &options(generation, TelemetryOptions::default()),
    )
    .with_context(cx.clone())
    .await
    .unwrap();
    let session_id = session.session_id();
    for row in table() {
        let _ = session
            .request(row.method, Some(row.params.clone()))
            .with_context(cx.clone())
            .await;
    }
    session.close().await.unwrap();

    let label = format!("{kind:?} {generation:?}");
    let spans = spans_of(&cx);
    let seen = (peer.seen)();
    let mut common: BTreeMap<&str, OtelValue> = BTreeMap::new();
    common.insert("mcp.protocol.version", generation.version().into());
    match kind {
        Kind::Stdio => {
            common.insert("network.transport", "pipe".into());
        }
        Kind::Http => {
            common.insert("network.transport", "tcp".into());
            common.insert("server.address", "127.0.0.1".into());
            common.insert("server.port", i64::from(peer.port.unwrap()).into());
        }
    }
    // Only streamable HTTP before 2026-07-28 has a session id.
    if kind == Kind::Http && generation == Generation::Legacy {
        assert_eq!(session_id.as_deref(), Some(HTTP_SESSION_ID), "{label}");
        common.insert("mcp.session.id", HTTP_SESSION_ID.into());
    } else {
        assert_eq!(session_id, None, "{label}");
    }
    // The connect: an INTERNAL span under the caller's, with what it
    // learnt; the handshake (initialize, or server/discover) is its child.
    let connect_span = spans
        .iter()
        .find(|span| span.name == "connect")
        .unwrap_or_else(|| panic!("{label}: no connect span"));
    assert_eq!(connect_span.span_kind, SpanKind::Internal, "{label}");
    assert_eq!(
        connect_span.parent_span_id,
        cx.span().span_context().span_id(),
        "{label}"
    );
    assert_eq!(connect_span.status, Status::Unset, "{label}");
    let expected: BTreeMap<String, OtelValue> = common
        .iter()
        .map(|(k, v)| ((*k).to_owned(), v.clone()))
        .collect();
    assert_eq!(attributes(connect_span), expected, "{label}: connect");
    let handshake = match generation {
        Generation::Legacy => "initialize",
        Generation::Modern => "server/discover",
    };
    let handshake_span = spans
        .iter()
        .find(|span| span.name == handshake)
        .unwrap_or_else(|| panic!("{label}: no {handshake} span"));
    assert_eq!(
        handshake_span.parent_span_id,
        connect_span.span_context.span_id(),
        "{label}: the handshake is the connect's child"
    );
    for row in table() {
        let span = spans
            .iter()
            .find(|span| span.name == row.name)
            .unwrap_or_else(|| panic!("{label}: no span {}", row.name));
        assert_eq!(span.span_kind, SpanKind::Client, "{label} {}", row.name);
        assert_eq!(
            span.parent_span_id,
            cx.span().span_context().span_id(),
            "{label} {}",
            row.name
        );
        let attributes = attributes(span);
        let id = attributes["jsonrpc.request.id"].as_str().into_owned();
        let mut expected: BTreeMap<String, OtelValue> = common
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.clone()))
            .collect();
        expected.insert("mcp.method.name".into(), row.method.into());
        expected.insert("jsonrpc.request.id".into(), id.clone().into());
        for (key, value) in row.extra {
            expected.insert((*key).into(), (*value).into());
        }
        assert_eq!(attributes, expected, "{label} {}", row.name);
        assert_eq!(
            matches!(span.status, Status::Error { .. }),
            row.error,
            "{label} {}: {:?}",
            row.name,
            span.status
        );
        // the server got this span as its parent, with the trace state
        // and baggage of the context the request was sent in
        let request = seen
            .iter()
            .find(|message| {
                message["id"].as_i64() == id.parse().ok() && message["method"] == row.method
            })
            .unwrap_or_else(|| panic!("{label}: the server saw no {} #{id}", row.method));
        let meta = &request["params"]["_meta"];
        let context = span.span_context.clone();
        assert_eq!(
            meta["traceparent"],
            json!(format!(
                "00-{}-{}-01",
                context.trace_id(),
                context.span_id()
            )),
            "{label} {}",
            row.name
        );
        assert_eq!(
            meta["tracestate"],
            json!("vendor=v1"),
            "{label} {}",
            row.name
        );
        assert_eq!(
            meta["baggage"],
            json!(format!("case={case}")),
            "{label} {}",
            row.name
        );
        if generation == Generation::Modern {
            assert_eq!(
                meta["io.modelcontextprotocol/protocolVersion"],
                json!("2026-07-28"),
                "{label}: the session's own entries stay beside the trace's"
            );
        }
    }
    // every request carried its span's context: none went out without
    let requests = seen.iter().filter(|m| m.get("id").is_some()).count();
    let traced = seen
        .iter()
        .filter(|m| m.get("id").is_some() && m["params"]["_meta"]["traceparent"].is_string())
        .count();
    assert_eq!(traced, requests, "{label}: {seen:?}");
}

#[tokio::test]
async fn each_method_over_stdio_at_the_legacy_generation() {
    check(Kind::Stdio, Generation::Legacy, 1).await;
}

#[tokio::test]
async fn each_method_over_stdio_at_the_modern_generation() {
    check(Kind::Stdio, Generation::Modern, 2).await;
}

#[tokio::test]
async fn each_method_over_streamable_http_at_the_legacy_generation() {
    check(Kind::Http, Generation::Legacy, 3).await;
}

#[tokio::test]
async fn each_method_over_streamable_http_at_the_modern_generation() {
    check(Kind::Http, Generation::Modern, 4).await;
}

/// Inside the host's `execute_tool` span a tool call starts no span: its
/// attributes and outcome go onto the host's, and the server's parent is
/// the host's span.
#[tokio::test]
async fn a_tool_call_inside_the_hosts_execute_tool_span_adds_to_it() {
    sdk();
    for (generation, case) in [(Generation::Legacy, 11), (Generation::Modern, 12)] {
        let peer = peer(Kind::Http, generation).await;
        let cx = parent(case);
        let session = connect(
            &peer.config,
            &options(generation, TelemetryOptions::default()),
        )
        .with_context(cx.clone())
        .await
        .unwrap();
        let tracer = sdk().tracer_provider.tracer("host");
        let host = tracer.start_with_context("execute_tool fail", &cx);
        let host_cx = cx.with_span(host).with_value(ExecuteToolSpan);
        session
            .request("tools/call", Some(json!({"name": "fail"})))
            .with_context(host_cx.clone())
            .await
            .unwrap();
        host_cx.span().end();
        session.close().await.unwrap();

        let spans = spans_of(&cx);
        assert!(
            spans.iter().all(|span| span.name != "tools/call fail"),
            "{generation:?}: a span of its own"
        );
        let host = spans
            .iter()
            .find(|span| span.name == "execute_tool fail")
            .unwrap();
        let attributes = attributes(host);
        assert_eq!(attributes["mcp.method.name"], "tools/call".into());
        assert_eq!(attributes["gen_ai.tool.name"], "fail".into());
        assert_eq!(attributes["error.type"], "tool_error".into());
        let seen = (peer.seen)();
        let call = seen.iter().find(|m| m["method"] == "tools/call").unwrap();
        assert_eq!(
            call["params"]["_meta"]["traceparent"],
            json!(format!(
                "00-{}-{}-01",
                host.span_context.trace_id(),
                host.span_context.span_id()
            ))
        );
    }
}

/// Opted in, a tool's arguments and result are recorded within the cap and
/// a resource URI is recorded redacted; by default none of them is (the
/// table's rows check that no other attribute appears).
#[tokio::test]
async fn opt_in_content_is_capped_and_uris_are_redacted() {
    sdk();
    let cx = parent(21);
    let peer = peer(Kind::Http, Generation::Legacy).await;
    let telemetry = TelemetryOptions {
        record_resource_uri: true,
        record_tool_content: true,
        content_cap: 16,
        ..TelemetryOptions::default()
    };
    let session = connect(&peer.config, &options(Generation::Legacy, telemetry))
        .with_context(cx.clone())
        .await
        .unwrap();
    let calls = [
        (
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "é".repeat(40)}}),
        ),
        (
            "resources/read",
            json!({"uri": "postgres://admin:hunter2@db/x?token=abc&page=2"}),
        ),
    ];
    for (method, params) in calls {
        session
            .request(method, Some(params))
            .with_context(cx.clone())
            .await
            .unwrap();
    }
    session.close().await.unwrap();
    let spans = spans_of(&cx);
    let call = attributes(spans.iter().find(|s| s.name == "tools/call echo").unwrap());
    let arguments = call["gen_ai.tool.call.arguments"].as_str().into_owned();
    assert!(
        arguments.len() <= 16 && arguments.starts_with("{\"text\":\"é"),
        "{arguments}"
    );
    let result = call["gen_ai.tool.call.result"].as_str().into_owned();
    assert!(
        result.len() <= 16 && result.starts_with("{\"content\""),
        "{result}"
    );
    let read = attributes(spans.iter().find(|s| s.name == "resources/read").unwrap());
    let uri = read["mcp.resource.uri"].as_str().into_owned();
    assert_eq!(
        uri,
        mcp_config::redaction::redact_url("postgres://admin:hunter2@db/x?token=abc&page=2", None)
    );
    assert!(!uri.contains("hunter2") && !uri.contains("abc"), "{uri}");
}

/// The two histograms: one operation measurement per request with the
/// convention's attributes (and `error.type` on failures), one session
/// measurement per session.
#[tokio::test]
async fn operation_and_session_durations_are_measured() {
    sdk();
    let cx = parent(31);
    let peer = peer(Kind::Stdio, Generation::Legacy).await;
    let session = connect(
        &peer.config,
        &options(Generation::Legacy, TelemetryOptions::default()),
    )
    .with_context(cx.clone())
    .await
    .unwrap();
    for tool in ["echo", "metrics-missing"] {
        let _ = session
            .request("tools/call", Some(json!({"name": tool})))
            .with_context(cx.clone())
            .await;
    }
    let closed = session.close().await;
    assert!(closed.is_ok());
    sdk().meter_provider.force_flush().unwrap();
    let exported = sdk().metrics.get_finished_metrics().unwrap();
    // (metric, attributes, count, bucket bounds)
    type Point = (String, BTreeMap<String, String>, u64, Vec<f64>);
    let mut points: Vec<Point> = Vec::new();
    for resource in &exported {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                assert_eq!(metric.unit(), "s", "{}", metric.name());
                if let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() {
                    for point in histogram.data_points() {
                        let attributes = point
                            .attributes()
                            .map(|kv| (kv.key.to_string(), kv.value.as_str().into_owned()))
                            .collect();
                        points.push((
                            metric.name().to_owned(),
                            attributes,
                            point.count(),
                            point.bounds().collect(),
                        ));
                    }
                }
            }
        }
    }
    let bounds = vec![
        0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
    ];
    // Other tests' sessions measure into the same provider: this one's
    // points are the legacy stdio ones.
    let ours = |attributes: &BTreeMap<String, String>| {
        attributes.get("mcp.protocol.version").map(String::as_str) == Some("2025-06-18")
            && attributes.get("network.transport").map(String::as_str) == Some("pipe")
    };
    let find = |metric: &str, tool: &str| {
        points.iter().find(|(name, attributes, _, _)| {
            name == metric
                && ours(attributes)
                && attributes.get("gen_ai.tool.name").map(String::as_str) == Some(tool)
        })
    };
    let (_, echo, count, echo_bounds) = find("mcp.client.operation.duration", "echo").unwrap();
    assert!(*count >= 1);
    assert_eq!(echo_bounds, &bounds);
    assert_eq!(echo["mcp.method.name"], "tools/call");
    assert_eq!(echo["gen_ai.operation.name"], "execute_tool");
    assert_eq!(echo["network.transport"], "pipe");
    assert_eq!(echo["mcp.protocol.version"], "2025-06-18");
    assert!(!echo.contains_key("error.type") && !echo.contains_key("jsonrpc.request.id"));
    let (_, missing, _, _) = find("mcp.client.operation.duration", "metrics-missing").unwrap();
    assert_eq!(missing["error.type"], "-32602");
    assert_eq!(missing["rpc.response.status_code"], "-32602");
    assert!(
        points.iter().any(
            |(name, attributes, count, b)| name == "mcp.client.session.duration"
                && *count >= 1
                && b == &bounds
                && ours(attributes)
                && !attributes.contains_key("error.type")
        ),
        "{points:?}"
    );
}

/// A server no one here wrote that extracts what it received with its own
/// language's OpenTelemetry propagators and answers with it.
#[derive(Debug, Clone, Copy)]
enum TracePeer {
    /// Python `mcp` 2.3 with `opentelemetry-api`.
    Python,
    /// The TypeScript SDK 2.x with `@opentelemetry/api` and `/core`.
    TypeScript,
}

/// The program and script of `peer`.
fn trace_peer_command(peer: TracePeer) -> (String, String) {
    let (program, script) = match peer {
        TracePeer::Python => mcp_test_peers::py_trace_server(),
        TracePeer::TypeScript => (
            mcp_test_peers::node22(),
            mcp_test_peers::ts_trace_server_script(),
        ),
    };
    (program.display().to_string(), script.display().to_string())
}

/// `peer` over `kind`: its entry, and the process to end for HTTP.
fn trace_peer(peer: TracePeer, kind: Kind) -> (ServerConfig, Option<mcp_test_peers::Running>) {
    let (program, script) = trace_peer_command(peer);
    match kind {
        Kind::Stdio => {
            let mut stdio = StdioConfig::new(program);
            stdio.args = vec![script, "stdio".into()];
            let config = ServerConfig::new("trace", TransportConfig::Stdio(stdio));
            (config, None)
        }
        Kind::Http => {
            let port = mcp_test_peers::free_port();
            let child = std::process::Command::new(program)
                .args([script, "http".into(), port.to_string()])
                .stdin(std::process::Stdio::null())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            let mut running = mcp_test_peers::Running(child);
            mcp_test_peers::wait_until_listening(
                &mut running.0,
                &format!("{peer:?} trace peer"),
                port,
                Duration::from_secs(30),
            );
            let url = format!("http://127.0.0.1:{port}/mcp");
            let config = ServerConfig::new("trace", TransportConfig::Http(RemoteConfig::new(url)));
            (config, Some(running))
        }
    }
}

/// Python `mcp` 2.3 and the TypeScript SDK 2.x, over stdio and streamable
/// HTTP, at both generations: the trace id and parent span id each peer's
/// own OpenTelemetry propagators extract from the request are those of the
/// `tools/call` span the session reported, and the trace state and baggage
/// arrive too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs cargo xtask peers"]
async fn real_peers_extract_the_span_the_session_reported() {
    sdk();
    let mut case = 100;
    for peer in [TracePeer::Python, TracePeer::TypeScript] {
        for kind in [Kind::Stdio, Kind::Http] {
            for generation in [Generation::Legacy, Generation::Modern] {
                case += 1;
                let label = format!("{peer:?} over {kind:?} at {generation:?}");
                let (config, _running) = trace_peer(peer, kind);
                let cx = parent(case);
                let session = connect(&config, &options(generation, TelemetryOptions::default()))
                    .with_context(cx.clone())
                    .await
                    .unwrap_or_else(|error| panic!("{label}: {error}"));
                assert_eq!(session.protocol_version(), generation.version(), "{label}");
                let result = session
                    .call_tool("trace_context", Some(json!({})))
                    .with_context(cx.clone())
                    .await
                    .unwrap_or_else(|error| panic!("{label}: {error}"));
                session.close().await.unwrap();
                let text = result.content[0].as_text().unwrap_or_default().to_owned();
                let received: Value = serde_json::from_str(&text)
                    .unwrap_or_else(|error| panic!("{label}: {error}: {text}"));
                let spans = spans_of(&cx);
                let call = spans
                    .iter()
                    .find(|span| span.name == "tools/call trace_context")
                    .unwrap_or_else(|| panic!("{label}: no tools/call span"));
                let reported = &call.span_context;
                assert_eq!(
                    received["trace_id"],
                    reported.trace_id().to_string(),
                    "{label}: {received}"
                );
                assert_eq!(
                    received["parent_span_id"],
                    reported.span_id().to_string(),
                    "{label}: {received}"
                );
                assert_eq!(received["sampled"], true, "{label}: {received}");
                assert_eq!(received["trace_state"], "vendor=v1", "{label}: {received}");
                assert_eq!(
                    received["baggage"],
                    json!({"case": case.to_string()}),
                    "{label}: {received}"
                );
            }
        }
    }
}

/// Answers every elicitation with the name "Ada".
struct NamesAda;

#[async_trait::async_trait]
impl mcp_transport::ClientHandler for NamesAda {
    fn capabilities(&self) -> Value {
        json!({"elicitation": {"form": {}}})
    }

    async fn elicit(&self, _params: Option<Value>) -> Result<Value, mcp_transport::ErrorObject> {
        Ok(json!({"action": "accept", "content": {"name": "Ada"}}))
    }
}

/// What happens between requests is in the trace too, against rmcp's
/// task manager (`rmcp-peer-server task-suite`) at 2026-07-28: a call that
/// first asks an input round, then runs as a task. Under the caller's
/// span: the first `tools/call`, the `input_required tools/call` round
/// (the handler's answer), the retried `tools/call`, and the `task` span
/// whose children are the task's `tasks/get` polls.
#[tokio::test]
#[ignore = "needs cargo xtask peers"]
async fn an_input_round_and_a_task_are_spans_of_the_trace() {
    sdk();
    let config = ServerConfig::new(
        "task suite",
        TransportConfig::Stdio(
            StdioConfig::new(mcp_test_peers::rmcp_server().to_string_lossy().into_owned())
                .with_args(["task-suite"]),
        ),
    );
    let mut options = options(Generation::Modern, TelemetryOptions::default());
    options.session.handler = Some(Arc::new(NamesAda));
    let cx = parent(41);
    let session = connect(&config, &options)
        .with_context(cx.clone())
        .await
        .unwrap();
    let result = session
        .call_tool("test_tool_with_task", Some(json!({})))
        .with_context(cx.clone())
        .await
        .unwrap();
    let result = serde_json::to_value(&result).unwrap();
    assert_eq!(
        result["content"][0]["text"], "Hello, Ada, from a task",
        "{result}"
    );
    session.close().await.unwrap();

    let spans = spans_of(&cx);
    let caller = cx.span().span_context().span_id();
    let named =
        |name: &str| -> Vec<&SpanData> { spans.iter().filter(|s| s.name == name).collect() };
    let calls = named("tools/call test_tool_with_task");
    assert_eq!(calls.len(), 2, "the call and its retry");
    let rounds = named("input_required tools/call");
    assert_eq!(rounds.len(), 1, "one input round");
    let round = rounds[0];
    assert_eq!(round.span_kind, SpanKind::Internal);
    assert_eq!(round.parent_span_id, caller);
    let round_attributes = attributes(round);
    assert_eq!(
        round_attributes["mcp.input_required.count"],
        OtelValue::I64(1)
    );
    assert_eq!(
        round_attributes["mcp.method.name"],
        OtelValue::from("tools/call")
    );
    assert_eq!(
        round_attributes["mcp.protocol.version"],
        OtelValue::from("2026-07-28")
    );
    // The round sits between the call and its retry.
    let mut by_start: Vec<&SpanData> = calls.iter().copied().chain([round]).collect();
    by_start.sort_by_key(|span| span.start_time);
    assert_eq!(by_start[1].name, round.name);
    for call in &calls {
        assert_eq!(call.parent_span_id, caller);
    }
    let tasks = named("task test_tool_with_task");
    assert_eq!(tasks.len(), 1, "one task span");
    let task = tasks[0];
    assert_eq!(task.span_kind, SpanKind::Internal);
    assert_eq!(task.parent_span_id, caller);
    assert_eq!(task.status, Status::Unset);
    assert_eq!(
        attributes(task)["gen_ai.tool.name"],
        OtelValue::from("test_tool_with_task")
    );
    let polls = named("tasks/get");
    assert!(!polls.is_empty(), "the task was polled");
    for poll in &polls {
        assert_eq!(
            poll.parent_span_id,
            task.span_context.span_id(),
            "each poll is the task's child"
        );
        assert!(poll.start_time >= task.start_time && poll.end_time <= task.end_time);
    }
}

/// Records the span current when the transport asks it for credentials:
/// where a token would be refreshed.
#[derive(Debug, Default)]
struct SeesTheTrace(Mutex<Vec<SpanId>>);

#[async_trait::async_trait]
impl mcp_oauth::AuthProvider for SeesTheTrace {
    async fn authorization(&self) -> Result<Option<String>, mcp_oauth::AuthError> {
        self.0
            .lock()
            .unwrap()
            .push(Context::current().span().span_context().span_id());
        Ok(Some("Bearer token-in-the-trace".into()))
    }

    async fn on_challenge(
        &self,
        _challenge: &mcp_oauth::Challenge,
    ) -> Result<mcp_oauth::ChallengeOutcome, mcp_oauth::AuthError> {
        Ok(mcp_oauth::ChallengeOutcome::GiveUp)
    }
}

#[derive(Debug)]
struct Providers(Arc<SeesTheTrace>);

impl mcp_transport::AuthProviders for Providers {
    fn provider_for(&self, _server: &ServerConfig) -> Option<Arc<dyn mcp_oauth::AuthProvider>> {
        Some(Arc::clone(&self.0) as _)
    }
}

/// What the transport does for a request (asking for credentials, where a
/// token is refreshed) runs in the request's trace: over streamable HTTP at
/// both generations, credentials asked for a `tools/call` are asked in that
/// call's span, and any other ask in the connect's.
#[tokio::test]
async fn credentials_are_asked_within_the_requests_span() {
    sdk();
    for (generation, case) in [(Generation::Legacy, 51), (Generation::Modern, 52)] {
        let label = format!("{generation:?}");
        let peer = peer(Kind::Http, generation).await;
        let seen = Arc::new(SeesTheTrace::default());
        let mut options = options(generation, TelemetryOptions::default());
        options.auth = Some(Arc::new(Providers(Arc::clone(&seen))));
        let cx = parent(case);
        let session = connect(&peer.config, &options)
            .with_context(cx.clone())
            .await
            .unwrap();
        seen.0.lock().unwrap().clear();
        session
            .request("tools/call", Some(json!({"name": "echo", "arguments": {}})))
            .with_context(cx.clone())
            .await
            .unwrap();
        let asked = seen.0.lock().unwrap().clone();
        session.close().await.unwrap();
        let spans = spans_of(&cx);
        let call = spans
            .iter()
            .find(|span| span.name == "tools/call echo")
            .unwrap_or_else(|| panic!("{label}: no tools/call span"));
        // What the connect started may still ask (the older generation's
        // GET stream, `notifications/initialized`): in the connect's trace.
        let connecting: Vec<SpanId> = spans
            .iter()
            .filter(|span| ["connect", "initialize", "server/discover"].contains(&&*span.name))
            .map(|span| span.span_context.span_id())
            .collect();
        let call = call.span_context.span_id();
        assert!(
            asked.contains(&call),
            "{label}: asked in {asked:?}, the call is {call:?}"
        );
        assert!(
            asked
                .iter()
                .all(|span| *span == call || connecting.contains(span)),
            "{label}: asked in {asked:?}, the call is {call:?}, the connect's {connecting:?}"
        );
    }
}
