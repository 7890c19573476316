/**
 * The filesystem and memory namespaces declare the tools of pinned official servers: their tools/list must
 * equal the namespace files' `tools`, and the pinned versions must be the installed ones. After a bump,
 * `npx tsx scripts/sync-official-tools.ts` rewrites the files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { installedVersion, listOfficialTools, OFFICIAL_SERVERS, projectTool, UNDECLARED_TOOL_FIELDS } from '../../scripts/sync-official-tools.ts';
import { packageRoot, schemasDir } from '../../server/src/paths.ts';
import type { OfficialServer } from '../../server/src/mcp/memory/official.ts';
import { ToolDeclaration } from '../../server/src/mcp/server-file.ts';
import { judge, replay, type Step } from './harness.ts';

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

// ---- The filesystem and memory tasks, replayed against the real servers, started as the runner starts them
// (test/mcp/harness.ts): seeded out of band, driven over stdio, snapshotted out of band, judged by the namespace
// predicates. References must pass,
// counterexamples must fail, and the predicate must be false on the initial state.

interface TaskFile {
  id: string;
  initial_state: Record<string, unknown>;
  available_tools: string[];
  success_predicate: Record<string, unknown>;
  reference_solutions: Step[][];
  counterexamples?: Step[][];
}

/** `strict`: every call must succeed (a reference solution that passes through an error proves little). */
async function replayOn(server: OfficialServer, task: TaskFile, steps: Step[], strict: boolean): Promise<unknown> {
  // The gateway refuses tools the task does not list; a refused call changes nothing.
  const listed = steps.filter((step) => step.tool !== undefined && task.available_tools.includes(step.tool));
  const run = await replay([server.namespace], task.initial_state, listed, { via: 'process' });
  if (strict) assert.deepEqual(run.refusals, [], `${task.id}: calls failed`);
  return run.states[server.namespace];
}

/** The task's predicate on a namespace state, with the engine's own evaluation. */
const holds = (task: TaskFile, namespace: string, state: unknown) => judge(task.success_predicate, { states: { [namespace]: state }, answer: undefined });

for (const server of OFFICIAL_SERVERS) {
  const dir = join(packageRoot(), 'test', 'fixtures', 'tasks', server.namespace);
  for (const name of readdirSync(dir).filter((f) => f.endsWith('.json')).sort()) {
    const task = JSON.parse(readFileSync(join(dir, name), 'utf8')) as TaskFile;
    test(`${server.namespace} task ${task.id}: references pass and counterexamples fail on the real server`, { timeout: 60_000 }, async () => {
      assert.equal(await holds(task, server.namespace, task.initial_state[server.namespace] ?? {}), false, 'already true before the agent acts');
      for (const [i, steps] of task.reference_solutions.entries()) {
        const end = await replayOn(server, task, steps, true);
        assert.equal(await holds(task, server.namespace, end), true, `reference ${i + 1} fails; end state ${JSON.stringify(end)}`);
      }
      for (const [i, steps] of (task.counterexamples ?? []).entries()) {
        const end = await replayOn(server, task, steps, false);
        assert.equal(await holds(task, server.namespace, end), false, `counterexample ${i + 1} passes; end state ${JSON.stringify(end)}`);
      }
    });
  }
}
