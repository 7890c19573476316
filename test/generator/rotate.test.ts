import { mock, test } from 'node:test';
import assert from 'node:assert/strict';
import fs, { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { createAjv } from '../../server/src/ajv.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { readAttestations, verifyFolder } from '../../server/src/generator/attest.ts';
import {
  chooseRetirements,
  rotate,
  RotationError
} from '../../server/src/generator/rotate.ts';
import { taskFilesIn } from '../../server/src/tasks/files.ts';
import { emitSetSchema, readSetManifest, SetManifestSchema, type SetManifest } from '../../server/src/tasks/set-manifest.ts';

const root = join(__dirname, '..', '..');
const NAMESPACES = ['travel', 'shop', 'support', 'calendar'] as const;
const CATEGORIES = ['single-tool', 'composition'] as const;
const bases: Record<string, Task> = {
  travel: JSON.parse(readFileSync(join(root, 'test/fixtures/tasks/travel/travel-cheapest-flight-001.json'), 'utf8')),
  shop: JSON.parse(readFileSync(join(root, 'test/fixtures/tasks/shop/shop-simple-order-001.json'), 'utf8')),
  support: JSON.parse(readFileSync(join(root, 'test/fixtures/tasks/support/support-password-reset-001.json'), 'utf8')),
  calendar: JSON.parse(readFileSync(join(root, 'test/fixtures/tasks/calendar/calendar-book-review-001.json'), 'utf8')),
};

function makeTask(ns: string, category: string, n: number, prefix = 'set'): Task {
  return { ...structuredClone(bases[ns]!), id: `${prefix}-${ns}-${category}-${n}`, category: category as Task['category'], goal: `${bases[ns]!.goal} (variant ${prefix} ${n})` };
}

const month = (i: number) => `2026-${String(1 + (i % 9)).padStart(2, '0')}`;

/** 4 namespaces x 2 categories x 5 tasks; task i of a stratum was added in month i+1 (so 1 is the oldest). */
function makeSet(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'mcpbench-sets-')), 'private');
  const tasks: SetManifest['tasks'] = [];
  for (const ns of NAMESPACES) {
    for (const category of CATEGORIES) {
      for (let i = 0; i < 5; i++) {
        const task = makeTask(ns, category, i);
        const file = `tasks/${ns}/${task.id}.json`;
        mkdirSync(join(dir, 'tasks', ns), { recursive: true });
        writeFileSync(join(dir, file), JSON.stringify(task, null, 2) + '\n');
        tasks.push({ task_id: task.id, file, sha256: canonicalHash(task), added: month(i) });
      }
    }
  }
  writeFileSync(join(dir, 'set.json'), JSON.stringify({ name: 'private', month: '2026-11', tasks }, null, 2) + '\n');
  return dir;
}

/** A review batch: per stratum two accepted candidates, plus an undecided, a rejected and a tampered one. */
function makeReplacementBatch(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-batch-'));
  const candidates: Record<string, unknown>[] = [];
  const write = (task: Task, review?: 'accepted' | 'rejected') => {
    const file = `${task.id}.json`;
    writeFileSync(join(dir, file), JSON.stringify(task, null, 2));
    candidates.push({
      file,
      task_id: task.id,
      sha256: canonicalHash(task),
      parameters: {},
      seed: candidates.length,
      lint: { errors: 0, warnings: 0 },
      ...(review ? { review: { decision: review, reason: 'reviewed', at: '2026-11-28T00:00:00Z' } } : {}),
    });
  };
  for (const ns of NAMESPACES) for (const category of CATEGORIES) for (const n of [0, 1]) write(makeTask(ns, category, n, 'new'), 'accepted');
  for (const ns of NAMESPACES) {
    write(makeTask(ns, 'single-tool', 9, 'undecided'));
    write(makeTask(ns, 'single-tool', 9, 'rejected'), 'rejected');
    write(makeTask(ns, 'single-tool', 9, 'tampered'), 'accepted');
    writeFileSync(join(dir, `tampered-${ns}-single-tool-9.json`), JSON.stringify({ ...makeTask(ns, 'single-tool', 9, 'tampered'), max_steps: 99 }));
  }
  writeFileSync(join(dir, 'batch.json'), JSON.stringify({ template: { id: 'mixed', version: '1', file: 'templates/mixed.template.json' }, seed: 1, count: candidates.length, created_at: '2026-11-27T00:00:00Z', dropped: { duplicates: 0, invalid: 0 }, invalid: [], candidates }, null, 2));
  return dir;
}

