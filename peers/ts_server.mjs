// A small MCP server on the TypeScript SDK 2.x (`@modelcontextprotocol/server`),
// for the peer tests. It speaks 2026-07-28 (server/discover, per-request
// _meta, subscriptions/listen, input_required results) and falls back to the
// 2025 handshake for older clients, as the SDK's serving entries do.
//
//   node ts_server.mjs stdio
//   node ts_server.mjs http PORT      stateless streamable HTTP on 127.0.0.1:PORT/mcp
//
// Tools:
//   echo {text}   returns `text`
//   toggle        adds the tool `extra` when it is absent, removes it when
//                 present, and tells the client the tool list changed
//   extra         present only while toggled on; returns "extra"
//   confirm       asks the client for {confirm: boolean}: an input_required
//                 result at 2026-07-28, an elicitation/create request before;
//                 returns "confirmed: true|false" or "declined"
//   slow {ms}     waits `ms` (default 200) and returns "done" (this SDK has no
//                 tasks extension on the server side, so it is never a task)
import { createServer } from 'node:http';
import { McpServer, createMcpHandler, inputRequired, inputResponse } from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

const [mode = 'stdio', port] = process.argv.slice(2);

// Whether `extra` is listed. Module state, since the HTTP entry builds a
// fresh server per request.
let extraOn = false;
// Tells the connected client(s) that the tool list changed.
let notifyToolsChanged = () => {};

const confirmSchema = {
    type: 'object',
    properties: { confirm: { type: 'boolean', description: 'Go ahead?' } },
    required: ['confirm']
};

function text(value) {
    return { content: [{ type: 'text', text: value }] };
}

function answer(action, content) {
    if (action !== 'accept') return text('declined');
    return text(`confirmed: ${content?.confirm === true}`);
}

function build() {
    const server = new McpServer(
        { name: 'ts-sdk-peer', version: '2.4.0' },
        { capabilities: { tools: { listChanged: true } } }
    );
    server.registerTool('echo', { description: 'Returns its text', inputSchema: { text: z.string() } }, async ({ text: value }) =>
        text(value)
    );
    let extra;
    const addExtra = () => server.registerTool('extra', { description: 'Listed while toggled on' }, async () => text('extra'));
    if (extraOn) extra = addExtra();
    server.registerTool('toggle', { description: 'Adds or removes the tool `extra`' }, async () => {
        extraOn = !extraOn;
        if (mode === 'stdio') {
            // Registering and removing on the connection's own instance
            // sends the list change (over subscriptions/listen at 2026-07-28).
            if (extraOn) extra = addExtra();
            else extra?.remove();
        } else {
            notifyToolsChanged();
        }
        return text(extraOn ? 'added' : 'removed');
    });
    server.registerTool('confirm', { description: 'Asks the user to confirm' }, async ctx => {
        if (ctx.mcpReq.envelope !== undefined) {
            const response = inputResponse(ctx.mcpReq.inputResponses, 'confirm');
            if (response.kind === 'elicit') return answer(response.action, response.content);
            return inputRequired({
                inputRequests: { confirm: inputRequired.elicit({ message: 'Confirm?', requestedSchema: confirmSchema }) }
            });
        }
        const result = await ctx.mcpReq.elicitInput({ mode: 'form', message: 'Confirm?', requestedSchema: confirmSchema });
        return answer(result.action, result.content);
    });
    server.registerTool('slow', { description: 'Waits, then answers', inputSchema: { ms: z.number().optional() } }, async ({ ms }) => {
        await new Promise(resolve => setTimeout(resolve, ms ?? 200));
        return text('done');
    });
    return server;
}

if (mode === 'stdio') {
    serveStdio(() => build());
} else if (mode === 'http' && port !== undefined) {
    const handler = createMcpHandler(() => build());
    notifyToolsChanged = () => handler.notify.toolsChanged();
    const node = toNodeHandler(handler);
    createServer((req, res) => {
        if (!req.url?.startsWith('/mcp')) {
            res.writeHead(404).end();
            return;
        }
        node(req, res);
    }).listen(Number(port), '127.0.0.1', () => console.error(`listening on 127.0.0.1:${port}`));
} else {
    console.error('usage: ts_server.mjs stdio | http PORT');
    process.exit(2);
}
