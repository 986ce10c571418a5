//! The server side (a gateway's downstream, a router): one SERVER span and
//! one `mcp.server.operation.duration` measurement per request served, as
//! the MCP semantic conventions define them, continuing the trace the
//! request's `params._meta` carries (`traceparent`, `tracestate`,
//! `baggage`, read by the host's global propagator). Whatever the handler
//! sends on (a gateway's upstream requests) runs within the served span's
//! context, so its own CLIENT spans are children of it and the trace goes
//! on to the next server.

use std::borrow::Cow;
use std::sync::OnceLock;
use std::time::Instant;

use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::metrics::Histogram;
use opentelemetry::propagation::Extractor;
use opentelemetry::trace::{SpanBuilder, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use serde_json::Value;

use super::propagate::TRACE_META_KEYS;
use super::span::{
    ERROR_TYPE, GEN_AI_OPERATION_NAME, GEN_AI_PROMPT_NAME, GEN_AI_TOOL_NAME, JSONRPC_REQUEST_ID,
    MCP_METHOD_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID, NETWORK_TRANSPORT,
    RPC_RESPONSE_STATUS_CODE, TOOL_ERROR,
};

/// `mcp.server.operation.duration`: from a request's arrival to its answer.
pub(crate) const SERVER_OPERATION_DURATION: &str = "mcp.server.operation.duration";

/// The tracer and the histogram every served request reports to, taken
/// from the global providers on first use.
struct Reporting {
    tracer: BoxedTracer,
    duration: Histogram<f64>,
}

fn reporting() -> &'static Reporting {
    static REPORTING: OnceLock<Reporting> = OnceLock::new();
    REPORTING.get_or_init(|| {
        let meter = global::meter_with_scope(super::scope());
        Reporting {
            tracer: global::tracer_with_scope(super::scope()),
            duration: meter
                .f64_histogram(SERVER_OPERATION_DURATION)
                .with_unit("s")
                .with_description(
                    "MCP request or notification duration as observed on the receiver from \
                     the time it was received until the result or ack is sent.",
                )
                .with_boundaries(super::metrics::BOUNDARIES.to_vec())
                .build(),
        }
    })
}

/// Reads the trace-context keys of a request's `_meta` for the propagator.
struct MetaCarrier<'a>(Option<&'a serde_json::Map<String, Value>>);

impl Extractor for MetaCarrier<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        let key = TRACE_META_KEYS
            .iter()
            .find(|reserved| reserved.eq_ignore_ascii_case(key))?;
        self.0?.get(*key)?.as_str()
    }

    fn keys(&self) -> Vec<&str> {
        TRACE_META_KEYS
            .iter()
            .copied()
            .filter(|key| self.0.is_some_and(|meta| meta.contains_key(*key)))
            .collect()
    }
}

/// The context a request's `params._meta` carries: the caller's span as a
/// remote parent, and its baggage. Empty when it carries none (or the host
/// installed no propagator).
pub fn extract_context(params: Option<&Value>) -> Context {
    let meta = params
        .and_then(|params| params.get("_meta"))
        .and_then(Value::as_object);
    global::get_text_map_propagator(|propagator| propagator.extract(&MetaCarrier(meta)))
}

/// `future` with the context current now: for a future that runs in a
/// task of its own, which does not inherit the spawner's context.
pub fn in_current_context<F: std::future::Future>(
    future: F,
) -> impl std::future::Future<Output = F::Output> {
    use opentelemetry::context::FutureExt;
    future.with_context(Context::current())
}

/// One request being served: its SERVER span's context (run the handler
/// within it), when it arrived, and the measurement's attributes.
#[derive(Debug)]
pub struct ServedRequest {
    cx: Context,
    started: Instant,
    tool_call: bool,
    measured: Vec<KeyValue>,
}

