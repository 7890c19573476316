/**
 * bench/gateway: the median latency of one tool call made by an MCP client through the gateway (faults
 * `none`) vs the same call straight to the server (RunningServer.callTool over stdio), same process, same
 * server, same run; the calls are interleaved so drift of the machine hits all alike. The gateway is reached
 * over stdio, as the server is, for the like-for-like ratio (goal <= 1.15), and over streamable HTTP, as
 * agent processes given a URL reach it, and in process, as the reference agent does (no HTTP hop). Needs
 * `node esbuild.mjs` first.
 *
 * It also prints the gateway's own share: the median of CallRecord.latency_ms (from the gateway's handler
 * receiving the call to its answer, forwarding included, HTTP excluded). The rest of the difference is the
 * streamable HTTP hop, taken apart: the server side (Node's `http.server.request.start` to
 * `http.server.response.finish` diagnostics channels, the SDK's server transport included) and the client side
 * (the SDK client and its `fetch`, the rest of the round trip), which an agent pays for any HTTP MCP server and
 * which dominates when the server itself answers in well under a millisecond.
 *
 *   npx tsx bench/gateway/run.ts            (CALLS=300 by default, at most 300: a task allows 1,000 steps; BACKEND=process|bwrap|... optional)
 */
import { StreamClientTransport } from '../../test/stream-client-transport.ts';
import { subscribe } from 'node:diagnostics_channel';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { Gateway } from '../../server/src/runner/gateway.ts';
import { startServer } from '../../server/src/runner/launch.ts';
import type { SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { seedNamespace } from '../../server/src/runner/state.ts';
import { TaskSchema } from '../../server/src/tasks/model.ts';
import { PROBE_CALLS } from '../servers/probe-calls.ts';
import { FAULT_PROFILES } from '../../server/src/record/faults.ts';

const CALLS = Number(process.env.CALLS ?? 300);
const WARMUP = 30;
const BACKEND = process.env.BACKEND as SandboxBackend | undefined;


const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

/** Server-side time of every HTTP request this process serves, from Node's own diagnostics channels. */
const httpServerMs: number[] = [];
const requestStarts = new WeakMap<object, number>();
subscribe('http.server.request.start', (message) => requestStarts.set((message as { response: object }).response, performance.now()));
subscribe('http.server.response.finish', (message) => {
  const started = requestStarts.get((message as { response: object }).response);
  if (started !== undefined) httpServerMs.push(performance.now() - started);
});

/** Namespaces to probe: a simulation answering in well under a millisecond, and two real servers. */
const NAMESPACES = (process.env.NAMESPACES ?? 'travel,git,postgres').split(',');

async function probe(registry: Awaited<ReturnType<typeof loadRegistry>>, namespace: string): Promise<number> {
  const info = registry.get(namespace)!;
  const [tool, args] = PROBE_CALLS[namespace]!;
  const task = TaskSchema.parse({
    id: `bench-gateway-${namespace}`,
    server: namespace,
    category: 'single-tool',
    difficulty: 'easy',
    // The budget is irrelevant here; the call records are kept as in a real episode.
    max_steps: Math.min(1000, 3 * (CALLS + WARMUP) + 10),
    goal: 'Probe.',
    initial_state: {},
    available_tools: [`${namespace}.${tool}`],
    success_predicate: { 'answer.nonEmpty': {} },
    reference_solutions: [[{ tool: `${namespace}.${tool}`, arguments: args }]],
  });
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-bench-gateway-'));
  await seedNamespace(info, undefined, sandbox);
  const server = await startServer(info, sandbox, BACKEND ? { backend: BACKEND } : {});
  const gateway = new Gateway({ task, registry, servers: new Map([[namespace, server]]), faults: { profile: FAULT_PROFILES.none, seed: 1, trial: 0 } });
  const client = new Client({ name: 'bench-agent', version: '0' });
  const stdioClient = new Client({ name: 'bench-agent-stdio', version: '0' });
  const localClient = new Client({ name: 'bench-agent-in-process', version: '0' });
  try {
    const { url } = await gateway.listen();
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const toGateway = new PassThrough();
    const fromGateway = new PassThrough();
    await gateway.serveStdio({ stdin: toGateway, stdout: fromGateway });
    await stdioClient.connect(new StreamClientTransport(fromGateway, toGateway));
    await localClient.connect(await gateway.connectInProcess());
    const exposed = `${namespace}_${tool}`;
    const time = async (call: () => Promise<unknown>) => {
      const t = performance.now();
      const result = (await call()) as { isError?: boolean; content?: unknown };
      if (result.isError) throw new Error(`the probe call failed: ${JSON.stringify(result.content)}`);
      return performance.now() - t;
    };
    const probes = [
      () => time(() => server.callTool(tool, args)),
      () => time(() => stdioClient.callTool({ name: exposed, arguments: args })),
      () => time(() => client.callTool({ name: exposed, arguments: args })),
      () => time(() => localClient.callTool({ name: exposed, arguments: args })),
    ];
    const samples: number[][] = [[], [], [], []];
    const serverSide: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      // Rotate the order, so none of the four always runs right after another's garbage.
      const ms: number[] = [];
      for (const k of [0, 1, 2, 3].map((j) => (j + i) % 4)) {
        httpServerMs.length = 0;
        ms[k] = await probes[k]!();
        if (k === 2 && i >= WARMUP && httpServerMs.length === 1) serverSide.push(httpServerMs[0]!);
      }
      if (i >= WARMUP) ms.forEach((m, k) => samples[k]!.push(m));
    }
    const [md, ms, mh, ml] = samples.map(median) as [number, number, number, number];
    const inside = median(gateway.calls().slice(3 * WARMUP).map((c) => c.latency_ms));
    const serverMs = median(serverSide);
    const http = `    HTTP taken apart: server side ${serverMs.toFixed(3)} ms (the gateway's own handling ${inside.toFixed(3)} ms, the SDK's server transport and Node's HTTP ${(serverMs - inside).toFixed(3)} ms), client side ${(mh - serverMs).toFixed(3)} ms (the SDK client, its fetch and the round trip)`;
    console.log(`  ${`${namespace}.${tool}`.padEnd(24)} direct ${md.toFixed(3)} ms | gateway stdio ${ms.toFixed(3)} ms, ratio ${(ms / md).toFixed(3)} | gateway HTTP ${mh.toFixed(3)} ms, ratio ${(mh / md).toFixed(3)} | gateway in process ${ml.toFixed(3)} ms, ratio ${(ml / md).toFixed(3)} | the gateway's own handling ${inside.toFixed(3)} ms\n${http}`);
    return ms / md;
  } finally {
    await stdioClient.close().catch(() => undefined);
    await localClient.close().catch(() => undefined);
    await client.close().catch(() => undefined);
    await gateway.close();
    await server.close();
    rmSync(sandbox, { recursive: true, force: true });
  }
}

async function main() {
  const registry = await loadRegistry();
  console.log(`bench/gateway: median of ${CALLS} calls each (after ${WARMUP} warm-up), interleaved; faults none; backend ${BACKEND ?? 'default'}`);
  console.log('  direct: an MCP client to the server over stdio; gateway: an MCP client to the gateway over stdio (like for like; goal ratio <= 1.15) and over streamable HTTP (agent processes), and in process (the reference agent)');
  for (const namespace of NAMESPACES) await probe(registry, namespace);
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
