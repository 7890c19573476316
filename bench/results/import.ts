/**
 * Import time and database size of one run folder (the dev set's check run: `node dist/cli.js check tasks
 * --concurrency 2`), into embedded PGlite (a fresh data folder) and into a PostgreSQL server started here as
 * in the tests. Also times reading and classifying the run without any database (the baseline, same run), and
 * the second import of the unchanged folder (a no-op).
 *
 *   npx tsx bench/results/import.ts runs/<check-run-id>
 */
import { execSync } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { databaseSize, openResultsDb } from '../../server/src/results/db.ts';
import { importPaths } from '../../server/src/results/import.ts';
import { openSourceRun } from '../../server/src/results/run-source.ts';
import { deriveRun } from '../../server/src/scoring/derive.ts';
import { startCluster } from '../../test/postgres-cluster.ts';
import { loadRunTasks } from '../../server/src/tasks/load.ts';

const mib = (bytes: number) => `${(bytes / 1048576).toFixed(1)} MiB`;

function folderSize(dir: string): number {
  let total = 0;
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    const stat = statSync(path);
    total += stat.isDirectory() ? folderSize(path) : stat.size;
  }
  return total;
}

async function timeImport(target: string, run: string, registry: Awaited<ReturnType<typeof loadRegistry>>) {
  const opened = await openResultsDb(target);
  try {
    let started = Date.now();
    const [outcome] = await importPaths(opened.db, [run], { registry });
    const first = (Date.now() - started) / 1000;
    started = Date.now();
    const [again] = await importPaths(opened.db, [run], { registry });
    const second = (Date.now() - started) / 1000;
    return { first, second, status: [outcome!.status, again!.status], size: await databaseSize(opened.db), episodes: outcome!.kind === 'run' ? outcome!.episodes : 0 };
  } finally {
    await opened.close();
  }
}

async function main() {
  const run = process.argv[2];
  if (!run) throw new Error('usage: npx tsx bench/results/import.ts <run-folder>');
  const registry = await loadRegistry();
  const load = () => execSync('uptime').toString().trim();
  console.log(`load before: ${load()}`);

  let started = Date.now();
  const source = openSourceRun(run);
  const derived = deriveRun({ config: source.config, episodes: source.records, warnings: source.warnings }, { tasks: loadRunTasks(source.config), registry });
  const failed = derived.failures!.failed;
  const baseline = (Date.now() - started) / 1000;
  console.log(`${source.records.length} journal records, ${failed} failed episodes classified; read + classify without a database: ${baseline.toFixed(1)} s`);

  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-import-bench-'));
  const folder = join(scratch, 'results.pglite');
  const embedded = await timeImport(folder, run, registry);
  console.log(`PGlite:     ${embedded.episodes} episodes imported in ${embedded.first.toFixed(1)} s (${(embedded.first / baseline).toFixed(1)}x the baseline), again (${embedded.status[1]}) in ${embedded.second.toFixed(2)} s; database ${mib(embedded.size)} (pg_database_size), data folder ${mib(folderSize(folder))}`);
  rmSync(scratch, { recursive: true, force: true });

  const cluster = await startCluster();
  try {
    const server = await timeImport(cluster.url, run, registry);
    console.log(`PostgreSQL: ${server.episodes} episodes imported in ${server.first.toFixed(1)} s (${(server.first / baseline).toFixed(1)}x the baseline), again (${server.status[1]}) in ${server.second.toFixed(2)} s; database ${mib(server.size)} (pg_database_size)`);
  } finally {
    cluster.stop();
  }
  console.log(`load after: ${load()}`);
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
