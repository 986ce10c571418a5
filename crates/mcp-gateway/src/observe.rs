//! Where serving a request meets telemetry (feature `otel`): a SERVER span
//! and `mcp.server.operation.duration` per request a client sends, as the
//! transport's `telemetry::ServedRequest` makes them, continuing the trace
//! the request's `_meta` carries; the request is answered within the
//! span's context, so the upstream requests it makes are its children and
//! carry the trace on to the servers. Without the feature these are empty
//! inline functions.

use std::future::Future;

use mcp_transport::{ErrorObject, RequestId};
use serde_json::Value;

/// One request being served.
#[derive(Debug)]
pub(crate) struct Served {
    #[cfg(feature = "otel")]
    request: mcp_transport::telemetry::ServedRequest,
}

impl Served {
    /// Starts serving request `id` of `method`, at the revision `version`
    /// gives (when known; asked only with the feature), over `network`
    /// (`pipe`, `tcp`), in the HTTP session `session` where there is one.
    #[cfg_attr(not(feature = "otel"), inline(always))]
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub(crate) fn start(
        method: &str,
        id: &RequestId,
        params: &Value,
        version: impl FnOnce() -> Option<&'static str>,
        network: Option<&'static str>,
        session: Option<&str>,
    ) -> Served {
        Served {
            #[cfg(feature = "otel")]
            request: {
                let id = match id {
                    RequestId::Number(id) => Value::from(*id),
                    RequestId::String(id) => Value::String(id.clone()),
                };
                mcp_transport::telemetry::ServedRequest::start(
                    method,
                    &id,
                    Some(params),
                    version(),
                    network,
                    session,
                )
            },
        }
    }

    /// `answering` within the request's span.
    #[cfg_attr(not(feature = "otel"), inline(always))]
    pub(crate) async fn within<F: Future>(&self, answering: F) -> F::Output {
        #[cfg(feature = "otel")]
        return self.request.within(answering).await;
        #[cfg(not(feature = "otel"))]
        answering.await
    }

    /// Ends the span with the request's answer.
    #[cfg_attr(not(feature = "otel"), inline(always))]
    #[cfg_attr(not(feature = "otel"), allow(unused_variables))]
    pub(crate) fn finish(self, answer: &Result<Value, ErrorObject>) {
        #[cfg(feature = "otel")]
        self.request.finish(match answer {
            Ok(result) => Ok(result),
            Err(error) => Err((error.code, error.message.as_str())),
        });
    }
}

/// `future`, to run in a task of its own, in the trace current where it is
/// made (a spawned task does not inherit it).
#[cfg_attr(not(feature = "otel"), inline(always))]
pub(crate) fn in_current_trace<F: Future>(future: F) -> impl Future<Output = F::Output> {
    #[cfg(feature = "otel")]
    return mcp_transport::telemetry::in_current_context(future);
    #[cfg(not(feature = "otel"))]
    future
}
