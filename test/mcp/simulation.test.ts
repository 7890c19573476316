/**
 * Simulated namespaces served by the built CLI (`mcpbench serve <ns> --state --dir`) to a real MCP client:
 * tools/list equals the namespace file, and every task's reference solutions, replayed over MCP, leave a
 * snapshot on which the predicate holds, while its counterexamples do not.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { snapshotSimulation } from '../../server/src/mcp/simulation.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import { checkEach, replay, solutionRuns, type SolutionRun } from './replay.ts';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const SIMULATED = ['calendar', 'shop', 'support', 'travel', 'github', 'chat'];

async function serve(namespace: string, initialState: unknown) {
  const sandbox = mkdtempSync(join(tmpdir(), `mcpbench-${namespace}-`));
  const stateFile = join(sandbox, '..', `${namespace}-${Date.now()}-${Math.random()}.initial.json`);
  writeFileSync(stateFile, JSON.stringify(initialState ?? {}));
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', namespace, '--state', stateFile, '--dir', sandbox], stderr: 'pipe' });
  const client = new Client({ name: 'mcpbench-test', version: '0' });
  await client.connect(transport);
  return {
    client,
    sandbox,
    close: async () => {
      await client.close();
      rmSync(stateFile, { force: true });
    },
  };
}

function verdict(registry: Registry, task: Task, states: Record<string, unknown>, answer: string | undefined) {
  return evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, states, answer)).value;
}

test('tools/list of every simulated namespace equals its namespace file', async () => {
  const registry = await loadRegistry();
  for (const namespace of SIMULATED) {
    const info = registry.get(namespace)!;
    assert.ok(info.plugin?.tools, `${namespace} has tool handlers`);
    assert.deepEqual(Object.keys(info.plugin.tools).sort(), [...info.tools.keys()].sort(), `${namespace}: a handler per declared tool`);
    const server = await serve(namespace, {});
    try {
      const { tools } = await server.client.listTools();
      assert.deepEqual(tools, JSON.parse(readFileSync(info.file, 'utf8')).tools);
    } finally {
      await server.close();
    }
  }
});

test('reference solutions pass and counterexamples fail when replayed over MCP', async () => {
  const registry = await loadRegistry();
  const runs = solutionRuns(SIMULATED.flatMap((namespace) => {
    const tasks = collectTaskFiles([join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', namespace)]).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Task);
    assert.ok(tasks.length > 0, `tasks for ${namespace}`);
    return tasks;
  }));
  const check = async (run: SolutionRun) => {
    const namespaces = Array.isArray(run.task.server) ? run.task.server : [run.task.server];
    const servers = new Map<string, Awaited<ReturnType<typeof serve>>>();
    try {
      for (const ns of namespaces) servers.set(ns, await serve(ns, run.task.initial_state[ns]));
      const clients = new Map([...servers].map(([ns, server]) => [ns, server.client]));
      const { answer, errors } = await replay(clients, run.steps);
      if (run.expected) assert.equal(errors, 0, `${run.label} had refused calls`);
      const states: Record<string, unknown> = {};
      for (const [ns, server] of servers) states[ns] = snapshotSimulation(registry.get(ns)!, server.sandbox);
      assert.equal(verdict(registry, run.task, states, answer), run.expected, run.label);
    } finally {
      for (const server of servers.values()) await server.close();
    }
  };
  // Four at a time: each run starts its servers as processes of the built CLI, mostly waiting on their start.
  await checkEach(runs, 4, check);
});

test('serve refuses an initial state that fails the schema, naming the bad value', async () => {
  const sandbox = mkdtempSync(join(tmpdir(), 'mcpbench-bad-'));
  const stateFile = join(sandbox, 'initial.json');
  writeFileSync(stateFile, JSON.stringify({ flights: [{ id: 'X', origin: 'LON', dest: 'PAR', date: '2026-01-05', price: 'cheap', seats_left: 1 }] }));
  const { spawnSync } = await import('node:child_process');
  const result = spawnSync(process.execPath, [cli, 'serve', 'travel', '--state', stateFile, '--dir', join(sandbox, 'box')], { encoding: 'utf8', input: '' });
  assert.equal(result.status, 2);
  assert.match(result.stderr, /initial_state\.travel\.flights\.0\.price must be number/);
});
