/**
 * Mutants that reach what an agent writes: text replaced (empty, a prefix, the goal's words), SQL taken
 * apart (WHERE dropped or negated, a SET value changed, an extra UPDATE/DELETE of the other rows), and an
 * optional argument left out. One weak task per class: `check --mutants` fails it with `surviving-mutant`
 * on that class's mutant, and the derivation is checked on its own (ids, the SQL it writes).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { deriveMutants, sqlMutants, sqlStatements } from '../../server/src/tasks/mutants.ts';
import type { Task } from '../../server/src/tasks/model.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const fixture = (path: string) => JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'tasks', path), 'utf8')) as Task;

/** Writes a file's content; the predicate only asks that the file exists. */
const weakText: Task = {
  id: 'weak-text',
  server: 'filesystem',
  category: 'single-tool',
  difficulty: 'easy',
  max_steps: 4,
  goal: 'Write notes.txt saying that version 2 ships on Friday.',
  initial_state: { filesystem: { files: { 'README.md': 'hello' } } },
  available_tools: ['filesystem.write_file'],
  success_predicate: { 'filesystem.fileExists': { path: 'notes.txt' } },
  reference_solutions: [[{ tool: 'filesystem.write_file', arguments: { path: 'notes.txt', content: 'Release notes: version 2 ships on Friday.' } }]],
  counterexamples: [[{ tool: 'filesystem.write_file', arguments: { path: 'README.md', content: 'version 2 ships on Friday' } }]],
};

/** Ships order 1002; the predicate looks at that row only. */
function weakSql(): Task {
  const task = fixture('postgres/postgres-ship-order-001.json');
  return { ...task, id: 'weak-sql', success_predicate: { 'postgres.valueEquals': { table: 'orders', where: { id: 1002 }, column: 'status', value: 'shipped' } }, counterexamples: [] };
}

/** Creates a private channel; the predicate does not ask whether it is private. */
function weakOmit(): Task {
  const task = fixture('chat/chat-incident-channel-001.json');
  return {
    ...task,
    id: 'weak-omit',
    goal: 'Create a private channel incident-142.',
    success_predicate: { 'chat.channelExists': { name: 'incident-142' } },
    reference_solutions: [[{ tool: 'chat.create_channel', arguments: { name: 'incident-142', is_private: true } }]],
    counterexamples: [],
  };
}

test('SQL statements split outside quotes; mutants of each UPDATE and DELETE', () => {
  assert.deepEqual(sqlStatements("UPDATE t SET a = 'x;y' WHERE id = 1; DELETE FROM u WHERE id = 2;"), ["UPDATE t SET a = 'x;y' WHERE id = 1", 'DELETE FROM u WHERE id = 2']);
  const m = Object.fromEntries(sqlMutants("ALTER TABLE orders ADD COLUMN n text; UPDATE orders SET status = 'shipped' WHERE id = 1002").map((x) => [x.id, x]));
  assert.deepEqual(Object.keys(m), ['sql2-drop-where', 'sql2-other-rows', 'sql2-set-value', 'sql2-extra-update', 'sql2-extra-delete']);
  assert.equal(m['sql2-drop-where']!.sql, "ALTER TABLE orders ADD COLUMN n text; UPDATE orders SET status = 'shipped'");
  assert.equal(m['sql2-other-rows']!.sql, "ALTER TABLE orders ADD COLUMN n text; UPDATE orders SET status = 'shipped' WHERE NOT (id = 1002)");
  assert.equal(m['sql2-set-value']!.sql, "ALTER TABLE orders ADD COLUMN n text; UPDATE orders SET status = '' WHERE id = 1002");
  assert.equal(m['sql2-extra-delete']!.extra, 'DELETE FROM orders WHERE NOT (id = 1002)');
  assert.deepEqual(sqlMutants('SELECT 1'), []);
});

test('content, SQL and omitted-argument mutants are derived with stable ids', async () => {
  const registry = await loadRegistry();
  const ids = (task: Task) => deriveMutants(task, registry).map((m) => `${m.operator} ${m.id}`);
  assert.deepEqual(ids(weakText).filter((id) => id.startsWith('text ')), ['text ref1.step1/content:empty', 'text ref1.step1/content:prefix', 'text ref1.step1/content:goal']);
  assert.deepEqual(ids(weakSql()).filter((id) => id.startsWith('sql ')).length, 5);
  assert.ok(ids(weakOmit()).includes('omit ref1.step1/is_private:omit'));
  const extra = deriveMutants(weakSql(), registry).find((m) => m.id.endsWith('sql1-extra-delete'))!;
  assert.deepEqual(extra.steps.at(-1), { tool: 'postgres.execute', arguments: { sql: 'DELETE FROM orders WHERE NOT (id = 1002)' } }, 'a call added after the write');
});

test('check --mutants: each weak task fails on its class of mutant (text, SQL, omitted argument)', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-content-mutants-'));
  try {
    for (const task of [weakText, weakSql(), weakOmit()]) writeFileSync(join(work, `${task.id}.json`), JSON.stringify(task, null, 2) + '\n');
    const run = spawnSync(process.execPath, [cli, 'check', work, '--mutants', '--sandbox', 'process', '--reporter', 'none', '--concurrency', '3', '--out', join(work, 'runs')], { cwd: work, encoding: 'utf8', timeout: 540_000 });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    for (const [task, mutant] of [['weak-text', 'ref1.step1/content:empty'], ['weak-text', 'ref1.step1/content:goal'], ['weak-sql', 'ref1.step2/sql:sql1-extra-delete'], ['weak-sql', 'ref1.step2/sql:sql1-drop-where'], ['weak-omit', 'ref1.step1/is_private:omit']] as const) {
      assert.match(run.stdout, new RegExp(`FAIL ${task}`));
      assert.ok(run.stdout.includes(`error surviving-mutant: surviving mutant ${mutant} `), `${task}: ${mutant} survives\n${run.stdout}`);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
