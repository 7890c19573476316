/**
 * generateVariants and review batches: byte-for-byte determinism, duplicates dropped by content hash, ids
 * stable across seeds, provenance that replays a variant alone, lint-clean variants with invalid samples
 * reported instead, and a batch manifest that fits schemas/batch.schema.json.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BatchError, batchDirectory, readBatchManifest, writeBatch, writeBatchManifest } from '../../server/src/generator/batch.ts';
import { buildVariant, generateVariants, TASK_SCHEMA_LINK } from '../../server/src/generator/generate.ts';
import { TemplateSchema, type Template } from '../../server/src/generator/model.ts';
import { compileTemplate } from '../../server/src/generator/sample.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { createAjv } from '../../server/src/ajv.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import { lintTask } from '../../server/src/tasks/lint.ts';
import { TaskSchema } from '../../server/src/tasks/model.ts';
import { emitJsonSchemas } from '../../server/src/engine/json-schemas.ts';

const root = join(__dirname, '..', '..');
const readTemplate = (file: string): Template => TemplateSchema.parse(JSON.parse(readFileSync(join(root, 'templates', file), 'utf8')));
const EXAMPLES = ['travel/cheapest-flight.template.json', 'filesystem/move-file.template.json'];

/** A template with exactly 2 x 2 = 4 distinct tasks. */
function tinyTemplate(extra: Partial<Record<string, unknown>> = {}): Template {
  return TemplateSchema.parse({
    id: 'tiny',
    version: '3',
    namespaces: ['filesystem'],
    description: 'four tasks',
    parameters: { file: { pool: ['a.txt', 'b.txt'] }, folder: { pool: ['x', 'y'] }, ...(extra.parameters as object) },
    task: {
      server: 'filesystem',
      category: 'single-tool',
      difficulty: 'easy',
      max_steps: 5,
      goal: 'Move {{file}} into {{folder}}.',
      initial_state: { filesystem: { files: { '{{file}}': 'text', '{{folder}}/': null } } },
      available_tools: ['filesystem.move_file', 'filesystem.write_file'],
      success_predicate: { all: [{ 'filesystem.fileExists': { path: '{{folder}}/{{file}}' } }, { not: { 'filesystem.fileExists': { path: '{{file}}' } } }] },
      reference_solutions: [[{ tool: 'filesystem.move_file', arguments: { source: '{{file}}', destination: '{{folder}}/{{file}}' } }]],
      counterexamples: [[{ tool: 'filesystem.write_file', arguments: { path: '{{folder}}/{{file}}', content: 'text' } }]],
      ...(extra.task as object),
    },
  });
}

test('the same template, seed and count give the same variants byte for byte; another seed gives others', async () => {
  const registry = await loadRegistry();
  for (const file of EXAMPLES) {
    const template = readTemplate(file);
    const first = generateVariants(template, { count: 25, seed: 11, registry });
    const again = generateVariants(structuredClone(template), { count: 25, seed: 11, registry });
    assert.equal(first.candidates.length, 25, file);
    assert.deepEqual(first.candidates.map((c) => c.text), again.candidates.map((c) => c.text));
    const other = generateVariants(template, { count: 25, seed: 12, registry });
    const overlap = other.candidates.filter((c) => first.candidates.some((f) => f.text === c.text)).length;
    assert.ok(overlap < 5, `${file}: seeds 11 and 12 share ${overlap} of 25 variants`);
  }
});

test('generated variants lint clean, parse as tasks, and carry provenance that replays them alone', async () => {
  const registry = await loadRegistry();
  for (const file of EXAMPLES) {
    const template = readTemplate(file);
    const compiled = compileTemplate(template);
    const result = generateVariants(template, { count: 30, seed: 5, registry });
    assert.equal(result.invalid.length, 0, file);
    for (const c of result.candidates) {
      assert.deepEqual(lintTask(c.task.id, c.text, registry).diagnostics.filter((d) => d.severity === 'error'), []);
      const value = JSON.parse(c.text);
      assert.equal(value.$schema, TASK_SCHEMA_LINK);
      assert.equal(TaskSchema.safeParse(value).success, true);
      assert.deepEqual(value.template, { id: template.id, version: template.version, parameters: c.parameters, seed: c.seed });
      assert.equal(c.sha256, canonicalHash(value));
      assert.match(c.task.id, new RegExp(`^${template.id}-[0-9a-f]{8}$`));
      assert.equal(buildVariant(compiled, c.seed).text, c.text, 'the seed in the provenance reproduces the file');
    }
    assert.equal(new Set(result.candidates.map((c) => c.task.id)).size, result.candidates.length);
  }
});

