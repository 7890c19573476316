/**
 * The filesystem and memory namespaces declare the tools of pinned official servers: their tools/list must
 * equal the namespace files' `tools`, and the pinned versions must be the installed ones. After a bump,
 * `npx tsx scripts/sync-official-tools.ts` rewrites the files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { installedVersion, listOfficialTools, OFFICIAL_SERVERS, projectTool, UNDECLARED_TOOL_FIELDS } from '../../scripts/sync-official-tools.ts';
import { ToolDeclaration } from '../../server/src/tasks/model.ts';
import { packageRoot, schemasDir } from '../../server/src/paths.ts';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import type { OfficialServer } from '../../server/src/mcp/memory/official.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';

const declared = new Set(Object.keys(ToolDeclaration.shape));

for (const server of OFFICIAL_SERVERS) {
  const file = JSON.parse(readFileSync(join(schemasDir(), 'servers', `${server.namespace}.json`), 'utf8'));

  test(`${server.namespace}: pinned version equals the installed ${server.package}`, () => {
    assert.equal(file.implementation.kind, 'npm');
    assert.equal(file.implementation.package, server.package);
    assert.equal(file.implementation.version, installedVersion(server.package));
    const manifest = JSON.parse(readFileSync(join(schemasDir(), '..', 'package.json'), 'utf8'));
    assert.equal(manifest.dependencies[server.package], file.implementation.version, 'package.json pins the same version');
  });

  test(`${server.namespace}: tools/list of the official server equals the declared tools`, { timeout: 30_000 }, async () => {
    const live = await listOfficialTools(server);
    assert.ok(live.length > 0);
    // Byte-for-byte: same tools, same order, same fields, same key order.
    assert.equal(JSON.stringify(live.map(projectTool)), JSON.stringify(file.tools));
    assert.deepEqual(live.map(projectTool), file.tools);
    // A field the model cannot declare is only acceptable when it is a known one; a new one must be looked at.
    const extra = new Set(live.flatMap((t) => Object.keys(t).filter((k) => !declared.has(k))));
    assert.deepEqual([...extra].filter((k) => !UNDECLARED_TOOL_FIELDS.includes(k)), []);
  });
}

// ---- The filesystem and memory tasks, replayed against the real servers: seeded out of band, driven through
// the SDK client, snapshotted out of band, judged by the namespace predicates. References must pass,
// counterexamples must fail, and the predicate must be false on the initial state.

interface Step {
  tool?: string;
  arguments?: Record<string, unknown>;
}

interface TaskFile {
  id: string;
  initial_state: Record<string, unknown>;
  available_tools: string[];
  success_predicate: Record<string, unknown>;
  reference_solutions: Step[][];
  counterexamples?: Step[][];
}

/** The task's predicate on a namespace state, with the engine's own evaluation. */
function evaluatePredicate(predicate: Record<string, unknown>, namespace: string, state: unknown, registry: Registry): boolean | undefined {
  return evaluate(parsePredicate(predicate, ['success_predicate']), stateLeafEvaluator(registry, { [namespace]: state }, undefined)).value;
}

/** `strict`: every call must succeed (a reference solution that passes through an error proves little). */
async function replay(server: OfficialServer, task: TaskFile, steps: Step[], registry: Registry, strict: boolean): Promise<unknown> {
  const dir = mkdtempSync(join(tmpdir(), `mcpbench-${task.id}-`));
  try {
    const namespace = registry.get(server.namespace)!.plugin!;
    await namespace.runtime!.seed(namespace.normalizeState(task.initial_state[server.namespace]), dir);
    const { command, args, env } = namespace.runtime!.launch!(dir);
    const client = new Client({ name: 'mcpbench-replay', version: '0.1.0' });
    await client.connect(new StdioClientTransport({ command, args, env: { ...(process.env as Record<string, string>), ...env }, stderr: 'pipe' }));
    try {
      for (const step of steps) {
        // The gateway refuses tools the task does not list; a refused call changes nothing.
        if (!step.tool || !task.available_tools.includes(step.tool)) continue;
        const tool = registry.tool(step.tool)!;
        assert.ok(tool.validateInput(step.arguments ?? {}), `${task.id}: ${step.tool} arguments: ${JSON.stringify(tool.validateInput.errors)}`);
        const result = await client.callTool({ name: step.tool.slice(server.namespace.length + 1), arguments: step.arguments ?? {} });
        if (strict) assert.ok(!result.isError, `${task.id}: ${step.tool} failed: ${JSON.stringify(result.content)}`);
      }
    } finally {
      await client.close();
    }
    return await namespace.runtime!.snapshot(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

for (const server of OFFICIAL_SERVERS) {
  const dir = join(packageRoot(), 'test', 'fixtures', 'tasks', server.namespace);
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const task = JSON.parse(readFileSync(join(dir, name), 'utf8')) as TaskFile;
    test(`${server.namespace} task ${task.id}: references pass and counterexamples fail on the real server`, { timeout: 60_000 }, async () => {
      const registry = await loadRegistry();
      assert.equal(evaluatePredicate(task.success_predicate, server.namespace, task.initial_state[server.namespace] ?? {}, registry), false, 'already true before the agent acts');
      for (const [i, steps] of task.reference_solutions.entries()) {
        const end = await replay(server, task, steps, registry, true);
        assert.equal(evaluatePredicate(task.success_predicate, server.namespace, end, registry), true, `reference ${i + 1} fails; end state ${JSON.stringify(end)}`);
      }
      for (const [i, steps] of (task.counterexamples ?? []).entries()) {
        const end = await replay(server, task, steps, registry, false);
        assert.equal(evaluatePredicate(task.success_predicate, server.namespace, end, registry), false, `counterexample ${i + 1} passes; end state ${JSON.stringify(end)}`);
      }
    });
  }
}
