//! OpenTelemetry export: the CLI is the host that installs the SDK, so
//! the spans and measurements the sessions report (see
//! `mcp_transport::telemetry`) leave over OTLP/HTTP when, and only when,
//! the standard variables ask for it:
//!
//! - `OTEL_SDK_DISABLED=true` exports nothing, whatever else is set;
//! - `OTEL_EXPORTER_OTLP_ENDPOINT` exports traces and metrics (to
//!   `/v1/traces` and `/v1/metrics` under it); `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`
//!   and `OTEL_EXPORTER_OTLP_METRICS_ENDPOINT` export that signal to that
//!   URL as it is; with none of the three nothing is installed, and the
//!   sessions' calls land in the API's no-ops;
//! - `OTEL_EXPORTER_OTLP_{TRACES_,METRICS_,}PROTOCOL`: `http/protobuf`
//!   (the default) or `http/json`; anything else (`grpc`, which this
//!   build does not carry) is refused with a warning and exports nothing;
//! - the exporter itself reads `OTEL_EXPORTER_OTLP_HEADERS` and the
//!   timeouts, and the SDK `OTEL_SERVICE_NAME` and
//!   `OTEL_RESOURCE_ATTRIBUTES` (the service is `mcp-cli` by default).
//!
//! Spans and measurements go out from the SDK's own threads through the
//! workspace's HTTP client; [`Telemetry`]'s drop flushes and shuts both
//! providers down, so a one-shot command loses nothing. Whatever fails
//! here is a warning: telemetry never fails a command.

use std::time::Duration;

use opentelemetry::global;
use opentelemetry::propagation::TextMapCompositePropagator;
use opentelemetry::trace::{SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry_http::{Bytes, HttpClient, HttpError, Request, Response};
use opentelemetry_otlp::{
    MetricExporter, Protocol, SpanExporter, WithExportConfig, WithHttpConfig,
};
use opentelemetry_sdk::Resource;
use opentelemetry_sdk::metrics::{PeriodicReader, SdkMeterProvider};
use opentelemetry_sdk::propagation::{BaggagePropagator, TraceContextPropagator};
use opentelemetry_sdk::trace::SdkTracerProvider;

/// What the variables ask for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Plan {
    /// The protocol spans go out in, when they do.
    pub(crate) traces: Option<Protocol>,
    /// The protocol measurements go out in, when they do.
    pub(crate) metrics: Option<Protocol>,
}

/// Why the variables export nothing although one names an endpoint: the
/// protocol variable that names a protocol this build cannot speak.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Refused {
    pub(crate) variable: &'static str,
}

/// Reads the variables through `var` (the process environment, or a
/// test's table).
pub(crate) fn plan(var: impl Fn(&str) -> Option<String>) -> Result<Plan, Refused> {
    let set = |name: &str| var(name).is_some_and(|value| !value.trim().is_empty());
    let none = Plan {
        traces: None,
        metrics: None,
    };
    if var("OTEL_SDK_DISABLED").is_some_and(|value| value.trim().eq_ignore_ascii_case("true")) {
        return Ok(none);
    }
    let protocol = |signal: &'static str| -> Result<Protocol, Refused> {
        let (variable, value) = [signal, "OTEL_EXPORTER_OTLP_PROTOCOL"]
            .into_iter()
            .find_map(|name| Some((name, var(name).filter(|v| !v.trim().is_empty())?)))
            .unwrap_or(("OTEL_EXPORTER_OTLP_PROTOCOL", String::new()));
        match value.trim() {
            "" | "http/protobuf" => Ok(Protocol::HttpBinary),
            "http/json" => Ok(Protocol::HttpJson),
            _ => Err(Refused { variable }),
        }
    };
    let general = set("OTEL_EXPORTER_OTLP_ENDPOINT");
    let traces = if general || set("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT") {
        Some(protocol("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")?)
    } else {
        None
    };
    let metrics = if general || set("OTEL_EXPORTER_OTLP_METRICS_ENDPOINT") {
        Some(protocol("OTEL_EXPORTER_OTLP_METRICS_PROTOCOL")?)
    } else {
        None
    };
    Ok(Plan { traces, metrics })
}

/// The installed providers; dropping it flushes and shuts them down.
#[derive(Debug, Default)]
pub(crate) struct Telemetry {
    tracer: Option<SdkTracerProvider>,
    meter: Option<SdkMeterProvider>,
}