test('duplicates are dropped by content hash, and ids do not depend on the batch seed', async () => {
  const registry = await loadRegistry();
  const one = generateVariants(tinyTemplate(), { count: 10, seed: 1, registry });
  assert.equal(one.candidates.length, 4, 'the parameter space holds 4 tasks');
  assert.ok(one.dropped.duplicates > 0);
  assert.equal(one.attempts, 10 * 20 + 100, 'gives up after the attempt budget');
  assert.equal(new Set(one.candidates.map((c) => c.contentHash)).size, 4);
  const two = generateVariants(tinyTemplate(), { count: 10, seed: 99, registry });
  assert.deepEqual(two.candidates.map((c) => c.task.id).sort(), one.candidates.map((c) => c.task.id).sort());
  // provenance (the seed) differs between the batches, but the content hash that ids come from does not
  const sameId = one.candidates[0]!;
  const twin = two.candidates.find((c) => c.task.id === sameId.task.id)!;
  assert.equal(twin.contentHash, sameId.contentHash);
});

test('a parameter that only changes provenance yields duplicates, not new variants', async () => {
  const registry = await loadRegistry();
  const result = generateVariants(tinyTemplate({ parameters: { noise: { int: { min: 1, max: 1000 } } } }), { count: 10, seed: 3, registry });
  assert.equal(result.candidates.length, 4);
  assert.ok(result.dropped.duplicates >= 10);
});

test('samples with lint errors are reported as invalid and never returned as variants', async () => {
  const registry = await loadRegistry();
  const template = tinyTemplate({ parameters: { steps: { pool: [0, 5] } }, task: { max_steps: '{{steps}}' } });
  const result = generateVariants(template, { count: 8, seed: 2, registry });
  assert.ok(result.invalid.length > 0 && result.candidates.length > 0);
  assert.equal(result.dropped.invalid, result.invalid.length);
  for (const c of result.candidates) assert.equal(c.task.max_steps, 5);
  for (const c of result.invalid) {
    assert.equal(c.task.max_steps, 0);
    assert.ok(c.diagnostics.some((d) => d.severity === 'error' && d.code === 'invalid-value'));
  }
  assert.deepEqual(result.variants, result.candidates.map((c) => c.task));
});

test('a batch folder holds each candidate and a manifest that fits batch.schema.json; reviewed batches are kept', async () => {
  const registry = await loadRegistry();
  const out = mkdtempSync(join(tmpdir(), 'mcpbench-batch-'));
  try {
    const template = tinyTemplate({ parameters: { steps: { pool: [0, 5] } }, task: { max_steps: '{{steps}}' } });
    const result = generateVariants(template, { count: 8, seed: 2, registry });
    const directory = batchDirectory(out, template.id, 2);
    const manifest = writeBatch({ directory, template, templateFile: 'templates/filesystem/tiny.template.json', seed: 2, count: 8, result, now: new Date('2026-11-01T00:00:00Z') });
    const validate = createAjv().compile(emitJsonSchemas()['batch.schema.json']!);
    const onDisk = JSON.parse(readFileSync(join(directory, 'batch.json'), 'utf8'));
    assert.equal(validate(onDisk), true, JSON.stringify(validate.errors));
    assert.deepEqual(onDisk, manifest);
    assert.equal(manifest.invalid.length, result.invalid.length);
    assert.deepEqual(readdirSync(directory).sort(), ['batch.json', ...manifest.candidates.map((c) => c.file)].sort());
    for (const c of manifest.candidates) {
      assert.equal(canonicalHash(JSON.parse(readFileSync(join(directory, c.file), 'utf8'))), c.sha256);
      assert.deepEqual(c.lint, { errors: 0, warnings: result.candidates.find((x) => x.task.id === c.task_id)!.warnings });
    }
    // an unreviewed batch is replaced by the same generation
    writeFileSync(join(directory, manifest.candidates[0]!.file), 'edited');
    writeBatch({ directory, template, templateFile: 'x', seed: 2, count: 8, result });
    assert.equal(readFileSync(join(directory, manifest.candidates[0]!.file), 'utf8'), result.candidates[0]!.text);
    // a reviewed one is not
    const reviewed = readBatchManifest(directory);
    reviewed.candidates[0]!.review = { decision: 'accepted', reason: 'fine', at: '2026-11-02T00:00:00Z' };
    writeBatchManifest(directory, reviewed);
    assert.equal(validate(JSON.parse(readFileSync(join(directory, 'batch.json'), 'utf8'))), true);
    assert.throws(() => writeBatch({ directory, template, templateFile: 'x', seed: 2, count: 8, result }), BatchError);
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
});
