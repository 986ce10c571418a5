//! OpenTelemetry for a client session (feature `otel`), as the semantic
//! conventions for MCP (`gen-ai/mcp.md`) define it: one CLIENT span and one
//! `mcp.client.operation.duration` measurement per request the session
//! sends, one `mcp.client.session.duration` measurement per session, and
//! the current trace context in every request's `params._meta`.
//!
//! The crate depends on the OpenTelemetry API alone. The host chooses the
//! SDK, the exporter and the propagation format by installing the global
//! tracer provider, meter provider and text-map propagator
//! (`opentelemetry::global::set_*`) **before** it opens a session: each
//! session takes its tracer and meter from the global providers when it
//! starts. Without them every call lands in the API's no-op
//! implementations; with the feature off none of this is compiled.
//!
//! What is decided where:
//!
//! - `span`: the span's name, kind, attributes and status, and when the
//!   attributes go onto the host's own `execute_tool` span instead
//!   ([`ExecuteToolSpan`]);
//! - `propagate`: which keys of the current context reach `_meta`
//!   (`traceparent`, `tracestate`, `baggage`, nothing else);
//! - `metrics`: the two histograms, their buckets and attributes;
//! - `steps`: the spans of what happens between requests (a connect, an
//!   input round, the wait between a task's polls);
//! - `serve`: the server side ([`ServedRequest`]): a SERVER span and
//!   `mcp.server.operation.duration` per request served, continuing the
//!   trace the request's `_meta` carries.
//!
//! No attribute carries a secret: server addresses are hosts and ports
//! (never a URL, so never its credentials or query), resource URIs pass
//! `mcp_config::redaction::redact_url`, header and env values are never read, and a
//! tool's arguments and results are recorded only when the host opts in,
//! cut at [`TelemetryOptions::content_cap`] bytes.

pub(crate) mod metrics;
pub(crate) mod propagate;
mod serve;
pub(crate) mod span;
pub(crate) mod steps;

pub use serve::{ServedRequest, extract_context, in_current_context};

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::{InstrumentationScope, KeyValue};

/// What a host chooses about the telemetry of one session (in
/// [`SessionOptions::telemetry`](crate::SessionOptions::telemetry)).
#[derive(Debug, Clone)]
pub struct TelemetryOptions {
    /// Records `mcp.resource.uri` (redacted) on `resources/read`,
    /// `resources/subscribe` and `resources/unsubscribe`. Off by default:
    /// a URI may name private data.
    pub record_resource_uri: bool,
    /// Records `gen_ai.tool.call.arguments` and `gen_ai.tool.call.result`
    /// on `tools/call`, as JSON text cut at [`Self::content_cap`]. Off by
    /// default: they may hold anything the model or the server saw.
    pub record_tool_content: bool,
    /// The most bytes of a tool's arguments or result recorded (cut at a
    /// character boundary).
    pub content_cap: usize,
    /// `server.address`: the server's host, without scheme, credentials,
    /// path or query. [`connect`](crate::connect) fills it (and the port)
    /// from a remote entry's URL.
    pub server_address: Option<String>,
    /// `server.port`, with [`Self::server_address`].
    pub server_port: Option<u16>,
}

impl Default for TelemetryOptions {
    fn default() -> Self {
        TelemetryOptions {
            record_resource_uri: false,
            record_tool_content: false,
            content_cap: 4096,
            server_address: None,
            server_port: None,
        }
    }
}

impl TelemetryOptions {
    /// These options with the server's host and port taken from `url`
    /// (host-only: nothing else of the URL is kept); unchanged when `url`
    /// does not parse or has no host.
    pub fn with_server_url(mut self, url: &str) -> Self {
        if let Ok(url) = url::Url::parse(url)
            && let Some(host) = url.host_str()
        {
            self.server_address = Some(host.to_owned());
            self.server_port = url.port_or_known_default();
        }
        self
    }
}

/// A marker the host puts in the current OpenTelemetry context when the
/// span current there is its own GenAI `execute_tool` span: a `tools/call`
/// sent within it then starts no span of its own, and its MCP attributes
/// and outcome go onto the host's span (which the host ends), as the
/// convention asks of an instrumentation that can tell.
///
/// ```ignore
/// let cx = Context::current_with_span(tool_span).with_value(ExecuteToolSpan);
/// session.call_tool("search", args).with_context(cx).await
/// ```
#[derive(Debug, Clone, Copy)]
pub struct ExecuteToolSpan;

