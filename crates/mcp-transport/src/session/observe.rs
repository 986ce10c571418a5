//! What the request path tells OpenTelemetry (feature `otel`, see
//! [`crate::telemetry`]): [`Shared::observe`] starts a request's span and
//! writes its trace context into the parameters' `_meta`, the one place
//! every request a session sends passes before it is encoded, whatever the
//! transport or the revision; [`Observed::end`] reads the outcome.
//!
//! Without the feature [`Observed`] is empty and both are empty inline
//! functions: the request path is the same code as without telemetry.

use super::Shared;
use super::pending::Body;
use crate::error::TransportError;
use crate::params::Params;

/// The telemetry of one request in flight.
#[cfg(feature = "otel")]
pub(super) struct Observed(crate::telemetry::span::Operation);

/// The telemetry of one request in flight: nothing, without `otel`.
#[cfg(not(feature = "otel"))]
pub(super) struct Observed;

/// The trace a message handed to the driver is sent in (what the
/// transport starts for it, an OAuth refresh, stays in the request's
/// trace): the current context, with `otel`.
#[cfg(feature = "otel")]
pub(super) type Carried = opentelemetry::Context;

/// Nothing, without `otel`.
#[cfg(not(feature = "otel"))]
pub(super) struct Carried;

/// The trace current now, to carry to the driver.
#[cfg_attr(not(feature = "otel"), inline(always))]
pub(super) fn carried() -> Carried {
    #[cfg(feature = "otel")]
    return opentelemetry::Context::current();
    #[cfg(not(feature = "otel"))]
    Carried
}

/// `sending` within the carried trace.
#[cfg_attr(not(feature = "otel"), inline(always))]
pub(super) async fn sent_in<F: std::future::Future>(carried: Carried, sending: F) -> F::Output {
    #[cfg(feature = "otel")]
    {
        use opentelemetry::context::FutureExt as _;
        sending.with_context(carried).await
    }
    #[cfg(not(feature = "otel"))]
    {
        let Carried = carried;
        sending.await
    }
}

/// `future` in the trace current now (a spawned task does not inherit
/// it), with `otel`.
#[cfg_attr(not(feature = "otel"), inline(always))]
pub(super) fn in_current_trace<F: std::future::Future>(
    future: F,
) -> impl std::future::Future<Output = F::Output> {
    #[cfg(feature = "otel")]
    return crate::telemetry::in_current_context(future);
    #[cfg(not(feature = "otel"))]
    future
}

/// The span of a step between requests (an input round, a task followed
/// to its end): see `telemetry::steps`.
pub(super) struct Step {
    #[cfg(feature = "otel")]
    step: crate::telemetry::steps::Step,
}

impl Step {
    /// Runs `step` within the span (what it sends is the span's child) and
    /// ends the span with its outcome.
    #[cfg_attr(not(feature = "otel"), inline(always))]
    pub(super) async fn run<T>(
        self,
        step: impl std::future::Future<Output = Result<T, TransportError>>,
    ) -> Result<T, TransportError> {
        #[cfg(feature = "otel")]
        {
            use opentelemetry::context::FutureExt as _;
            let outcome = step.with_context(self.step.context()).await;
            self.step.finish(outcome.as_ref().err());
            outcome
        }
        #[cfg(not(feature = "otel"))]
        step.await
    }
}

impl Shared {
    /// The span of one input round of `method` asking `requests` inputs.
    #[cfg_attr(not(feature = "otel"), inline(always))]
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub(super) fn input_round_step(&self, method: &str, requests: usize) -> Step {
        Step {
            #[cfg(feature = "otel")]
            step: self.telemetry.input_round(method, requests),
        }
    }

    /// The span of a task of `tool` followed to its end.
    #[cfg_attr(not(feature = "otel"), inline(always))]
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub(super) fn task_step(&self, tool: &str) -> Step {
        Step {
            #[cfg(feature = "otel")]
            step: self.telemetry.task(tool),
        }
    }
}

#[cfg(not(feature = "otel"))]
impl Shared {
    #[inline(always)]
    pub(super) fn observe<'p>(
        &self,
        _method: &str,
        _id: i64,
        params: Params<'p>,
    ) -> (Observed, Params<'p>) {
        (Observed, params)
    }
}

