/**
 * The results database on both backends, the same tests: embedded PGlite (a data folder) and a real
 * PostgreSQL server this test starts as an unprivileged user in a temporary folder on a free loopback port
 * (and stops). Migrations and documentation of every column, the import of a run folder (episodes, retried
 * infrastructure failures, calls, verdicts, scores, failure modes, hostile text), idempotence (an unchanged
 * folder imports as a no-op, byte for byte), a resumed run replacing its rows, rotations, and reopening.
 *
 * The PostgreSQL suite needs the Debian package `postgresql` (.ci/run installs it); without it the suite
 * fails with that instruction rather than skipping.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { databaseSize, openResultsDb, schemaMarkdown, type OpenedDb } from '../../server/src/results/db.ts';
import { importPaths } from '../../server/src/results/import.ts';
import { startCluster, type Cluster } from '../postgres-cluster.ts';
import { appendEpisode, MOVE, MOVE_HASH, moveCall, moveEpisode, writeRunFolder } from './fixtures.ts';

let registry: Registry;
let cluster: Cluster | undefined;
const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-results-db-'));

before(async () => {
  registry = await loadRegistry();
});
after(() => {
  cluster?.stop();
  rmSync(scratch, { recursive: true, force: true });
});

const TABLES = ['runs', 'tasks', 'episodes', 'calls', 'verdict_nodes', 'run_scores', 'rotations', 'retired_tasks', 'accounts', 'api_tokens', 'submissions'] as const;

/** Every row of every table, in key order: what "changes nothing" is checked against. */
async function dump(opened: OpenedDb): Promise<string> {
  const out: Record<string, unknown[]> = {};
  for (const table of TABLES) {
    const { rows } = await sql<Record<string, unknown>>`select * from ${sql.table(table)}`.execute(opened.db);
    out[table] = rows.map((r) => JSON.stringify(r)).sort();
  }
  return JSON.stringify(out);
}

function makeRun(name: string) {
  const dir = join(scratch, name, 'run-a');
  const HOSTILE = 'nul \u0000 here; escaped \\u0000 stays; <script>x</script>';
  writeRunFolder(dir, { run_id: 'run-a', extra: { set: { name: 'dev', month: '2026-05' } } }, [
    moveEpisode('run-a', { trial: 0, passed: true }),
    moveEpisode('run-a', {
      trial: 1,
      passed: false,
      answer: HOSTILE,
      calls: [moveCall(0, { source: 'report.txt', destination: 'report-old.txt' }, { result: { content: [{ type: 'text', text: 'x'.repeat(150_000) }] } })],
    }),
    moveEpisode('run-a', { trial: 2, passed: false, status: 'infra_error', error: { kind: 'infra', code: 'server-exit', message: 'filesystem server exited' }, calls: [] }),
    moveEpisode('run-a', { trial: 2, passed: true, attempt: 2 }),
    moveEpisode('run-a', { trial: 3, passed: false, status: 'infra_error', error: { kind: 'infra', code: 'server-exit', message: 'filesystem server exited' }, calls: [] }),
  ]);
  return dir;
}

function makeRotation(name: string): string {
  const file = join(scratch, name, 'Historical-2026-06.json');
  const sha = (c: string) => c.repeat(64);
  writeFileSync(
    file,
    JSON.stringify({
      kind: 'mcpbench-historical',
      tag: 'Historical-2026-06',
      set: 'dev',
      month: '2026-06',
      seed: 3,
      share: 0.25,
      attestations: [{ task_id: MOVE.id, sha256: MOVE_HASH }],
      retired: [{ task_id: MOVE.id, sha256: MOVE_HASH, file: 'tasks/filesystem/fs-move-report-001.json', namespace: 'filesystem', category: 'single-tool', added: '2026-01' }],
      replacements: [{ task_id: 'fs-new', sha256: sha('a'), file: 'tasks/filesystem/fs-new.json', from: 'batches/x' }],
      previous_set_sha256: sha('b'),
      set_sha256: sha('c'),
    }),
  );
  return file;
}