impl ServedRequest {
    /// Starts the span of request `id` of `method` with `params`, arriving
    /// over `network_transport` (`pipe`, `tcp`) at `protocol_version`,
    /// in the session `session_id` (an HTTP session's `Mcp-Session-Id`,
    /// where there is one), as a child of the trace its `_meta` carries.
    pub fn start(
        method: &str,
        id: &Value,
        params: Option<&Value>,
        protocol_version: Option<&str>,
        network_transport: Option<&'static str>,
        session_id: Option<&str>,
    ) -> ServedRequest {
        let parent = extract_context(params);
        let name = params
            .and_then(|params| params.get("name"))
            .and_then(Value::as_str);
        let tool_call = method == "tools/call";
        let target = match method {
            "tools/call" => name.map(|name| (GEN_AI_TOOL_NAME, name)),
            "prompts/get" => name.map(|name| (GEN_AI_PROMPT_NAME, name)),
            _ => None,
        };
        let mut measured = Vec::with_capacity(5);
        measured.push(KeyValue::new(MCP_METHOD_NAME, method.to_owned()));
        if let Some(version) = protocol_version {
            measured.push(KeyValue::new(MCP_PROTOCOL_VERSION, version.to_owned()));
        }
        if let Some(transport) = network_transport {
            measured.push(KeyValue::new(NETWORK_TRANSPORT, transport));
        }
        if let Some((key, name)) = target {
            measured.push(KeyValue::new(key, name.to_owned()));
        }
        if tool_call {
            measured.push(KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"));
        }
        let mut attributes = measured.clone();
        let id = match id {
            Value::String(id) => id.clone(),
            other => other.to_string(),
        };
        attributes.push(KeyValue::new(JSONRPC_REQUEST_ID, id));
        if let Some(session_id) = session_id {
            attributes.push(KeyValue::new(MCP_SESSION_ID, session_id.to_owned()));
        }
        let span_name = match target {
            Some((_, name)) => format!("{method} {name}"),
            None => method.to_owned(),
        };
        let span = reporting().tracer.build_with_context(
            SpanBuilder::from_name(span_name)
                .with_kind(SpanKind::Server)
                .with_attributes(attributes),
            &parent,
        );
        ServedRequest {
            cx: parent.with_span(span),
            started: Instant::now(),
            tool_call,
            measured,
        }
    }

    /// The context to serve the request within: its span is current, so
    /// what the handler sends on is its child and carries the trace on.
    pub fn context(&self) -> Context {
        self.cx.clone()
    }

    /// `answering` with the served span's context current, so what it
    /// sends on is the span's child and carries the trace on.
    pub async fn within<F: std::future::Future>(&self, answering: F) -> F::Output {
        use opentelemetry::context::FutureExt;
        answering.with_context(self.cx.clone()).await
    }

    /// Ends the span with the request's answer, a result or a JSON-RPC
    /// error's code and message (a `tools/call` result with `isError: true`
    /// is a `tool_error`), and records its duration.
    pub fn finish(mut self, answer: Result<&Value, (i64, &str)>) {
        let span = self.cx.span();
        let error_type: Option<Cow<'static, str>> = match answer {
            Ok(result)
                if self.tool_call
                    && result.get("isError").and_then(Value::as_bool) == Some(true) =>
            {
                span.set_status(Status::error(""));
                Some(Cow::Borrowed(TOOL_ERROR))
            }
            Ok(_) => None,
            Err((code, message)) => {
                span.set_attribute(KeyValue::new(RPC_RESPONSE_STATUS_CODE, code.to_string()));
                span.set_status(Status::error(message.to_owned()));
                Some(Cow::Owned(code.to_string()))
            }
        };
        if let Some(error_type) = error_type {
            span.set_attribute(KeyValue::new(ERROR_TYPE, error_type.clone()));
            self.measured.push(KeyValue::new(ERROR_TYPE, error_type));
        }
        span.end();
        reporting()
            .duration
            .record(self.started.elapsed().as_secs_f64(), &self.measured);
    }
}
