"""An MCP server on Python `mcp` 2.3 that reports the trace context it received.

Its one tool, `trace`, reads the request's `_meta` with OpenTelemetry's own
W3C propagators (`opentelemetry-api`: trace context and baggage) and answers
with what they extracted, as JSON text:

    {"trace_id": "<32 hex>", "parent_span_id": "<16 hex>", "sampled": true,
     "trace_state": "k=v,...", "baggage": {"k": "v"}}

(`trace_id` and `parent_span_id` are null when nothing valid arrived). It
speaks 2026-07-28 and the 2025 handshake, as the SDK serves both.

    python py_trace_server.py stdio
    python py_trace_server.py http PORT   streamable HTTP on 127.0.0.1:PORT/mcp
"""

import json
import sys

from mcp.server.mcpserver import Context, MCPServer
from opentelemetry import baggage, trace
from opentelemetry.baggage.propagation import W3CBaggagePropagator
from opentelemetry.propagators.composite import CompositePropagator
from opentelemetry.trace.propagation.tracecontext import TraceContextTextMapPropagator

server = MCPServer("py-trace-peer", version="2.3.0")
propagator = CompositePropagator(
    [TraceContextTextMapPropagator(), W3CBaggagePropagator()]
)


@server.tool()
def trace_context(ctx: Context) -> str:
    """Answers with the trace context this request carried."""
    meta = dict(ctx.request_context.meta or {})
    carrier = {key: value for key, value in meta.items() if isinstance(value, str)}
    extracted = propagator.extract(carrier)
    span = trace.get_current_span(extracted).get_span_context()
    valid = span.is_valid
    return json.dumps(
        {
            "trace_id": format(span.trace_id, "032x") if valid else None,
            "parent_span_id": format(span.span_id, "016x") if valid else None,
            "sampled": bool(span.trace_flags.sampled) if valid else None,
            "trace_state": span.trace_state.to_header() if valid else None,
            "baggage": {k: str(v) for k, v in baggage.get_all(extracted).items()},
        }
    )


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "stdio"
    if mode == "stdio":
        server.run("stdio")
    elif mode == "http" and len(sys.argv) > 2:
        server.run("streamable-http", host="127.0.0.1", port=int(sys.argv[2]))
    else:
        sys.exit("usage: py_trace_server.py stdio | http PORT")


if __name__ == "__main__":
    main()
