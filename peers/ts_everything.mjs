// An "everything" MCP server on the TypeScript SDK 2.x (`@modelcontextprotocol/server`),
// written for this repository. It carries the tool / resource / prompt set that
// the server scenarios of the official conformance suite
// (`@modelcontextprotocol/conformance`, server mode) call, so that the suite can
// run against it directly or through a gateway that has it as its upstream, plus
// a few tools for the client tests (echo, toggle, slow).
//
//   node ts_everything.mjs stdio
//   node ts_everything.mjs http PORT      streamable HTTP on 127.0.0.1:PORT/mcp
//
// Run it from `.peers/` so Node resolves the SDK from `.peers/node_modules`.
//
// One factory (`build`) defines everything once and serves both protocol eras:
//
// * 2026-07-28 (per-request `_meta` envelope, stateless): served by the SDK's
//   `createMcpHandler` in strict mode (`legacy: 'reject'`), one fresh instance
//   per HTTP request. It answers `server/discover`, validates the envelope,
//   maps errors onto HTTP statuses, serves `subscriptions/listen`, and stamps
//   caching hints and `resultType`.
// * 2025-era (initialize handshake): served with sessions. Each `initialize`
//   gets its own instance on a `WebStandardStreamableHTTPServerTransport` with
//   a session id, an in-memory event store (resumable SSE, Last-Event-ID) and
//   a retry interval, so server->client requests (sampling, elicitation),
//   logging notifications, the standalone GET stream, DELETE and stream
//   resumption all work. Requests are routed with the SDK's own
//   `isLegacyRequest` predicate.
//
// Tools that need input from the client (sampling, elicitation, roots) are
// written once as multi-round-trip handlers returning `inputRequired(...)`:
// at 2026-07-28 the client sees an `input_required` result and retries; on a
// 2025-era connection the SDK's legacy shim turns each embedded request into a
// real `sampling/createMessage` / `elicitation/create` / `roots/list` request
// to the client and re-enters the handler with the answers.
// `requestState` is sealed with the SDK's HMAC codec (`createRequestStateCodec`)
// and verified before a handler runs, so a tampered state is refused (-32602).
//
// HTTP binds 127.0.0.1 only and rejects foreign Host / Origin headers (403).
//
// Tools (all listed on both eras)
//   conformance set:
//     test_simple_text, test_image_content, test_audio_content,
//     test_embedded_resource, test_multiple_content_types,
//     test_tool_with_logging (3 log notifications), test_tool_with_progress
//     (3 progress notifications for the request's progressToken),
//     test_error_handling (isError result), test_reconnection (closes its own
//     SSE stream on a 2025 session; the result is replayed on resumption),
//     test_sampling {prompt}, test_elicitation {message},
//     test_elicitation_sep1034_defaults, test_elicitation_sep1330_enums,
//     json_schema_2020_12_tool (raw JSON Schema 2020-12 inputSchema),
//     test_missing_capability (needs the client's sampling capability),
//     test_input_required_result_{elicitation,sampling,list_roots,
//       request_state,multiple_inputs,multi_round,tampered_state,capabilities},
//     test_streaming_elicitation, test_logging_tool,
//     test_trigger_tool_change, test_trigger_prompt_change (publish
//       tools / prompts list_changed to open listeners),
//     test_header_param {region} (inputSchema property with x-mcp-header
//       "Region": the Mcp-Param-Region header of SEP-2243)
//   client-test extras:
//     echo {text}       returns `text`
//     toggle            adds the tool `extra` when it is absent, removes it when
//                       present, and sends tools list_changed
//     extra             present only while toggled on; returns "extra"
//     slow {ms}         waits `ms` (default 200), honours cancellation, returns "done"
// Resources: test://static-text, test://static-binary, test://watched-resource
//   (subscribe / unsubscribe on 2025 sessions), template test://template/{id}/data
// Prompts: test_simple_prompt, test_prompt_with_arguments {arg1, arg2},
//   test_prompt_with_embedded_resource {resourceUri}, test_prompt_with_image,
//   test_input_required_result_prompt
// Also: completion/complete (prompt arguments, template variable),
//   logging/setLevel, resources/subscribe|unsubscribe (2025 era).
import { createServer } from 'node:http';
import { randomBytes, randomUUID } from 'node:crypto';
import { crc32, deflateSync } from 'node:zlib';
import {
    CLIENT_CAPABILITIES_META_KEY,
    McpServer,
    ResourceTemplate,
    WebStandardStreamableHTTPServerTransport,
    completable,
    createMcpHandler,
    createRequestStateCodec,
    inputRequired,
    inputResponse,
    isLegacyRequest
} from '@modelcontextprotocol/server';
import { serveStdio } from '@modelcontextprotocol/server/stdio';
import { localhostHostValidation, localhostOriginValidation, toNodeHandler } from '@modelcontextprotocol/node';
import * as z from 'zod';

