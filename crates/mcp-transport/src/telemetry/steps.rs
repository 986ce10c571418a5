//! The spans of what a session does between and around its requests, so a
//! trace shows where a turn's time went when it was not in a request:
//!
//! - `connect` (INTERNAL): opening the transport (a child started, an HTTP
//!   client made, a token fetched) and the handshake, whose `initialize`
//!   or `server/discover` CLIENT span is its child;
//! - `input_required {method}` (INTERNAL): one input round of a request
//!   the server answered with `input_required`, from that answer until the
//!   host's handler answered every input request (the user answering an
//!   elicitation, say); the retried request's CLIENT span follows it;
//! - `task {tool}` (INTERNAL): a task a `tools/call` started, followed to
//!   its end; the CLIENT spans of its polls and updates (`tasks/get`,
//!   `tasks/update`, `tasks/result`) and its input rounds are its
//!   children.
//!
//! Each is a child of the context current where the step runs (the host's
//! span, normally), carries the session's `network.transport`,
//! `server.address` and `server.port`, and `error.type` when the step
//! failed. Their names and attributes are this crate's, not the semantic
//! conventions' (which define the request spans only).

use opentelemetry::global::{self, BoxedTracer};
use opentelemetry::trace::{SpanBuilder, SpanKind, Status, TraceContextExt, Tracer};
use opentelemetry::{Context, KeyValue};

use super::span::{ERROR_TYPE, MCP_METHOD_NAME, MCP_PROTOCOL_VERSION, MCP_SESSION_ID};
use super::{SessionTelemetry, TelemetryOptions, network_transport, scope, shared_attributes};
use crate::error::TransportError;

/// `mcp.input_required.count`: how many input requests a round asked.
pub(crate) const INPUT_REQUESTS: &str = "mcp.input_required.count";

/// One step's span, ended by [`Step::finish`] (or as cancelled when
/// dropped first: the caller stopped waiting).
#[derive(Debug)]
pub(crate) struct Step {
    cx: Context,
    finished: bool,
}

impl Step {
    fn start(tracer: &BoxedTracer, name: String, attributes: Vec<KeyValue>) -> Step {
        let parent = Context::current();
        let builder = SpanBuilder::from_name(name)
            .with_kind(SpanKind::Internal)
            .with_attributes(attributes);
        let span = tracer.build_with_context(builder, &parent);
        Step {
            cx: parent.with_span(span),
            finished: false,
        }
    }

    /// The context holding the step's span: what runs within the step (the
    /// handshake of a connect) runs in it.
    pub(crate) fn context(&self) -> Context {
        self.cx.clone()
    }

    /// Ends the span: with `error.type` and status ERROR when `failure`
    /// says why it failed.
    pub(crate) fn finish(mut self, failure: Option<&TransportError>) {
        self.finished = true;
        let span = self.cx.span();
        if let Some(error) = failure {
            span.set_attribute(KeyValue::new(
                ERROR_TYPE,
                super::span::error_type(error.kind()),
            ));
            span.set_status(Status::error(""));
        }
        span.end();
    }

    /// Adds `attributes` learnt during the step.
    pub(crate) fn note(&self, attributes: Vec<KeyValue>) {
        self.cx.span().set_attributes(attributes);
    }
}

impl Drop for Step {
    fn drop(&mut self) {
        if self.finished {
            return;
        }
        super::span::end_cancelled(&self.cx, true);
    }
}

/// The `connect` span of a `kind` transport with `options`' server
/// address.
pub(crate) fn connecting(kind: &str, options: &TelemetryOptions) -> Step {
    // No session yet to hold a tracer: the global provider's.
    Step::start(
        &global::tracer_with_scope(scope()),
        "connect".to_owned(),
        shared_attributes(network_transport(kind), options),
    )
}

/// What a connect learnt: the revision, and the session id where the
/// transport has one.
pub(crate) fn connected(step: &Step, revision: &str, session_id: Option<String>) {
    let mut learnt = vec![KeyValue::new(MCP_PROTOCOL_VERSION, revision.to_owned())];
    if let Some(session_id) = session_id {
        learnt.push(KeyValue::new(MCP_SESSION_ID, session_id));
    }
    step.note(learnt);
}

impl SessionTelemetry {
    /// The span of one input round of `method`, asking `requests` inputs.
    pub(crate) fn input_round(&self, method: &str, requests: usize) -> Step {
        let mut attributes = self.step_attributes(method);
        attributes.push(KeyValue::new(
            INPUT_REQUESTS,
            i64::try_from(requests).unwrap_or(i64::MAX),
        ));
        Step::start(&self.tracer, format!("input_required {method}"), attributes)
    }

    /// The span of a task of `tool` followed to its end: every poll and
    /// update of it (`tasks/get`, `tasks/update`, `tasks/result`) and
    /// every input round it asks for are its children.
    pub(crate) fn task(&self, tool: &str) -> Step {
        let mut attributes = self.step_attributes("tools/call");
        attributes.push(KeyValue::new(
            super::span::GEN_AI_TOOL_NAME,
            tool.to_owned(),
        ));
        Step::start(&self.tracer, format!("task {tool}"), attributes)
    }

    fn step_attributes(&self, method: &str) -> Vec<KeyValue> {
        let mut attributes = Vec::with_capacity(self.shared.len() + 3);
        attributes.push(KeyValue::new(MCP_METHOD_NAME, method.to_owned()));
        if let Some(revision) = self.revision.get() {
            attributes.push(KeyValue::new(MCP_PROTOCOL_VERSION, revision.clone()));
        }
        attributes.extend(self.shared.iter().cloned());
        attributes
    }
}
