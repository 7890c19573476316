/**
 * Mutation testing of predicates: mutants derived from the reference solutions (stable ids, reads left
 * alone, nothing check runs already), judged from episodes (killed, equivalent by end state, declared,
 * surviving), and `mcpbench check --mutants` as a user runs it: a weak predicate fails with the survivor's
 * diff at its place in the file, the full predicate kills every mutant, and an equivalent mutant listed with
 * its reason no longer fails the task.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { judgeMutants, mutantDiff } from '../../server/src/runner/mutants.ts';
import { deriveMutants } from '../../server/src/tasks/mutants.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const fixture = join(root, 'test', 'fixtures', 'tasks', 'calendar', 'calendar-move-budget-001.json');

/** The fixture with only its first reference solution (cancel 14:00, then book 16:00). */
function moveBudget(predicate?: unknown): Task {
  const task = JSON.parse(readFileSync(fixture, 'utf8')) as Task;
  return { ...task, reference_solutions: [task.reference_solutions[0]!], counterexamples: [], ...(predicate ? { success_predicate: predicate as Task['success_predicate'] } : {}) };
}

test('mutants: one per dropped write, swapped writes, cut tail and replaced argument; stable ids; reads never mutated', async () => {
  const registry = await loadRegistry();
  const task = moveBudget();
  // A read in the middle: it is never dropped, and the writes around it still swap.
  task.reference_solutions[0]!.splice(1, 0, { tool: 'calendar.list_meetings', arguments: { start_date: '2026-01-03', end_date: '2026-01-03' } });
  const mutants = deriveMutants(task, registry);
  const ids = mutants.map((m) => m.id);
  assert.deepEqual(ids, ['ref1.drop1', 'ref1.drop3', 'ref1.swap1-3', 'ref1.step1/time=15:00', 'ref1.step3/time=14:00', 'ref1.step3/topic=Hiring']);
  assert.ok(!ids.includes('ref1.drop2'), 'the read is not dropped');
  // Cutting after step 1 or 2 writes what dropping step 3 writes (the read changes nothing): one mutant.
  assert.ok(!ids.some((id) => id.startsWith('ref1.stop')));
  // A replaced argument takes the nearest other value at the same place in the state: 15:00, the other slot.
  const time = mutants.find((m) => m.id.startsWith('ref1.step1/time='))!;
  assert.equal(time.id, 'ref1.step1/time=15:00');
  assert.deepEqual(time.path, ['reference_solutions', 0, 0, 'arguments', 'time']);
  const topic = mutants.find((m) => m.id.startsWith('ref1.step3/topic='))!;
  assert.equal(topic.id, 'ref1.step3/topic=Hiring', 'the other meeting topic of the state');
  // Derivation is deterministic: the same ids every time.
  assert.deepEqual(deriveMutants(task, registry).map((m) => m.id), ids);
  // A mutant that writes what a counterexample writes is not derived again.
  const withCounterexample = { ...task, counterexamples: [mutants[0]!.steps] };
  assert.ok(!deriveMutants(withCounterexample, registry).some((m) => m.id === mutants[0]!.id));
});

test('judging: killed, equivalent by end state, declared with a reason, surviving with a diff; the score', async () => {
  const registry = await loadRegistry();
  const task = moveBudget();
  const mutants = deriveMutants(task, registry);
  const result = (variant: string, passed: boolean, end_state: string): EpisodeRecord =>
    ({ task_id: task.id, variant, fault_profile: 'none', trial: 0, perturbation: 'none', status: passed ? 'passed' : 'failed', passed, end_state, calls: [] }) as unknown as EpisodeRecord;
  const [a, b, c, d] = mutants;
  assert.ok(a && b && c && d, 'at least four mutants');
  const declaredTask: Task = { ...task, equivalent_mutants: [{ mutant: c.id, reason: 'test' }] };
  const report = judgeMutants(declaredTask, [
    result('reference:0', true, 'S'),
    result(`mutant:${a.id}`, false, 'X'),
    result(`mutant:${b.id}`, true, 'S'),
    result(`mutant:${c.id}`, true, 'Y'),
    result(`mutant:${d.id}`, true, 'Z'),
  ], registry);
  const outcome = (id: string) => report.mutants.find((m) => m.id === id)!.outcome;
  assert.equal(outcome(a.id), 'killed');
  assert.equal(outcome(b.id), 'equivalent');
  assert.equal(outcome(c.id), 'declared-equivalent');
  assert.equal(outcome(d.id), 'survived');
  assert.equal(report.notRun, mutants.length - 4);
  assert.equal(report.score, 1 / 2);
  assert.ok(report.mutants.find((m) => m.id === d.id)!.diff!.some((line) => line.startsWith('-') || line.startsWith('+')));
});

