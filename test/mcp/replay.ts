/**
 * Replaying a task's solutions over MCP in the namespace tests: the runs (every reference solution, expected
 * to pass, and every counterexample, expected to fail) and one replay that calls each step's tool on the
 * client of its namespace, counting refused calls and keeping the answer, as an agent's run would.
 */
import assert from 'node:assert/strict';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import pLimit from 'p-limit';
import { splitQualified } from '../../server/src/mcp/names.ts';
import type { SolutionStep, Task } from '../../server/src/tasks/model.ts';

export interface SolutionRun {
  task: Task;
  steps: SolutionStep[];
  expected: boolean;
  label: string;
}

/** Every reference solution (expected to pass) and counterexample (expected to fail) of the tasks. */
export function solutionRuns(tasks: readonly Task[]): SolutionRun[] {
  return tasks.flatMap((task) => [
    ...task.reference_solutions.map((steps, i) => ({ task, steps, expected: true, label: `${task.id}: reference solution ${i + 1}` })),
    ...(task.counterexamples ?? []).map((steps, i) => ({ task, steps, expected: false, label: `${task.id}: counterexample ${i + 1}` })),
  ]);
}

/**
 * Replays a solution, each call to the client of its namespace (a cross-server task has one per namespace;
 * a single client serves every step); refused calls are counted and the sequence goes on.
 */
export async function replay(clients: Client | ReadonlyMap<string, Client>, steps: readonly SolutionStep[]): Promise<{ answer: string | undefined; errors: number }> {
  let answer: string | undefined;
  let errors = 0;
  for (const step of steps) {
    if ('answer' in step) {
      answer = step.answer;
      continue;
    }
    const [namespace, name = ''] = splitQualified(step.tool);
    const client = clients instanceof Map ? clients.get(namespace) : (clients as Client);
    assert.ok(client, `${step.tool}: namespace ${namespace} is not served for this task`);
    const result = await client.callTool({ name, arguments: step.arguments ?? {} });
    if (result.isError) errors++;
  }
  return { answer, errors };
}

/** Runs `check` on every run, `width` at a time (each run mostly waits on its servers' start). */
export async function checkEach<T>(runs: readonly T[], width: number, check: (run: T) => Promise<void>): Promise<void> {
  const limit = pLimit(width);
  await Promise.all(runs.map((run) => limit(() => check(run))));
}