const [mode = 'stdio', port] = process.argv.slice(2);

// ---------------------------------------------------------------------------
// Media built at startup: a 1x1 PNG (one opaque red pixel) and a short 8 kHz
// mono 16-bit WAV (a few samples of silence).

function pngPixel() {
    const chunk = (type, data) => {
        const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
        const length = Buffer.alloc(4);
        length.writeUInt32BE(data.length);
        const crc = Buffer.alloc(4);
        crc.writeUInt32BE(crc32(body));
        return Buffer.concat([length, body, crc]);
    };
    const header = Buffer.alloc(13);
    header.writeUInt32BE(1, 0); // width
    header.writeUInt32BE(1, 4); // height
    header.writeUInt8(8, 8); // bit depth
    header.writeUInt8(6, 9); // RGBA
    const scanline = Buffer.from([0, 0xff, 0, 0, 0xff]); // filter 0, red, opaque
    return Buffer.concat([
        Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
        chunk('IHDR', header),
        chunk('IDAT', deflateSync(scanline)),
        chunk('IEND', Buffer.alloc(0))
    ]).toString('base64');
}

function wavSilence(samples = 8) {
    const rate = 8000;
    const data = samples * 2;
    const wav = Buffer.alloc(44 + data);
    wav.write('RIFF', 0, 'ascii');
    wav.writeUInt32LE(36 + data, 4);
    wav.write('WAVE', 8, 'ascii');
    wav.write('fmt ', 12, 'ascii');
    wav.writeUInt32LE(16, 16); // fmt chunk size
    wav.writeUInt16LE(1, 20); // PCM
    wav.writeUInt16LE(1, 22); // mono
    wav.writeUInt32LE(rate, 24);
    wav.writeUInt32LE(rate * 2, 28); // byte rate
    wav.writeUInt16LE(2, 32); // block align
    wav.writeUInt16LE(16, 34); // bits per sample
    wav.write('data', 36, 'ascii');
    wav.writeUInt32LE(data, 40);
    return wav.toString('base64');
}

const PNG = pngPixel();
const WAV = wavSilence();

// ---------------------------------------------------------------------------
// Shared state.

// Whether `extra` is listed (module state: HTTP builds many instances).
let extraOn = false;
// Long-lived instances (2025 HTTP sessions, the stdio connection) that must
// learn about `toggle`. Per-request 2026 HTTP instances are not kept; they
// are built with the current `extraOn` and listeners hear about changes via
// the handler's notifier.
const liveServers = new Set();
// The 2026 HTTP handler's change notifier (HTTP mode only).
let notifier;
// URIs subscribed to on 2025 sessions (informational).
const subscriptions = new Map();

// requestState integrity: sealed with a per-process HMAC key; one process
// serves every round of a flow, so a random key is enough.
const stateCodec = createRequestStateCodec({ key: randomBytes(32), ttlSeconds: 600 });

// ---------------------------------------------------------------------------
// Helpers.

const text = value => ({ content: [{ type: 'text', text: value }] });
const sleep = (ms, signal) =>
    new Promise((resolve, reject) => {
        if (signal?.aborted) return reject(signal.reason ?? new Error('cancelled'));
        const timer = setTimeout(resolve, ms);
        signal?.addEventListener(
            'abort',
            () => {
                clearTimeout(timer);
                reject(signal.reason ?? new Error('cancelled'));
            },
            { once: true }
        );
    });

// The accepted form content of an elicitation answer, or undefined.
function accepted(ctx, key) {
    const view = inputResponse(ctx.mcpReq.inputResponses, key);
    return view.kind === 'elicit' && view.action === 'accept' ? (view.content ?? {}) : undefined;
}

function samplingText(ctx, key) {
    const view = inputResponse(ctx.mcpReq.inputResponses, key);
    if (view.kind !== 'sampling') return undefined;
    const content = view.result.content;
    const first = Array.isArray(content) ? content[0] : content;
    return first?.type === 'text' ? first.text : '';
}

function rootsOf(ctx, key) {
    const view = inputResponse(ctx.mcpReq.inputResponses, key);
    return view.kind === 'roots' ? view.roots : undefined;
}

const stringField = (content, field, fallback = 'unknown') =>
    typeof content?.[field] === 'string' ? content[field] : fallback;

function formSchema(properties, required = Object.keys(properties)) {
    return { type: 'object', properties, required };
}

const nameRequest = message =>
    inputRequired.elicit({ message, requestedSchema: formSchema({ name: { type: 'string', description: 'Your name' } }) });

