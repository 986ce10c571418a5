// A scenario driver on the TypeScript SDK 2.x client (`@modelcontextprotocol/client`
// 2.4.0), for testing a server (the gateway) with a client no one here wrote.
// Run it from `.peers/` (where `cargo xtask peers` copies it) so Node finds the SDK:
//
//   node ts_client.mjs [--legacy] [--steps a,b,…] stdio <command> [args…]
//   node ts_client.mjs [--legacy] [--steps a,b,…] http http://127.0.0.1:PORT/mcp
//
// Without `--legacy` the client pins 2026-07-28 (`versionNegotiation: { mode:
// { pin: '2026-07-28' } }`: `server/discover`, then per-request `_meta`; no
// fallback). `--legacy` is the SDK's own default, `mode: 'legacy'`: the
// 2025-11-25 `initialize` handshake. Over stdio the pinned mode runs the
// server command twice: the SDK sends its `server/discover` probe to a
// short-lived sibling process, then starts the session's own.
//
// One JSON object per step on stdout, `{"step", "ok", "detail"}`: `connect`,
// then the fixed scenario (`list`, `call`, `read`, `prompt`, `elicit`,
// `list_changed`, `cancel`; `--steps` runs a subset). Exit 0 only if every
// step passed. The server's stderr is passed through to ours.
//
// The names the steps use are in NAMES below; `MCP_DRIVER_NAMES` (a JSON
// object with some of its keys) overrides them, e.g. to point the steps at
// another fixture.
import { readdirSync, readFileSync } from 'node:fs';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';

const NAMES = {
    // list: tools/list must include this tool
    listedTool: 'test_simple_text',
    // call: must answer a text block (also the call made after the cancel)
    textTool: 'test_simple_text',
    textArgs: {},
    // read: resources/read, must answer text contents
    resource: 'test://static-text',
    // prompt: prompts/get, must answer messages
    prompt: 'test_simple_prompt',
    promptArgs: {},
    // elicit: the tool asks for input (elicitation/create, or an input_required
    // result at 2026-07-28); the driver accepts with content that fits the
    // requested schema; the result text must match `elicitAccepted`
    elicitTool: 'test_elicitation',
    elicitArgs: { message: 'Please answer the driver' },
    elicitAccepted: 'action=accept|confirmed: true',
    // list_changed: calling toggleTool adds or removes toggledTool and sends
    // tools/list_changed; called a second time to restore the state
    toggleTool: 'toggle',
    toggledTool: 'extra',
    // cancel: a call that takes longer than the cancel window
    slowTool: 'slow',
    slowArgs: { ms: 10000 }
};
Object.assign(NAMES, JSON.parse(process.env.MCP_DRIVER_NAMES ?? '{}'));

const MODERN = '2026-07-28';
const LEGACY = '2025-11-25';
const STEPS = ['list', 'call', 'read', 'prompt', 'elicit', 'list_changed', 'cancel'];
const STEP_TIMEOUT_MS = 20000;
const NOTIFY_WINDOW_MS = 5000;
const CANCEL_AFTER_MS = 300;
const CANCEL_DEADLINE_MS = 2000;

function usage() {
    console.error('usage: ts_client.mjs [--legacy] [--steps a,b,...] (stdio <command> [args...] | http <url>)');
    process.exit(2);
}

// Leading flags, then the transport; `http <url>` may also take the flags after the URL.
const argv = process.argv.slice(2);
let legacy = false;
let steps = STEPS;
function flag(args) {
    const arg = args[0];
    if (arg === '--legacy') {
        legacy = true;
        args.shift();
        return true;
    }
    if (arg === '--steps') {
        steps = (args[1] ?? '').split(',').filter(Boolean);
        if (steps.some(s => !STEPS.includes(s))) usage();
        args.splice(0, 2);
        return true;
    }
    return false;
}
while (flag(argv));
const [mode, ...target] = argv;
if (mode === 'http') {
    const rest = target.splice(1);
    while (flag(rest));
    if (rest.length > 0) usage();
}
if (!((mode === 'stdio' && target.length >= 1) || (mode === 'http' && target.length === 1))) usage();