/// Installs what the process environment asks for (before any session
/// starts: each takes the global providers when it does).
pub(crate) fn start() -> Telemetry {
    let plan = match plan(|name| std::env::var(name).ok()) {
        Ok(plan) => plan,
        Err(Refused { variable }) => {
            tracing::warn!("{variable} is not http/protobuf or http/json; exporting no telemetry");
            return Telemetry::default();
        }
    };
    if plan.traces.is_none() && plan.metrics.is_none() {
        return Telemetry::default();
    }
    let resource = if std::env::var_os("OTEL_SERVICE_NAME").is_some() {
        Resource::builder().build()
    } else {
        Resource::builder().with_service_name("mcp-cli").build()
    };
    let client = match Client::new() {
        Ok(client) => client,
        Err(error) => {
            tracing::warn!("no HTTP client for OTLP export: {error}; exporting no telemetry");
            return Telemetry::default();
        }
    };
    let tracer = plan.traces.and_then(|protocol| {
        let exporter = SpanExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_protocol(protocol)
            .build()
            // The error may quote the endpoint, credentials and all.
            .inspect_err(|_| tracing::warn!("the OTLP span exporter could not be built from OTEL_EXPORTER_OTLP_*; exporting no spans"))
            .ok()?;
        Some(
            SdkTracerProvider::builder()
                .with_batch_exporter(exporter)
                .with_resource(resource.clone())
                .build(),
        )
    });
    let meter = plan.metrics.and_then(|protocol| {
        let exporter = MetricExporter::builder()
            .with_http()
            .with_http_client(client.clone())
            .with_protocol(protocol)
            .build()
            .inspect_err(|_| tracing::warn!("the OTLP metric exporter could not be built from OTEL_EXPORTER_OTLP_*; exporting no metrics"))
            .ok()?;
        Some(
            SdkMeterProvider::builder()
                .with_reader(PeriodicReader::builder(exporter).build())
                .with_resource(resource.clone())
                .build(),
        )
    });
    if let Some(tracer) = &tracer {
        global::set_tracer_provider(tracer.clone());
        global::set_text_map_propagator(TextMapCompositePropagator::new(vec![
            Box::new(TraceContextPropagator::new()),
            Box::new(BaggagePropagator::new()),
        ]));
    }
    if let Some(meter) = &meter {
        global::set_meter_provider(meter.clone());
    }
    Telemetry { tracer, meter }
}

/// The span of one run of the CLI, current on the main thread until it
/// ends (every session the run opens is its child).
pub(crate) struct RunSpan {
    attached: Option<opentelemetry::ContextGuard>,
}

impl Telemetry {
    /// Starts the run's span, `mcp-cli {verb}` (INTERNAL), when spans are
    /// exported: a child of the trace `TRACEPARENT` (and `TRACESTATE`)
    /// carry, when the process that started the CLI passed one, as
    /// OpenTelemetry's environment carriers do.
    pub(crate) fn run(&self, verb: &str) -> RunSpan {
        if self.tracer.is_none() {
            return RunSpan { attached: None };
        }
        let carrier: std::collections::HashMap<String, String> =
            ["traceparent", "tracestate", "baggage"]
                .into_iter()
                .filter_map(|key| {
                    Some((
                        key.to_owned(),
                        std::env::var(key.to_ascii_uppercase()).ok()?,
                    ))
                })
                .collect();
        let parent = global::get_text_map_propagator(|propagator| propagator.extract(&carrier));
        let tracer = global::tracer("mcp-cli");
        let span = tracer
            .span_builder(format!("mcp-cli {verb}").trim_end().to_owned())
            .with_kind(SpanKind::Internal)
            .start_with_context(&tracer, &parent);
        RunSpan {
            attached: Some(parent.with_span(span).attach()),
        }
    }
}

impl RunSpan {
    /// Ends the run's span, as failed when the run did not succeed.
    pub(crate) fn end(mut self, failed: bool) {
        if self.attached.is_none() {
            return;
        }
        let cx = opentelemetry::Context::current();
        let span = cx.span();
        if failed {
            span.set_status(Status::error(""));
        }
        span.end();
        self.attached = None;
    }
}

impl Drop for Telemetry {
    fn drop(&mut self) {
        // Shutting down exports what is still queued, then stops the
        // exporters' threads.
        if let Some(tracer) = self.tracer.take()
            && let Err(error) = tracer.shutdown_with_timeout(Duration::from_secs(5))
        {
            tracing::warn!("exporting spans: {error}");
        }
        if let Some(meter) = self.meter.take()
            && let Err(error) = meter.shutdown_with_timeout(Duration::from_secs(5))
        {
            tracing::warn!("exporting metrics: {error}");
        }
    }
}

