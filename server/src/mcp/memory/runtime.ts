/**
 * The memory namespace runs the pinned official server with its knowledge graph in the sandbox: one JSONL
 * file of `{type: "entity" | "relation", ...}` lines, which seeding writes and the snapshot reads.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NamespaceRuntime } from '../namespace.ts';
import { packageRoot } from '../../paths.ts';
import { MEMORY_FILE, memoryServer } from './official.ts';
import type { MemoryState } from './state.ts';

export const memoryRuntime: NamespaceRuntime<MemoryState> = {
  async seed(state, sandbox) {
    const lines = [
      ...state.entities.map((e) => JSON.stringify({ type: 'entity', ...e })),
      ...state.relations.map((r) => JSON.stringify({ type: 'relation', ...r })),
    ];
    writeFileSync(join(sandbox, MEMORY_FILE), lines.join('\n'));
  },
  async snapshot(sandbox) {
    const file = join(sandbox, MEMORY_FILE);
    const state: MemoryState = { entities: [], relations: [] };
    if (!existsSync(file)) return state;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      const { type, ...item } = JSON.parse(line);
      if (type === 'entity') state.entities.push(item);
      else if (type === 'relation') state.relations.push(item);
    }
    return state;
  },
  launch: (sandbox, options) => memoryServer.launch(packageRoot(), sandbox, options),
};
