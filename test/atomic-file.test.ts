/**
 * Files that record a decision are written atomically (server/src/atomic-file.ts). For each writer not
 * covered beside its own module (run.json, checks.json and reports in test/runner/store.test.ts, set.json and
 * Historical-*.json in test/generator/rotate.test.ts, a review decision in test/generator/review.test.ts): a
 * failure between the write and the rename leaves the old file whole and no temporary file, and the same
 * call then succeeds.
 */
import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { writeFileAtomicSync } from '../server/src/atomic-file.ts';
import { readBatchManifest, writeBatchManifest } from '../server/src/generator/batch.ts';
import type { BatchManifest } from '../server/src/generator/model.ts';
import { seal } from '../server/src/tasks/seal.ts';

function killedBeforeRename(target: string, action: () => unknown): void {
  const original = fs.renameSync;
  const failing = mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => {
    if (String(to) === target) throw new Error('killed between write and rename');
    return original(from, to);
  });
  try {
    assert.throws(action, /killed between write and rename/);
  } finally {
    failing.mock.restore();
  }
}

const siblings = (file: string) => readdirSync(join(file, '..')).filter((name) => name.startsWith(`${file.split('/').pop()}.`));

test('the helper: the old content or the new one, never a mix; no temporary file left', () => {
  const file = join(mkdtempSync(join(tmpdir(), 'mcpbench-atomic-')), 'decision.json');
  writeFileAtomicSync(file, 'old\n');
  killedBeforeRename(file, () => writeFileAtomicSync(file, 'new\n'));
  assert.equal(readFileSync(file, 'utf8'), 'old\n');
  assert.deepEqual(siblings(file), []);
  writeFileAtomicSync(file, new TextEncoder().encode('new\n'));
  assert.equal(readFileSync(file, 'utf8'), 'new\n');
});

test('a sealed set: a failed write keeps the previous sealed file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-atomic-seal-'));
  mkdirSync(join(dir, 'set', 'tasks'), { recursive: true });
  writeFileSync(join(dir, 'set', 'tasks', 'a.json'), '{"id":"a"}\n');
  const out = join(dir, 'private.sealed.json');
  seal(join(dir, 'set'), 'a passphrase of length', { out });
  const before = readFileSync(out, 'utf8');
  writeFileSync(join(dir, 'set', 'tasks', 'b.json'), '{"id":"b"}\n');
  killedBeforeRename(out, () => seal(join(dir, 'set'), 'a passphrase of length', { out }));
  assert.equal(readFileSync(out, 'utf8'), before);
  assert.deepEqual(siblings(out), []);
  seal(join(dir, 'set'), 'a passphrase of length', { out });
  assert.notEqual(readFileSync(out, 'utf8'), before);
});

test('a batch manifest written by generate: a failed write keeps the previous batch.json', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-atomic-batch-'));
  const manifest: BatchManifest = {
    template: { id: 't', version: '1', file: 'templates/t.template.json' },
    seed: 1,
    count: 0,
    created_at: '2026-11-01T00:00:00.000Z',
    dropped: { duplicates: 0, invalid: 0 },
    invalid: [],
    candidates: [],
  };
  writeBatchManifest(dir, manifest);
  const file = join(dir, 'batch.json');
  const before = readFileSync(file, 'utf8');
  killedBeforeRename(file, () => writeBatchManifest(dir, { ...manifest, seed: 2 }));
  assert.equal(readFileSync(file, 'utf8'), before);
  assert.deepEqual(siblings(file), []);
  writeBatchManifest(dir, { ...manifest, seed: 2 });
  assert.equal(readBatchManifest(dir).seed, 2);
});
