import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../../server/src/cli/main.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createAjv } from '../../server/src/ajv.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import {
  acceptBatch,
  BatchError,
  candidateDiff,
  jsonDiff,
  listCandidates,
  readBatch,
  reviewedCandidates,
  setDecision,
  validateBatchManifest,
} from '../../server/src/generator/review.ts';

const root = join(__dirname, '..', '..');
const base = JSON.parse(readFileSync(join(root, 'test', 'fixtures', 'tasks', 'travel', 'travel-cheapest-flight-001.json'), 'utf8')) as Task;

/** A variant of the dev-set flight task for another passenger: consistent goal, predicate and solutions. */
function variant(passenger: string, index: number): Task {
  const text = JSON.stringify(base).replaceAll('"Bob"', JSON.stringify(passenger)).replace('for Bob.', `for ${passenger}.`);
  const task = JSON.parse(text) as Task;
  task.id = `travel-cheapest-flight-v${index}`;
  task.template = { id: 'travel-cheapest-flight', version: '1', parameters: { passenger }, seed: 7 };
  return task;
}

interface FixtureCandidate {
  task: Task;
  review?: { decision: 'accepted' | 'rejected'; reason: string };
  lintErrors?: number;
  check?: { ok: boolean; problems: unknown[] };
}

function makeBatch(candidates: FixtureCandidate[]): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-batch-'));
  const manifest = {
    template: { id: 'travel-cheapest-flight', version: '1', file: 'templates/travel/cheapest-flight.template.json' },
    seed: 7,
    count: candidates.length,
    created_at: '2026-11-20T10:00:00.000Z',
    dropped: { duplicates: 0, invalid: 0 },
    invalid: [],
    candidates: candidates.map((c, index) => {
      const file = `${c.task.id}.json`;
      writeFileSync(join(dir, file), JSON.stringify(c.task, null, 2) + '\n');
      return {
        file,
        task_id: c.task.id,
        sha256: canonicalHash(c.task),
        parameters: c.task.template?.parameters ?? {},
        seed: index,
        lint: { errors: c.lintErrors ?? 0, warnings: 0 },
        ...(c.check ? { check: c.check } : {}),
        ...(c.review ? { review: { ...c.review, reviewer: 'ana', at: '2026-11-21T09:00:00.000Z' } } : {}),
      };
    }),
  };
  writeFileSync(join(dir, 'batch.json'), JSON.stringify(manifest, null, 2) + '\n');
  return dir;
}

const emptyDir = () => mkdtempSync(join(tmpdir(), 'mcpbench-set-'));

test('listCandidates reports decision, integrity, lint and check per candidate', () => {
  const dir = makeBatch([
    { task: variant('Ann', 1), review: { decision: 'accepted', reason: 'correct predicate' }, check: { ok: true, problems: [] } },
    { task: variant('Cy', 2), lintErrors: 2 },
    { task: variant('Di', 3), review: { decision: 'rejected', reason: 'duplicate phrasing' } },
  ]);
  writeFileSync(join(dir, 'travel-cheapest-flight-v2.json'), JSON.stringify({ ...variant('Cy', 2), max_steps: 9 }));
  const list = listCandidates(dir);
  assert.deepEqual(
    list.map((c) => [c.task_id, c.state, c.integrity, c.lint.errors, c.check?.ok]),
    [
      ['travel-cheapest-flight-v1', 'accepted', 'ok', 0, true],
      ['travel-cheapest-flight-v2', 'undecided', 'changed', 2, undefined],
      ['travel-cheapest-flight-v3', 'rejected', 'ok', 0, undefined],
    ],
  );
  assert.deepEqual(list[0]!.parameters, { passenger: 'Ann' });
  assert.equal(list[0]!.goal, variant('Ann', 1).goal, 'the goal, for the review view');
});

test('the review commands speak JSON for the editor: list with goals, decide, diff, accept with its report', async () => {
  const dir = makeBatch([{ task: variant('Ann', 1), check: { ok: true, problems: [] } }, { task: variant('Cy', 2), check: { ok: true, problems: [] } }, { task: variant('Di', 3) }]);
  const into = emptyDir();
  const cli = async (...argv: string[]) => {
    let stdout = '';
    let stderr = '';
    const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: dir });
    return { code, stdout, stderr };
  };
  const listed = await cli('review', 'list', dir, '--format', 'json');
  assert.equal(listed.code, 0, listed.stderr);
  assert.deepEqual(JSON.parse(listed.stdout).map((c: { task_id: string; goal: string }) => [c.task_id, c.goal]), [1, 2, 3].map((i) => [`travel-cheapest-flight-v${i}`, variant(['Ann', 'Cy', 'Di'][i - 1]!, i).goal]));
  assert.equal((await cli('review', 'decide', dir, 'travel-cheapest-flight-v1', 'accept', '--reason', 'clear goal')).code, 0);
  assert.equal((await cli('review', 'decide', dir, 'travel-cheapest-flight-v2', 'reject', '--reason', 'same as v1')).code, 0);
  const diff = await cli('review', 'diff', dir, 'travel-cheapest-flight-v1', '--format', 'json');
  assert.equal(JSON.parse(diff.stdout).sibling.task_id, 'travel-cheapest-flight-v2');
  const accepted = await cli('review', 'accept', dir, '--into', into, '--format', 'json');
  assert.equal(accepted.code, 1, 'an undecided candidate is refused');
  const report = JSON.parse(accepted.stdout);
  assert.deepEqual(report.accepted.map((a: { task_id: string }) => a.task_id), ['travel-cheapest-flight-v1']);
  assert.deepEqual(report.skipped.map((a: { task_id: string }) => a.task_id), ['travel-cheapest-flight-v2']);
  assert.deepEqual(report.refused.map((a: { task_id: string; reason: string }) => [a.task_id, /no review decision/.test(a.reason)]), [['travel-cheapest-flight-v3', true]]);
  assert.ok(existsSync(join(into, 'travel', 'travel-cheapest-flight-v1.json')));
});