/// The instrumentation scope every span and measurement is reported under.
fn scope() -> InstrumentationScope {
    InstrumentationScope::builder("mcp-transport")
        .with_version(env!("CARGO_PKG_VERSION"))
        .with_schema_url("https://opentelemetry.io/schemas/1.37.0")
        .build()
}

/// `network.transport` for a transport kind: a child's pipes for stdio,
/// TCP under every HTTP and WebSocket kind, none for an in-process server.
pub(crate) fn network_transport(kind: &str) -> Option<&'static str> {
    match kind {
        "stdio" => Some("pipe"),
        "http" | "sse" | "ws" | "claudeai-proxy" => Some("tcp"),
        _ => None,
    }
}

/// `network.transport`, `server.address` and `server.port`: what every
/// span and measurement of a session shares.
fn shared_attributes(transport: Option<&'static str>, options: &TelemetryOptions) -> Vec<KeyValue> {
    let mut shared = Vec::with_capacity(3);
    if let Some(transport) = transport {
        shared.push(KeyValue::new(span::NETWORK_TRANSPORT, transport));
    }
    if let Some(address) = &options.server_address {
        shared.push(KeyValue::new(span::SERVER_ADDRESS, address.clone()));
        if let Some(port) = options.server_port {
            shared.push(KeyValue::new(span::SERVER_PORT, i64::from(port)));
        }
    }
    shared
}

/// One session's telemetry: its tracer and instruments, taken from the
/// global providers when the session starts, and the attributes every
/// measurement of the session shares.
pub(crate) struct SessionTelemetry {
    tracer: BoxedTracer,
    metrics: metrics::Instruments,
    options: TelemetryOptions,
    /// `network.transport`, `server.address`, `server.port`.
    shared: Vec<KeyValue>,
    started: Instant,
    /// Whether `mcp.client.session.duration` was recorded (the connection
    /// ended, or the session was dropped first).
    recorded: AtomicBool,
    /// `mcp.protocol.version`, once negotiated.
    revision: std::sync::OnceLock<String>,
}

impl std::fmt::Debug for SessionTelemetry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionTelemetry")
            .field("options", &self.options)
            .finish_non_exhaustive()
    }
}

impl SessionTelemetry {
    /// The telemetry of a session over a `kind` transport, started now.
    pub(crate) fn new(kind: &str, options: TelemetryOptions) -> SessionTelemetry {
        let shared = shared_attributes(network_transport(kind), &options);
        SessionTelemetry {
            tracer: global::tracer_with_scope(scope()),
            metrics: metrics::Instruments::new(&global::meter_with_scope(scope())),
            options,
            shared,
            started: Instant::now(),
            recorded: AtomicBool::new(false),
            revision: std::sync::OnceLock::new(),
        }
    }

    /// Whether the host records tools' arguments and results.
    pub(crate) fn records_tool_content(&self) -> bool {
        self.options.record_tool_content
    }

    /// Notes the negotiated revision, for `mcp.protocol.version` from then
    /// on.
    pub(crate) fn negotiated(&self, revision: &str) {
        let _ = self.revision.set(revision.to_owned());
    }

    /// Records the session's duration once: when its connection ends
    /// (`error_type` says why, unless the host closed it) or, failing
    /// that, when the session is dropped.
    pub(crate) fn ended(&self, error_type: Option<std::borrow::Cow<'static, str>>) {
        if self.recorded.swap(true, Ordering::AcqRel) {
            return;
        }
        let mut attributes = self.shared.clone();
        if let Some(revision) = self.revision.get() {
            attributes.push(KeyValue::new(span::MCP_PROTOCOL_VERSION, revision.clone()));
        }
        if let Some(error_type) = error_type {
            attributes.push(KeyValue::new(span::ERROR_TYPE, error_type));
        }
        self.metrics
            .session(self.started.elapsed().as_secs_f64(), &attributes);
    }
}

impl Drop for SessionTelemetry {
    fn drop(&mut self) {
        self.ended(None);
    }
}

/// `text` cut to at most `cap` bytes, at a character boundary.
pub(crate) fn capped(mut text: String, cap: usize) -> String {
    if text.len() > cap {
        let mut end = cap;
        while !text.is_char_boundary(end) {
            end -= 1;
        }
        text.truncate(end);
    }
    text
}
