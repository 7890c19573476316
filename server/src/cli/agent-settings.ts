/**
 * The agent settings of `mcpbench run` (record/agent-settings.ts, the one table) as commander options, and
 * the agent options a run gets from the flags given: each agent reads only its own; a model agent's settings
 * given to another agent are a usage error.
 */
import { resolve } from 'node:path';
import { Option, type Command } from 'commander';
import { AGENT_SETTINGS, agentOptionsOf, flagName, flagOfOption, flagProperty, type AgentSetting, type AgentSettingKind } from '../record/agent-settings.ts';
import { isModelAgent } from '../runner/agents/registry.ts';
import { MODEL_AGENTS, profileAgent } from '../runner/agents/settings.ts';
import { UsageError } from './errors.ts';
import { collect, integerOption, jsonObjectOption, numberOption } from './options.ts';

const PARSERS: Partial<Record<AgentSettingKind, (value: string, previous: unknown) => unknown>> = {
  number: numberOption,
  integer: integerOption,
  'json-object': jsonObjectOption,
  list: (value, previous) => collect(value, Array.isArray(previous) ? previous.map(String) : []),
};

/** A setting's commander option: its flag, help, parser, choices and default from the table. */
export function settingOption(setting: AgentSetting): Option {
  const option = new Option(setting.flag, setting.help);
  if (setting.choices) option.choices([...setting.choices]);
  const parse = PARSERS[setting.kind];
  if (parse) option.argParser<unknown>(parse);
  if (setting.default !== undefined) option.default(setting.default);
  return option;
}

/** Adds the options of every agent setting, in the table's order, but those whose keys are named. */
export function addAgentSettingOptions(command: Command, except: readonly string[] = []): Command {
  for (const setting of AGENT_SETTINGS) if (!except.includes(setting.key)) command.addOption(settingOption(setting));
  return command;
}

/** The flag that sets an agent option (for the error about it), if any. */
export const agentOptionFlag = (option: string): string | undefined => flagOfOption(option);

/** The settings the command line gave, by key. */
export function givenSettings(flags: object): Record<string, unknown> {
  const values = new Map(Object.entries(flags));
  return Object.fromEntries(AGENT_SETTINGS.map((s) => [s.key, values.get(flagProperty(s))]));
}

/** The agent `--agent` names, else the one the `--agent-config` profile names, else reference. */
export function agentOf(flags: { agent?: string; agentConfig?: string }, cwd: string): string {
  return flags.agent ?? (flags.agentConfig ? profileAgent(resolve(cwd, flags.agentConfig), undefined) : undefined) ?? 'reference';
}

/** Whether only model agents read a setting, and it means nothing to the run besides (as --model does to --paraphrase). */
const modelOnly = (s: AgentSetting) => !s.sharedWithRun && Object.keys(s.agents).every((agent) => isModelAgent(agent));

/** The options of the agent from the flags given. */
export function agentOptions(agent: string, flags: object): Record<string, unknown> {
  const given = givenSettings(flags);
  if (!isModelAgent(agent)) {
    if (given.agent_config) throw new UsageError(`--agent-config is a profile for a model agent (--agent ${MODEL_AGENTS.join(' or ')}), not ${agent}`);
    const stray = AGENT_SETTINGS.filter((s) => s.key !== 'agent_config' && modelOnly(s) && given[s.key] !== undefined).map(flagName);
    if (stray.length) throw new UsageError(`${stray.join(', ')} set${stray.length === 1 ? 's' : ''} a model agent's behaviour: use --agent ${MODEL_AGENTS.join(' or ')}`);
  }
  return agentOptionsOf(agent, given);
}
