/**
 * bench/gateway: the median latency of one tool call made by an MCP client through the gateway (streamable
 * HTTP, faults `none`) vs the same call straight to the server (RunningServer.callTool over stdio), same
 * process, same server, same run; the two are interleaved so drift of the machine hits both alike. Prints
 * both medians and the ratio gateway / direct (goal <= 1.15). Needs `node esbuild.mjs` first.
 *
 * It also prints the gateway's own share: the median of CallRecord.latency_ms (from the gateway's handler
 * receiving the call to its answer, forwarding included, HTTP excluded). The rest of the difference is the
 * streamable HTTP hop (the agent's fetch and the SDK's server transport), which an agent pays for any
 * HTTP MCP server and which dominates when the server itself answers in well under a millisecond.
 *
 *   npx tsx bench/gateway/run.ts            (CALLS=400 by default; BACKEND=process|bwrap|... optional)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { FAULT_PROFILES } from '../../server/src/runner/faults.ts';
import { Gateway } from '../../server/src/runner/gateway.ts';
import { startServer } from '../../server/src/runner/launch.ts';
import type { SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { seedNamespace } from '../../server/src/runner/state.ts';
import { TaskSchema } from '../../server/src/tasks/model.ts';

const CALLS = Number(process.env.CALLS ?? 400);
const WARMUP = 30;
const BACKEND = process.env.BACKEND as SandboxBackend | undefined;

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

const FLIGHTS = [
  { id: 'BA-200', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 500, seats_left: 10 },
  { id: 'AA-500', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 300, seats_left: 10 },
];
const ARGS = { origin: 'LON', dest: 'PAR', date: '2026-01-05' };

async function main() {
  const registry = await loadRegistry();
  const info = registry.get('travel')!;
  const task = TaskSchema.parse({
    id: 'bench-gateway',
    server: 'travel',
    category: 'single-tool',
    difficulty: 'easy',
    max_steps: 1000,
    goal: 'Search flights.',
    initial_state: { travel: { flights: FLIGHTS } },
    available_tools: ['travel.search_flights'],
    success_predicate: { 'travel.reservationConfirmed': { flight_id: 'AA-500' } },
    reference_solutions: [[{ tool: 'travel.search_flights', arguments: ARGS }]],
  });
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-bench-gateway-'));
  await seedNamespace(info, { flights: FLIGHTS }, sandbox);
  const server = await startServer(info, sandbox, BACKEND ? { backend: BACKEND } : {});
  // The budget is irrelevant here; the call records are kept as in a real episode.
  const gateway = new Gateway({ task: { ...task, max_steps: CALLS + WARMUP + 10 }, registry, servers: new Map([['travel', server]]), faults: { profile: FAULT_PROFILES.none, seed: 1, trial: 0 } });
  const client = new Client({ name: 'bench-agent', version: '0' });
  try {
    const { url } = await gateway.listen();
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    const direct: number[] = [];
    const through: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      let t = performance.now();
      const a = await server.callTool('search_flights', ARGS);
      const d = performance.now() - t;
      t = performance.now();
      const b = await client.callTool({ name: 'travel_search_flights', arguments: ARGS });
      const g = performance.now() - t;
      if (a.isError || b.isError) throw new Error('the probe call failed');
      if (i >= WARMUP) {
        direct.push(d);
        through.push(g);
      }
    }
    const md = median(direct);
    const mg = median(through);
    const inside = median(gateway.calls().slice(WARMUP).map((c) => c.latency_ms));
    console.log(`bench/gateway: travel.search_flights, ${CALLS} calls each, backend ${server.backend}`);
    console.log(`  direct  (RunningServer.callTool, stdio)          median ${md.toFixed(3)} ms`);
    console.log(`  gateway (MCP client, streamable HTTP, faults none) median ${mg.toFixed(3)} ms`);
    console.log(`  gateway's own handling (CallRecord.latency_ms)     median ${inside.toFixed(3)} ms`);
    console.log(`  ratio gateway / direct: ${(mg / md).toFixed(3)} (goal <= 1.15); handling inside the gateway / direct: ${(inside / md).toFixed(3)}`);
  } finally {
    await client.close().catch(() => undefined);
    await gateway.close();
    await server.close();
    rmSync(sandbox, { recursive: true, force: true });
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