// The client capabilities declared for this request: the per-request
// envelope at 2026-07-28, or what the client declared at initialize.
function clientCapabilities(server, ctx) {
    return ctx.mcpReq.envelope?.[CLIENT_CAPABILITIES_META_KEY] ?? server.server.getClientCapabilities?.() ?? {};
}

// JSON Schema 2020-12 input schema, listed verbatim.
const JSON_SCHEMA_2020_12 = {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    type: 'object',
    $defs: {
        address: {
            $anchor: 'postalAddress',
            type: 'object',
            properties: { street: { type: 'string' }, city: { type: 'string' } }
        }
    },
    properties: {
        name: { type: 'string' },
        address: { $ref: '#/$defs/address' },
        contactMethod: { type: 'string', enum: ['phone', 'email'] },
        phone: { type: 'string' },
        email: { type: 'string' }
    },
    allOf: [{ anyOf: [{ required: ['phone'] }, { required: ['email'] }] }],
    if: { properties: { contactMethod: { const: 'phone' } }, required: ['contactMethod'] },
    then: { required: ['phone'] },
    else: { required: ['email'] },
    additionalProperties: false
};

// Listed as-is; arguments are passed through unchecked (the SDK's default
// validator is not a 2020-12 dialect validator).
const rawJsonSchema = schema => ({
    '~standard': {
        version: 1,
        vendor: 'ts-everything',
        jsonSchema: { input: () => schema, output: () => schema },
        validate: value =>
            value !== null && typeof value === 'object' && !Array.isArray(value)
                ? { value }
                : { issues: [{ message: 'arguments must be an object' }] }
    }
});

const ARG_COMPLETIONS = ['testValue1', 'testValue2', 'test', 'example'];
const completeFrom = list => value => list.filter(item => item.startsWith(value ?? ''));

// ---------------------------------------------------------------------------
// The factory.