test('a mutant as a diff against its reference solution', () => {
  const reference = [
    { tool: 'calendar.cancel_meeting', arguments: { date: '2026-01-03', time: '14:00' } },
    { tool: 'calendar.book_meeting', arguments: { date: '2026-01-03', time: '16:00', topic: 'Budget' } },
  ];
  assert.deepEqual(mutantDiff(reference, [reference[1]!]), [
    '- 1. calendar.cancel_meeting {"date":"2026-01-03","time":"14:00"}',
    '  2. calendar.book_meeting {"date":"2026-01-03","time":"16:00","topic":"Budget"}',
  ]);
});

function check(work: string, task: Task) {
  const file = join(work, `${task.id}.json`);
  writeFileSync(file, JSON.stringify(task, null, 2) + '\n');
  const run = spawnSync(process.execPath, [cli, 'check', file, '--mutants', '--sandbox', 'process', '--reporter', 'none', '--out', join(work, 'runs')], { cwd: work, encoding: 'utf8', timeout: 300_000 });
  return { ...run, file };
}

test('check --mutants: a weak predicate fails on its survivors; the full one kills them; a declared equivalent passes', { timeout: 600_000 }, async () => {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-mutants-'));
  try {
    // Only "Budget is at 16:00": keeping the 14:00 Budget, or cancelling the Hiring meeting instead, still passes.
    const weak = moveBudget({ 'calendar.meetingBooked': { date: '2026-01-03', time: '16:00', topic: 'Budget' } });
    const failed = check(work, { ...weak, id: 'weak-budget' });
    assert.equal(failed.status, 1, failed.stderr);
    assert.match(failed.stdout, /FAIL weak-budget/);
    assert.match(failed.stdout, /error surviving-mutant: surviving mutant ref1\.drop1 \(drop step 1 \(calendar\.cancel_meeting\)\)/);
    // Its place in the file (line:column of the dropped step), and the diff against the reference solution.
    const text = readFileSync(failed.file, 'utf8');
    const line = text.split('\n').findIndex((l) => l.includes('"tool": "calendar.cancel_meeting"')) + 1;
    assert.match(failed.stdout, new RegExp(`weak-budget\\.json:${line - 1}:\\d+  error surviving-mutant: surviving mutant ref1\\.drop1 `));
    assert.match(failed.stdout, /- 1\. calendar\.cancel_meeting \{"date":"2026-01-03","time":"14:00"\}/);
    assert.match(failed.stdout, /surviving mutant ref1\.step1\/time=15:00/);
    // Swapping the two writes leaves the same calendar: equivalent, not a survivor.
    assert.doesNotMatch(failed.stdout, /surviving mutant ref1\.swap1-2/);
    assert.match(failed.stdout, /mutation score \d+\.\d%: \d+\/\d+ killed, [1-9]\d* surviving, [1-9]\d* equivalent \(same end state\)/);

    const full = check(work, moveBudget());
    assert.equal(full.status, 0, full.stdout + full.stderr);
    assert.match(full.stdout, /mutation score 100\.0%/);

    // The weak predicate with every survivor declared equivalent (reasons given): the task passes again.
    const survivors = [...failed.stdout.matchAll(/surviving mutant (\S+) \(/g)].map((m) => m[1]!);
    const declared = check(work, { ...weak, id: 'weak-budget-declared', equivalent_mutants: survivors.map((mutant) => ({ mutant, reason: 'accepted for the test' })) });
    assert.equal(declared.status, 0, declared.stdout + declared.stderr);
    assert.match(declared.stdout, new RegExp(`${survivors.length} declared equivalent`));
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
});

test('equivalent_mutants: `<argument>=*` covers every replacement of that argument; the linter checks the argument exists', async () => {
  const registry = await loadRegistry();
  const { coversMutant, argumentExists } = await import('../../server/src/tasks/mutants.ts');
  const { lintTask } = await import('../../server/src/tasks/lint.ts');
  assert.ok(coversMutant('ref1.step1/time=*', 'ref1.step1/time=15:00'));
  assert.ok(!coversMutant('ref1.step1/time=*', 'ref1.step1/date=2026-01-04'));
  assert.ok(coversMutant('ref1.drop1', 'ref1.drop1') && !coversMutant('ref1.drop1', 'ref1.drop10'));
  const task = moveBudget();
  assert.ok(argumentExists(task, 'ref1.step2/topic=*'));
  assert.ok(!argumentExists(task, 'ref1.step2/colour=*'));
  const codes = (entries: { mutant: string; reason: string }[]) =>
    lintTask('t.json', JSON.stringify({ ...task, counterexamples: [[]], equivalent_mutants: entries }), registry).diagnostics.map((d) => d.code);
  assert.ok(!codes([{ mutant: 'ref1.step2/topic=*', reason: 'free' }]).includes('unknown-mutant'));
  assert.ok(codes([{ mutant: 'ref1.step9/topic=*', reason: 'free' }]).includes('unknown-mutant'));
});
