/**
 * Failure modes from traces: each mode of the taxonomy decided on a real task of the fixtures, with verdicts
 * evaluated by the real predicate code on the end state the trace would leave, and its evidence pointing at
 * the call or leaf that shows it. Every mode the classifier can return is exercised here.
 */
import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { TaskSchema, type Task } from '../../server/src/tasks/model.ts';
import { classifyFailure, countModes, FAILURE_MODES, failureText, type ClassifiableEpisode, type FailureMode } from '../../server/src/scoring/failure-modes.ts';
import type { CallRecord } from '../../server/src/record/schema.ts';

const fixture = (path: string): Task => TaskSchema.parse(JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'tasks', path), 'utf8')));
const MOVE = fixture('filesystem/fs-move-report-001.json');

/** The move task with a constraint that holds at the start: create no scratch.txt. */
const GUARDED: Task = TaskSchema.parse({
  ...MOVE,
  id: 'fs-move-guarded',
  success_predicate: { all: [{ 'filesystem.fileExists': { path: 'archive/report.txt' } }, { not: { 'filesystem.fileExists': { path: 'report.txt' } } }, { not: { 'filesystem.fileExists': { path: 'scratch.txt' } } }] },
});

/** An information task: read the file, answer with its number. */
const INFO: Task = TaskSchema.parse({
  ...MOVE,
  id: 'fs-read-number',
  goal: 'What number is in report.txt?',
  success_predicate: { 'answer.includes': { text: '42' } },
  reference_solutions: [[{ tool: 'filesystem.read_text_file', arguments: { path: 'report.txt' } }, { answer: '42' }]],
  counterexamples: [],
});

let registry: Registry;
before(async () => {
  registry = await loadRegistry();
});

const ok = (text = 'done') => ({ content: [{ type: 'text', text }] });
function call(index: number, qualified: string, args: Record<string, unknown>, extra: Partial<CallRecord> = {}): CallRecord {
  return { index, tool: qualified.replace('.', '_'), qualified, arguments: args, status: 'ok', result: ok(), latency_ms: 5, ...extra };
}

/** An episode of `task` whose end state is `files` (the filesystem namespace's state) and whose trace is `calls`. */
function episode(task: Task, files: Record<string, string | null>, calls: CallRecord[], extra: Partial<ClassifiableEpisode> = {}): ClassifiableEpisode {
  const answer = extra.answer;
  const verdict = evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, { filesystem: { files } }, answer));
  const toolCalls = calls.filter((c) => c.status !== 'unlisted' && c.status !== 'over-budget').length;
  return { calls, verdict, passed: verdict.value === true, status: verdict.value === true ? 'passed' : 'failed', budget_exceeded: false, max_steps: task.max_steps, tool_calls: toolCalls, ...extra };
}

const START = { 'report.txt': 'Q3 numbers', 'archive/': null };
const classified = new Set<FailureMode>();
function expectMode(task: Task, ep: ClassifiableEpisode, mode: FailureMode, check: (d: NonNullable<ReturnType<typeof classifyFailure>>) => void = () => undefined) {
  const diagnosis = classifyFailure(ep, task, registry);
  assert.ok(diagnosis, 'a failed episode is diagnosed');
  assert.equal(diagnosis.mode, mode, failureText(diagnosis));
  assert.ok(diagnosis.evidence.detail.length > 0);
  assert.equal(JSON.stringify(classifyFailure(ep, task, registry)), JSON.stringify(diagnosis), 'deterministic');
  classified.add(mode);
  check(diagnosis);
}

