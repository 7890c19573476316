/**
 * bench/servers: per namespace, start-up time and the median latency of one read-only tool call, in the
 * bubblewrap sandbox vs as a plain process, in one run. Prints the ratio sandboxed / plain (goal <= 1.1 per
 * call). Needs `npm run build` first (servers are served by dist/serve.js).
 *
 *   npx tsx bench/servers/run.ts            (CALLS=200 STARTS=5 by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { startServer } from '../../server/src/runner/launch.ts';
import { probeBackends, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { hasServer, seedNamespace } from '../../server/src/runner/state.ts';
import { PROBE_CALLS } from './probe-calls.ts';

const CALLS = Number(process.env.CALLS ?? 200);
const STARTS = Number(process.env.STARTS ?? 5);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;
const WARMUP = 20;

async function seeded(info: NamespaceInfo): Promise<string> {
  const sandbox = mkdtempSync(join(tmpdir(), `mcpbench-bench-${info.namespace}-`));
  await seedNamespace(info, undefined, sandbox);
  return sandbox;
}

/** Median start-up per backend, the backends taking turns so neither always meets a colder cache. */
async function startUps(info: NamespaceInfo): Promise<Record<'process' | 'bwrap', number>> {
  const times: Record<'process' | 'bwrap', number[]> = { process: [], bwrap: [] };
  for (let s = 0; s < STARTS; s++) {
    for (const backend of (s % 2 ? ['bwrap', 'process'] : ['process', 'bwrap']) as ('process' | 'bwrap')[]) {
      const sandbox = await seeded(info);
      try {
        const t0 = performance.now();
        const server = await startServer(info, sandbox, { backend });
        times[backend].push(performance.now() - t0);
        await server.close();
      } finally {
        rmSync(sandbox, { recursive: true, force: true });
      }
    }
  }
  return { process: median(times.process), bwrap: median(times.bwrap) };
}

/**
 * Median call latency per backend: one server of each, both warmed up, then the same call to each in turn
 * (which goes first alternates), so drift in the machine's load falls on both sides alike.
 */
async function callLatencies(info: NamespaceInfo): Promise<Record<'process' | 'bwrap', number>> {
  const [tool, args] = PROBE_CALLS[info.namespace]!;
  const sandboxes = { process: await seeded(info), bwrap: await seeded(info) };
  const servers = {
    process: await startServer(info, sandboxes.process, { backend: 'process' }),
    bwrap: await startServer(info, sandboxes.bwrap, { backend: 'bwrap' }),
  };
  const times: Record<'process' | 'bwrap', number[]> = { process: [], bwrap: [] };
  try {
    for (let c = 0; c < WARMUP + CALLS; c++) {
      for (const backend of (c % 2 ? ['bwrap', 'process'] : ['process', 'bwrap']) as ('process' | 'bwrap')[]) {
        const t = performance.now();
        const result = await servers[backend].callTool(tool, args);
        if (c >= WARMUP) times[backend].push(performance.now() - t);
        if (result.isError) throw new Error(`${info.namespace}.${tool} failed: ${JSON.stringify(result.content)}`);
      }
    }
  } finally {
    await Promise.all([servers.process.close(), servers.bwrap.close()]);
    rmSync(sandboxes.process, { recursive: true, force: true });
    rmSync(sandboxes.bwrap, { recursive: true, force: true });
  }
  return { process: median(times.process), bwrap: median(times.bwrap) };
}

async function main() {
  if (!probeBackends().find((b) => b.backend === 'bwrap')?.works) throw new Error('bwrap does not work here: apt-get install bubblewrap');
  const registry = await loadRegistry();
  console.log(`bench/servers: median start-up (${STARTS} starts) and median call latency (${CALLS} calls after ${WARMUP} warm-up, the backends taking turns), bwrap vs plain process`);
  console.log(`${'namespace'.padEnd(11)} ${'start plain'.padStart(12)} ${'start bwrap'.padStart(12)} ${'call plain'.padStart(11)} ${'call bwrap'.padStart(11)} ${'call ratio'.padStart(11)}`);
  const ratios: number[] = [];
  for (const info of registry.namespaces.values()) {
    if (!hasServer(info) || !PROBE_CALLS[info.namespace]) continue;
    const start = await startUps(info);
    const call = await callLatencies(info);
    const ratio = call.bwrap / call.process;
    ratios.push(ratio);
    console.log(
      `${info.namespace.padEnd(11)} ${`${start.process.toFixed(0)} ms`.padStart(12)} ${`${start.bwrap.toFixed(0)} ms`.padStart(12)} ${`${call.process.toFixed(2)} ms`.padStart(11)} ${`${call.bwrap.toFixed(2)} ms`.padStart(11)} ${ratio.toFixed(3).padStart(11)}`,
    );
  }
  console.log(`worst call ratio sandboxed / plain: ${Math.max(...ratios).toFixed(3)} (goal <= 1.1); median ${median(ratios).toFixed(3)}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
