/**
 * Every namespace file is a valid ServerFile, its schemas compile, the predicates it declares are exactly
 * the ones its plug-in implements, and its declared examples pass its own argument schemas.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRegistry, loadRegistryFrom } from '../../server/src/mcp/registry.ts';
import { createAjv } from '../../server/src/ajv.ts';
import { schemasDir } from '../../server/src/paths.ts';

const EXPECTED = ['answer', 'calendar', 'chat', 'filesystem', 'git', 'github', 'memory', 'postgres', 'shop', 'support', 'travel'];

test('the eleven namespaces are all there', async () => {
  const registry = await loadRegistry();
  assert.deepEqual(registry.names().sort(), EXPECTED);
});

test('every schema in every namespace file compiles (validators are otherwise compiled on first use)', async () => {
  const registry = await loadRegistryFrom(join(schemasDir(), 'servers'), { eager: true });
  assert.equal(registry.names().length, EXPECTED.length);
});

test('namespace files validate against schemas/server.schema.json', async () => {
  const ajv = createAjv();
  const validate = ajv.compile(JSON.parse(readFileSync(join(schemasDir(), 'server.schema.json'), 'utf8')));
  const registry = await loadRegistry();
  for (const info of registry.namespaces.values()) {
    const ok = validate(JSON.parse(readFileSync(info.file, 'utf8')));
    assert.ok(ok, `${info.file}: ${ajv.errorsText(validate.errors)}`);
  }
});

test('each namespace implements exactly the predicates it declares', async () => {
  const registry = await loadRegistry();
  for (const info of registry.namespaces.values()) {
    assert.ok(info.plugin, `${info.namespace}: no plug-in at server/src/mcp/${info.namespace}/index.ts`);
    assert.equal(info.plugin.namespace, info.namespace);
    assert.deepEqual(
      Object.keys(info.plugin.predicates).sort(),
      info.server.predicates.map((p) => p.name).sort(),
      `${info.namespace}: declared and implemented predicates differ`,
    );
    for (const [name, predicate] of info.predicates) assert.ok(predicate.implementation, `${info.namespace}.${name} has code`);
  }
});

test('predicate examples satisfy their argument schemas, and predicates run on the empty state', async () => {
  const registry = await loadRegistry();
  for (const info of registry.namespaces.values()) {
    const state = info.plugin!.normalizeState(undefined);
    for (const [name, predicate] of info.predicates) {
      assert.ok(predicate.declaration.examples?.length, `${info.namespace}.${name} has no examples`);
      for (const example of predicate.declaration.examples ?? []) {
        assert.ok(predicate.validateArguments(example), `${info.namespace}.${name} example ${JSON.stringify(example)}`);
        const verdict = predicate.implementation!(example, { state, answer: undefined, initial: state, reference: state });
        assert.equal(typeof verdict.value, 'boolean', `${info.namespace}.${name} returns a boolean value`);
        JSON.stringify(verdict.evidence); // evidence must be serialisable
      }
    }
  }
});

test('tool names are unique per namespace and every tool has an object input schema', async () => {
  const registry = await loadRegistry();
  for (const info of registry.namespaces.values()) {
    const names = info.server.tools.map((t) => t.name);
    assert.equal(new Set(names).size, names.length, `${info.namespace}: duplicate tool names`);
    for (const tool of info.server.tools) assert.equal(tool.inputSchema.type, 'object', `${info.namespace}.${tool.name}`);
  }
});