test('setDecision records the decision with its reason, reviewer and time in the manifest', () => {
  const dir = makeBatch([{ task: variant('Ann', 1) }, { task: variant('Cy', 2) }]);
  setDecision(dir, 'travel-cheapest-flight-v2', 'reject', '  passenger name collides with a state record ', 'ben', { now: new Date('2026-11-22T08:00:00Z') });
  const { manifest } = readBatch(dir);
  assert.deepEqual(manifest.candidates[1]!.review, {
    decision: 'rejected',
    reason: 'passenger name collides with a state record',
    reviewer: 'ben',
    at: '2026-11-22T08:00:00.000Z',
  });
  assert.equal(manifest.candidates[0]!.review, undefined);
  assert.deepEqual(manifest.template, { id: 'travel-cheapest-flight', version: '1', file: 'templates/travel/cheapest-flight.template.json' }, 'other fields are kept');
  // The manifest stays what `generate` writes: schemas/batch.schema.json.
  const validate = createAjv().compile(JSON.parse(readFileSync(join(root, 'schemas', 'batch.schema.json'), 'utf8')));
  assert.ok(validate(JSON.parse(readFileSync(join(dir, 'batch.json'), 'utf8'))), JSON.stringify(validate.errors?.map((e) => e.message)));
  assert.throws(() => setDecision(dir, 'travel-cheapest-flight-v1', 'accept', '   '), /needs a reason/);
  assert.throws(() => setDecision(dir, 'nope', 'accept', 'fine'), /no candidate nope/);
  assert.throws(() => setDecision(dir, 'travel-cheapest-flight-v1', 'maybe' as 'accept', 'fine'), /accept or reject/);
});

test('review decide killed between writing batch.json and its rename leaves the old manifest; the same command then records the decision', () => {
  const dir = makeBatch([{ task: variant('Ann', 1) }]);
  const before = readFileSync(join(dir, 'batch.json'), 'utf8');
  const original = fs.renameSync;
  const failing = mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => {
    if (String(to).endsWith('batch.json')) throw new Error('killed between write and rename');
    return original(from, to);
  });
  try {
    assert.throws(() => setDecision(dir, 'travel-cheapest-flight-v1', 'accept', 'natural goal'), /killed between write and rename/);
  } finally {
    failing.mock.restore();
  }
  assert.equal(readFileSync(join(dir, 'batch.json'), 'utf8'), before, 'the old manifest, whole');
  assert.deepEqual(readdirSync(dir).filter((name) => name.startsWith('batch.json')), ['batch.json'], 'no temporary file left');
  setDecision(dir, 'travel-cheapest-flight-v1', 'accept', 'natural goal');
  assert.equal(readBatch(dir).manifest.candidates[0]!.review?.decision, 'accepted');
});

