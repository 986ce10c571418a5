//! What OpenTelemetry costs a tool call (feature `otel`), on the session's
//! own path: the in-process echo server of `stdio_roundtrip`'s
//! `session_only/sdk_echo`, whose number (built without the feature) is the
//! baseline.
//!
//! - `telemetry/no_provider`: the feature on, no provider installed (the
//!   API's no-ops), as a host that compiles it in but exports nothing.
//! - `telemetry/every_span_sampled`: an SDK tracer provider sampling every
//!   span (exported to a no-op exporter from the simple processor, so each
//!   span is built and handed over on the call's own path), an SDK meter
//!   provider, and the W3C propagators writing `_meta`.
//!
//! The providers are global and stay installed, so `no_provider` runs
//! first; each case has a session of its own, started after its providers.

#![allow(clippy::unwrap_used, clippy::print_stdout, clippy::expect_used)]

mod support;
use support::echo::EchoServer;

use std::sync::Arc;
use std::time::Duration;

use criterion::{Criterion, Throughput};
use mcp_transport::kinds::{SdkOptions, SdkTransport};
use mcp_transport::{ClientSession, SessionOptions};
use opentelemetry_sdk::metrics::{InMemoryMetricExporter, PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::testing::trace::NoopSpanExporter;
use opentelemetry_sdk::trace::{Sampler, SdkTracerProvider};
use serde_json::json;

async fn session() -> ClientSession {
    let transport = SdkTransport::connect("echo", Arc::new(EchoServer), SdkOptions::default());
    ClientSession::initialize(Box::new(transport), "echo", SessionOptions::default())
        .await
        .unwrap()
}

async fn call(session: &ClientSession) {
    let result = session
        .call_tool("echo", Some(json!({"text": "hello"})))
        .await
        .unwrap();
    assert!(!result.is_error);
}

fn install_sdk() {
    let tracer_provider = SdkTracerProvider::builder()
        .with_sampler(Sampler::AlwaysOn)
        .with_simple_exporter(NoopSpanExporter::new())
        .build();
    let meter_provider = SdkMeterProvider::builder()
        .with_reader(PeriodicReader::builder(InMemoryMetricExporter::default()).build())
        .build();
    opentelemetry::global::set_tracer_provider(tracer_provider);
    opentelemetry::global::set_meter_provider(meter_provider);
    opentelemetry::global::set_text_map_propagator(
        opentelemetry::propagation::TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]),
    );
}

fn main() {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let mut criterion = Criterion::default()
        .measurement_time(Duration::from_secs(4))
        .configure_from_args();
    let mut group = criterion.benchmark_group("telemetry");
    group.throughput(Throughput::Elements(1));

    let plain = runtime.block_on(session());
    group.bench_function("no_provider", |b| {
        b.to_async(&runtime).iter(|| call(&plain));
    });

    install_sdk();
    let sampled = runtime.block_on(session());
    group.bench_function("every_span_sampled", |b| {
        b.to_async(&runtime).iter(|| call(&sampled));
    });
    group.finish();
    criterion.final_summary();
}
