// An MCP server on the TypeScript SDK 2.x that reports the trace context it
// received. Its one tool, `trace_context`, reads the request's `_meta` with
// OpenTelemetry's own W3C propagators (`@opentelemetry/api` and
// `@opentelemetry/core`: trace context and baggage) and answers with what
// they extracted, as JSON text:
//
//   {"trace_id": "<32 hex>", "parent_span_id": "<16 hex>", "sampled": true,
//    "trace_state": "k=v,...", "baggage": {"k": "v"}}
//
// (`trace_id` and `parent_span_id` are null when nothing valid arrived). It
// speaks 2026-07-28 and the 2025 handshake, as the SDK's entries do.
//
//   node ts_trace_server.mjs stdio
//   node ts_trace_server.mjs http PORT   stateless streamable HTTP on 127.0.0.1:PORT/mcp
import { createServer } from 'node:http';
import { McpServer, createMcpHandler } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { ROOT_CONTEXT, defaultTextMapGetter, isSpanContextValid, propagation, trace } from '@opentelemetry/api';
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from '@opentelemetry/core';

const [mode = 'stdio', port] = process.argv.slice(2);

const propagator = new CompositePropagator({
    propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()]
});

function traceContext(meta) {
    const carrier = {};
    for (const [key, value] of Object.entries(meta ?? {})) {
        if (typeof value === 'string') carrier[key] = value;
    }
    const extracted = propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter);
    const span = trace.getSpanContext(extracted);
    const valid = span !== undefined && isSpanContextValid(span);
    const baggage = {};
    for (const [key, entry] of propagation.getBaggage(extracted)?.getAllEntries() ?? []) {
        baggage[key] = entry.value;
    }
    return {
        trace_id: valid ? span.traceId : null,
        parent_span_id: valid ? span.spanId : null,
        sampled: valid ? (span.traceFlags & 1) === 1 : null,
        trace_state: valid ? (span.traceState?.serialize() ?? '') : null,
        baggage
    };
}

function build() {
    const server = new McpServer({ name: 'ts-trace-peer', version: '2.4.0' }, { capabilities: { tools: {} } });
    server.registerTool('trace_context', { description: 'Answers with the trace context this request carried' }, async ctx => ({
        content: [{ type: 'text', text: JSON.stringify(traceContext(ctx.mcpReq._meta)) }]
    }));
    return server;
}

if (mode === 'stdio') {
    serveStdio(() => build());
} else if (mode === 'http' && port !== undefined) {
    const node = toNodeHandler(createMcpHandler(() => build()));
    createServer((req, res) => {
        if (!req.url?.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        node(req, res);
    }).listen(Number(port), '127.0.0.1', () => console.error(`listening on 127.0.0.1:${port}`));
} else {
    console.error('usage: ts_trace_server.mjs stdio | http PORT');
    process.exit(2);
}