/** @param {'legacy' | 'modern'} era */
function build(era) {
    const server = new McpServer(
        { name: 'ts-everything', version: '1.0.0' },
        {
            capabilities: {
                tools: { listChanged: true },
                resources: { subscribe: true, listChanged: true },
                prompts: { listChanged: true },
                logging: {},
                completions: {}
            },
            // 2026-07-28 caching hints (ignored on 2025 wires). tools/list is
            // mutable through `toggle`, so it is not cached.
            cacheHints: {
                'tools/list': { ttlMs: 0, cacheScope: 'public' },
                'prompts/list': { ttlMs: 300000, cacheScope: 'public' },
                'resources/list': { ttlMs: 300000, cacheScope: 'public' },
                'resources/templates/list': { ttlMs: 300000, cacheScope: 'public' },
                'resources/read': { ttlMs: 300000, cacheScope: 'private' },
                'server/discover': { ttlMs: 300000, cacheScope: 'public' }
            },
            requestState: { verify: stateCodec.verify }
        }
    );
    const tool = (name, config, cb) => server.registerTool(name, config, cb);

    // ----- content tools -----
    tool('test_simple_text', { description: 'Returns one text block' }, async () =>
        text('This is a simple text response for testing.')
    );
    tool('test_image_content', { description: 'Returns one PNG image block' }, async () => ({
        content: [{ type: 'image', data: PNG, mimeType: 'image/png' }]
    }));
    tool('test_audio_content', { description: 'Returns one WAV audio block' }, async () => ({
        content: [{ type: 'audio', data: WAV, mimeType: 'audio/wav' }]
    }));
    tool('test_embedded_resource', { description: 'Returns one embedded text resource' }, async () => ({
        content: [
            {
                type: 'resource',
                resource: { uri: 'test://embedded-resource', mimeType: 'text/plain', text: 'This is an embedded resource content.' }
            }
        ]
    }));
    tool('test_multiple_content_types', { description: 'Returns text, image and embedded resource blocks' }, async () => ({
        content: [
            { type: 'text', text: 'Multiple content types test:' },
            { type: 'image', data: PNG, mimeType: 'image/png' },
            {
                type: 'resource',
                resource: {
                    uri: 'test://mixed-content-resource',
                    mimeType: 'application/json',
                    text: JSON.stringify({ test: 'data', value: 123 })
                }
            }
        ]
    }));
    tool('test_error_handling', { description: 'Always fails with a tool error (isError result)' }, async () => {
        throw new Error('This tool intentionally returns an error for testing');
    });

    // ----- notifications during a call -----
    tool('test_tool_with_logging', { description: 'Sends three info log notifications while running' }, async ctx => {
        for (const [i, message] of ['Tool execution started', 'Tool processing data', 'Tool execution completed'].entries()) {
            if (i > 0) await sleep(50, ctx.mcpReq.signal);
            await ctx.mcpReq.log('info', message, 'ts-everything');
        }
        return text('Tool with logging executed successfully');
    });
    tool('test_tool_with_progress', { description: 'Reports progress 0, 50, 100 of 100 for the request progressToken' }, async ctx => {
        const token = ctx.mcpReq._meta?.progressToken;
        for (const [i, progress] of [0, 50, 100].entries()) {
            if (i > 0) await sleep(50, ctx.mcpReq.signal);
            if (token !== undefined) {
                await ctx.mcpReq.notify({
                    method: 'notifications/progress',
                    params: { progressToken: token, progress, total: 100, message: `Completed step ${progress} of 100` }
                });
            }
        }
        return text(String(token ?? 'no progress token'));
    });
    tool('test_logging_tool', { description: 'Logs once (only delivered when the request asks for logs)' }, async ctx => {
        await ctx.mcpReq.log('info', 'test_logging_tool ran', 'ts-everything');
        return text('Logging evaluated');
    });
    tool(
        'test_reconnection',
        { description: 'Closes its own SSE response stream mid-call (2025 sessions); the result is delivered on resumption' },
        async ctx => {
            ctx.http?.closeSSE?.();
            await sleep(100, ctx.mcpReq.signal);
            return text('Reconnection test completed successfully. The result arrived after the response stream was closed.');
        }
    );

    // ----- input from the client (multi-round-trip; legacy shim on 2025) -----
    tool(
        'test_sampling',
        { description: 'Asks the client for an LLM completion of `prompt`', inputSchema: z.object({ prompt: z.string().describe('Prompt to send') }) },
        async ({ prompt }, ctx) => {
            const answer = samplingText(ctx, 'completion');
            if (answer !== undefined) return text(`LLM response: ${answer}`);
            return inputRequired({
                inputRequests: {
                    completion: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: prompt } }],
                        maxTokens: 100
                    })
                }
            });
        }
    );
    tool(
        'test_elicitation',
        { description: 'Asks the user for input with `message`', inputSchema: z.object({ message: z.string().describe('Message shown to the user') }) },
        async ({ message }, ctx) => {
            const view = inputResponse(ctx.mcpReq.inputResponses, 'response');
            if (view.kind === 'elicit') return text(`User response: action=${view.action}, content=${JSON.stringify(view.content ?? {})}`);
            return inputRequired({
                inputRequests: {
                    response: inputRequired.elicit({
                        message,
                        requestedSchema: formSchema({ response: { type: 'string', description: 'Your answer' } })
                    })
                }
            });
        }
    );
    tool(
        'test_elicitation_sep1034_defaults',
        { description: 'Elicits a form whose fields all carry defaults (SEP-1034)' },
        async ctx => {
            const view = inputResponse(ctx.mcpReq.inputResponses, 'form');
            if (view.kind === 'elicit') return text(`Elicitation completed: action=${view.action}, content=${JSON.stringify(view.content ?? {})}`);
            return inputRequired({
                inputRequests: {
                    form: inputRequired.elicit({
                        message: 'Please check these fields; each has a default',
                        requestedSchema: {
                            type: 'object',
                            properties: {
                                name: { type: 'string', description: 'Name', default: 'John Doe' },
                                age: { type: 'integer', description: 'Age', default: 30 },
                                score: { type: 'number', description: 'Score', default: 95.5 },
                                status: {
                                    type: 'string',
                                    description: 'Status',
                                    enum: ['active', 'inactive', 'pending'],
                                    default: 'active'
                                },
                                verified: { type: 'boolean', description: 'Verified', default: true }
                            },
                            required: []
                        }
                    })
                }
            });
        }
    );
    tool(
        'test_elicitation_sep1330_enums',
        { description: 'Elicits single- and multi-select enums, titled and untitled (SEP-1330)' },
        async ctx => {
            const view = inputResponse(ctx.mcpReq.inputResponses, 'choices');
            if (view.kind === 'elicit') return text(`Elicitation completed: action=${view.action}, content=${JSON.stringify(view.content ?? {})}`);
            const titled = prefix => [1, 2, 3].map(n => ({ const: `value${n}`, title: `${prefix} ${n}` }));
            return inputRequired({
                inputRequests: {
                    choices: inputRequired.elicit({
                        message: 'Please pick from these lists',
                        requestedSchema: {
                            type: 'object',
                            properties: {
                                untitledSingle: { type: 'string', description: 'Pick one', enum: ['option1', 'option2', 'option3'] },
                                titledSingle: { type: 'string', description: 'Pick one (titled)', oneOf: titled('Choice') },
                                legacyEnum: {
                                    type: 'string',
                                    description: 'Pick one (enumNames)',
                                    enum: ['opt1', 'opt2', 'opt3'],
                                    enumNames: ['First', 'Second', 'Third']
                                },
                                untitledMulti: {
                                    type: 'array',
                                    description: 'Pick some',
                                    minItems: 1,
                                    maxItems: 3,
                                    items: { type: 'string', enum: ['option1', 'option2', 'option3'] }
                                },
                                titledMulti: {
                                    type: 'array',
                                    description: 'Pick some (titled)',
                                    minItems: 1,
                                    maxItems: 3,
                                    items: { anyOf: titled('Item') }
                                }
                            },
                            required: []
                        }
                    })
                }
            });
        }
    );
    tool(
        'test_missing_capability',
        { description: "Needs the client's sampling capability (answers -32021 without it)" },
        async ctx => {
            if (samplingText(ctx, 'probe') !== undefined) return text('Success');
            // Returning a sampling input request to a client that did not
            // declare sampling is refused by the SDK with -32021
            // (requiredCapabilities: {sampling: {}}), HTTP 400.
            return inputRequired({
                inputRequests: {
                    probe: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: 'Say "ok".' } }],
                        maxTokens: 10
                    })
                }
            });
        }
    );
    tool('test_input_required_result_elicitation', { description: 'Multi-round-trip: asks for a name (elicitation)' }, async ctx => {
        const content = accepted(ctx, 'user_name');
        if (content !== undefined) return text(`Hello, ${stringField(content, 'name')}!`);
        return inputRequired({ inputRequests: { user_name: nameRequest('What is your name?') } });
    });
    tool('test_input_required_result_sampling', { description: 'Multi-round-trip: asks for a completion (sampling)' }, async ctx => {
        const answer = samplingText(ctx, 'sample_request');
        if (answer !== undefined) return text(`Sampling result: ${answer}`);
        return inputRequired({
            inputRequests: {
                sample_request: inputRequired.createMessage({
                    messages: [{ role: 'user', content: { type: 'text', text: 'What is the capital of France?' } }],
                    maxTokens: 100
                })
            }
        });
    });
    tool('test_input_required_result_list_roots', { description: 'Multi-round-trip: asks for the roots' }, async ctx => {
        const roots = rootsOf(ctx, 'roots_request');
        if (roots !== undefined) return text(`Found ${roots.length} root(s)`);
        return inputRequired({ inputRequests: { roots_request: inputRequired.listRoots() } });
    });
    tool(
        'test_input_required_result_request_state',
        { description: 'Multi-round-trip: asks for confirmation and carries requestState' },
        async ctx => {
            const state = ctx.mcpReq.requestState();
            const content = accepted(ctx, 'confirm');
            if (state?.kind === 'request-state' && content?.ok === true) return text('state-ok: requestState validated');
            return inputRequired({
                inputRequests: {
                    confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: formSchema({ ok: { type: 'boolean' } }) })
                },
                requestState: await stateCodec.mint({ kind: 'request-state', nonce: randomUUID() })
            });
        }
    );
    tool(
        'test_input_required_result_multiple_inputs',
        { description: 'Multi-round-trip: elicitation, sampling and roots in one round' },
        async ctx => {
            const state = ctx.mcpReq.requestState();
            const name = accepted(ctx, 'user_name');
            const greeting = samplingText(ctx, 'greeting');
            const roots = rootsOf(ctx, 'client_roots');
            if (state?.kind === 'multiple-inputs' && name !== undefined && greeting !== undefined && roots !== undefined) {
                return text(`Name: ${stringField(name, 'name')}; Greeting: ${greeting}; Roots: ${roots.length}`);
            }
            return inputRequired({
                inputRequests: {
                    user_name: nameRequest('What is your name?'),
                    greeting: inputRequired.createMessage({
                        messages: [{ role: 'user', content: { type: 'text', text: 'Generate a greeting' } }],
                        maxTokens: 50
                    }),
                    client_roots: inputRequired.listRoots()
                },
                requestState: await stateCodec.mint({ kind: 'multiple-inputs', nonce: randomUUID() })
            });
        }
    );
    tool('test_input_required_result_multi_round', { description: 'Multi-round-trip: two rounds (name, then colour)' }, async ctx => {
        const state = ctx.mcpReq.requestState();
        if (state?.round === 1) {
            const content = accepted(ctx, 'step1');
            if (content !== undefined) {
                return inputRequired({
                    inputRequests: {
                        step2: inputRequired.elicit({
                            message: 'Step 2: What is your favorite color?',
                            requestedSchema: formSchema({ color: { type: 'string' } })
                        })
                    },
                    requestState: await stateCodec.mint({ round: 2, name: stringField(content, 'name'), nonce: randomUUID() })
                });
            }
        }
        if (state?.round === 2) {
            const content = accepted(ctx, 'step2');
            if (content !== undefined) return text(`Multi-round complete for ${state.name} who likes ${stringField(content, 'color')}`);
        }
        return inputRequired({
            inputRequests: { step1: nameRequest('Step 1: What is your name?') },
            requestState: await stateCodec.mint({ round: 1, nonce: randomUUID() })
        });
    });
    tool(
        'test_input_required_result_tampered_state',
        { description: 'Multi-round-trip: integrity-protected requestState (tampering is refused)' },
        async ctx => {
            // A state that fails the HMAC never reaches this handler: the
            // SDK answers -32602 "Invalid or expired requestState".
            const state = ctx.mcpReq.requestState();
            if (state?.kind === 'tamper-test' && accepted(ctx, 'confirm') !== undefined) return text('integrity-ok: state verified');
            return inputRequired({
                inputRequests: {
                    confirm: inputRequired.elicit({ message: 'Please confirm', requestedSchema: formSchema({ ok: { type: 'boolean' } }) })
                },
                requestState: await stateCodec.mint({ kind: 'tamper-test', nonce: randomUUID() })
            });
        }
    );
    tool(
        'test_input_required_result_capabilities',
        { description: 'Multi-round-trip: only asks for what the client declared (elicitation and/or sampling)' },
        async ctx => {
            const responses = Object.keys(ctx.mcpReq.inputResponses ?? {});
            if (responses.length > 0) return text(`capabilities-ok: received ${responses.join(',')}`);
            const caps = clientCapabilities(server, ctx);
            const inputRequests = {};
            if (caps.elicitation) {
                inputRequests.elicit_input = inputRequired.elicit({
                    message: 'Elicitation input',
                    requestedSchema: formSchema({ value: { type: 'string' } })
                });
            }
            if (caps.sampling) {
                inputRequests.sample_input = inputRequired.createMessage({
                    messages: [{ role: 'user', content: { type: 'text', text: 'Sample request' } }],
                    maxTokens: 50
                });
            }
            if (Object.keys(inputRequests).length === 0) return text('No supported capabilities declared');
            return inputRequired({
                inputRequests,
                requestState: await stateCodec.mint({ kind: 'capabilities-test', nonce: randomUUID() })
            });
        }
    );
    tool(
        'test_streaming_elicitation',
        { description: 'Needs user input: returns an input_required result (never a request on the response stream)' },
        async ctx => {
            const token = ctx.mcpReq._meta?.progressToken;
            if (token !== undefined) {
                await ctx.mcpReq.notify({ method: 'notifications/progress', params: { progressToken: token, progress: 50, total: 100 } });
            }
            const content = accepted(ctx, 'detail');
            if (content !== undefined) return text(`Streaming complete: ${stringField(content, 'detail', '')}`);
            return inputRequired({
                inputRequests: {
                    detail: inputRequired.elicit({ message: 'Any detail to add?', requestedSchema: formSchema({ detail: { type: 'string' } }) })
                }
            });
        }
    );
    tool('json_schema_2020_12_tool', { description: 'Lists a JSON Schema 2020-12 input schema verbatim', inputSchema: rawJsonSchema(JSON_SCHEMA_2020_12) }, async args =>
        text(`JSON Schema 2020-12 tool called with: ${JSON.stringify(args)}`)
    );

    // ----- list-change triggers -----
    tool('test_trigger_tool_change', { description: 'Publishes notifications/tools/list_changed' }, async () => {
        notifyToolsChanged();
        return text('Mutation triggered');
    });
    tool('test_trigger_prompt_change', { description: 'Publishes notifications/prompts/list_changed' }, async () => {
        notifier?.promptsChanged();
        for (const live of liveServers) if (live.isConnected()) live.sendPromptListChanged();
        return text('Mutation triggered');
    });

    // SEP-2243 custom header: on the 2026-07-28 HTTP wire the client mirrors
    // `region` into `Mcp-Param-Region`, and the SDK checks the two agree.
    tool(
        'test_header_param',
        {
            description: 'Echoes `region`, which is mirrored into the Mcp-Param-Region header on HTTP (SEP-2243)',
            inputSchema: z.object({ region: z.string().describe('Region name').meta({ 'x-mcp-header': 'Region' }) })
        },
        async ({ region }) => text(`region: ${region}`)
    );

    // ----- client-test extras -----
    tool('echo', { description: 'Returns its text', inputSchema: z.object({ text: z.string() }) }, async ({ text: value }) => text(value));
    tool('toggle', { description: 'Adds the tool `extra` when absent, removes it when present' }, async () => {
        extraOn = !extraOn;
        for (const live of liveServers) {
            if (live.isConnected()) applyExtra(live);
            else liveServers.delete(live);
        }
        notifier?.toolsChanged();
        return text(extraOn ? 'added' : 'removed');
    });
    tool(
        'slow',
        { description: 'Waits `ms` milliseconds (default 200), then answers "done"', inputSchema: z.object({ ms: z.number().int().min(0).optional() }) },
        async ({ ms }, ctx) => {
            await sleep(ms ?? 200, ctx.mcpReq.signal);
            return text('done');
        }
    );
    applyExtra(server);

    // ----- resources -----
    server.registerResource(
        'static-text',
        'test://static-text',
        { title: 'Static text', description: 'A fixed text resource', mimeType: 'text/plain' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'This is the content of the static text resource.' }] })
    );
    server.registerResource(
        'static-binary',
        'test://static-binary',
        { title: 'Static binary', description: 'A fixed binary resource (PNG)', mimeType: 'image/png' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }] })
    );
    server.registerResource(
        'watched-resource',
        'test://watched-resource',
        { title: 'Watched resource', description: 'A resource clients may subscribe to', mimeType: 'text/plain' },
        async uri => ({ contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'Watched resource content' }] })
    );
    server.registerResource(
        'template',
        new ResourceTemplate('test://template/{id}/data', {
            list: undefined,
            complete: { id: completeFrom(['1', '2', '3', '123']) }
        }),
        { title: 'Template', description: 'JSON data for any {id}', mimeType: 'application/json' },
        async (uri, { id }) => ({
            contents: [
                {
                    uri: uri.href,
                    mimeType: 'application/json',
                    text: JSON.stringify({ id, templateTest: true, data: `Data for ID: ${id}` })
                }
            ]
        })
    );
    if (era === 'legacy') {
        // resources/subscribe and resources/unsubscribe exist on the 2025 era
        // only (2026-07-28 uses subscriptions/listen).
        server.server.setRequestHandler('resources/subscribe', async (request, ctx) => {
            subscriptions.set(`${ctx.sessionId ?? 'stdio'} ${request.params.uri}`, true);
            return {};
        });
        server.server.setRequestHandler('resources/unsubscribe', async (request, ctx) => {
            subscriptions.delete(`${ctx.sessionId ?? 'stdio'} ${request.params.uri}`);
            return {};
        });
    }

    // ----- prompts -----
    server.registerPrompt('test_simple_prompt', { title: 'Simple prompt', description: 'A prompt without arguments' }, async () => ({
        messages: [{ role: 'user', content: { type: 'text', text: 'This is a simple prompt for testing.' } }]
    }));
    server.registerPrompt(
        'test_prompt_with_arguments',
        {
            title: 'Prompt with arguments',
            description: 'A prompt with two required arguments',
            argsSchema: z.object({
                arg1: completable(z.string().describe('First argument'), completeFrom(ARG_COMPLETIONS)),
                arg2: completable(z.string().describe('Second argument'), completeFrom(ARG_COMPLETIONS))
            })
        },
        async ({ arg1, arg2 }) => ({
            messages: [{ role: 'user', content: { type: 'text', text: `Prompt with arguments: arg1='${arg1}', arg2='${arg2}'` } }]
        })
    );
    server.registerPrompt(
        'test_prompt_with_embedded_resource',
        {
            title: 'Prompt with embedded resource',
            description: 'A prompt that embeds the resource named by resourceUri',
            argsSchema: z.object({ resourceUri: z.string().describe('URI of the resource to embed') })
        },
        async ({ resourceUri }) => ({
            messages: [
                {
                    role: 'user',
                    content: { type: 'resource', resource: { uri: resourceUri, mimeType: 'text/plain', text: 'Embedded resource content for testing.' } }
                },
                { role: 'user', content: { type: 'text', text: 'Please process the embedded resource above.' } }
            ]
        })
    );
    server.registerPrompt('test_prompt_with_image', { title: 'Prompt with image', description: 'A prompt that includes an image' }, async () => ({
        messages: [
            { role: 'user', content: { type: 'image', data: PNG, mimeType: 'image/png' } },
            { role: 'user', content: { type: 'text', text: 'Please analyze the image above.' } }
        ]
    }));
    server.registerPrompt(
        'test_input_required_result_prompt',
        { title: 'Prompt needing input', description: 'Multi-round-trip prompt: asks for context first' },
        async ctx => {
            const content = accepted(ctx, 'user_context');
            if (content !== undefined) {
                return { messages: [{ role: 'user', content: { type: 'text', text: `Prompt with context: ${stringField(content, 'context')}` } }] };
            }
            return inputRequired({
                inputRequests: {
                    user_context: inputRequired.elicit({
                        message: 'What context should the prompt use?',
                        requestedSchema: formSchema({ context: { type: 'string' } })
                    })
                }
            });
        }
    );

    return server;
}

