//! The span of one request: its name (`{mcp.method.name} {target}`), kind
//! (CLIENT), attributes and status, as the MCP semantic conventions define
//! them, and the one case where the attributes go onto the host's span.

use std::borrow::Cow;
use std::time::Instant;

use opentelemetry::trace::{SpanBuilder, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};
use serde_json::Value;

use super::{ExecuteToolSpan, SessionTelemetry, capped};
use crate::error::{HttpFailure, TransportErrorKind};

pub(crate) const MCP_METHOD_NAME: &str = "mcp.method.name";
pub(crate) const MCP_PROTOCOL_VERSION: &str = "mcp.protocol.version";
pub(crate) const MCP_RESOURCE_URI: &str = "mcp.resource.uri";
pub(crate) const MCP_SESSION_ID: &str = "mcp.session.id";
pub(crate) const GEN_AI_TOOL_NAME: &str = "gen_ai.tool.name";
pub(crate) const GEN_AI_PROMPT_NAME: &str = "gen_ai.prompt.name";
pub(crate) const GEN_AI_OPERATION_NAME: &str = "gen_ai.operation.name";
pub(crate) const GEN_AI_TOOL_CALL_ARGUMENTS: &str = "gen_ai.tool.call.arguments";
pub(crate) const GEN_AI_TOOL_CALL_RESULT: &str = "gen_ai.tool.call.result";
pub(crate) const JSONRPC_REQUEST_ID: &str = "jsonrpc.request.id";
pub(crate) const NETWORK_TRANSPORT: &str = "network.transport";
pub(crate) const SERVER_ADDRESS: &str = "server.address";
pub(crate) const SERVER_PORT: &str = "server.port";
pub(crate) const RPC_RESPONSE_STATUS_CODE: &str = "rpc.response.status_code";
pub(crate) const ERROR_TYPE: &str = "error.type";

/// `error.type` of a `tools/call` result with `isError: true`.
pub(crate) const TOOL_ERROR: &str = "tool_error";

/// How a request ended, as telemetry tells it.
#[derive(Debug)]
pub(crate) enum Ending<'a> {
    /// A result: `tool_error` when it is a tool's with `isError: true`;
    /// `text`, the result as it arrived, when the host records results.
    Result {
        tool_error: bool,
        text: Option<Cow<'a, str>>,
    },
    /// The server's JSON-RPC error.
    Rpc { code: i64, message: &'a str },
    /// No answer: the connection ended, the deadline passed, the answer
    /// could not be read; `error_type` names the class.
    Failed { error_type: Cow<'static, str> },
}

/// `error.type` of a request that got no answer (or a server's JSON-RPC
/// error, as its code): a low-cardinality class, never the error's text.
pub(crate) fn error_type(kind: &TransportErrorKind) -> Cow<'static, str> {
    use TransportErrorKind as K;
    Cow::Borrowed(match kind {
        K::Rpc { code, .. } => return Cow::Owned(code.to_string()),
        K::Http {
            failure: HttpFailure::Status(status),
            ..
        } => return Cow::Owned(status.to_string()),
        K::Timeout { .. } | K::ConnectTimeout { .. } => "timeout",
        K::Closed => "connection_closed",
        K::ConnectionLost { .. } | K::StreamBroken { .. } => "connection_lost",
        K::ServerExited { .. } => "server_exited",
        K::Io { .. } => "io",
        K::Http { .. } => "http",
        K::Protocol { .. } | K::NotJson { .. } | K::InvalidMessage { .. } | K::TooDeep { .. } => {
            "protocol_error"
        }
        K::MessageTooLarge { .. } | K::FrameTooLarge { .. } => "message_too_large",
        K::InputRequestFailed { .. } | K::InputRoundsExceeded { .. } => "input_required_failed",
        K::TaskFailed { .. } => "task_failed",
        K::TaskCancelled { .. } => "task_cancelled",
        _ => "_OTHER",
    })
}

/// One request in flight, from its send to its answer: the context that
/// holds its span (to propagate), when it started, and what its duration
/// is measured with.
#[derive(Debug)]
pub(crate) struct Operation {
    cx: Context,
    /// Whether the span is this operation's own (ended here) rather than
    /// the host's `execute_tool` span (left for the host to end).
    own: bool,
    started: Instant,
    tool_call: bool,
    /// The attributes of `mcp.client.operation.duration`.
    measured: Vec<KeyValue>,
    finished: bool,
}

/// The span name's target: the tool's or the prompt's name.
fn target<'p>(method: &str, name: Option<&'p str>) -> Option<(&'static str, &'p str)> {
    match method {
        "tools/call" => name.map(|name| (GEN_AI_TOOL_NAME, name)),
        "prompts/get" => name.map(|name| (GEN_AI_PROMPT_NAME, name)),
        _ => None,
    }
}

/// What [`SessionTelemetry::start`] reads of a request's parameters.
#[derive(Debug, Default)]
pub(crate) struct Request<'p> {
    /// `params.name`.
    pub(crate) name: Option<&'p str>,
    /// `params.uri`.
    pub(crate) uri: Option<&'p str>,
    /// `params.arguments`.
    pub(crate) arguments: Option<&'p Value>,
    /// The session id the server gave the connection, when it has one.
    pub(crate) session_id: Option<String>,
}

