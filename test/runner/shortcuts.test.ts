/**
 * Shortcut agents (`check --shortcuts`): one weak task per kind of shortcut, each failed by check with
 * `shortcut-passes` for that shortcut (and its trace), a strong task none passes, and a shortcut accepted with
 * a reason that no longer fails the task. The derivation is deterministic and bounded.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { deriveShortcuts, MAX_SHORTCUTS } from '../../server/src/tasks/shortcuts.ts';
import type { Task } from '../../server/src/tasks/model.ts';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');

function fsTask(id: string, over: Partial<Task>): Task {
  return {
    id,
    server: 'filesystem',
    category: 'single-tool',
    difficulty: 'easy',
    max_steps: 8,
    goal: 'Write notes.txt saying that version 2 ships on Friday.',
    initial_state: { filesystem: { files: { 'notes.txt': 'old notes', 'todo.txt': 'keep me' } } },
    available_tools: ['filesystem.write_file', 'filesystem.read_text_file', 'filesystem.move_file', 'filesystem.list_directory'],
    success_predicate: { 'filesystem.fileExists': { path: 'notes.txt' } },
    reference_solutions: [[{ tool: 'filesystem.write_file', arguments: { path: 'notes.txt', content: 'Release notes: version 2 ships on Friday.' } }]],
    counterexamples: [],
    ...over,
  };
}

/** Writes notes.txt; the predicate only asks that a notes.txt exists (it did already: the exact content is checked by nothing). */
const weakWrite = fsTask('weak-write', {
  initial_state: { filesystem: { files: { 'todo.txt': 'keep me', 'plan.txt': 'the plan' } } },
});
/** Moves report.txt; the predicate only asks that archive/report.txt exists. */
const weakMove = fsTask('weak-move', {
  goal: 'Move report.txt into the archive folder.',
  initial_state: { filesystem: { files: { 'report.txt': 'Q3 numbers', 'notes.txt': 'misc', 'archive/': null } } },
  success_predicate: { 'filesystem.fileExists': { path: 'archive/report.txt' } },
  reference_solutions: [[{ tool: 'filesystem.move_file', arguments: { source: 'report.txt', destination: 'archive/report.txt' } }]],
});
/** What does AA-500 cost? The predicate looks for the number anywhere in the answer. */
const weakShotgun = fsTask('weak-shotgun', {
  goal: 'How much does flight AA-500 cost? The fares are in the fares folder.',
  initial_state: { filesystem: { files: { 'fares/AA-500.txt': '420', 'fares/BA-300.txt': '380' } } },
  success_predicate: { 'answer.numberNear': { value: 420, tolerance: 0 } },
  reference_solutions: [[{ tool: 'filesystem.read_text_file', arguments: { path: 'fares/AA-500.txt' } }, { answer: 'AA-500 costs 420.' }]],
});
/** Which files mention Friday (two do)? The predicate is satisfied by either name. */
const weakPartial = fsTask('weak-partial', {
  goal: 'Which files mention Friday? Name every one that does.',
  initial_state: { filesystem: { files: { 'a.txt': 'ships Friday', 'b.txt': 'Friday review', 'c.txt': 'Monday' } } },
  success_predicate: { 'answer.includesAny': { texts: ['a.txt', 'b.txt'] } },
  reference_solutions: [[{ tool: 'filesystem.read_text_file', arguments: { path: 'a.txt' } }, { tool: 'filesystem.read_text_file', arguments: { path: 'b.txt' } }, { answer: 'a.txt and b.txt both mention Friday.' }]],
});
/** Writes a file and says which: the answer is checked for a name the goal already gives. */
const weakGoal = fsTask('weak-goal', {
  goal: 'Create notes.txt saying that version 2 ships on Friday, then tell me which file you wrote.',
  success_predicate: { all: [{ 'filesystem.fileContains': { path: 'notes.txt', text: 'Friday' } }, { 'answer.includes': { text: 'notes.txt' } }] },
  initial_state: { filesystem: { files: { 'todo.txt': 'keep me' } } },
  reference_solutions: [[{ tool: 'filesystem.write_file', arguments: { path: 'notes.txt', content: 'Version 2 ships on Friday.' } }, { answer: 'I wrote notes.txt.' }]],
});
/** The write task with a frame and the exact content: no shortcut passes. */
const strong = fsTask('strong-write', {
  initial_state: { filesystem: { files: { 'todo.txt': 'keep me', 'plan.txt': 'the plan' } } },
  success_predicate: { all: [{ 'filesystem.fileEquals': { path: 'notes.txt', content: 'Release notes: version 2 ships on Friday.' } }, { 'filesystem.matchesReference': { pointers: [''] } }] },
});