// `extra` on one instance, following `extraOn`. Registering or removing a
// tool on a connected instance sends tools/list_changed to its client.
const extraTools = new WeakMap();
function applyExtra(server) {
    const current = extraTools.get(server);
    if (extraOn && current === undefined) {
        extraTools.set(server, server.registerTool('extra', { description: 'Listed while toggled on' }, async () => text('extra')));
    } else if (!extraOn && current !== undefined) {
        current.remove();
        extraTools.delete(server);
    }
}

function notifyToolsChanged() {
    notifier?.toolsChanged();
    for (const live of liveServers) if (live.isConnected()) live.sendToolListChanged();
}

// ---------------------------------------------------------------------------
// 2025-era HTTP sessions.

// In-memory event store for one session: resumable SSE streams.
class SessionEventStore {
    #events = new Map(); // eventId -> { streamId, message }
    #seq = 0;
    async storeEvent(streamId, message) {
        const eventId = `${streamId}.${++this.#seq}`;
        this.#events.set(eventId, { streamId, message });
        if (this.#events.size > 10000) this.#events.delete(this.#events.keys().next().value);
        return eventId;
    }
    async getStreamIdForEventId(eventId) {
        return this.#events.get(eventId)?.streamId;
    }
    async replayEventsAfter(lastEventId, { send }) {
        const last = this.#events.get(lastEventId);
        if (last === undefined) throw new Error(`unknown event id ${lastEventId}`);
        let after = false;
        for (const [eventId, event] of this.#events) {
            if (eventId === lastEventId) after = true;
            else if (after && event.streamId === last.streamId) await send(eventId, event.message);
        }
        return last.streamId;
    }
}

const sessions = new Map(); // session id -> { transport, server }

function jsonRpcError(status, code, message) {
    return new Response(JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } }), {
        status,
        headers: { 'content-type': 'application/json' }
    });
}

