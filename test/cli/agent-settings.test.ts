/**
 * The one table of agent settings (record/agent-settings.ts) against what is derived from it: `mcpbench run`'s
 * options, the extension's settings schema (package.json), the extension's CLI arguments, the model agent's
 * profile keys, and the agent options a run gets.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { runArgs, type RunSettings } from '../../client/src/cli-args.ts';
import { buildProgram } from '../../server/src/cli/main.ts';
import { agentOptions } from '../../server/src/cli/agent-settings.ts';
import { AGENT_SETTINGS, flagName, flagOfOption, settingSchema } from '../../server/src/record/agent-settings.ts';
import { AgentConfigSchema } from '../../server/src/runner/agents/settings.ts';

const root = join(import.meta.dirname, '..', '..');
const program = () => buildProgram({ stdout: () => undefined, stderr: () => undefined, cwd: root }, () => undefined);
const runCommand = () => program().commands.find((c) => c.name() === 'run')!;

test('every row is an option of mcpbench run with its help, choices and default', () => {
  const options = new Map(runCommand().options.map((o) => [o.long, o]));
  for (const s of AGENT_SETTINGS) {
    const option = options.get(flagName(s));
    assert.ok(option, `${flagName(s)} is an option of mcpbench run`);
    assert.equal(option.flags, s.flag);
    assert.equal(option.description, s.help);
    assert.deepEqual(option.argChoices, s.choices ? [...s.choices] : undefined);
    assert.deepEqual(option.defaultValue, s.default);
  }
});

test("model agents' rows are the profile file's keys, so run.json's agent_options and the profile agree", () => {
  const profileKeys = Object.keys(AgentConfigSchema.shape);
  for (const s of AGENT_SETTINGS.filter((row) => 'openai' in row.agents && row.key !== 'agent_config')) {
    assert.ok(profileKeys.includes(s.agents.openai!), `${s.key} is a key of schemas/agent-config.schema.json`);
  }
});

test("the extension's settings schema has each row's setting, of the row's type", () => {
  const properties = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).contributes.configuration.properties;
  const rows = AGENT_SETTINGS.filter((s) => s.setting);
  assert.ok(rows.length >= 5);
  for (const s of rows) {
    const property = properties[s.setting!];
    assert.ok(property, `package.json declares ${s.setting}`);
    assert.equal(property.type, settingSchema(s).type, `${s.setting} is a ${settingSchema(s).type}`);
  }
});

test("the extension's arguments use the table's flags, and mcpbench run parses them", () => {
  const base: RunSettings = { agent: 'reference', faultProfile: 'none', sandbox: 'auto', trials: 1 };
  const cases: [RunSettings, string[]][] = [
    [{ ...base, agent: 'command', agentCommand: 'node agent.js' }, ['--agent-command']],
    [{ ...base, agent: 'endpoint', endpoint: 'http://127.0.0.1:9/', prices: 'p.json' }, ['--endpoint', '--prices']],
    [{ ...base, agent: 'openai', openaiBaseUrl: 'http://127.0.0.1:9/v1', openaiModel: 'm', agentConfig: 'a.json' }, ['--base-url', '--model', '--agent-config']],
  ];
  for (const [settings, flags] of cases) {
    const args = runArgs(['t.json'], settings);
    for (const f of flags) assert.ok(args.includes(f), `${settings.agent}: ${f} in ${args.join(' ')}`);
    const run = runCommand();
    run.action(() => undefined);
    run.parseOptions(args.slice(2));
    const parsed = run.opts();
    for (const f of flags) assert.equal(parsed[f.slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase())], args[args.indexOf(f) + 1]);
  }
  assert.ok(runArgs(['t.json'], base, { faults: 'light' }).includes('--retry'));
});

test('the agent options a run records come from the rows each agent reads', () => {
  const flags = { agentCommand: 'node a.js', agentSandbox: 'docker', agentEnv: [], agentAllowHost: ['h:443'], agentGateway: 'http', agentImage: 'img:1', endpoint: 'http://x/', prices: 'p.json' };
  assert.deepEqual(agentOptions('command', flags), { command: 'node a.js', sandbox: 'docker', passEnv: undefined, dir: undefined, allowHosts: ['h:443'], gateway: 'http' });
  assert.deepEqual(agentOptions('image', { ...flags, agentSandbox: 'bwrap' }), { engine: undefined, passEnv: undefined, allowHosts: ['h:443'], gateway: 'http', image: 'img:1' });
  assert.deepEqual(agentOptions('endpoint', flags), { url: 'http://x/', prices: 'p.json' });
  assert.deepEqual(agentOptions('reference', {}), { retry: false });
  assert.throws(() => agentOptions('reference', { temperature: 0.2, maxTurns: 3 }), /--temperature, --max-turns set a model agent's behaviour/);
  assert.throws(() => agentOptions('command', { agentConfig: 'a.json' }), /--agent-config is a profile for a model agent/);
  const model = agentOptions('openai', { temperature: 0.2, model: 'm' });
  assert.equal(model.temperature, 0.2);
  assert.equal(model.model, 'm');
  assert.equal(flagOfOption('passEnv'), '--agent-env');
  assert.equal(flagOfOption('request_timeout_s'), '--request-timeout');
});
