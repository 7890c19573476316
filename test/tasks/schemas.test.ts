/**
 * One source of truth: the committed JSON Schemas are exactly what the zod model emits, and the zod schema
 * and the compiled JSON Schema accept and reject the same documents.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createAjv } from '../../server/src/ajv.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { TaskSchema } from '../../server/src/tasks/model.ts';
import { AgentConfigSchema } from '../../server/src/runner/agents/settings.ts';
import { PriceFileSchema } from '../../server/src/runner/agents/usage.ts';
import type { z } from 'zod';
import { schemasDir } from '../../server/src/paths.ts';
import { pick, seededRandom } from '../seeded-random.ts';
import { ServerFileSchema } from '../../server/src/mcp/server-file.ts';
import { emitJsonSchemas } from '../../server/src/engine/json-schemas.ts';

const emitted = emitJsonSchemas();

test('schemas/*.schema.json equal a fresh emission from the zod model (run `npm run schemas` after changing it)', () => {
  for (const [file, schema] of Object.entries(emitted)) {
    const committed = JSON.parse(readFileSync(join(schemasDir(), file), 'utf8'));
    assert.deepEqual(committed, schema, `${file} is stale`);
  }
});

test('every field of the task schema has a title, a description and examples', () => {
  const schema = emitted['task.schema.json'] as { $defs: Record<string, { properties?: Record<string, Record<string, unknown>> }> };
  const properties = schema.$defs.Task!.properties!;
  for (const [name, property] of Object.entries(properties)) {
    const documented = property.$ref ? schema.$defs[String(property.$ref).split('/').pop()!] as Record<string, unknown> : property;
    for (const key of ['title', 'description', 'examples']) assert.ok(documented[key], `task.${name} has no ${key}`);
  }
});

test('zod and the JSON Schema agree on valid tasks and on thousands of mutated ones', () => {
  const ajv = createAjv();
  const validate = ajv.compile(emitted['task.schema.json']!);
  const tasks = collectTaskFiles([join(__dirname, '..', '..', 'tasks'), join(__dirname, '..', 'fixtures')])
    .map((f) => { try { return JSON.parse(readFileSync(f, 'utf8')); } catch { return undefined; } })
    .filter((t) => t !== undefined);
  const random = seededRandom(7);
  const replacements: unknown[] = [null, 1, 1.5, -3, 0, '', 'x', 'a.b', 'Bad Name', [], [{}], {}, { all: [] }, { 'a.b': {} }, { 'a.b': {}, 'c.d': {} }, true];
  let agreedValid = 0;
  let agreedInvalid = 0;
  for (let i = 0; i < 3000; i++) {
    const task = structuredClone(pick(random, tasks));
    if (i % 3 !== 0) {
      // replace one random node of the document
      const nodes: [Record<string, unknown> | unknown[], string | number][] = [];
      const visit = (v: unknown) => {
        if (Array.isArray(v)) v.forEach((c, j) => (nodes.push([v, j]), visit(c)));
        else if (v && typeof v === 'object') for (const [k, c] of Object.entries(v)) (nodes.push([v as Record<string, unknown>, k]), visit(c));
      };
      visit(task);
      const [parent, key] = pick(random, nodes);
      (parent as Record<string | number, unknown>)[key] = structuredClone(pick(random, replacements));
    }
    const byZod = TaskSchema.safeParse(task).success;
    const byAjv = validate(task) as boolean;
    assert.equal(byZod, byAjv, `disagreement on ${JSON.stringify(task)}\najv: ${ajv.errorsText(validate.errors)}`);
    if (byZod) agreedValid++;
    else agreedInvalid++;
  }
  assert.ok(agreedValid > 100 && agreedInvalid > 100, `both outcomes exercised (${agreedValid} valid, ${agreedInvalid} invalid)`);
});

test('namespace files satisfy the zod ServerFile schema and the emitted server.schema.json alike', () => {
  const validate = createAjv().compile(emitted['server.schema.json']!);
  const files = collectTaskFiles([join(schemasDir(), 'servers')]);
  assert.ok(files.length >= 11);
  for (const file of files) {
    const value = JSON.parse(readFileSync(file, 'utf8'));
    assert.equal(ServerFileSchema.safeParse(value).success, true, file);
    assert.equal(validate(value), true, file);
    const broken = { ...value, tools: [{ name: 'x' }] };
    assert.equal(ServerFileSchema.safeParse(broken).success, validate(broken), `${file} (broken copy)`);
  }
});

test('the agent profile and price file schemas: zod and the JSON Schema agree; their documented examples are valid', () => {
  const ajv = createAjv();
  const cases: Array<[string, z.ZodType, unknown[], unknown[]]> = [
    [
      'agent-config.schema.json',
      AgentConfigSchema,
      [{}, { agent: 'openai', base_url: 'http://127.0.0.1:8080/v1', model: 'qwen', temperature: 0.2, top_p: 0.9, seed: 3, max_tokens: 512, max_turns: 20, request_timeout_s: 300, system_prompt_file: 'p.txt', extra_body: { top_k: 20 }, tool_call_format: 'hermes', max_retries: 2, max_tokens_per_episode: 100000, prices: 'prices.json', api_key_env: 'MY_KEY' }],
      [{ agent: 'gemini' }, { temperature: 3 }, { tool_call_format: 'xml' }, { base_url: 'not a url' }, { max_turns: 0 }, { extra_body: [] }, { api_key: 'sk-...' }, { api_key_env: 'not valid' }],
    ],
    [
      'prices.schema.json',
      PriceFileSchema,
      [{ models: {} }, { currency: 'EUR', models: { 'gpt-4o*': { input: 2.5, output: 10, cached_input: 1.25 }, claude: { input: 3, output: 15, cache_write: 3.75 } } }],
      [{}, { models: { m: { input: 1 } } }, { models: { m: { input: -1, output: 1 } } }, { currency: 'usd', models: {} }, { models: { m: { input: 1, output: 1, per: 'token' } } }],
    ],
  ];
  for (const [file, schema, valid, invalid] of cases) {
    const validate = ajv.compile(emitted[file]!);
    for (const doc of [...valid, ...invalid]) {
      assert.equal(validate(doc), schema.safeParse(doc).success, `${file} disagreement on ${JSON.stringify(doc)}`);
    }
    for (const doc of valid) assert.ok(validate(doc), `${file} refuses ${JSON.stringify(doc)}: ${ajv.errorsText(validate.errors)}`);
    for (const doc of invalid) assert.ok(!validate(doc), `${file} accepts ${JSON.stringify(doc)}`);
    const examples = Object.values((emitted[file] as { properties: Record<string, { examples?: unknown[] }> }).properties).flatMap((p) => p.examples ?? []);
    assert.ok(examples.length > 0, `${file} documents examples`);
  }
});