function suite(name: string, target: () => string) {
  describe(`results database on ${name}`, () => {
    test('migrates, and documents every table and column', async () => {
      const opened = await openResultsDb(target());
      try {
        const { rows: undocumented } = await sql<{ table_name: string; column_name: string }>`
          select c.table_name, c.column_name from information_schema.columns c
           where c.table_schema = current_schema() and c.table_name not like 'kysely\\_%'
             and col_description(format('%I.%I', c.table_schema, c.table_name)::regclass, c.ordinal_position) is null`.execute(opened.db);
        assert.deepEqual(undocumented, []);
        const { rows: tables } = await sql<{ relname: string; doc: string | null }>`
          select c.relname, obj_description(c.oid, 'pg_class') as doc from pg_class c join pg_namespace n on n.oid = c.relnamespace
           where n.nspname = current_schema() and c.relkind = 'r' and c.relname not like 'kysely\\_%' order by c.relname`.execute(opened.db);
        assert.deepEqual(tables.map((t) => t.relname), [...TABLES].sort());
        for (const t of tables) assert.ok(t.doc && t.doc.length > 20, `${t.relname} documented`);
        // docs/results-database.md is generated from these comments, and is up to date on both backends.
        assert.equal(await schemaMarkdown(opened.db), readFileSync(join(__dirname, '..', '..', 'docs', 'results-database.md'), 'utf8'), 'run npm run results:docs');
      } finally {
        await opened.close();
      }
    });

    test('imports a run folder: episodes, retries, calls, verdicts, scores, failure modes, hostile text', async () => {
      const dir = makeRun(name);
      const opened = await openResultsDb(target());
      try {
        const [outcome] = await importPaths(opened.db, [dir], { registry });
        assert.deepEqual({ ...outcome, path: undefined }, { kind: 'run', path: undefined, run_id: 'run-a', status: 'imported', episodes: 4, calls: 3, warnings: [], completeness: 'unresolved' });
        const run = await opened.db.selectFrom('runs').selectAll().executeTakeFirstOrThrow();
        assert.equal(run.agent_label, 'reference');
        assert.equal(run.set_name, 'dev');
        assert.equal(run.month, '2026-05');
        assert.equal(run.month_source, 'set');
        assert.equal(run.episode_records, 5);
        const episodes = await opened.db.selectFrom('episodes').selectAll().orderBy('trial').execute();
        assert.deepEqual(episodes.map((e) => [e.trial, e.status, e.attempts, e.failure_mode]), [
          [0, 'passed', 1, null],
          [1, 'failed', 1, 'wrong_arguments'],
          [2, 'passed', 2, null],
          [3, 'infra_error', 1, null],
        ]);
        const failed = episodes[1]!;
        assert.equal(failed.answer, 'nul \uFFFD here; escaped \\u0000 stays; <script>x</script>');
        assert.deepEqual((failed.failure_evidence as { call_index: number }).call_index, 0);
        assert.equal(episodes[3]!.error_kind, 'infra');
        assert.equal(episodes[3]!.error_message, 'filesystem server exited');
        assert.equal(failed.cost_usd, null, 'no cost recorded: null, not 0');
        const calls = await opened.db.selectFrom('calls').selectAll().where('work_unit', '=', failed.work_unit).execute();
        assert.equal(calls.length, 1);
        assert.deepEqual(calls[0]!.arguments, { source: 'report.txt', destination: 'report-old.txt' });
        assert.equal((calls[0]!.result as { truncated: boolean; chars: number }).truncated, true, 'a 150,000-character result is cut to a stub');
        const nodes = await opened.db.selectFrom('verdict_nodes').select(['path', 'kind', 'value', 'under_not']).where('work_unit', '=', failed.work_unit).orderBy('path').execute();
        assert.deepEqual(nodes.map((n) => [n.path, n.value, n.under_not]), [
          ['["success_predicate","all",0]', false, false],
          ['["success_predicate","all",1,"not"]', true, true],
          ['["success_predicate","all",1]', false, false],
          ['["success_predicate"]', false, false],
        ]);
        const task = await opened.db.selectFrom('tasks').selectAll().executeTakeFirstOrThrow();
        assert.deepEqual([task.task_id, task.difficulty, task.required_tools, task.information], [MOVE.id, 'easy', ['filesystem.move_file'], false]);
        const success = await opened.db.selectFrom('run_scores').selectAll().where('metric', '=', 'success_rate').executeTakeFirstOrThrow();
        assert.deepEqual([success.numerator, success.denominator], [2, 3]);
        assert.ok((await databaseSize(opened.db)) > 0);
      } finally {
        await opened.close();
      }
    });

    test('importing the same run again changes nothing; a resumed run replaces its rows', async () => {
      const dir = join(scratch, name, 'run-a');
      const opened = await openResultsDb(target());
      try {
        const before = await dump(opened);
        const [again] = await importPaths(opened.db, [dir], { registry });
        assert.equal(again?.status, 'unchanged');
        assert.equal(await dump(opened), before, 'byte for byte the same rows');
        appendEpisode(dir, moveEpisode('run-a', { trial: 4, passed: true }));
        const [grown] = await importPaths(opened.db, [join(scratch, name)], { registry });
        assert.equal(grown?.status, 'replaced');
        assert.equal((await opened.db.selectFrom('episodes').select('work_unit').execute()).length, 5);
        assert.equal((await opened.db.selectFrom('runs').select('run_id').execute()).length, 1);
      } finally {
        await opened.close();
      }
    });

    test('imports rotations once, and the database survives reopening', async () => {
      const file = makeRotation(name);
      let opened = await openResultsDb(target());
      try {
        const [first] = await importPaths(opened.db, [file], { registry });
        assert.deepEqual(first && first.kind === 'rotation' && [first.status, first.set, first.month, first.tasks], ['imported', 'dev', '2026-06', 1]);
      } finally {
        await opened.close();
      }
      opened = await openResultsDb(target());
      try {
        const [second] = await importPaths(opened.db, [file], { registry });
        assert.equal(second!.status, 'unchanged');
        const retired = await opened.db.selectFrom('retired_tasks').selectAll().execute();
        assert.deepEqual(retired.map((r) => [r.task_id, r.task_hash, r.month]), [[MOVE.id, MOVE_HASH, '2026-06']]);
        assert.equal((await opened.db.selectFrom('episodes').select('work_unit').execute()).length, 5, 'the runs are still there');
        const { rows } = await sql<{ name: string }>`select name from kysely_migration order by name`.execute(opened.db);
        assert.deepEqual(rows.map((r) => r.name), ['0001_initial', '0002_run_identity', '0003_service']);
      } finally {
        await opened.close();
      }
    });

    test('a path that is neither a run nor a manifest is refused with its name', async () => {
      const opened = await openResultsDb(target());
      try {
        const empty = mkdtempSync(join(scratch, 'empty-'));
        await assert.rejects(importPaths(opened.db, [empty], { registry }), new RegExp(`${empty}: no run folder`));
        await assert.rejects(importPaths(opened.db, [join(scratch, 'missing')], { registry }), /missing: no such file or folder/);
      } finally {
        await opened.close();
      }
    });
  });
}

suite('PGlite', () => join(scratch, 'pglite-db'));

describe('PostgreSQL server', () => {
  before(async () => {
    cluster = await startCluster();
  });
  suite('PostgreSQL', () => {
    if (!cluster) throw new Error('the PostgreSQL cluster did not start');
    return cluster.url;
  });
});
