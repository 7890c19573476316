/**
 * The settings of the extension as `mcpbench` arguments. The extension never runs a task itself: it
 * starts the CLI with these arguments and reads its `--reporter jsonl` events.
 */
import { agentSetting, flagName } from '../../server/src/record/agent-settings.ts';
import { FAULT_TYPES } from '../../server/src/record/faults.ts';

/** The `mcpbench run` flag of an agent setting (the table in record/agent-settings.ts). */
const flag = (key: string): string => flagName(agentSetting(key));

export const AGENTS = ['reference', 'noop', 'command', 'endpoint', 'openai', 'anthropic', 'vscode-lm'] as const;
export type AgentChoice = (typeof AGENTS)[number];

export const SANDBOXES = ['auto', 'bwrap', 'docker', 'podman', 'process'] as const;
export type SandboxChoice = (typeof SANDBOXES)[number];

/** The fault profiles offered in the editor: the paper's levels, then one ablation per fault type. */
export const FAULT_PROFILE_CHOICES: readonly string[] = ['none', 'light', 'medium', 'heavy', ...FAULT_TYPES.map((type) => `${type}-only`)];

export interface RunSettings {
  agent: AgentChoice;
  faultProfile: string;
  sandbox: SandboxChoice;
  trials: number;
  agentCommand?: string;
  endpoint?: string;
  openaiBaseUrl?: string;
  openaiModel?: string;
  /** Model agents: a settings profile (`--agent-config`). */
  agentConfig?: string;
  /** A price file (`--prices`), for cost. */
  prices?: string;
}

export interface CliCommand {
  command: string;
  args: string[];
}

/**
 * How to start the CLI: a `.js`/`.cjs`/`.mjs` path (the bundled dist/cli.js by default) runs with the Node
 * that runs the extension host; anything else is an executable (`mcpbench` on PATH, a wrapper script).
 */
export function cliCommand(cliPath: string, nodePath: string, args: string[]): CliCommand {
  return /\.(c|m)?js$/.test(cliPath) ? { command: nodePath, args: [cliPath, ...args] } : { command: cliPath, args };
}

export class SettingsError extends Error {}

/**
 * `mcpbench run` arguments. `vscode-lm` is not a CLI agent: the extension serves it as an endpoint, so the
 * caller passes that endpoint's URL and the run uses `--agent endpoint`.
 */
export function runArgs(files: string[], settings: RunSettings, options: { faults?: string; lmEndpoint?: string } = {}): string[] {
  const args = ['run', ...files, '--reporter', 'jsonl'];
  const agent = settings.agent === 'vscode-lm' ? 'endpoint' : settings.agent;
  args.push('--agent', agent);
  switch (settings.agent) {
    case 'command':
      if (!settings.agentCommand) throw new SettingsError('mcpbench.defaultAgent is "command" but mcpbench.agentCommand is empty');
      args.push(flag('command'), settings.agentCommand);
      break;
    case 'endpoint':
      if (!settings.endpoint) throw new SettingsError('mcpbench.defaultAgent is "endpoint" but mcpbench.endpoint is empty');
      args.push(flag('url'), settings.endpoint);
      break;
    case 'vscode-lm':
      if (!options.lmEndpoint) throw new SettingsError('the VS Code language-model agent is not running');
      args.push(flag('url'), options.lmEndpoint);
      break;
    case 'openai':
      if (settings.openaiBaseUrl) args.push(flag('base_url'), settings.openaiBaseUrl);
      if (settings.openaiModel) args.push(flag('model'), settings.openaiModel);
      if (settings.agentConfig) args.push(flag('agent_config'), settings.agentConfig);
      break;
    case 'anthropic':
      if (settings.agentConfig) args.push(flag('agent_config'), settings.agentConfig);
      break;
    case 'reference':
      // Under faults the reference agent should behave like a careful agent, not give up at the first error.
      if ((options.faults ?? 'none') !== 'none') args.push(flag('retry'));
      break;
  }
  if (settings.prices && settings.agent !== 'reference' && settings.agent !== 'noop' && settings.agent !== 'command') args.push(flag('prices'), settings.prices);
  args.push('--faults', options.faults ?? 'none');
  if (settings.trials > 1) args.push('--trials', String(Math.floor(settings.trials)));
  if (settings.sandbox !== 'auto') args.push('--sandbox', settings.sandbox);
  return args;
}

export function checkArgs(files: string[], settings: Pick<RunSettings, 'sandbox'>): string[] {
  const args = ['check', ...files, '--reporter', 'jsonl'];
  if (settings.sandbox !== 'auto') args.push('--sandbox', settings.sandbox);
  return args;
}