test('passed episodes and agent or infrastructure errors get no failure mode', () => {
  const passed = episode(MOVE, { 'archive/': null, 'archive/report.txt': 'Q3 numbers' }, [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' })]);
  assert.equal(passed.passed, true);
  assert.equal(classifyFailure(passed, MOVE, registry), null);
  assert.equal(classifyFailure({ ...episode(MOVE, START, []), status: 'infra_error' }, MOVE, registry), null);
  assert.equal(classifyFailure({ ...episode(MOVE, START, []), status: 'agent_error' }, MOVE, registry), null);
});

test('no tool use: nothing called, while the reference solution calls a tool', () => {
  expectMode(MOVE, episode(MOVE, START, []), 'no_tool_use', (d) => assert.match(d.evidence.detail, /no tool call; the shortest reference solution makes 1/));
});

test('budget exhausted: the refused call is the evidence', () => {
  const calls = [0, 1, 2, 3, 4, 5].map((i) => call(i, 'filesystem.list_directory', { path: '.' }));
  calls.push(call(6, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' }, { status: 'over-budget', result: { isError: true, content: [{ type: 'text', text: 'step budget exhausted' }] } }));
  expectMode(MOVE, episode(MOVE, START, calls, { budget_exceeded: true }), 'budget_exhausted', (d) => assert.equal(d.evidence.call_index, 6));
});

test("budget exhausted: a model agent stopped by its token budget (failure.code token-budget), not a premature stop", () => {
  const calls = [call(0, 'filesystem.list_directory', { path: '.' })];
  const ep = episode(MOVE, START, calls, { failure: { code: 'token-budget', message: '1,204 tokens of a 1,000-token budget' } });
  expectMode(MOVE, ep, 'budget_exhausted', (d) => assert.match(d.evidence.detail, /token budget/));
});

test('hallucinated tool: a call to a tool the task does not list', () => {
  const calls = [call(0, 'filesystem.rename', {}, { qualified: undefined, tool: 'filesystem_rename', status: 'unlisted', result: { isError: true, content: [{ type: 'text', text: 'Unknown tool' }] } })];
  expectMode(MOVE, episode(MOVE, START, calls), 'hallucinated_tool', (d) => {
    assert.equal(d.evidence.call_index, 0);
    assert.equal(d.evidence.tool, 'filesystem_rename');
  });
});

test('constraint violated: a not-leaf that held at the start is broken at the end', () => {
  const calls = [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' }), call(1, 'filesystem.write_file', { path: 'scratch.txt', content: 'temp' })];
  expectMode(GUARDED, episode(GUARDED, { 'archive/': null, 'archive/report.txt': 'Q3 numbers', 'scratch.txt': 'temp' }, calls), 'constraint_violated', (d) => {
    assert.deepEqual(d.evidence.leaf_path, ['success_predicate', 'all', 2]);
    assert.equal(d.evidence.leaf, 'filesystem.fileExists');
  });
  // A goal leaf that held at the start and is false at the end: the agent undid what was already right.
  const KEEP: Task = TaskSchema.parse({ ...MOVE, id: 'fs-keep-notes', initial_state: { filesystem: { files: { ...START, 'notes.txt': 'keep' } } }, success_predicate: { all: [{ 'filesystem.fileExists': { path: 'archive/report.txt' } }, { 'filesystem.fileExists': { path: 'notes.txt' } }] } });
  const undid = [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' }), call(1, 'filesystem.move_file', { source: 'notes.txt', destination: 'archive/notes.txt' })];
  expectMode(KEEP, episode(KEEP, { 'archive/': null, 'archive/report.txt': 'Q3 numbers', 'archive/notes.txt': 'keep' }, undid), 'constraint_violated', (d) => assert.deepEqual(d.evidence.leaf_path, ['success_predicate', 'all', 1]));
  // The move task's own `not` (report.txt gone) is false at the start: leaving it undone is no violation.
  const undone = classifyFailure(episode(MOVE, { ...START, 'archive/report.txt': 'Q3 numbers' }, [call(0, 'filesystem.write_file', { path: 'archive/report.txt', content: 'Q3 numbers' })]), MOVE, registry);
  assert.notEqual(undone?.mode, 'constraint_violated');
});

test('malformed parameters: arguments that fail the input schema, never corrected', () => {
  const calls = [call(0, 'filesystem.move_file', { from: 'report.txt' }, { status: 'tool-error', result: { isError: true, content: [{ type: 'text', text: 'Invalid arguments for move_file' }] } })];
  expectMode(MOVE, episode(MOVE, START, calls), 'malformed_parameters', (d) => {
    assert.equal(d.evidence.call_index, 0);
    assert.match(d.evidence.detail, /rejected/);
  });
  // Corrected on the next call: not malformed (and the episode would then have other reasons to fail).
  const fixed = [...calls, call(1, 'filesystem.move_file', { source: 'report.txt', destination: 'report2.txt' })];
  assert.notEqual(classifyFailure(episode(MOVE, START, fixed), MOVE, registry)?.mode, 'malformed_parameters');
});

test('failed error recovery: a fault after which nothing succeeded', () => {
  const calls = [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' }, { status: 'fault', fault: { type: 'TransientTimeout', executed: false }, result: { isError: true, content: [{ type: 'text', text: 'timed out' }] } })];
  expectMode(MOVE, episode(MOVE, START, calls, { tool_calls: 1 }), 'failed_error_recovery', (d) => {
    assert.equal(d.evidence.call_index, 0);
    assert.match(d.evidence.detail, /TransientTimeout/);
  });
});

test('wrong final answer: the data was read, the answer is wrong', () => {
  const calls = [call(0, 'filesystem.read_text_file', { path: 'report.txt' }, { result: ok('42') })];
  expectMode(INFO, episode(INFO, START, calls, { answer: 'It says 24.' }), 'wrong_final_answer', (d) => assert.equal(d.evidence.leaf, 'answer.includes'));
  // Without an answer at all, the agent stopped early.
  expectMode(INFO, episode(INFO, START, calls), 'premature_stop', (d) => assert.match(d.evidence.detail, /without a final answer/));
});

test('wrong tool selection: the required tool never called, another tool used instead', () => {
  const calls = [call(0, 'filesystem.write_file', { path: 'archive/report.txt', content: 'Q3 numbers' })];
  expectMode(MOVE, episode(MOVE, { ...START, 'archive/report.txt': 'Q3 numbers' }, calls), 'wrong_tool_selection', (d) => {
    assert.equal(d.evidence.call_index, 0);
    assert.match(d.evidence.detail, /filesystem\.move_file never succeeded/);
  });
});

test('wrong tool selection: every required tool used, and one no reference solution uses that spoils the end state', () => {
  const CONTENT: Task = TaskSchema.parse({ ...MOVE, id: 'fs-move-content', success_predicate: { all: [{ 'filesystem.fileContains': { path: 'archive/report.txt', text: 'Q3' } }, { not: { 'filesystem.fileExists': { path: 'report.txt' } } }] } });
  const calls = [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' }), call(1, 'filesystem.write_file', { path: 'archive/report.txt', content: '' })];
  expectMode(CONTENT, episode(CONTENT, { 'archive/': null, 'archive/report.txt': '' }, calls), 'wrong_tool_selection', (d) => {
    assert.equal(d.evidence.call_index, 1);
    assert.match(d.evidence.detail, /called filesystem\.write_file, which no reference solution uses/);
  });
});

test('premature stop: a prefix of the work, budget left', () => {
  const TWO_STEP: Task = TaskSchema.parse({
    ...MOVE,
    id: 'fs-list-then-move',
    reference_solutions: [[{ tool: 'filesystem.list_directory', arguments: { path: '.' } }, { tool: 'filesystem.move_file', arguments: { source: 'report.txt', destination: 'archive/report.txt' } }]],
  });
  expectMode(TWO_STEP, episode(TWO_STEP, START, [call(0, 'filesystem.list_directory', { path: '.' })]), 'premature_stop', (d) => assert.match(d.evidence.detail, /filesystem\.move_file never succeeded/));
});

test('wrong arguments: the right tool with values that miss the goal', () => {
  const calls = [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'report-old.txt' })];
  expectMode(MOVE, episode(MOVE, { 'report-old.txt': 'Q3 numbers', 'archive/': null }, calls), 'wrong_arguments', (d) => {
    assert.equal(d.evidence.call_index, 0);
    assert.equal(d.evidence.leaf, 'filesystem.fileExists');
  });
});

test('unknown: the reference call itself, yet the goal fails', () => {
  const calls = [call(0, 'filesystem.move_file', { source: 'report.txt', destination: 'archive/report.txt' })];
  expectMode(MOVE, episode(MOVE, START, calls), 'unknown');
  // Without the task, only trace-only modes can be decided.
  assert.equal(classifyFailure(episode(MOVE, START, calls), undefined, registry)?.mode, 'unknown');
});

test('every mode of the taxonomy is exercised, and counts cover them all', () => {
  assert.deepEqual(FAILURE_MODES.filter((m) => !classified.has(m)), []);
  const counts = countModes(['no_tool_use', 'no_tool_use', null, 'unknown']);
  assert.equal(counts.no_tool_use, 2);
  assert.equal(counts.unknown, 1);
  assert.equal(Object.keys(counts).length, FAILURE_MODES.length);
});
