/**
 * Agents are plug-ins: a descriptor per agent (its name, the options run.json records for it, how a task's
 * episodes are planned for it, and how to create it). The session, the CLI and the editor's settings all
 * read this registry; adding an agent is adding a descriptor, nothing else.
 *
 * Options are what a run records and a resumed run reads back, so they never hold a secret: API keys come
 * from the environment the agent is created in. A new run first has its options prepared (`prepareAgent`):
 * the model agents turn their flags, profile file and environment into the settings they run with, so a
 * resumed run creates the same agent whatever its environment says by then.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Task } from '../../tasks/model.ts';
import type { Agent } from './agent.ts';
import { createCommandAgent } from './command.ts';
import { createEndpointAgent } from './endpoint.ts';
import { createAnthropicAgent } from './anthropic.ts';
import { createOpenAIAgent } from './openai.ts';
import { createReferenceAgent, noopAgent } from './reference.ts';
import type { ModelRuntime } from './model-loop.ts';
import { MODEL_AGENTS, modelSettingsSchema, prepareModelSettings, SettingsError, type ModelAgentName, type ModelAgentSettings } from './settings.ts';
import { PriceFileError, readPriceFile } from './usage.ts';

export interface AgentCreateContext {
  /** Where keys and endpoint defaults come from (MCPBENCH_OPENAI_MODEL, OPENAI_API_KEY ...). */
  env: Record<string, string | undefined>;
}

export interface AgentPrepareContext extends AgentCreateContext {
  /** Where relative paths in the options resolve (the price file, a profile file). */
  cwd: string;
  /** The run seed. */
  seed: number;
}

/** Options made ready to record, and what the user should know about them (a model without a price ...). */
export interface PreparedOptions {
  options: Record<string, unknown>;
  warnings: string[];
}

export interface AgentDescriptor<Options extends Record<string, unknown> = Record<string, unknown>> {
  name: string;
  description: string;
  /** The options as run.json records them. */
  options: z.ZodType<Options>;
  /**
   * The variants each task is run as (one episode per variant and trial): the agent's name by default; the
   * reference agent replays `reference:0`.
   */
  variants?(task: Task): string[];
  /**
   * For a new run: what the user gave (flags, files, the environment) made into the options run.json records
   * (absolute paths, resolved settings). Default: the input as it is. Throws AgentOptionsError.
   */
  prepare?(input: Record<string, unknown>, context: AgentPrepareContext): PreparedOptions;
  /** Throws AgentOptionsError when the options (with the environment) do not make a working agent. */
  create(options: Options, context: AgentCreateContext): Agent;
}

/** Options that do not make a working agent; `option` names the one at fault (the CLI maps it to its flag). */
export class AgentOptionsError extends Error {
  constructor(
    readonly agent: string,
    readonly option: string | undefined,
    message: string,
  ) {
    super(message);
  }
}

const nonEmpty = z.string().trim().min(1);

const reference: AgentDescriptor<{ retry?: boolean }> = {
  name: 'reference',
  description: "Replays the task's first reference solution; with `retry` it backs off and retries recoverable faults.",
  options: z.object({ retry: z.boolean().optional() }),
  variants: () => ['reference:0'],
  create: (options) => createReferenceAgent({ retry: options.retry }),
};

const noop: AgentDescriptor = {
  name: 'noop',
  description: 'Does nothing: a task it passes is broken.',
  options: z.object({}),
  create: () => noopAgent,
};

const command: AgentDescriptor<{ command: string }> = {
  name: 'command',
  description: 'Your agent as a process, one per episode (MCPBENCH_GATEWAY_URL, MCPBENCH_GOAL ... and the task on stdin).',
  options: z.object({ command: nonEmpty.meta({ description: 'The program and its arguments, run by /bin/sh -c.' }) }),
  create: (options) => createCommandAgent({ command: options.command }),
};

const endpoint: AgentDescriptor<{ url: string; prices?: string }> = {
  name: 'endpoint',
  description: 'POSTs each task to your URL (schemas/endpoint-request.schema.json); the usage it reports is priced from `prices`.',
  options: z.object({
    url: z.url().meta({ description: 'The URL each task is POSTed to.' }),
    prices: nonEmpty.optional().meta({ description: 'A price file (schemas/prices.schema.json) for the usage the endpoint reports, by the model it names.' }),
  }),
  prepare: (input, { cwd }) => ({ options: typeof input.prices === 'string' ? { ...input, prices: resolve(cwd, input.prices) } : input, warnings: [] }),
  create: (options) => {
    try {
      return createEndpointAgent({ url: options.url, ...(options.prices ? { prices: readPriceFile(options.prices) } : {}) });
    } catch (error) {
      if (error instanceof PriceFileError) throw new AgentOptionsError('endpoint', 'prices', `price file ${error.message}`);
      throw error;
    }
  },
};

