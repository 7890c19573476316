/**
 * bench/servers: per namespace, start-up time and the median latency of one read-only tool call, in the
 * bubblewrap sandbox vs as a plain process, in one run. Prints the ratio sandboxed / plain (goal <= 1.1 per
 * call). Needs `npm run build` first (servers are served by dist/cli.js).
 *
 *   npx tsx bench/servers/run.ts            (CALLS=40 STARTS=3 by default)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { startServer } from '../../server/src/runner/launch.ts';
import { probeBackends, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { hasServer, seedNamespace } from '../../server/src/runner/state.ts';
import { PROBE_CALLS } from './probe-calls.ts';

const CALLS = Number(process.env.CALLS ?? 40);
const STARTS = Number(process.env.STARTS ?? 3);

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

async function measure(info: NamespaceInfo, backend: SandboxBackend) {
  const [tool, args] = PROBE_CALLS[info.namespace]!;
  const starts: number[] = [];
  const calls: number[] = [];
  for (let s = 0; s < STARTS; s++) {
    const sandbox = mkdtempSync(join(tmpdir(), `mcpbench-bench-${info.namespace}-`));
    try {
      await seedNamespace(info, undefined, sandbox);
      const t0 = performance.now();
      const server = await startServer(info, sandbox, { backend });
      starts.push(performance.now() - t0);
      try {
        if (s === 0) {
          await server.callTool(tool, args); // warm-up
          for (let c = 0; c < CALLS; c++) {
            const t = performance.now();
            const result = await server.callTool(tool, args);
            calls.push(performance.now() - t);
            if (result.isError) throw new Error(`${info.namespace}.${tool} failed: ${JSON.stringify(result.content)}`);
          }
        }
      } finally {
        await server.close();
      }
    } finally {
      rmSync(sandbox, { recursive: true, force: true });
    }
  }
  return { start: median(starts), call: median(calls) };
}

async function main() {
  if (!probeBackends().find((b) => b.backend === 'bwrap')?.works) throw new Error('bwrap does not work here: apt-get install bubblewrap');
  const registry = await loadRegistry();
  console.log(`bench/servers: median start-up (${STARTS} starts) and median call latency (${CALLS} calls), bwrap vs plain process`);
  console.log(`${'namespace'.padEnd(11)} ${'start plain'.padStart(12)} ${'start bwrap'.padStart(12)} ${'call plain'.padStart(11)} ${'call bwrap'.padStart(11)} ${'call ratio'.padStart(11)}`);
  const ratios: number[] = [];
  for (const info of registry.namespaces.values()) {
    if (!hasServer(info) || !PROBE_CALLS[info.namespace]) continue;
    // Alternate which backend goes first per namespace, so neither always meets a colder cache.
    const order: SandboxBackend[] = ratios.length % 2 ? ['bwrap', 'process'] : ['process', 'bwrap'];
    const results: Partial<Record<SandboxBackend, { start: number; call: number }>> = {};
    for (const backend of order) results[backend] = await measure(info, backend);
    const plain = results.process!;
    const boxed = results.bwrap!;
    const ratio = boxed.call / plain.call;
    ratios.push(ratio);
    console.log(
      `${info.namespace.padEnd(11)} ${`${plain.start.toFixed(0)} ms`.padStart(12)} ${`${boxed.start.toFixed(0)} ms`.padStart(12)} ${`${plain.call.toFixed(2)} ms`.padStart(11)} ${`${boxed.call.toFixed(2)} ms`.padStart(11)} ${ratio.toFixed(3).padStart(11)}`,
    );
  }
  console.log(`worst call ratio sandboxed / plain: ${Math.max(...ratios).toFixed(3)} (goal <= 1.1); median ${median(ratios).toFixed(3)}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
