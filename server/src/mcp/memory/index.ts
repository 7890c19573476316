/**
 * The memory namespace: the official server's knowledge graph. The state is the server's own JSONL data
 * model (entities and relations), so seeding writes one line per record and the snapshot reads them back.
 */
import { defineNamespace, type PredicateFunction } from '../namespace.ts';
import { memoryRuntime } from './runtime.ts';
import { normalizeState, type Entity, type MemoryState } from './state.ts';

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}

function withinBounds(n: number, b: Bounds): boolean {
  return (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);
}

const fold = (s: string, ci: boolean | undefined): string => (ci ? s.toLowerCase() : s);

/** Names that differ only in case or surrounding space: the usual near miss an agent makes. */
function similarNames(state: MemoryState, name: string): string[] {
  const key = name.trim().toLowerCase();
  return state.entities.map((e) => e.name).filter((n) => n !== name && (n.trim().toLowerCase() === key || n.toLowerCase().includes(key) || key.includes(n.toLowerCase()))).slice(0, 5);
}

function findEntity(state: MemoryState, name: string, ci?: boolean): Entity | undefined {
  return state.entities.find((e) => fold(e.name, ci) === fold(name, ci));
}

type P = PredicateFunction<MemoryState>;

const predicates: Record<string, P> = {
  entityExists: ({ name, entityType, case_insensitive: ci }, { state }) => {
    const entity = findEntity(state, name, ci);
    if (!entity) return { value: false, evidence: { name, found: false, similar: similarNames(state, name) } };
    const typeOk = entityType === undefined || fold(entity.entityType, ci) === fold(entityType, ci);
    return { value: typeOk, evidence: { name: entity.name, entityType: entity.entityType } };
  },

  observationExists: ({ entity: name, text, contains, case_insensitive: ci }, { state }) => {
    const entity = findEntity(state, name);
    if (!entity) return { value: false, evidence: { entity: name, found: false, similar: similarNames(state, name) } };
    const hit = entity.observations.find((o) =>
      text !== undefined ? fold(o.trim(), ci) === fold(String(text).trim(), ci) : fold(o, ci).includes(fold(String(contains), ci)),
    );
    return hit !== undefined
      ? { value: true, evidence: { entity: entity.name, observation: hit } }
      : { value: false, evidence: { entity: entity.name, observations: entity.observations.slice(0, 20) } };
  },

  observationCount: (args, { state }) => {
    const entity = findEntity(state, args.entity);
    if (!entity) return { value: false, evidence: { entity: args.entity, found: false } };
    const counted = args.contains === undefined ? entity.observations : entity.observations.filter((o) => o.toLowerCase().includes(String(args.contains).toLowerCase()));
    return { value: withinBounds(counted.length, args), evidence: { entity: entity.name, count: counted.length } };
  },

  relationExists: ({ from, to, relationType, case_insensitive: ci }, { state }) => {
    const hit = state.relations.find(
      (r) => fold(r.from, ci) === fold(from, ci) && fold(r.to, ci) === fold(to, ci) && (relationType === undefined || fold(r.relationType, ci) === fold(relationType, ci)),
    );
    if (hit) return { value: true, evidence: { relation: hit } };
    const near = state.relations.filter((r) => [r.from, r.to].some((n) => [from, to].includes(n))).slice(0, 10);
    return { value: false, evidence: { from, to, relationType, relationsOfTheseEntities: near } };
  },

  entityCount: (args, { state }) => {
    const n = state.entities.filter((e) => args.entityType === undefined || e.entityType === args.entityType).length;
    return { value: withinBounds(n, args), evidence: { count: n, ...(args.entityType ? { entityType: args.entityType } : {}) } };
  },

  relationCount: (args, { state }) => {
    const n = state.relations.filter(
      (r) =>
        (args.from === undefined || r.from === args.from) &&
        (args.to === undefined || r.to === args.to) &&
        (args.relationType === undefined || r.relationType === args.relationType),
    ).length;
    return { value: withinBounds(n, args), evidence: { count: n } };
  },
};

export default defineNamespace<MemoryState>({ namespace: 'memory', normalizeState, predicates, runtime: memoryRuntime });