impl SessionTelemetry {
    /// Starts the span of request `id` of `method` as a child of the
    /// current context (or, for a `tools/call` inside the host's
    /// `execute_tool` span, takes that span).
    pub(crate) fn start(&self, method: &str, id: i64, request: Request<'_>) -> Operation {
        let parent = Context::current();
        let target = target(method, request.name);
        let tool_call = method == "tools/call";
        let mut measured = Vec::with_capacity(self.shared.len() + 4);
        measured.push(KeyValue::new(MCP_METHOD_NAME, method.to_owned()));
        if let Some((key, name)) = target {
            measured.push(KeyValue::new(key, name.to_owned()));
        }
        if tool_call {
            measured.push(KeyValue::new(GEN_AI_OPERATION_NAME, "execute_tool"));
        }
        if let Some(revision) = self.revision.get() {
            measured.push(KeyValue::new(MCP_PROTOCOL_VERSION, revision.clone()));
        }
        measured.extend(self.shared.iter().cloned());

        let mut attributes = measured.clone();
        attributes.push(KeyValue::new(JSONRPC_REQUEST_ID, id.to_string()));
        if let Some(session_id) = request.session_id {
            attributes.push(KeyValue::new(MCP_SESSION_ID, session_id));
        }
        if self.options.record_resource_uri
            && matches!(
                method,
                "resources/read" | "resources/subscribe" | "resources/unsubscribe"
            )
            && let Some(uri) = request.uri
        {
            let uri = mcp_config::redaction::redact_url(uri, None);
            attributes.push(KeyValue::new(MCP_RESOURCE_URI, uri));
        }
        if tool_call
            && self.options.record_tool_content
            && let Some(arguments) = request.arguments
        {
            let text = capped(arguments.to_string(), self.options.content_cap);
            attributes.push(KeyValue::new(GEN_AI_TOOL_CALL_ARGUMENTS, text));
        }

        let host_span = tool_call
            && parent.get::<ExecuteToolSpan>().is_some()
            && parent.span().span_context().is_valid();
        let cx = if host_span {
            parent.span().set_attributes(attributes);
            parent
        } else {
            let name = match target {
                Some((_, name)) => format!("{method} {name}"),
                None => method.to_owned(),
            };
            let builder = SpanBuilder::from_name(name)
                .with_kind(SpanKind::Client)
                .with_attributes(attributes);
            let span = self.tracer.build_with_context(builder, &parent);
            parent.with_span(span)
        };
        Operation {
            cx,
            own: !host_span,
            started: Instant::now(),
            tool_call,
            measured,
            finished: false,
        }
    }
}

impl Operation {
    /// Whether the request is a `tools/call`.
    pub(crate) fn is_tool_call(&self) -> bool {
        self.tool_call
    }

    /// The context to propagate: the one holding this request's span.
    pub(crate) fn context(&self) -> &Context {
        &self.cx
    }

    /// Ends the span (when it is this operation's own) with `ending`, and
    /// records the request's duration.
    pub(crate) fn finish(mut self, telemetry: &SessionTelemetry, ending: Ending<'_>) {
        self.finished = true;
        let span = self.cx.span();
        let mut measured = std::mem::take(&mut self.measured);
        match ending {
            Ending::Result { tool_error, text } => {
                if self.tool_call
                    && telemetry.options.record_tool_content
                    && let Some(text) = text
                {
                    let text = capped(text.into_owned(), telemetry.options.content_cap);
                    span.set_attribute(KeyValue::new(GEN_AI_TOOL_CALL_RESULT, text));
                }
                if tool_error {
                    span.set_attribute(KeyValue::new(ERROR_TYPE, TOOL_ERROR));
                    span.set_status(Status::error(""));
                    measured.push(KeyValue::new(ERROR_TYPE, TOOL_ERROR));
                }
            }
            Ending::Rpc { code, message } => {
                let code = code.to_string();
                let failure = [
                    KeyValue::new(RPC_RESPONSE_STATUS_CODE, code.clone()),
                    KeyValue::new(ERROR_TYPE, code),
                ];
                span.set_attributes(failure.iter().cloned());
                span.set_status(Status::error(message.to_owned()));
                measured.extend(failure);
            }
            Ending::Failed { error_type } => {
                span.set_attribute(KeyValue::new(ERROR_TYPE, error_type.clone()));
                span.set_status(Status::error(""));
                measured.push(KeyValue::new(ERROR_TYPE, error_type));
            }
        }
        telemetry
            .metrics
            .operation(self.started.elapsed().as_secs_f64(), &measured);
        if self.own {
            span.end();
        }
    }
}

impl Drop for Operation {
    /// A request whose caller stopped waiting ends its span as cancelled
    /// (its duration is not a request's: no measurement).
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        end_cancelled(&self.cx, self.own);
    }
}

/// Marks the span of `cx` as cancelled (its caller stopped waiting) and,
/// when it is `own`, ends it (a host's span is the host's to end).
pub(crate) fn end_cancelled(cx: &Context, own: bool) {
    let span = cx.span();
    span.set_attribute(KeyValue::new(ERROR_TYPE, "cancelled"));
    span.set_status(Status::error(""));
    if own {
        span.end();
    }
}
