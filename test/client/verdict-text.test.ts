import assert from 'node:assert/strict';
import { test } from 'node:test';
import { episodeMessage, formatCall, renderVerdictTree, type Verdict } from '../../client/src/verdict-text.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';

const verdict: Verdict = {
  path: ['success_predicate'],
  kind: 'all',
  value: false,
  children: [
    { path: ['success_predicate', 'all', 0], kind: 'leaf', name: 'filesystem.fileExists', value: true, evidence: { path: 'archive/report.txt' } },
    {
      path: ['success_predicate', 'all', 1],
      kind: 'not',
      value: false,
      children: [{ path: ['success_predicate', 'all', 1, 'not'], kind: 'leaf', name: 'filesystem.fileExists', value: true }],
    },
    { path: ['success_predicate', 'all', 2], kind: 'leaf', name: 'answer.includes', value: undefined, undecided: 'no answer' },
  ],
};

test('the verdict tree shows every node with its value, indented under its parent', () => {
  assert.equal(
    renderVerdictTree(verdict),
    [
      '✗ all = false',
      '  ✓ filesystem.fileExists = true  evidence: {"path":"archive/report.txt"}',
      '  ✗ not = false',
      '    ✓ filesystem.fileExists = true',
      '  ? answer.includes = undecided  (no answer)',
    ].join('\n'),
  );
});

const result = (over: Partial<EpisodeRecord>): EpisodeRecord => ({
  work_unit: '0'.repeat(64), task_id: 't', trial: 0, variant: 'reference:0', fault_profile: 'none', perturbation: 'none', run_id: 'r', task_hash: 'h',
  agent: 'reference', seed: 1, status: 'failed', passed: false, category: 'single-tool', namespaces: ['filesystem'], max_steps: 6,
  tool_calls: 2, unlisted_calls: 0, errors_seen: 0, budget_exceeded: false, calls: [], started_at: '', duration_ms: 10, attempt: 1, ...over,
});

test('a failure message has the verdict tree, a model agent\'s spending and why it was stopped', () => {
  const message = episodeMessage(result({ verdict }));
  assert.match(message, /^Failed \(reference:0, faults none, trial 0\): 2\/6 tool calls/);
  assert.match(message, /Predicate:\n✗ all = false\n {2}✓ filesystem\.fileExists/);
  const typed = episodeMessage(
    result({
      status: 'agent_error',
      passed: false,
      error: { kind: 'agent', code: 'model-content-filter', message: 'the endpoint stopped the response by content filter', attempts: 1 },
      malformed_calls: 2,
      model: { protocol: 'openai', model: 'qwen', requests: 3, turns: 3, retries: 0, prompt_tokens: 900, completion_tokens: 100, cached_tokens: 0, cache_write_tokens: 0, responses_without_usage: 0, cost: 0.0021, currency: 'USD', turn_latency_ms: [1, 2, 3], calls: [] },
    }),
  );
  assert.match(typed, /Agent error \(reference:0, faults none, trial 0\): model-content-filter: the endpoint stopped.*\n1 attempt\n/);
  assert.match(typed, /Model qwen: 3 turns, 1000 tokens, USD 0\.0021, 2 malformed calls/);
  const budget = episodeMessage(result({ verdict, failure: { code: 'token-budget', message: 'the episode used 1200 tokens, its budget is 1000' } }));
  assert.match(budget, /^Failed .*\n.*Stopped before it finished \(token-budget\): the episode used 1200 tokens/s);
});

test('an agent error says whose, with its code, exit code and stderr tail', () => {
  const message = episodeMessage(result({ status: 'agent_error', error: { kind: 'agent', code: 'agent-exit', message: 'command agent exited with code 3', exited: true, exit_code: 3, signal: null, stderr_tail: 'boom' } }));
  assert.match(message, /^Agent error \(reference:0, faults none, trial 0\): agent-exit: command agent exited with code 3\nexit code 3\nLast lines of its stderr:\nboom/);
});

test('an infrastructure error says so, with the attempt', () => {
  assert.match(episodeMessage(result({ status: 'infra_error', error: { kind: 'infra', code: 'server-exited', message: 'server crashed' }, attempt: 2 })), /^Infrastructure error \(.*attempt 2\): server-exited: server crashed/);
});

test('a faulted call is marked', () => {
  const line = formatCall({ index: 1, tool: 'filesystem_move_file', qualified: 'filesystem.move_file', arguments: { a: 1 }, status: 'fault', result: {}, latency_ms: 12.4, fault: { type: 'TransientTimeout', executed: false } });
  assert.equal(line, '#1 filesystem.move_file {"a":1} → fault 12 ms  ⚡ TransientTimeout');
  assert.doesNotMatch(formatCall({ index: 0, tool: 'x_y', arguments: {}, status: 'ok', result: {}, latency_ms: 1 }), /⚡/);
});

test('a failed predicate is located at the node that fails: the first false leaf of an all, an any or a not itself', async () => {
  const { failingNode } = await import('../../client/src/verdict-text.ts');
  assert.deepEqual(failingNode(verdict).path, ['success_predicate', 'all', 1], 'the not whose inner leaf holds');
  const leaf: Verdict = { path: ['success_predicate', 'all', 0], kind: 'leaf', name: 'x.y', value: false };
  assert.deepEqual(failingNode({ path: ['success_predicate'], kind: 'all', value: false, children: [leaf] }).path, leaf.path);
  const any: Verdict = { path: ['success_predicate'], kind: 'any', value: false, children: [leaf] };
  assert.equal(failingNode(any), any);
});