test('acceptBatch moves accepted candidates with their provenance and refuses everything unreviewed or unfit', () => {
  const dir = makeBatch([
    { task: variant('Ann', 1), review: { decision: 'accepted', reason: 'ok' } },
    { task: variant('Cy', 2) },
    { task: variant('Di', 3), review: { decision: 'rejected', reason: 'boring' } },
    { task: variant('Ed', 4), review: { decision: 'accepted', reason: 'ok' }, lintErrors: 1 },
    { task: variant('Flo', 5), review: { decision: 'accepted', reason: 'ok' }, check: { ok: false, problems: ['reference fails'] } },
    { task: variant('Gus', 6), review: { decision: 'accepted', reason: 'ok' } },
    { task: variant('Hal', 7), review: { decision: 'accepted', reason: 'ok' } },
  ]);
  // v6 is edited after review: one character of its goal.
  const edited = join(dir, 'travel-cheapest-flight-v6.json');
  writeFileSync(edited, readFileSync(edited, 'utf8').replace('for Gus.', 'for Gus!'));
  // v7's id is already in the set with other content.
  const into = emptyDir();
  mkdirSync(join(into, 'travel'));
  writeFileSync(join(into, 'travel', 'existing.json'), JSON.stringify({ ...variant('Zed', 7) }));

  const report = acceptBatch(dir, { into });
  assert.deepEqual(report.accepted.map((a) => a.task_id), ['travel-cheapest-flight-v1']);
  const target = join(into, 'travel', 'travel-cheapest-flight-v1.json');
  assert.equal(report.accepted[0]!.file, target);
  assert.equal(readFileSync(target, 'utf8'), readFileSync(join(dir, 'travel-cheapest-flight-v1.json'), 'utf8'));
  assert.deepEqual(JSON.parse(readFileSync(target, 'utf8')).template, { id: 'travel-cheapest-flight', version: '1', parameters: { passenger: 'Ann' }, seed: 7 });
  assert.deepEqual(report.skipped, [{ task_id: 'travel-cheapest-flight-v3', reason: 'rejected: boring' }]);
  const refused = new Map(report.refused.map((r) => [r.task_id, r.reason]));
  assert.match(refused.get('travel-cheapest-flight-v2')!, /no review decision/);
  assert.match(refused.get('travel-cheapest-flight-v4')!, /1 lint error/);
  assert.match(refused.get('travel-cheapest-flight-v5')!, /self-check failed/);
  assert.match(refused.get('travel-cheapest-flight-v6')!, /changed after the batch was written \(its hash no longer matches/);
  assert.match(refused.get('travel-cheapest-flight-v7')!, /already in the set/);
  assert.equal(refused.size, 5);
  for (const id of ['v2', 'v3', 'v4', 'v5', 'v6']) assert.ok(!existsSync(join(into, 'travel', `travel-cheapest-flight-${id}.json`)), id);

  // Accepting again is harmless: the same content is already there.
  const again = acceptBatch(dir, { into });
  assert.deepEqual(again.accepted, []);
  assert.ok(again.skipped.some((s) => s.task_id === 'travel-cheapest-flight-v1' && /already in the set/.test(s.reason)));
  // Rotation draws exactly the accepted, intact, clean candidates.
  assert.deepEqual(reviewedCandidates(dir).map((r) => r.task_id), ['travel-cheapest-flight-v1', 'travel-cheapest-flight-v7']);
});

test('with a registry, acceptBatch lints again: a candidate the manifest calls clean but that has errors is refused', async () => {
  const registry = await loadRegistry();
  const broken = variant('Ann', 1);
  broken.available_tools = [...broken.available_tools, 'travel.teleport'];
  const dir = makeBatch([
    { task: broken, review: { decision: 'accepted', reason: 'ok' } },
    { task: variant('Cy', 2), review: { decision: 'accepted', reason: 'ok' } },
  ]);
  const report = acceptBatch(dir, { into: emptyDir(), registry });
  assert.deepEqual(report.accepted.map((a) => a.task_id), ['travel-cheapest-flight-v2']);
  assert.match(report.refused[0]!.reason, /unknown-tool/);
});

test('a malformed manifest is refused with every problem named', () => {
  assert.throws(
    () => validateBatchManifest({ template: 't', seed: 1.5, created_at: 'x', candidates: [{ file: '../x.json', task_id: 'a', sha256: 'abc', lint: {} }] }, 'batch.json'),
    (error: unknown) =>
      error instanceof BatchError &&
      /seed/.test(error.message) &&
      /inside the batch folder/.test(error.message) &&
      /64 lower-case hex/.test(error.message) &&
      /lint must be/.test(error.message),
  );
  assert.throws(() => readBatch(emptyDir()), /not a review batch/);
});

test('candidateDiff compares a candidate with its nearest sibling, path by path', () => {
  const near = variant('Ann', 2);
  near.max_steps = 9;
  const far = variant('Cy', 3);
  far.difficulty = 'hard';
  far.max_steps = 12;
  const dir = makeBatch([{ task: variant('Ann', 1) }, { task: far }, { task: near }]);
  const diff = candidateDiff(dir, 'travel-cheapest-flight-v1');
  assert.equal(diff.sibling?.task_id, 'travel-cheapest-flight-v2');
  assert.deepEqual(diff.changes, [{ path: '/max_steps', kind: 'changed', before: 9, after: 8 }]);
  const other = candidateDiff(dir, 'travel-cheapest-flight-v3');
  assert.ok(other.changes.some((c) => c.path === '/goal' && c.before === 'Book the cheapest flight from LON to PAR on 2026-01-05 for Ann.'));
  assert.ok(other.changes.some((c) => c.path === '/template/parameters/passenger' && c.after === 'Cy'));
  assert.ok(other.changes.some((c) => c.path === '/success_predicate/travel.reservationConfirmed/passenger'));
  assert.deepEqual(jsonDiff({ a: [1, 2], 'x/y': 1 }, { a: [1], b: true, 'x/y': 2 }), [
    { path: '/a/1', kind: 'removed', before: 2 },
    { path: '/x~1y', kind: 'changed', before: 1, after: 2 },
    { path: '/b', kind: 'added', after: true },
  ]);
});
