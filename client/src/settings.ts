/** The `mcpbench.*` settings, read fresh for every run so a changed setting applies at once. */
import * as vscode from 'vscode';
import { AGENTS, SANDBOXES, type AgentChoice, type RunSettings, type SandboxChoice } from './cli-args.ts';

export function readRunSettings(scope?: vscode.Uri): RunSettings {
  const config = vscode.workspace.getConfiguration('mcpbench', scope);
  const agent = config.get<string>('defaultAgent', 'reference');
  const sandbox = config.get<string>('sandbox', 'auto');
  const optional = (key: string) => config.get<string>(key)?.trim() || undefined;
  const settings: RunSettings = {
    agent: (AGENTS as readonly string[]).includes(agent) ? (agent as AgentChoice) : 'reference',
    faultProfile: config.get<string>('faultProfile', 'light'),
    sandbox: (SANDBOXES as readonly string[]).includes(sandbox) ? (sandbox as SandboxChoice) : 'auto',
    trials: Math.max(1, config.get<number>('trials', 1)),
  };
  const agentCommand = optional('agentCommand');
  const endpoint = optional('endpoint');
  const baseUrl = optional('openai.baseUrl');
  const model = optional('openai.model');
  if (agentCommand) settings.agentCommand = agentCommand;
  if (endpoint) settings.endpoint = endpoint;
  if (baseUrl) settings.openaiBaseUrl = baseUrl;
  if (model) settings.openaiModel = model;
  const agentConfig = optional('agentConfig');
  const prices = optional('prices');
  if (agentConfig) settings.agentConfig = agentConfig;
  if (prices) settings.prices = prices;
  return settings;
}

export function cliPathSetting(): string | undefined {
  return vscode.workspace.getConfiguration('mcpbench').get<string>('cliPath')?.trim() || undefined;
}
