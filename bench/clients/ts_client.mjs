// The TypeScript SDK clients of `cargo xtask bench-compare`: Client with
// StdioClientTransport or StreamableHTTPClientTransport, from the 1.x line
// (@modelcontextprotocol/sdk) or the 2.x line (@modelcontextprotocol/client).
// Same command line and output as every client of the benchmark (see
// bench/README.md):
//
//   node ts_client.mjs <scenario> <n> <calls> (-- <server argv…> | --url <url>)
//
// The SDK is loaded from $BENCH_NODE_MODULES (the harness passes
// .peers/node_modules), since this file lives outside that folder.
// $BENCH_TS_SDK picks the line: `1` (the default) or `2`. With the 2.x line,
// $BENCH_WIRE=2026-07-28 connects with `versionNegotiation: { mode: "auto" }`
// (a `server/discover` probe, then per-request `_meta`; the `initialize`
// handshake only for a server that does not know `server/discover`);
// otherwise the client's default, `mode: "legacy"` (the 2025 handshake).
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.BENCH_NODE_MODULES;
if (!modules) {
  console.error("ts_client: set BENCH_NODE_MODULES to the folder holding @modelcontextprotocol/sdk");
  process.exit(2);
}
const line = process.env.BENCH_TS_SDK ?? "1";
const modern = line === "2" && process.env.BENCH_WIRE === "2026-07-28";
const load = (path) => import(pathToFileURL(join(modules, path)).href);
const { Client, StdioClientTransport, StreamableHTTPClientTransport } =
  line === "2"
    ? {
        ...(await load("@modelcontextprotocol/client/dist/index.mjs")),
        ...(await load("@modelcontextprotocol/client/dist/stdio.mjs")),
      }
    : {
        ...(await load("@modelcontextprotocol/sdk/dist/esm/client/index.js")),
        ...(await load("@modelcontextprotocol/sdk/dist/esm/client/stdio.js")),
        ...(await load("@modelcontextprotocol/sdk/dist/esm/client/streamableHttp.js")),
      };

const MESSAGE = "hello";

const [scenario, nText, callsText, mode, ...rest] = process.argv.slice(2);
const n = Number(nText);
const calls = Number(callsText);
if (!scenario || !(mode === "--" || mode === "--url") || rest.length === 0) {
  console.error("usage: ts_client.mjs <scenario> <n> <calls> (-- argv… | --url URL)");
  process.exit(2);
}

async function connect() {
  const client = new Client(
    { name: "bench-ts", version: "1.0.0" },
    modern ? { versionNegotiation: { mode: "auto" } } : undefined,
  );
  const transport =
    mode === "--"
      ? new StdioClientTransport({ command: rest[0], args: rest.slice(1), stderr: "ignore" })
      : new StreamableHTTPClientTransport(new URL(rest[0]));
  await client.connect(transport);
  return client;
}

async function call(client) {
  const result = await client.callTool({ name: "echo", arguments: { message: MESSAGE } });
  if (result.isError) throw new Error("echo reported an error");
}

const warmup = Math.floor(calls / 10) + 10;
const percentile = (sorted, p) => sorted[Math.round((sorted.length - 1) * p)];

function vmHwmKb() {
  const line = readFileSync("/proc/self/status", "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmHWM:"));
  return line ? Number(line.replace(/[^0-9]/g, "")) : 0;
}

async function burst(client, total) {
  const perTask = Math.floor(total / n);
  await Promise.all(
    Array.from({ length: n }, async () => {
      for (let i = 0; i < perTask; i++) await call(client);
    }),
  );
  return perTask * n;
}

let result;
if (scenario === "seq") {
  const client = await connect();
  for (let i = 0; i < warmup; i++) await call(client);
  const samples = new Array(calls);
  for (let i = 0; i < calls; i++) {
    const started = process.hrtime.bigint();
    await call(client);
    samples[i] = Number(process.hrtime.bigint() - started);
  }
  samples.sort((a, b) => a - b);
  result = { p50_ns: percentile(samples, 0.5), p99_ns: percentile(samples, 0.99) };
  await client.close();
} else if (scenario === "tput") {
  const client = await connect();
  await burst(client, Math.max(warmup, n));
  const started = process.hrtime.bigint();
  const done = await burst(client, calls);
  const elapsed = Number(process.hrtime.bigint() - started) / 1e9;
  result = { calls_per_s: done / elapsed };
  await client.close();
} else if (scenario === "catalog") {
  const started = process.hrtime.bigint();
  const clients = await Promise.all(
    Array.from({ length: n }, async () => {
      const client = await connect();
      const { tools } = await client.listTools();
      return { client, tools: tools.length };
    }),
  );
  const wall = Number(process.hrtime.bigint() - started);
  result = { wall_ns: wall, tools: clients.reduce((sum, c) => sum + c.tools, 0) };
  await Promise.all(clients.map((c) => c.client.close()));
} else if (scenario === "idle") {
  const clients = await Promise.all(Array.from({ length: n }, connect));
  await new Promise((resolve) => setTimeout(resolve, 1000));
  result = { sessions: clients.length, vm_hwm_kb: vmHwmKb() };
  await Promise.all(clients.map((c) => c.close()));
} else {
  console.error(`ts_client: unknown scenario ${scenario}`);
  process.exit(2);
}
result.vm_hwm_kb ??= vmHwmKb();
result.client = line === "2" ? "ts2" : "ts";
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(0);
