/**
 * A real run for the trace tests: the openai agent (its own tool-calling loop) against the local OpenAI
 * simulation, whose oracle replays each task's reference solution, on the travel fixtures with faults
 * injected, in process with plain-process sandboxes. Made once per test file, in a temporary folder.
 */
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { runToEnd } from '../../server/src/engine/session.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { sealFiles } from '../../server/src/tasks/seal.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { BEHAVIOURS, openAIStep, planFor, scriptFor } from '../simulations/behaviours.ts';
import { startOpenAISimulation } from '../simulations/openai-simulation.ts';

export const FIXTURES = join(__dirname, '..', 'fixtures', 'tasks');

export interface ModelRun {
  /** The run folder. */
  directory: string;
  /** The temporary folder it is in (with prices.json). */
  work: string;
  /** Requests the simulation served. */
  requests: number;
}

/** Runs the openai agent over `tasks` (default: the travel fixtures) with the `faults` profile. */
export async function modelRun(options: { tasks?: string[]; faults?: string; faultRate?: number; seed?: number; sealed?: boolean; env?: Record<string, string> } = {}): Promise<ModelRun> {
  const given = options.tasks ?? [join(FIXTURES, 'travel')];
  const files = collectTaskFiles(given);
  const plans = new Map(files.map((file) => JSON.parse(readFileSync(file, 'utf8')) as Task).map((task) => [task.goal, planFor(task)]));
  const sim = await startOpenAISimulation(scriptFor(BEHAVIOURS.find((b) => b.name === 'well-behaved')!, plans, openAIStep));
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-traces-'));
  // A sealed run: the same tasks in a sealed set, opened in memory with its key.
  const key = randomBytes(32).toString('hex');
  const sealedFile = join(work, 'private.sealed.json');
  if (options.sealed) writeFileSync(sealedFile, JSON.stringify(sealFiles(files.map((file) => ({ path: `tasks/${basename(file)}`, text: readFileSync(file, 'utf8') })), key, 'private')));
  const tasks = options.sealed ? [sealedFile] : given;
  writeFileSync(join(work, 'prices.json'), JSON.stringify({ currency: 'USD', models: { 'sim-*': { input: 2, output: 8, cached_input: 0.5, cache_write: 2.5 } } }));
  try {
    const finished = await runToEnd({
      mode: 'run',
      registry: await loadRegistry(),
      cwd: work,
      backend: 'process',
      concurrency: 2,
      tasks,
      agent: 'openai',
      agentOptions: { base_url: sim.baseUrl, model: 'sim-1', prices: join(work, 'prices.json') },
      env: { OPENAI_API_KEY: 'sk-test', ...options.env },
      faults: options.faults ?? 'none',
      ...(options.faultRate !== undefined ? { faultRate: options.faultRate } : {}),
      seed: options.seed ?? 7,
      version: '0.0.0-test',
      ...(options.sealed ? { setKey: () => key } : {}),
    });
    return { directory: finished.directory, work, requests: sim.requests.length };
  } finally {
    await sim.close();
  }
}