let failed = false;
function emit(step, ok, detail) {
    if (!ok) failed = true;
    process.stdout.write(JSON.stringify({ step, ok, detail }) + '\n');
}

const sleep = ms => new Promise(resolve => setTimeout(resolve, ms));
function within(ms, promise, what) {
    let timer;
    const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what}: no answer within ${ms} ms`)), ms);
    });
    return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}
// A server that never answered may still run (the SDK's stdio probe runs it
// on a sibling process of its own): end our child processes before leaving.
function killChildren() {
    for (const pid of readdirSync('/proc').filter(name => /^[0-9]+$/.test(name))) {
        try {
            const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
            const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
            if (ppid === process.pid) process.kill(Number(pid), 'SIGKILL');
        } catch {
            // gone already
        }
    }
}
const describe = error => (error instanceof Error ? `${error.name}: ${error.message}` : String(error));
const texts = result => (result?.content ?? []).filter(block => block.type === 'text').map(block => block.text);

// Content that fits a requested elicitation schema: each property gets its
// default, else a value of its type.
function fill(schema) {
    const content = {};
    for (const [key, prop] of Object.entries(schema?.properties ?? {})) {
        if (prop.default !== undefined) content[key] = prop.default;
        else if (prop.enum) content[key] = prop.enum[0];
        else if (prop.oneOf) content[key] = prop.oneOf[0].const;
        else if (prop.type === 'boolean') content[key] = true;
        else if (prop.type === 'integer' || prop.type === 'number') content[key] = prop.minimum ?? 1;
        else if (prop.type === 'array') {
            const items = prop.items ?? {};
            content[key] = [items.enum?.[0] ?? items.anyOf?.[0]?.const ?? 'driver'];
        } else content[key] = 'driver answer';
    }
    return content;
}

const elicitations = [];
const toolsChanged = [];
let toolsChangedWaiter;

const client = new Client(
    { name: 'ts-sdk-driver', version: '2.4.0' },
    {
        capabilities: { elicitation: { form: {} } },
        versionNegotiation: legacy ? { mode: 'legacy' } : { mode: { pin: MODERN } }
    }
);
client.setRequestHandler('elicitation/create', async request => {
    const content = fill(request.params.requestedSchema);
    elicitations.push({ message: request.params.message, content });
    return { action: 'accept', content };
});
client.setNotificationHandler('notifications/tools/list_changed', () => {
    toolsChanged.push(Date.now());
    toolsChangedWaiter?.();
});

const transport =
    mode === 'stdio'
        ? new StdioClientTransport({ command: target[0], args: target.slice(1), stderr: 'inherit' })
        : new StreamableHTTPClientTransport(new URL(target[0]));

const toolNames = async () => (await client.listTools(undefined, { cacheMode: 'refresh' })).tools.map(tool => tool.name);

const run = {
    async list() {
        const names = await toolNames();
        return [names.includes(NAMES.listedTool), { tools: names }];
    },
    async call() {
        const result = await client.callTool({ name: NAMES.textTool, arguments: NAMES.textArgs });
        const text = texts(result);
        return [!result.isError && text.length > 0, { text, isError: result.isError ?? false }];
    },
    async read() {
        const result = await client.readResource({ uri: NAMES.resource }, { cacheMode: 'refresh' });
        const text = (result.contents ?? []).filter(c => typeof c.text === 'string').map(c => c.text);
        return [text.length > 0, { text }];
    },
    async prompt() {
        const result = await client.getPrompt({ name: NAMES.prompt, arguments: NAMES.promptArgs });
        const messages = result.messages ?? [];
        return [messages.length > 0, { messages: messages.length, first: messages[0]?.content }];
    },
    async elicit() {
        const before = elicitations.length;
        const result = await client.callTool({ name: NAMES.elicitTool, arguments: NAMES.elicitArgs });
        const text = texts(result);
        const asked = elicitations.slice(before);
        const accepted = !result.isError && text.some(t => new RegExp(NAMES.elicitAccepted).test(t));
        return [asked.length > 0 && accepted, { asked, text }];
    },
    async list_changed() {
        // At 2026-07-28 list changes come only on a `subscriptions/listen`
        // stream; its notifications reach the same handler.
        let subscription;
        if (!legacy) subscription = await client.listen({ toolsListChanged: true });
        try {
            const wait = () => {
                const seen = toolsChanged.length;
                return new Promise(resolve => {
                    toolsChangedWaiter = () => toolsChanged.length > seen && resolve(true);
                    setTimeout(() => resolve(false), NOTIFY_WINDOW_MS);
                });
            };
            const before = await toolNames();
            const notified = wait();
            const started = Date.now();
            const answer = texts(await client.callTool({ name: NAMES.toggleTool, arguments: {} }));
            const seen = await notified;
            const latency = seen ? toolsChanged.at(-1) - started : null;
            const after = await toolNames();
            const flipped = before.includes(NAMES.toggledTool) !== after.includes(NAMES.toggledTool);
            // Put the server back as it was.
            const restoreNotified = wait();
            await client.callTool({ name: NAMES.toggleTool, arguments: {} });
            const restored = await restoreNotified;
            const detail = {
                honoredFilter: subscription?.honoredFilter,
                toggle: answer,
                notified: seen,
                latency_ms: latency,
                had: before.includes(NAMES.toggledTool),
                has: after.includes(NAMES.toggledTool),
                restore_notified: restored
            };
            return [seen && flipped, detail];
        } finally {
            toolsChangedWaiter = undefined;
            await subscription?.close();
        }
    },
    async cancel() {
        const controller = new AbortController();
        const started = Date.now();
        const call = client.callTool({ name: NAMES.slowTool, arguments: NAMES.slowArgs }, { signal: controller.signal });
        const early = await Promise.race([call.then(() => 'answered', () => 'failed'), sleep(CANCEL_AFTER_MS)]);
        if (early) return [false, { ended_before_cancel: early, after_ms: Date.now() - started }];
        const cancelledAt = Date.now();
        controller.abort('cancelled by the driver');
        let outcome;
        try {
            await within(CANCEL_DEADLINE_MS + 1000, call, 'cancelled call');
            outcome = 'answered';
        } catch (error) {
            outcome = describe(error);
        }
        const endedMs = Date.now() - cancelledAt;
        // The connection must still work after the cancel.
        let after;
        try {
            after = texts(await within(5000, client.callTool({ name: NAMES.textTool, arguments: NAMES.textArgs }), 'call after cancel'));
        } catch (error) {
            after = describe(error);
        }
        const ok = outcome !== 'answered' && endedMs <= CANCEL_DEADLINE_MS && Array.isArray(after) && after.length > 0;
        return [ok, { outcome, ended_ms_after_cancel: endedMs, call_after_cancel: after }];
    }
};

let connected = false;
try {
    await within(STEP_TIMEOUT_MS, client.connect(transport), 'connect');
    const version = client.getNegotiatedProtocolVersion();
    const wanted = legacy ? LEGACY : MODERN;
    connected = true;
    emit('connect', version === wanted, { protocolVersion: version, wanted, server: client.getServerVersion?.() });
} catch (error) {
    emit('connect', false, describe(error));
}

for (const step of steps) {
    if (!connected) {
        emit(step, false, 'not run: no connection');
        continue;
    }
    try {
        const [ok, detail] = await within(STEP_TIMEOUT_MS, run[step](), step);
        emit(step, ok, detail);
    } catch (error) {
        emit(step, false, describe(error));
    }
}

await within(5000, client.close(), 'close').catch(() => {});
await within(2000, transport.close(), 'close').catch(() => {});
killChildren();
process.exit(failed ? 1 : 0);
