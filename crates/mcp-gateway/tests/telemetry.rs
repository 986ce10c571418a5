//! The gateway's side of a trace (feature `otel`), against a Python `mcp`
//! 2.3 server that extracts what it received with OpenTelemetry's own
//! propagators (`peers/py_trace_server.py`): each request a client sends
//! gets a SERVER span under the trace its `_meta` carries, the upstream
//! request it makes is that span's CLIENT child, and the server receives
//! the trace with that child as its parent. A 2026-07-28 request and an
//! older session's alike; a refused request's span says why.

#![allow(clippy::unwrap_used, clippy::expect_used)]

mod support;

use std::collections::BTreeMap;
use std::sync::OnceLock;

use mcp_catalog::NamingStyle;
use mcp_config::{ServerConfig, StdioConfig, TransportConfig};
use mcp_gateway::Naming;
use opentelemetry::trace::{SpanId, SpanKind, TraceId};
use opentelemetry::{Value as OtelValue, global};
use opentelemetry_sdk::metrics::data::{AggregatedMetrics, MetricData};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::{InMemorySpanExporter, SdkTracerProvider, SpanData};
use serde_json::{Value, json};
use support::{Client, gateway_over, modern_meta};

struct Sdk {
    spans: InMemorySpanExporter,
    provider: SdkTracerProvider,
    metrics: InMemoryMetricExporter,
    meter_provider: SdkMeterProvider,
}

fn sdk() -> &'static Sdk {
    static SDK: OnceLock<Sdk> = OnceLock::new();
    SDK.get_or_init(|| {
        let spans = InMemorySpanExporter::default();
        let provider = SdkTracerProvider::builder()
            .with_simple_exporter(spans.clone())
            .build();
        global::set_tracer_provider(provider.clone());
        let metrics = InMemoryMetricExporter::default();
        let meter_provider = SdkMeterProvider::builder()
            .with_reader(PeriodicReader::builder(metrics.clone()).build())
            .build();
        global::set_meter_provider(meter_provider.clone());
        global::set_text_map_propagator(
            opentelemetry::propagation::TextMapCompositePropagator::new(vec![
                Box::new(TraceContextPropagator::new()),
                Box::new(BaggagePropagator::new()),
            ]),
        );
        Sdk {
            spans,
            provider,
            metrics,
            meter_provider,
        }
    })
}

/// The spans of trace `trace`, as exported.
fn spans_of(trace: TraceId) -> Vec<SpanData> {
    sdk().provider.force_flush().unwrap();
    sdk()
        .spans
        .get_finished_spans()
        .unwrap()
        .into_iter()
        .filter(|span| span.span_context.trace_id() == trace)
        .collect()
}

fn attributes(span: &SpanData) -> BTreeMap<String, OtelValue> {
    span.attributes
        .iter()
        .map(|kv| (kv.key.to_string(), kv.value.clone()))
        .collect()
}

/// The `_meta` trace entries of a caller whose span is `parent` in `trace`.
fn carried(trace: TraceId, parent: SpanId) -> Value {
    json!({
        "traceparent": format!("00-{trace}-{parent}-01"),
        "tracestate": "vendor=v1",
        "baggage": "tenant=t1",
    })
}

fn with_trace(mut params: Value, meta: Value) -> Value {
    let entries = params["_meta"].as_object().cloned().unwrap_or_default();
    let mut merged = meta.as_object().cloned().unwrap();
    merged.extend(entries);
    params["_meta"] = Value::Object(merged);
    params
}

