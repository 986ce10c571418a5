// The TypeScript SDK client of `cargo xtask bench-compare`
// (@modelcontextprotocol/sdk: Client with StdioClientTransport or
// StreamableHTTPClientTransport). Same command line and output as every
// client of the benchmark (see bench/README.md):
//
//   node ts_client.mjs <scenario> <n> <calls> (-- <server argv…> | --url <url>)
//
// The SDK is loaded from $BENCH_NODE_MODULES (the harness passes
// .peers/node_modules), since this file lives outside that folder.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const modules = process.env.BENCH_NODE_MODULES;
if (!modules) {
  console.error("ts_client: set BENCH_NODE_MODULES to the folder holding @modelcontextprotocol/sdk");
  process.exit(2);
}
const sdk = (path) =>
  import(pathToFileURL(join(modules, "@modelcontextprotocol/sdk/dist/esm", path)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");
const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");

const MESSAGE = "hello";

const [scenario, nText, callsText, mode, ...rest] = process.argv.slice(2);
const n = Number(nText);
const calls = Number(callsText);
if (!scenario || !(mode === "--" || mode === "--url") || rest.length === 0) {
  console.error("usage: ts_client.mjs <scenario> <n> <calls> (-- argv… | --url URL)");
  process.exit(2);
}

async function connect() {
  const client = new Client({ name: "bench-ts", version: "1.0.0" });
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
result.client = "ts";
process.stdout.write(JSON.stringify(result) + "\n");
process.exit(0);
