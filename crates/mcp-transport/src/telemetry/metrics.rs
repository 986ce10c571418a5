//! The two client histograms of the MCP semantic conventions, in seconds,
//! with the buckets the convention advises.

use opentelemetry::KeyValue;
use opentelemetry::metrics::{Histogram, Meter};

/// `mcp.client.operation.duration`: from a request's send to its answer.
pub(crate) const OPERATION_DURATION: &str = "mcp.client.operation.duration";
/// `mcp.client.session.duration`: from the session's start to its end.
pub(crate) const SESSION_DURATION: &str = "mcp.client.session.duration";

/// The convention's `ExplicitBucketBoundaries`, shared by both.
pub(crate) const BOUNDARIES: [f64; 14] = [
    0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 120.0, 300.0,
];

/// The instruments of one session.
#[derive(Debug)]
pub(crate) struct Instruments {
    operation: Histogram<f64>,
    session: Histogram<f64>,
}

impl Instruments {
    pub(crate) fn new(meter: &Meter) -> Instruments {
        let histogram = |name: &'static str, description: &'static str| {
            meter
                .f64_histogram(name)
                .with_unit("s")
                .with_description(description)
                .with_boundaries(BOUNDARIES.to_vec())
                .build()
        };
        Instruments {
            operation: histogram(
                OPERATION_DURATION,
                "The duration of the MCP request as observed on the sender from the time it \
                 was sent until the response is received.",
            ),
            session: histogram(
                SESSION_DURATION,
                "The duration of the MCP session as observed on the MCP client.",
            ),
        }
    }

    pub(crate) fn operation(&self, seconds: f64, attributes: &[KeyValue]) {
        self.operation.record(seconds, attributes);
    }

    pub(crate) fn session(&self, seconds: f64, attributes: &[KeyValue]) {
        self.session.record(seconds, attributes);
    }
}
