/**
 * Agents are plug-ins: a descriptor per agent (its name, the options run.json records for it, how a task's
 * episodes are planned for it, and how to create it). The session, the CLI and the editor's settings all
 * read this registry; adding an agent is adding a descriptor, nothing else.
 *
 * Options are what a run records and a resumed run reads back, so they never hold a secret: API keys come
 * from the environment the agent is created in.
 */
import { z } from 'zod';
import type { Task } from '../../tasks/model.ts';
import type { Agent } from './agent.ts';
import { createCommandAgent } from './command.ts';
import { createEndpointAgent } from './endpoint.ts';
import { createOpenAIAgent, openAIOptionsFromEnv } from './openai.ts';
import { createReferenceAgent, noopAgent } from './reference.ts';

export interface AgentCreateContext {
  /** Where keys and endpoint defaults come from (MCPBENCH_OPENAI_MODEL, OPENAI_API_KEY ...). */
  env: Record<string, string | undefined>;
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
  /** Throws AgentOptionsError when the options (with the environment) do not make a working agent. */
  create(options: Options, context: AgentCreateContext): Agent;
  /**
   * The endpoint the agent calls, as its recorded options name it: what a queue caps the episodes in flight
   * by, across all workers (`mcpbench run --queue --max-in-flight`). Default: the agent's name and options.
   */
  endpoint?(options: Options): string;
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

const endpoint: AgentDescriptor<{ url: string }> = {
  name: 'endpoint',
  description: 'POSTs each task to your URL (schemas/endpoint-request.schema.json).',
  options: z.object({ url: z.url().meta({ description: 'The URL each task is POSTed to.' }) }),
  create: (options) => createEndpointAgent({ url: options.url }),
  endpoint: (options) => `endpoint ${options.url}`,
};

const openai: AgentDescriptor<{ model?: string; baseUrl?: string }> = {
  name: 'openai',
  description: 'A tool-calling loop against an OpenAI-compatible chat-completions endpoint (key: OPENAI_API_KEY).',
  options: z.object({ model: nonEmpty.optional(), baseUrl: z.url().optional() }),
  create: (options, { env }) => {
    try {
      return createOpenAIAgent(openAIOptionsFromEnv(env, options));
    } catch (error) {
      throw new AgentOptionsError('openai', 'model', (error as Error).message);
    }
  },
  // Unset, each worker's MCPBENCH_OPENAI_BASE_URL and MCPBENCH_OPENAI_MODEL decide.
  endpoint: (options) => `openai ${options.baseUrl ?? '$MCPBENCH_OPENAI_BASE_URL'} ${options.model ?? '$MCPBENCH_OPENAI_MODEL'}`,
};

const descriptors = new Map<string, AgentDescriptor>();

/** Adds an agent (the editor registers its language-model agent this way); a name can be taken once. */
export function registerAgent<O extends Record<string, unknown>>(descriptor: AgentDescriptor<O>): void {
  if (descriptors.has(descriptor.name)) throw new Error(`an agent named ${descriptor.name} is registered already`);
  descriptors.set(descriptor.name, descriptor as unknown as AgentDescriptor);
}

for (const descriptor of [reference, noop, command, endpoint, openai] as AgentDescriptor<never>[]) registerAgent(descriptor);

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
  const descriptor = descriptors.get(name);
  if (!descriptor) throw new AgentOptionsError(name, undefined, `unknown agent ${name}: use ${agentNames().join(', ')}`);
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const parsed = descriptor.options.safeParse(defined);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = issue.path.length ? String(issue.path[0]) : undefined;
    throw new AgentOptionsError(name, option, `the ${name} agent ${option ? `option ${option}` : 'options'}: ${issue.message}`);
  }
  return { agent: descriptor.create(parsed.data, context), options: parsed.data, descriptor };
}

/** The variants a task is run as under an agent. */
export function agentVariants(descriptor: AgentDescriptor, agent: Agent, task: Task): string[] {
  return descriptor.variants?.(task) ?? [agent.name];
}

/** The endpoint an agent with these (recorded) options calls: its descriptor's `endpoint`, else its name and options. */
export function agentEndpoint(name: string, options: Record<string, unknown>): string {
  const descriptor = descriptors.get(name);
  if (descriptor?.endpoint) return descriptor.endpoint(options);
  const keys = Object.keys(options).sort();
  return keys.length ? `${name} ${JSON.stringify(options, keys)}` : name;
}