test('retirement: about the share, balanced over namespaces and categories, oldest first within them', () => {
  const tasks = NAMESPACES.flatMap((namespace) =>
    CATEGORIES.flatMap((category) => [0, 1, 2, 3, 4].map((i) => ({ task_id: `${namespace}-${category}-${i}`, namespace, category, added: month(i) }))),
  );
  for (const seed of [1, 2, 3, 4, 5]) {
    const retired = chooseRetirements(tasks, 10, seed);
    assert.equal(retired.length, 10);
    assert.equal(new Set(retired.map((t) => t.task_id)).size, 10);
    for (const ns of NAMESPACES) assert.ok([2, 3].includes(retired.filter((t) => t.namespace === ns).length), `${ns} gets 2 or 3 of 10`);
    for (const category of CATEGORIES) assert.equal(retired.filter((t) => t.category === category).length, 5);
    for (const ns of NAMESPACES) {
      for (const category of CATEGORIES) {
        const stratum = tasks.filter((t) => t.namespace === ns && t.category === category);
        const out = stratum.filter((t) => retired.includes(t));
        const kept = stratum.filter((t) => !retired.includes(t));
        if (out.length && kept.length) {
          assert.ok(out.every((o) => kept.every((k) => o.added <= k.added)), `${ns}/${category}: the oldest retire first`);
        }
      }
    }
    assert.deepEqual(chooseRetirements(tasks, 10, seed), retired, 'same seed, same choice');
  }
  // With every task the same age, the seed decides among equals.
  const sameAge = tasks.map((t) => ({ ...t, added: '2026-01' }));
  const choices = new Set([1, 2, 3, 4, 5, 6].map((seed) => JSON.stringify(chooseRetirements(sameAge, 10, seed).map((t) => t.task_id).sort())));
  assert.ok(choices.size > 1);
  // A skewed set: the big namespace gives proportionally more.
  const skewed = [...tasks.filter((t) => t.namespace === 'travel'), ...tasks.filter((t) => t.namespace === 'shop').slice(0, 2)];
  const fromSkewed = chooseRetirements(skewed, 6, 1);
  assert.equal(fromSkewed.filter((t) => t.namespace === 'travel').length, 5, '10 of 12 tasks are travel: 5 of 6 retire from travel');
  assert.equal(fromSkewed.filter((t) => t.namespace === 'shop').length, 1);
});

test('rotate retires a quarter, draws only reviewed intact replacements of the same kind, and writes Historical attestations', () => {
  const setDir = makeSet();
  const batch = makeReplacementBatch();
  const before = readSetManifest(setDir);
  const result = rotate({ set: setDir, month: '2026-12', share: 0.25, seed: 42, replacements: [batch] });

  const after = readSetManifest(setDir);
  assert.equal(after.month, '2026-12');
  assert.equal(after.tasks.length, 40);
  const added = after.tasks.filter((t) => t.added === '2026-12');
  assert.equal(added.length, 10);
  assert.ok(added.every((t) => t.task_id.startsWith('new-')), 'only accepted, intact candidates are drawn');
  const kindOf = (id: string) => id.split('-').slice(1, -1).join('-');
  assert.deepEqual(added.map((t) => kindOf(t.task_id)).sort(), result.historical.retired.map((t) => kindOf(t.task_id)).sort(), 'each retired task is replaced by one of the same namespace and category');

  const historical = JSON.parse(readFileSync(join(setDir, '..', 'historical', 'private', 'Historical-2026-12.json'), 'utf8'));
  assert.equal(historical.tag, 'Historical-2026-12');
  assert.equal(historical.attestations.length, 10);
  for (const a of historical.attestations) {
    const entry = before.tasks.find((t) => t.task_id === a.task_id)!;
    assert.equal(a.sha256, entry.sha256);
    assert.ok(!existsSync(join(setDir, entry.file)), 'the retired file left the set');
    assert.equal(canonicalHash(JSON.parse(readFileSync(join(result.retiredDir, entry.file), 'utf8'))), a.sha256);
  }
  assert.equal(historical.set_sha256, canonicalHash(after));
  assert.equal(historical.previous_set_sha256, canonicalHash(before));

  assert.deepEqual(verifyFolder(setDir, join(setDir, 'set.json')), { ok: true, checked: 40, findings: [] });
  assert.deepEqual(verifyFolder(result.retiredDir, result.historicalFile), { ok: true, checked: 10, findings: [] });
  assert.equal(taskFilesIn(setDir).length, 40);

  const ajv = createAjv();
  const validate = ajv.compile(JSON.parse(readFileSync(join(root, 'schemas', 'set.schema.json'), 'utf8')));
  assert.ok(validate(JSON.parse(readFileSync(join(setDir, 'set.json'), 'utf8'))), JSON.stringify(validate.errors));

  assert.throws(() => rotate({ set: setDir, month: '2026-12', share: 0.25, seed: 1, replacements: [batch] }), /must come after/);
  // Next month: the new tasks are not drawn twice and retired ids never come back.
  const next = rotate({ set: setDir, month: '2027-01', share: 0.1, seed: 1, replacements: [batch], allowShrink: true });
  assert.ok(next.manifest.tasks.every((t) => !historical.attestations.some((a: { task_id: string }) => a.task_id === t.task_id)));
  assert.equal(new Set(next.manifest.tasks.map((t) => t.task_id)).size, next.manifest.tasks.length);
});

