//! The trace context a request carries in `params._meta`: what the host's
//! global text-map propagator writes for the request's context, limited to
//! the keys MCP reserves for it (`traceparent`, `tracestate`, `baggage`).
//! A propagator's other keys (B3's, Jaeger's) are not written: `_meta`
//! keys without a prefix are the protocol's.

use opentelemetry::Context;
use opentelemetry::global;
use opentelemetry::propagation::Injector;
use serde_json::Value;

/// The `_meta` keys that carry trace context.
pub(crate) const TRACE_META_KEYS: [&str; 3] = ["traceparent", "tracestate", "baggage"];

/// Collects what the propagator writes, keeping the reserved keys.
struct MetaEntries(Vec<(String, Value)>);

impl Injector for MetaEntries {
    fn set(&mut self, key: &str, value: String) {
        if let Some(key) = TRACE_META_KEYS.iter().find(|k| k.eq_ignore_ascii_case(key)) {
            self.0.push(((*key).to_owned(), Value::String(value)));
        }
    }
}

/// The `_meta` entries that carry `cx`, none when it holds no valid span
/// and no baggage (or the host installed no propagator).
pub(crate) fn meta_entries(cx: &Context) -> Vec<(String, Value)> {
    let mut entries = MetaEntries(Vec::new());
    global::get_text_map_propagator(|propagator| propagator.inject_context(cx, &mut entries));
    entries.0
}
