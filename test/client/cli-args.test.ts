import assert from 'node:assert/strict';
import { test } from 'node:test';
import { checkArgs, cliCommand, FAULT_PROFILE_CHOICES, runArgs, SettingsError, type RunSettings } from '../../client/src/cli-args.ts';

const base: RunSettings = { agent: 'reference', faultProfile: 'light', sandbox: 'auto', trials: 1 };

test('a plain run: jsonl events, the agent, no faults, the default sandbox', () => {
  assert.deepEqual(runArgs(['/w/a.json'], base), ['run', '/w/a.json', '--reporter', 'jsonl', '--agent', 'reference', '--faults', 'none']);
});

test('faults, trials, sandbox; the reference agent retries under faults', () => {
  assert.deepEqual(runArgs(['a.json', 'b.json'], { ...base, sandbox: 'bwrap', trials: 3 }, { faults: 'medium' }), [
    'run', 'a.json', 'b.json', '--reporter', 'jsonl', '--agent', 'reference', '--retry', '--faults', 'medium', '--trials', '3', '--sandbox', 'bwrap',
  ]);
});

test('agents take their settings; missing ones are a settings error', () => {
  assert.deepEqual(runArgs(['a.json'], { ...base, agent: 'openai', openaiBaseUrl: 'http://127.0.0.1:1/v1', openaiModel: 'm' }).slice(4, 10), ['--agent', 'openai', '--base-url', 'http://127.0.0.1:1/v1', '--model', 'm']);
  assert.deepEqual(runArgs(['a.json'], { ...base, agent: 'anthropic', agentConfig: 'claude.agent.json', prices: 'prices.json' }).slice(4, 10), ['--agent', 'anthropic', '--agent-config', 'claude.agent.json', '--prices', 'prices.json']);
  assert.ok(!runArgs(['a.json'], { ...base, agent: 'reference', prices: 'prices.json' }).includes('--prices'), 'the reference agent spends nothing');
  assert.deepEqual(runArgs(['a.json'], { ...base, agent: 'command', agentCommand: 'python agent.py' }).slice(4, 8), ['--agent', 'command', '--agent-command', 'python agent.py']);
  assert.throws(() => runArgs(['a.json'], { ...base, agent: 'endpoint' }), SettingsError);
  assert.deepEqual(runArgs(['a.json'], { ...base, agent: 'vscode-lm' }, { lmEndpoint: 'http://127.0.0.1:9/' }).slice(4, 8), ['--agent', 'endpoint', '--endpoint', 'http://127.0.0.1:9/']);
  assert.throws(() => runArgs(['a.json'], { ...base, agent: 'vscode-lm' }), SettingsError);
});

test('check args, and how the CLI is started', () => {
  assert.deepEqual(checkArgs(['a.json'], { sandbox: 'process' }), ['check', 'a.json', '--reporter', 'jsonl', '--sandbox', 'process']);
  assert.deepEqual(cliCommand('/ext/dist/cli.js', '/usr/bin/node', ['run']), { command: '/usr/bin/node', args: ['/ext/dist/cli.js', 'run'] });
  assert.deepEqual(cliCommand('mcpbench', '/usr/bin/node', ['run']), { command: 'mcpbench', args: ['run'] });
});

test('fault profile choices: the levels, then one per fault type', () => {
  assert.deepEqual(FAULT_PROFILE_CHOICES.slice(0, 4), ['none', 'light', 'medium', 'heavy']);
  assert.ok(FAULT_PROFILE_CHOICES.includes('TransientTimeout-only'));
  assert.equal(FAULT_PROFILE_CHOICES.length, 14);
});