test('rotate refuses a tampered set and a pool too small to replace what retires', () => {
  const setDir = makeSet();
  const file = join(setDir, 'tasks/shop/set-shop-composition-3.json');
  writeFileSync(file, readFileSync(file, 'utf8').replace('"max_steps": ', '"max_steps": 1'));
  assert.throws(() => rotate({ set: setDir, month: '2026-12', share: 0.25, seed: 1, replacements: [] }), /set-shop-composition-3 .*does not match set\.json/);

  const clean = makeSet();
  const pool = mkdtempSync(join(tmpdir(), 'mcpbench-pool-'));
  writeFileSync(join(pool, 'one.json'), JSON.stringify(makeTask('travel', 'composition', 1, 'pool')));
  assert.throws(() => rotate({ set: clean, month: '2026-12', share: 0.25, seed: 1, replacements: [pool] }), (e: unknown) => e instanceof RotationError && /only 1 reviewed replacement\(s\) for 10/.test(e.message));
  const shrunk = rotate({ set: clean, month: '2026-12', share: 0.25, seed: 1, replacements: [pool], allowShrink: true });
  assert.equal(shrunk.manifest.tasks.length, 31);
  assert.equal(shrunk.historical.replacements[0]!.task_id, 'pool-travel-composition-1');
});

test('verify reports by id a one-character change anywhere in a task, a missing task and an unattested one', () => {
  const setDir = makeSet();
  const attestations = join(setDir, 'set.json');
  assert.equal(readAttestations(attestations).length, 40);
  const file = join(setDir, 'tasks/support/set-support-single-tool-2.json');
  const original = readFileSync(file, 'utf8');
  // Reformatting is not a change of the task (canonical JSON) ...
  writeFileSync(file, JSON.stringify(JSON.parse(original)));
  assert.equal(verifyFolder(setDir, attestations).ok, true);
  // ... but one changed character in a value, a number or a key is.
  const edits: [string, string][] = [
    ['priority medium', 'priority mediun'],
    ['"max_steps": ', '"max_steps": 1'],
    ['"difficulty"', '"difficulty_"'],
    ['C-102', 'C-103'],
  ];
  for (const [from, to] of edits) {
    assert.ok(original.includes(from), from);
    writeFileSync(file, original.replace(from, to));
    const report = verifyFolder(setDir, attestations);
    assert.equal(report.ok, false, from);
    assert.deepEqual(
      report.findings.map((f) => [f.task_id, f.kind]),
      [['set-support-single-tool-2', 'mismatch']],
    );
    assert.match(report.findings[0]!.message, /does not match its attestation/);
  }
  writeFileSync(file, original);
  rmSync(join(setDir, 'tasks/shop/set-shop-composition-0.json'));
  writeFileSync(join(setDir, 'tasks/shop/stray.json'), JSON.stringify(makeTask('shop', 'composition', 8, 'stray')));
  const report = verifyFolder(setDir, attestations);
  assert.deepEqual(report.findings.map((f) => [f.task_id, f.kind]).sort(), [
    ['set-shop-composition-0', 'missing'],
    ['stray-shop-composition-8', 'unattested'],
  ]);
});

