import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  acceptSummary,
  batchDirectoryOf,
  cliFailure,
  CliOutputError,
  countCandidates,
  isBatchManifestName,
  parseCliJson,
  reviewAcceptArgs,
  reviewDecideArgs,
  reviewDiffArgs,
  reviewListArgs,
} from '../../client/src/review-args.ts';

test('a batch is opened by its folder or its manifest', () => {
  assert.equal(batchDirectoryOf('/w/batches/fs-7/batch.json'), '/w/batches/fs-7');
  assert.equal(batchDirectoryOf('/w/batches/fs-7/fs.batch.json'), '/w/batches/fs-7');
  assert.equal(batchDirectoryOf('/w/batches/fs-7'), '/w/batches/fs-7');
  assert.ok(isBatchManifestName('batch.json') && isBatchManifestName('x.batch.json'));
  assert.ok(!isBatchManifestName('fs-file-away-1a2b3c4d.json'));
});

test('the review view speaks the review commands of the CLI, JSON where it reads the answer', () => {
  assert.deepEqual(reviewListArgs('/b'), ['review', 'list', '/b', '--format', 'json']);
  assert.deepEqual(reviewDiffArgs('/b', 'id-1'), ['review', 'diff', '/b', 'id-1', '--format', 'json']);
  assert.deepEqual(reviewDiffArgs('/b', 'id-1', ['/w/tasks']), ['review', 'diff', '/b', 'id-1', '--format', 'json', '--also', '/w/tasks']);
  assert.deepEqual(reviewDecideArgs('/b', 'id-1', 'accept', 'fine goal'), ['review', 'decide', '/b', 'id-1', 'accept', '--reason', 'fine goal']);
  assert.deepEqual(reviewDecideArgs('/b', 'id-1', 'reject', 'dup', 'ana'), ['review', 'decide', '/b', 'id-1', 'reject', '--reason', 'dup', '--reviewer', 'ana']);
  assert.deepEqual(reviewAcceptArgs('/b', '/w/tasks'), ['review', 'accept', '/b', '--into', '/w/tasks', '--format', 'json']);
});

test("the CLI's JSON is read; a failure says what the CLI said", () => {
  assert.deepEqual(parseCliJson('list', { code: 0, stdout: '[1]', stderr: '' }), [1]);
  assert.deepEqual(parseCliJson('accept', { code: 1, stdout: '{"a":1}', stderr: 'refused x' }, [0, 1]), { a: 1 });
  assert.throws(
    () => parseCliJson('mcpbench review list', { code: 2, stdout: '', stderr: 'warning: sandbox\nmcpbench: /b: not a review batch (no batch.json)\n' }),
    (e: unknown) => e instanceof CliOutputError && e.message === 'mcpbench review list failed (exit 2): /b: not a review batch (no batch.json)',
  );
  assert.throws(() => parseCliJson('list', { code: 0, stdout: 'oops', stderr: '' }), /printed no JSON \(oops\)/);
  assert.match(cliFailure('decide', { code: null, stdout: '', stderr: '', error: new Error('ENOENT') }), /could not start mcpbench: ENOENT/);
});

test('counts and the sentence after accepting a batch', () => {
  assert.deepEqual(countCandidates([{ state: 'accepted' }, { state: 'undecided' }, { state: 'undecided' }, { state: 'rejected' }]), { total: 4, accepted: 1, rejected: 1, undecided: 2 });
  const report = {
    accepted: [{ task_id: 'a', file: '/w/tasks/fs/a.json' }],
    skipped: [{ task_id: 'b', reason: 'rejected: dup' }],
    refused: [{ task_id: 'c', reason: 'no review decision: accept or reject it first (mcpbench review decide)' }],
  };
  assert.deepEqual(acceptSummary(report, 'tasks/'), { text: '1 accepted into tasks/ (a); 1 skipped; 1 still undecided.', warning: false });
  const changed = { accepted: [], skipped: [], refused: [{ task_id: 'd', reason: 'd.json changed after the batch was written' }] };
  assert.deepEqual(acceptSummary(changed, 'tasks/'), { text: 'nothing new accepted into tasks/; 1 refused: d (d.json changed after the batch was written).', warning: true });
});