/// Checks one served `tools/call trace_context` of trace `trace` whose
/// caller's span was `parent`: the SERVER span, its CLIENT child, and what
/// the server received.
fn check(label: &str, trace: TraceId, parent: SpanId, result: &Value, version: &str) {
    let text = result["content"][0]["text"].as_str().unwrap();
    let received: Value = serde_json::from_str(text).unwrap();
    let spans = spans_of(trace);
    let served = spans
        .iter()
        .find(|span| span.span_kind == SpanKind::Server)
        .unwrap_or_else(|| panic!("{label}: no SERVER span in {spans:#?}"));
    assert_eq!(served.name, "tools/call trace_context", "{label}");
    assert_eq!(served.parent_span_id, parent, "{label}");
    let served_attributes = attributes(served);
    for (key, value) in [
        ("mcp.method.name", "tools/call"),
        ("gen_ai.tool.name", "trace_context"),
        ("gen_ai.operation.name", "execute_tool"),
        ("network.transport", "pipe"),
        ("mcp.protocol.version", version),
    ] {
        assert_eq!(
            served_attributes.get(key),
            Some(&OtelValue::from(value.to_owned())),
            "{label}: {key} of {served_attributes:?}"
        );
    }
    assert!(
        served_attributes.contains_key("jsonrpc.request.id"),
        "{label}"
    );
    let upstream = spans
        .iter()
        .find(|span| span.span_kind == SpanKind::Client)
        .unwrap_or_else(|| panic!("{label}: no CLIENT span in {spans:#?}"));
    assert_eq!(upstream.name, "tools/call trace_context", "{label}");
    assert_eq!(
        upstream.parent_span_id,
        served.span_context.span_id(),
        "{label}: the upstream request is the served span's child"
    );
    assert_eq!(
        received["trace_id"],
        trace.to_string(),
        "{label}: {received}"
    );
    assert_eq!(
        received["parent_span_id"],
        upstream.span_context.span_id().to_string(),
        "{label}: {received}"
    );
    assert_eq!(
        received["baggage"],
        json!({"tenant": "t1"}),
        "{label}: {received}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "needs cargo xtask peers"]
async fn a_served_request_continues_its_callers_trace_upstream() {
    sdk();
    let (python, script) = mcp_test_peers::py_trace_server();
    let server = ServerConfig::new(
        "trace",
        TransportConfig::Stdio(
            StdioConfig::new(python.display().to_string())
                .with_args([script.display().to_string(), "stdio".to_owned()]),
        ),
    );
    let (gateway, runtime) = gateway_over(vec![server], Naming::passthrough(NamingStyle::Claw));

    // A 2026-07-28 request.
    let mut modern = Client::of(&gateway);
    let (trace, parent) = (
        TraceId::from(0x5b8e_fff7_9879_8d9d_f00d_0000_0000_0001),
        SpanId::from(0x0000_0000_0000_0a01),
    );
    let params = with_trace(
        json!({"name": "trace_context", "arguments": {}, "_meta": modern_meta()}),
        carried(trace, parent),
    );
    let result = modern.request(1, "tools/call", params).await;
    check("2026-07-28", trace, parent, &result, "2026-07-28");

    // An older session's request.
    let mut session = Client::session_of(&gateway).await;
    let (trace, parent) = (
        TraceId::from(0x5b8e_fff7_9879_8d9d_f00d_0000_0000_0002),
        SpanId::from(0x0000_0000_0000_0a02),
    );
    let params = with_trace(
        json!({"name": "trace_context", "arguments": {}}),
        carried(trace, parent),
    );
    let result = session.request(2, "tools/call", params).await;
    check("2025-11-25", trace, parent, &result, "2025-11-25");

    // A refused request: its span says why.
    let trace = TraceId::from(0x5b8e_fff7_9879_8d9d_f00d_0000_0000_0003);
    let params = with_trace(
        json!({"name": "no_such_tool", "arguments": {}, "_meta": modern_meta()}),
        carried(trace, SpanId::from(0x0a03)),
    );
    let refused = modern.request_error(2, "tools/call", params).await;
    let code = refused["code"].as_i64().unwrap().to_string();
    let code_for_metric = code.clone();
    let spans = spans_of(trace);
    let [served] = spans.as_slice() else {
        panic!("one span, the served one: {spans:#?}");
    };
    let served_attributes = attributes(served);
    assert_eq!(
        served_attributes.get("error.type"),
        Some(&OtelValue::from(code.clone()))
    );
    assert_eq!(
        served_attributes.get("rpc.response.status_code"),
        Some(&OtelValue::from(code))
    );
    // Each served request was measured, under the convention's name.
    sdk().meter_provider.force_flush().unwrap();
    let mut served: Vec<(String, Option<String>, u64)> = Vec::new();
    for resource in &sdk().metrics.get_finished_metrics().unwrap() {
        for scope in resource.scope_metrics() {
            for metric in scope.metrics() {
                if metric.name() != "mcp.server.operation.duration" {
                    continue;
                }
                assert_eq!(metric.unit(), "s");
                if let AggregatedMetrics::F64(MetricData::Histogram(histogram)) = metric.data() {
                    for point in histogram.data_points() {
                        let get = |key: &str| {
                            point
                                .attributes()
                                .find(|kv| kv.key.as_str() == key)
                                .map(|kv| kv.value.as_str().into_owned())
                        };
                        served.push((
                            get("mcp.protocol.version").unwrap_or_default(),
                            get("error.type"),
                            point.count(),
                        ));
                    }
                }
            }
        }
    }
    let calls = |version: &str, error: Option<&str>| {
        served
            .iter()
            .filter(|(v, e, _)| v == version && e.as_deref() == error)
            .map(|(_, _, count)| count)
            .max()
            .copied()
            .unwrap_or(0)
    };
    assert!(calls("2026-07-28", None) >= 1, "{served:?}");
    assert!(calls("2025-11-25", None) >= 1, "{served:?}");
    assert!(
        calls("2026-07-28", Some(code_for_metric.as_str())) >= 1,
        "{served:?}"
    );
    runtime.shutdown().await;
}