test('schemas/set.schema.json is what the zod schema emits, and both accept and reject the same manifests', () => {
  const committed = JSON.parse(readFileSync(join(root, 'schemas', 'set.schema.json'), 'utf8'));
  assert.deepEqual(committed, emitSetSchema());
  const validate = createAjv().compile(committed);
  const good = { name: 'private', month: '2026-12', tasks: [{ task_id: 'a', file: 'tasks/a.json', sha256: 'a'.repeat(64), added: '2026-11' }] };
  const samples: unknown[] = [
    good,
    { name: 'private', tasks: [] },
    { ...good, month: '2026-13' },
    { ...good, tasks: [{ ...good.tasks[0], sha256: 'A'.repeat(64) }] },
    { ...good, tasks: [{ ...good.tasks[0], extra: 1 }] },
    { ...good, name: '' },
    { tasks: [] },
    { ...good, tasks: [{ ...good.tasks[0], added: '2026-1' }] },
  ];
  const verdicts = samples.map((s) => [Boolean(validate(s)), SetManifestSchema.safeParse(s).success]);
  assert.deepEqual(verdicts.map(([json, zod]) => json === zod), samples.map(() => true));
  assert.deepEqual(verdicts.map(([json]) => json), [true, true, false, false, false, false, false, false]);
});

/** Every file under `dir` (relative path → text), for comparing two folders' outcomes. */
function contents(dir: string): Record<string, string> {
  if (!existsSync(dir)) return {};
  return Object.fromEntries(
    readdirSync(dir, { recursive: true, withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => join(e.parentPath, e.name))
      .sort()
      .map((path) => [relative(dir, path), readFileSync(path, 'utf8')]),
  );
}

test('a rotation killed between any write and its rename leaves whole files, and the same command run again finishes the job', () => {
  const batch = makeReplacementBatch();
  const options = (set: string) => ({ set, month: '2026-12', share: 0.25, seed: 42, replacements: [batch] });
  const outcome = (set: string) => ({ set: contents(set), history: contents(join(set, '..', 'historical')) });

  // The uninterrupted rotation, and how many atomic renames it makes.
  const reference = makeSet();
  let renames = 0;
  const original = fs.renameSync;
  const counting = mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => (renames++, original(from, to)));
  try {
    rotate(options(reference));
  } finally {
    counting.mock.restore();
  }
  const expected = outcome(reference);
  assert.ok(renames >= 13, `every file is renamed into place (${renames})`);

  for (let kill = 1; kill <= renames; kill++) {
    const set = makeSet();
    const before = readFileSync(join(set, 'set.json'), 'utf8');
    let n = 0;
    const failing = mock.method(fs, 'renameSync', (from: fs.PathLike, to: fs.PathLike) => {
      if (++n === kill) throw new Error('killed between write and rename');
      return original(from, to);
    });
    try {
      assert.throws(() => rotate(options(set)), /killed between write and rename/);
    } finally {
      failing.mock.restore();
    }
    // Whatever was interrupted, set.json is the old one or the new one, whole, and describes files that exist.
    const manifest = readSetManifest(set);
    assert.ok(readFileSync(join(set, 'set.json'), 'utf8') === before || manifest.month === '2026-12', `kill ${kill}: old or new set.json`);
    for (const entry of manifest.tasks) assert.ok(existsSync(join(set, entry.file)), `kill ${kill}: ${entry.file} is there`);
    // The same command finishes the rotation as if nothing had happened.
    rotate(options(set));
    assert.deepEqual(outcome(set), expected, `kill ${kill}: rerun finishes the same rotation`);
    // And once more: a finished rotation rerun by the same command is a no-op, not an error.
    rotate(options(set));
    assert.deepEqual(outcome(set), expected, `kill ${kill}: a third run changes nothing`);
  }
});