/// What keeps a request's context current: nothing, without `otel`.
#[cfg(not(feature = "otel"))]
pub(super) struct Attached;

#[cfg(not(feature = "otel"))]
impl Observed {
    #[inline(always)]
    pub(super) fn attach(&self) -> Attached {
        Attached
    }

    #[inline(always)]
    pub(super) fn end<K>(self, _shared: &Shared, _outcome: &Result<(Body, K), TransportError>) {}
}

#[cfg(feature = "otel")]
mod on {
    use std::borrow::Cow;

    use serde_json::Value;
    use serde_json::value::RawValue;

    use super::{Body, Observed, Params, Shared, TransportError};
    use crate::request_meta::with_meta;
    use crate::telemetry::propagate::{TRACE_META_KEYS, meta_entries};
    use crate::telemetry::span::{Ending, Request, error_type};

    impl Shared {
        /// Starts the span of request `id` of `method` and returns the
        /// parameters to send: with the span's context in `_meta`, in
        /// place of any trace keys the caller put there (so the server's
        /// parent is this request's span), or as they were when the
        /// context carries nothing.
        pub(in crate::session) fn observe<'p>(
            &self,
            method: &str,
            id: i64,
            params: Params<'p>,
        ) -> (Observed, Params<'p>) {
            let view = params.view();
            let request = Request {
                name: view.str_member("name"),
                uri: view.str_member("uri"),
                arguments: view.member("arguments"),
                session_id: self.session_id.as_ref().and_then(|reader| reader.read()),
            };
            let operation = self.telemetry.start(method, id, request);
            let entries = meta_entries(operation.context());
            if entries.is_empty() {
                return (Observed(operation), params);
            }
            let mut params = params.into_value();
            if let Some(Value::Object(meta)) = params.as_mut().and_then(|p| p.get_mut("_meta")) {
                for key in TRACE_META_KEYS {
                    meta.remove(key);
                }
            }
            let params = Params::Value(Some(with_meta(params, entries)));
            (Observed(operation), params)
        }
    }

    /// A result's top-level `isError`, read without building the rest.
    #[derive(serde::Deserialize)]
    struct IsErrorPeek<'a> {
        #[serde(rename = "isError", borrow, default)]
        is_error: Option<&'a RawValue>,
    }

    /// Whether a tool's result says `isError: true`.
    fn tool_error(body: &Body) -> bool {
        match body {
            Body::Value(value) => value.get("isError") == Some(&Value::Bool(true)),
            Body::Raw(raw) => serde_json::from_str::<IsErrorPeek<'_>>(raw.get())
                .ok()
                .and_then(|peek| peek.is_error)
                .is_some_and(|value| value.get() == "true"),
        }
    }

    fn text(body: &Body) -> Cow<'_, str> {
        match body {
            Body::Value(value) => Cow::Owned(value.to_string()),
            Body::Raw(raw) => Cow::Borrowed(raw.get()),
        }
    }

    impl Observed {
        /// Makes the request's context current until the guard is dropped
        /// (never held across an await: the guard stays on its thread).
        pub(in crate::session) fn attach(&self) -> opentelemetry::ContextGuard {
            self.0.context().clone().attach()
        }

        /// Ends the request's telemetry with its outcome.
        pub(in crate::session) fn end<K>(
            self,
            shared: &Shared,
            outcome: &Result<(Body, K), TransportError>,
        ) {
            let telemetry = &shared.telemetry;
            let ending = match outcome {
                Ok((body, _)) => {
                    let tool_call = self.0.is_tool_call();
                    Ending::Result {
                        tool_error: tool_call && tool_error(body),
                        text: (tool_call && telemetry.records_tool_content()).then(|| text(body)),
                    }
                }
                Err(error) => match error.kind() {
                    crate::TransportErrorKind::Rpc { code, message, .. } => Ending::Rpc {
                        code: *code,
                        message,
                    },
                    kind => Ending::Failed {
                        error_type: error_type(kind),
                    },
                },
            };
            self.0.finish(telemetry, ending);
        }
    }
}
