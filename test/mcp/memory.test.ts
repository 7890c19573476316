import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import type { MemoryState } from '../../server/src/mcp/memory/state.ts';

let info: NamespaceInfo;
before(async () => {
  info = (await loadRegistry()).get('memory')!;
});

function check(name: string, args: Record<string, unknown>, state: unknown): boolean {
  const predicate = info.predicates.get(name);
  assert.ok(predicate, `no predicate ${name}`);
  assert.ok(predicate.validateArguments(args), `${name} arguments ${JSON.stringify(args)}: ${JSON.stringify(predicate.validateArguments.errors)}`);
  if (state !== undefined) assert.ok(info.validateState(state), `state: ${JSON.stringify(info.validateState.errors)}`);
  const verdict = info.plugin!.predicates[name]!(args, { state: info.plugin!.normalizeState(state), answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
}

const graph = {
  entities: [
    { name: 'Alice Chen', entityType: 'person', observations: ['prefers tea', 'Speaks Mandarin', 'joined in 2021'] },
    { name: 'Bob Ray', entityType: 'person', observations: [] },
    { name: 'Acme Corp', entityType: 'organization' },
  ],
  relations: [
    { from: 'Alice Chen', to: 'Acme Corp', relationType: 'works_at' },
    { from: 'Alice Chen', to: 'Bob Ray', relationType: 'manages' },
    { from: 'Bob Ray', to: 'Acme Corp', relationType: 'works_at' },
  ],
};

describe('memory state schema', () => {
  test('accepts the server data model, observations optional', () => {
    assert.ok(info.validateState(graph));
    for (const example of info.server.state_schema.examples as unknown[]) assert.ok(info.validateState(example), 'state_schema example');
    assert.ok(info.validateState({}));
    assert.equal(info.validateState({ entities: [{ name: 'x' }] }), false, 'entityType is required');
    assert.equal(info.validateState({ relations: [{ from: 'a', to: 'b' }] }), false, 'relationType is required');
  });
  test('normalizeState fills observations', () => {
    assert.deepEqual((info.plugin!.normalizeState(graph) as MemoryState).entities[2], { name: 'Acme Corp', entityType: 'organization', observations: [] });
    assert.deepEqual(info.plugin!.normalizeState(undefined), { entities: [], relations: [] });
  });
});

describe('memory predicates', () => {
  test('entityExists: name, type, case', () => {
    assert.equal(check('entityExists', { name: 'Alice Chen' }, graph), true);
    assert.equal(check('entityExists', { name: 'Alice Chen', entityType: 'person' }, graph), true);
    assert.equal(check('entityExists', { name: 'Alice Chen', entityType: 'organization' }, graph), false);
    assert.equal(check('entityExists', { name: 'alice chen' }, graph), false);
    assert.equal(check('entityExists', { name: 'alice chen', entityType: 'PERSON', case_insensitive: true }, graph), true);
    assert.equal(check('entityExists', { name: 'Carol' }, graph), false);
  });

  test('observationExists: text equals, contains, case', () => {
    assert.equal(check('observationExists', { entity: 'Alice Chen', text: 'prefers tea' }, graph), true);
    assert.equal(check('observationExists', { entity: 'Alice Chen', text: 'prefers' }, graph), false, 'text is the whole observation');
    assert.equal(check('observationExists', { entity: 'Alice Chen', contains: 'prefers' }, graph), true);
    assert.equal(check('observationExists', { entity: 'Alice Chen', contains: 'mandarin' }, graph), false);
    assert.equal(check('observationExists', { entity: 'Alice Chen', contains: 'mandarin', case_insensitive: true }, graph), true);
    assert.equal(check('observationExists', { entity: 'Bob Ray', contains: 'tea' }, graph), false, 'observations belong to one entity');
    assert.equal(check('observationExists', { entity: 'Nobody', contains: 'tea' }, graph), false);
  });

  test('observationExists needs exactly one of text and contains', () => {
    const validate = info.predicates.get('observationExists')!.validateArguments;
    assert.equal(validate({ entity: 'A' }), false);
    assert.equal(validate({ entity: 'A', text: 'x', contains: 'y' }), false);
  });

  test('observationCount', () => {
    assert.equal(check('observationCount', { entity: 'Alice Chen', equals: 3 }, graph), true);
    assert.equal(check('observationCount', { entity: 'Alice Chen', contains: 'TEA', equals: 1 }, graph), true);
    assert.equal(check('observationCount', { entity: 'Bob Ray', equals: 0 }, graph), true);
    assert.equal(check('observationCount', { entity: 'Bob Ray', min: 1 }, graph), false);
    assert.equal(check('observationCount', { entity: 'Nobody', equals: 0 }, graph), false, 'a missing entity has no count');
  });

  test('relationExists: direction and type', () => {
    assert.equal(check('relationExists', { from: 'Alice Chen', to: 'Acme Corp', relationType: 'works_at' }, graph), true);
    assert.equal(check('relationExists', { from: 'Alice Chen', to: 'Acme Corp' }, graph), true);
    assert.equal(check('relationExists', { from: 'Acme Corp', to: 'Alice Chen' }, graph), false, 'direction matters');
    assert.equal(check('relationExists', { from: 'Alice Chen', to: 'Acme Corp', relationType: 'works at' }, graph), false);
    assert.equal(check('relationExists', { from: 'alice chen', to: 'acme corp', relationType: 'WORKS_AT', case_insensitive: true }, graph), true);
  });

  test('entityCount and relationCount', () => {
    assert.equal(check('entityCount', { equals: 3 }, graph), true);
    assert.equal(check('entityCount', { entityType: 'person', equals: 2 }, graph), true);
    assert.equal(check('entityCount', { entityType: 'person', max: 1 }, graph), false);
    assert.equal(check('entityCount', { equals: 0 }, undefined), true);
    assert.equal(check('relationCount', { equals: 3 }, graph), true);
    assert.equal(check('relationCount', { to: 'Acme Corp', relationType: 'works_at', equals: 2 }, graph), true);
    assert.equal(check('relationCount', { from: 'Alice Chen', min: 3 }, graph), false);
  });
});