/**
 * A model agent: a new run gives it the profile's keys as its flags set them and `agent_config`, the profile
 * file (schemas/agent-config.schema.json); it records the resolved settings (modelSettingsSchema).
 */
function modelAgent(name: ModelAgentName, description: string, create: (settings: ModelAgentSettings, runtime: ModelRuntime) => Agent): AgentDescriptor<ModelAgentSettings> {
  return {
    name,
    description,
    options: modelSettingsSchema(name),
    prepare: (input, context) => {
      try {
        const { settings, warnings } = prepareModelSettings(name, input, context);
        return { options: settings, warnings };
      } catch (error) {
        if (error instanceof SettingsError) throw new AgentOptionsError(name, undefined, error.message);
        throw error;
      }
    },
    create: (settings, { env }) => {
      const apiKey = env[settings.api_key_env]?.trim();
      return create(settings, { name, ...(apiKey ? { apiKey } : {}) });
    },
  };
}

const openai = modelAgent('openai', 'A tool-calling loop against an OpenAI-compatible chat-completions endpoint (key: OPENAI_API_KEY).', createOpenAIAgent);
const anthropic = modelAgent('anthropic', 'A tool-calling loop against the Anthropic Messages API (key: ANTHROPIC_API_KEY).', createAnthropicAgent);

/** Whether an agent is a model agent (its options are model settings: flags like --temperature are its own). */
export const isModelAgent = (name: string): name is ModelAgentName => (MODEL_AGENTS as readonly string[]).includes(name);

const descriptors = new Map<string, AgentDescriptor>();

/** Adds an agent (the editor registers its language-model agent this way); a name can be taken once. */
export function registerAgent<O extends Record<string, unknown>>(descriptor: AgentDescriptor<O>): void {
  if (descriptors.has(descriptor.name)) throw new Error(`an agent named ${descriptor.name} is registered already`);
  descriptors.set(descriptor.name, descriptor as unknown as AgentDescriptor);
}

for (const descriptor of [reference, noop, command, endpoint, openai, anthropic] as AgentDescriptor<never>[]) registerAgent(descriptor);

export function agentNames(): string[] {
  return [...descriptors.keys()];
}

export function agentDescriptor(name: string): AgentDescriptor | undefined {
  return descriptors.get(name);
}

/**
 * The agent a run names, with its options checked against its descriptor: the options as recorded (unset
 * ones dropped) and the agent. Throws AgentOptionsError for an unknown agent or bad options.
 */
export function createAgent(name: string, options: Record<string, unknown>, context: AgentCreateContext): { agent: Agent; options: Record<string, unknown>; descriptor: AgentDescriptor } {
  const descriptor = knownDescriptor(name);
  const defined = definedOptions(options);
  const parsed = descriptor.options.safeParse(defined);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = issue.path.length ? String(issue.path[0]) : undefined;
    throw new AgentOptionsError(name, option, `the ${name} agent ${option ? `option ${option}` : 'options'}: ${issue.message}`);
  }
  return { agent: descriptor.create(parsed.data, context), options: parsed.data, descriptor };
}

/**
 * The options a new run records for an agent: its descriptor's `prepare` over what the user gave (unset
 * ones dropped). Throws AgentOptionsError for an unknown agent or options it refuses.
 */
export function prepareAgent(name: string, input: Record<string, unknown>, context: AgentPrepareContext): PreparedOptions {
  const defined = definedOptions(input);
  return knownDescriptor(name).prepare?.(defined, context) ?? { options: defined, warnings: [] };
}

function knownDescriptor(name: string): AgentDescriptor {
  const descriptor = descriptors.get(name);
  if (!descriptor) throw new AgentOptionsError(name, undefined, `unknown agent ${name}: use ${agentNames().join(', ')}`);
  return descriptor;
}

const definedOptions = (options: Record<string, unknown>) => Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));

/** The variants a task is run as under an agent. */
export function agentVariants(descriptor: AgentDescriptor, agent: Agent, task: Task): string[] {
  return descriptor.variants?.(task) ?? [agent.name];
}
