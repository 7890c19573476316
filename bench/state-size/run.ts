/**
 * bench/state-size: how `check` (noop, reference, counterexample and the fault probes: 12 episodes) grows with
 * a task's initial state. One filesystem task whose state carries a data file of 10 KB to 10 MB besides the
 * file it moves; each size is checked `--rounds` times (median), in one process, under the default sandbox.
 * Prints the seconds per size, the ratio to the smallest, and the growth exponent (least-squares slope of
 * log time against log size: 1 is linear, 0 is flat). Needs `npm run build` first.
 *
 *   npx tsx bench/state-size/run.ts [--rounds 2] [--concurrency 2]      (SANDBOX=bwrap|process)
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { runCheck } from '../../server/src/engine/session.ts';
import { defaultBackend, type SandboxBackend } from '../../server/src/runner/sandbox.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import { TaskSchema } from '../../server/src/tasks/model.ts';

const SIZES = [10_000, 100_000, 1_000_000, 10_000_000];
const fixture = join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'filesystem', 'fs-move-report-001.json');

/** Text of `bytes` bytes: numbered lines, so the content is not one repeated character a compressor flattens. */
function data(bytes: number): string {
  const lines: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const line = `row ${i}: quarterly figure ${(i * 7919) % 100_003}\n`;
    lines.push(line);
    size += line.length;
  }
  return lines.join('').slice(0, bytes);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function main() {
  const { values } = parseArgs({ options: { rounds: { type: 'string', default: '2' }, concurrency: { type: 'string', default: '2' } } });
  const rounds = Number(values.rounds);
  const concurrency = Number(values.concurrency);
  const registry = await loadRegistry();
  const backend = (process.env.SANDBOX as SandboxBackend | undefined) ?? defaultBackend();
  const base = JSON.parse(readFileSync(fixture, 'utf8'));
  console.log(`bench/state-size: check of one filesystem task (12 episodes) per initial-state size, ${rounds} round(s), concurrency ${concurrency}, sandbox ${backend}; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
  const rows: { bytes: number; stateBytes: number; seconds: number }[] = [];
  for (const bytes of SIZES) {
    const value = { ...base, initial_state: { filesystem: { files: { ...base.initial_state.filesystem.files, 'data/ledger.txt': data(bytes) } } } };
    delete value.$schema;
    const task = TaskSchema.parse(value);
    const stateBytes = Buffer.byteLength(JSON.stringify(value.initial_state));
    const times: number[] = [];
    for (let round = 0; round < rounds; round++) {
      const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-state-'));
      try {
        const file = join(work, 'task.json');
        writeFileSync(file, JSON.stringify(value));
        const started = performance.now();
        const { checks } = await runCheck([{ file, task, hash: canonicalHash(value) }], { registry, cwd: work, directory: join(work, 'run'), backend, concurrency, seed: 1 });
        times.push((performance.now() - started) / 1000);
        if (!checks[0]?.ok) throw new Error(`the check failed at ${bytes} bytes: ${checks[0]?.problems.join('; ')}`);
      } finally {
        rmSync(work, { recursive: true, force: true });
      }
    }
    rows.push({ bytes, stateBytes, seconds: median(times) });
    console.log(`  ${(bytes / 1000).toLocaleString('en-US').padStart(7)} KB data file (state ${(stateBytes / 1e6).toFixed(2)} MB): ${median(times).toFixed(2)} s  [${times.map((t) => t.toFixed(2)).join(', ')}]  x${(median(times) / rows[0]!.seconds).toFixed(2)} vs the smallest`);
  }
  const xs = rows.map((r) => Math.log(r.stateBytes));
  const ys = rows.map((r) => Math.log(r.seconds));
  const mx = xs.reduce((a, b) => a + b, 0) / xs.length;
  const my = ys.reduce((a, b) => a + b, 0) / ys.length;
  const slope = xs.reduce((s, x, i) => s + (x - mx) * (ys[i]! - my), 0) / xs.reduce((s, x) => s + (x - mx) ** 2, 0);
  const last = rows.at(-1)!;
  const prev = rows.at(-2)!;
  const tail = Math.log(last.seconds / prev.seconds) / Math.log(last.stateBytes / prev.stateBytes);
  console.log(`growth exponent (log-log slope, all sizes): ${slope.toFixed(3)}; between the two largest: ${tail.toFixed(3)}; load ${loadavg().map((l) => l.toFixed(1)).join(' ')}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