/// The workspace's HTTP client (blocking: the SDK exports from its own
/// threads, outside any async runtime) as the exporter's.
#[derive(Debug, Clone)]
struct Client(reqwest::blocking::Client);

impl Client {
    fn new() -> reqwest::Result<Client> {
        reqwest::blocking::Client::builder()
            .timeout(Duration::from_secs(10))
            // A collector has no business redirecting telemetry elsewhere.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .map(Client)
    }
}

#[async_trait::async_trait]
impl HttpClient for Client {
    async fn send_bytes(&self, request: Request<Bytes>) -> Result<Response<Bytes>, HttpError> {
        let (parts, body) = request.into_parts();
        let response = self
            .0
            .request(parts.method, parts.uri.to_string())
            .headers(parts.headers)
            .body(body.to_vec())
            .send()
            // Errors reach the SDK's shutdown report: never the endpoint,
            // which may carry credentials.
            .map_err(reqwest::Error::without_url)?;
        let mut answer = Response::builder().status(response.status().as_u16());
        for (name, value) in response.headers() {
            answer = answer.header(name.as_str(), value.as_bytes());
        }
        let body = response.bytes().map_err(reqwest::Error::without_url)?;
        Ok(answer.body(body)?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn check(vars: &[(&str, &str)], expect: Result<(Option<Protocol>, Option<Protocol>), &str>) {
        let got = plan(|name| {
            vars.iter()
                .find(|(key, _)| *key == name)
                .map(|(_, value)| (*value).to_owned())
        });
        let got = got
            .map(|plan| (plan.traces, plan.metrics))
            .map_err(|refused| refused.variable);
        assert_eq!(got, expect, "{vars:?}");
    }

    const ENDPOINT: &str = "OTEL_EXPORTER_OTLP_ENDPOINT";
    const TRACES: &str = "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT";
    const METRICS: &str = "OTEL_EXPORTER_OTLP_METRICS_ENDPOINT";
    const PROTOCOL: &str = "OTEL_EXPORTER_OTLP_PROTOCOL";
    const URL: &str = "http://127.0.0.1:4318";

    #[test]
    fn the_standard_variables_decide_what_is_exported() {
        use Protocol::{HttpBinary as Proto, HttpJson as Json};
        // nothing set, or nothing but a protocol: nothing exported
        check(&[], Ok((None, None)));
        check(&[(PROTOCOL, "http/json")], Ok((None, None)));
        check(&[(ENDPOINT, "  ")], Ok((None, None)));
        // the general endpoint: both signals, protobuf by default
        check(&[(ENDPOINT, URL)], Ok((Some(Proto), Some(Proto))));
        check(
            &[(ENDPOINT, URL), (PROTOCOL, "http/protobuf")],
            Ok((Some(Proto), Some(Proto))),
        );
        check(
            &[(ENDPOINT, URL), (PROTOCOL, "http/json")],
            Ok((Some(Json), Some(Json))),
        );
        // one signal's endpoint: that signal alone
        check(&[(TRACES, URL)], Ok((Some(Proto), None)));
        check(
            &[(METRICS, URL), (PROTOCOL, "http/json")],
            Ok((None, Some(Json))),
        );
        // a signal's protocol wins over the general one
        check(
            &[
                (ENDPOINT, URL),
                (PROTOCOL, "http/json"),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/protobuf"),
            ],
            Ok((Some(Proto), Some(Json))),
        );
        // disabled wins over everything
        check(
            &[(ENDPOINT, URL), ("OTEL_SDK_DISABLED", "true")],
            Ok((None, None)),
        );
        check(
            &[(TRACES, URL), ("OTEL_SDK_DISABLED", "TRUE")],
            Ok((None, None)),
        );
        check(
            &[(ENDPOINT, URL), ("OTEL_SDK_DISABLED", "false")],
            Ok((Some(Proto), Some(Proto))),
        );
        // a protocol this build cannot speak refuses, naming the variable
        check(&[(ENDPOINT, URL), (PROTOCOL, "grpc")], Err(PROTOCOL));
        check(
            &[
                (TRACES, URL),
                ("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL", "http/xml"),
            ],
            Err("OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"),
        );
    }
}