test('shortcuts are derived deterministically, bounded, one family per kind', async () => {
  const registry = await loadRegistry();
  const ids = (t: Task) => deriveShortcuts(t, registry).map((s) => s.id);
  assert.deepEqual(ids(weakWrite), ['extra-write:filesystem.write_file', 'wrong-target1', 'fragment1']);
  assert.deepEqual(ids(weakShotgun), ['shotgun', 'answer-from-goal', 'partial-answer1']);
  assert.deepEqual(ids(weakPartial), ['shotgun', 'answer-from-goal', 'partial-answer1', 'partial-answer2']);
  assert.ok(ids(weakGoal).includes('answer-from-goal'));
  assert.deepEqual(ids(weakWrite), ids(weakWrite));
  const extra = deriveShortcuts(weakWrite, registry)[0]!;
  assert.deepEqual(extra.steps.at(-1), { tool: 'filesystem.write_file', arguments: { path: 'todo.txt', content: 'Release notes: version 2 ships on Friday.' } }, 'the same write on the nearest other file');
  for (const t of [weakWrite, weakMove, weakShotgun, weakPartial, strong]) assert.ok(ids(t).length <= MAX_SHORTCUTS);
});

test('check --shortcuts: each weak task fails on its shortcut with its trace; the strong one passes; an accepted shortcut does not fail', { timeout: 600_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-shortcuts-'));
  try {
    const accepted: Task = { ...weakMove, id: 'weak-move-accepted', accepted_shortcuts: [{ shortcut: 'wrong-target1', reason: 'accepted for the test' }] };
    for (const task of [weakWrite, weakMove, weakShotgun, weakPartial, weakGoal, strong, accepted]) writeFileSync(join(work, `${task.id}.json`), JSON.stringify(task, null, 2) + '\n');
    const run = spawnSync(process.execPath, [cli, 'check', work, '--shortcuts', '--sandbox', 'process', '--reporter', 'none', '--concurrency', '3', '--out', join(work, 'runs')], { cwd: work, encoding: 'utf8', timeout: 540_000 });
    assert.equal(run.status, 1, run.stdout + run.stderr);
    assert.ok(run.stdout.length > 0, run.stderr);
    const caught: [string, string][] = [
      ['weak-write', 'extra-write:filesystem.write_file'],
      ['weak-write', 'fragment1'],
      ['weak-move', 'wrong-target1'],
      ['weak-shotgun', 'shotgun'],
      ['weak-partial', 'partial-answer1'],
      ['weak-goal', 'answer-from-goal'],
    ];
    for (const [task, shortcut] of caught) {
      assert.match(run.stdout, new RegExp(`FAIL ${task} `));
      assert.ok(run.stdout.includes(`${task}.json:`) && run.stdout.includes(`error shortcut-passes: shortcut ${shortcut} passes`), `${task}: ${shortcut}\n${run.stdout}`);
    }
    assert.match(run.stdout, /\+ 2\. filesystem\.write_file \{"path":"todo\.txt"/, 'the trace shows the extra write');
    assert.match(run.stdout, /ok {3}strong-write /);
    assert.match(run.stdout, /ok {3}weak-move-accepted /);
    assert.match(run.stdout, /shortcuts: \d+ tried, \d+ passing, 1 accepted with a reason/);
    const runDir = join(work, 'runs', readdirSync(join(work, 'runs'))[0]!);
    const checks = JSON.parse(readFileSync(join(runDir, 'checks.json'), 'utf8')).checks as { task_id: string; shortcuts?: { passed: string[]; accepted: string[] } }[];
    assert.deepEqual(checks.find((c) => c.task_id === 'weak-move-accepted')!.shortcuts!.accepted, ['wrong-target1']);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});
