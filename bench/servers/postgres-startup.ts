/**
 * Postgres start-up per episode: a fresh PGlite (initdb) seeded with a task's state, against a copy of the
 * cached seeded data directory opened by PGlite. Prints both medians and their ratio.
 *
 *   node --import tsx bench/servers/postgres-startup.ts [runs]
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Database } from '../../server/src/mcp/postgres/database.ts';
import { cloneSandbox, DATA_DIR, seedTemplate, templateFor } from '../../server/src/mcp/postgres/runtime.ts';
import { normalizeState } from '../../server/src/mcp/postgres/state.ts';

const runs = Number(process.argv[2]) || 5;
const task = JSON.parse(readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'postgres', 'postgres-ship-order-001.json'), 'utf8'));
const state = normalizeState(task.initial_state.postgres);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

async function time(action: (dir: string) => Promise<void>): Promise<number> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-bench-'));
  try {
    const start = performance.now();
    await action(dir);
    return performance.now() - start;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

void (async () => {
  const template = await templateFor(state);
  const fresh: number[] = [];
  const copied: number[] = [];
  for (let i = 0; i < runs; i++) {
    // Fresh: initdb in an empty directory, build the state, then open it as the server would.
    fresh.push(
      await time(async (dir) => {
        await seedTemplateFresh(join(dir, DATA_DIR));
        await (await Database.open(join(dir, DATA_DIR))).close();
      }),
    );
    // Copy: the cached seeded directory copied into the sandbox, then opened.
    copied.push(
      await time(async (dir) => {
        await cloneSandbox(template, dir);
        await (await Database.open(join(dir, DATA_DIR))).close();
      }),
    );
  }
  const f = median(fresh);
  const c = median(copied);
  console.log(`runs: ${runs}`);
  console.log(`fresh init + seed + open: median ${f.toFixed(0)} ms`);
  console.log(`copy + open:              median ${c.toFixed(0)} ms`);
  console.log(`ratio copy/fresh:         ${(c / f).toFixed(3)}`);
})();

/** seedTemplate without the cached blank directory: what every episode would pay without the cache. */
async function seedTemplateFresh(dir: string): Promise<void> {
  const previous = process.env.MCPBENCH_PGLITE_CACHE;
  process.env.MCPBENCH_PGLITE_CACHE = mkdtempSync(join(tmpdir(), 'mcpbench-bench-cache-'));
  try {
    await seedTemplate(state, dir);
  } finally {
    rmSync(process.env.MCPBENCH_PGLITE_CACHE, { recursive: true, force: true });
    if (previous === undefined) delete process.env.MCPBENCH_PGLITE_CACHE;
    else process.env.MCPBENCH_PGLITE_CACHE = previous;
  }
}