async function serveLegacy(request) {
    const sessionId = request.headers.get('mcp-session-id');
    if (sessionId) {
        const session = sessions.get(sessionId);
        if (session === undefined) return jsonRpcError(404, -32001, 'Session not found');
        return session.transport.handleRequest(request);
    }
    if (request.method === 'POST') {
        let body;
        try {
            body = await request.clone().json();
        } catch {
            return jsonRpcError(400, -32700, 'Parse error');
        }
        if (body?.method === 'initialize') {
            const server = build('legacy');
            const transport = new WebStandardStreamableHTTPServerTransport({
                sessionIdGenerator: () => randomUUID(),
                eventStore: new SessionEventStore(),
                retryInterval: 1000,
                onsessioninitialized: id => {
                    sessions.set(id, { transport, server });
                    liveServers.add(server);
                },
                onsessionclosed: id => {
                    sessions.delete(id);
                    liveServers.delete(server);
                }
            });
            transport.onclose = () => {
                if (transport.sessionId) sessions.delete(transport.sessionId);
                liveServers.delete(server);
            };
            await server.connect(transport);
            return transport.handleRequest(request, { parsedBody: body });
        }
    }
    return jsonRpcError(400, -32000, 'Bad Request: no valid session id (send initialize first)');
}

// ---------------------------------------------------------------------------
// Entry points.

if (mode === 'stdio') {
    serveStdio(ctx => {
        const server = build(ctx.era);
        liveServers.add(server);
        return server;
    });
} else if (mode === 'http' && port !== undefined) {
    const modern = createMcpHandler(() => build('modern'), {
        legacy: 'reject',
        onerror: error => console.error(`[modern] ${error.message}`)
    });
    notifier = modern.notify;
    const node = toNodeHandler({
        fetch: async (request, options) => ((await isLegacyRequest(request)) ? serveLegacy(request) : modern.fetch(request, options))
    });
    const validHost = localhostHostValidation();
    const validOrigin = localhostOriginValidation();
    createServer((req, res) => {
        if (!validHost(req, res) || !validOrigin(req, res)) return;
        if (new URL(req.url ?? '/', 'http://localhost').pathname !== '/mcp') {
            res.writeHead(404).end();
            return;
        }
        node(req, res);
    }).listen(Number(port), '127.0.0.1', () => console.error(`listening on http://127.0.0.1:${port}/mcp`));
} else {
    console.error('usage: ts_everything.mjs stdio | http PORT');
    process.exit(2);
}
