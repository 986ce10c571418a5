//! A refresh of the tokens as a span of the host's trace (feature `otel`):
//! kind CLIENT, named `oauth refresh`, a child of the context current where
//! the refresh runs (the request that needed a fresh token). It carries
//! the token endpoint's `server.address` and `server.port` (the host and
//! port alone: never the URL, a token, a client secret or a code), and on
//! failure `error.type`: the endpoint's OAuth error code when it is one of
//! RFC 6749's, else its HTTP status, else `http`.

use opentelemetry::trace::{Span as _, SpanKind, Status, Tracer};
use opentelemetry::{InstrumentationScope, KeyValue, global};

use crate::token::TokenErrorResponse;

/// The OAuth error codes of RFC 6749 section 5.2: the only refusal texts
/// that become an `error.type` (anything else is the status).
const OAUTH_ERRORS: [&str; 6] = [
    "invalid_request",
    "invalid_client",
    "invalid_grant",
    "unauthorized_client",
    "unsupported_grant_type",
    "invalid_scope",
];

/// One refresh in flight.
pub(crate) struct Refreshing(global::BoxedSpan);

/// Starts the span of a refresh at `token_endpoint`.
pub(crate) fn refreshing(token_endpoint: &url::Url) -> Refreshing {
    let scope = InstrumentationScope::builder("mcp-oauth")
        .with_version(env!("CARGO_PKG_VERSION"))
        .build();
    let tracer = global::tracer_with_scope(scope);
    let mut attributes = Vec::with_capacity(2);
    if let Some(host) = token_endpoint.host_str() {
        attributes.push(KeyValue::new("server.address", host.to_owned()));
        if let Some(port) = token_endpoint.port_or_known_default() {
            attributes.push(KeyValue::new("server.port", i64::from(port)));
        }
    }
    let span = tracer
        .span_builder("oauth refresh")
        .with_kind(SpanKind::Client)
        .with_attributes(attributes)
        .start(&tracer);
    Refreshing(span)
}

impl Refreshing {
    /// Ends the span: the endpoint issued tokens, refused (`refused`), or
    /// could not be asked (`unreachable`).
    pub(crate) fn finish(mut self, refused: Option<&TokenErrorResponse>, unreachable: bool) {
        let error_type = match refused {
            Some(refused) => Some(
                refused
                    .error
                    .as_deref()
                    .filter(|code| OAUTH_ERRORS.contains(code))
                    .map_or_else(|| refused.status.to_string(), str::to_owned),
            ),
            None if unreachable => Some("http".to_owned()),
            None => None,
        };
        if let Some(error_type) = error_type {
            self.0
                .set_attribute(KeyValue::new("error.type", error_type));
            self.0.set_status(Status::error(""));
        }
        self.0.end();
    }
}
