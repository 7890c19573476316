/**
 * The memory state: the official server's own JSONL data model (entities and relations), so seeding writes one
 * line per record and the snapshot reads them back (runtime.ts).
 */

export interface Entity {
  name: string;
  entityType: string;
  observations: string[];
}

interface Relation {
  from: string;
  to: string;
  relationType: string;
}

export interface MemoryState {
  entities: Entity[];
  relations: Relation[];
}

export function normalizeState(state: unknown): MemoryState {
  const s = (state ?? {}) as Partial<{ entities: Partial<Entity>[]; relations: Relation[] }>;
  return {
    entities: (s.entities ?? []).map((e) => ({
      name: e.name ?? '',
      entityType: e.entityType ?? '',
      observations: [...(e.observations ?? [])],
    })),
    relations: (s.relations ?? []).map((r) => ({ from: r.from, to: r.to, relationType: r.relationType })),
  };
}
