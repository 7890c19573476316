/**
 * Agents are plug-ins: a descriptor per agent (its name, the options run.json records for it, how a task's
 * episodes are planned for it, and how to create it). The session, the CLI and the editor's settings all
 * read this registry; adding an agent is adding a descriptor, nothing else.
 *
 * Options are what a run records and a resumed run reads back, so they never hold a secret: API keys come
 * from the environment the agent is created in.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Task } from '../../tasks/model.ts';
import type { SandboxBackend } from '../sandbox.ts';
import { AgentOptionsError, type Agent } from './agent.ts';
import { AGENT_SANDBOXES, commandAgentFor, type CommandAgentChoices } from './command.ts';
import { ALLOW_HOST_FORMAT, isAllowHost } from './egress.ts';
import { createEndpointAgent } from './endpoint.ts';
import { createOpenAIAgent, openAIOptionsFromEnv } from './openai.ts';
import { createReferenceAgent, noopAgent } from './reference.ts';

export { AgentOptionsError } from './agent.ts';

export interface AgentCreateContext {
  /** Where keys and endpoint defaults come from (MCPBENCH_OPENAI_MODEL, OPENAI_API_KEY ...). */
  env: Record<string, string | undefined>;
  /** Where relative folders in the options resolve (default: the current directory). */
  cwd?: string;
  /** The run's sandbox backend: where an agent process is confined unless its options say otherwise. */
  backend?: SandboxBackend;
  /** The run's task files (sealed-set entries as `<file>#<path>`): an agent process never reads them. */
  taskFiles?: readonly string[];
  /** Something the run goes on with but records in run.json (`warnings`) and shows: an unconfined agent. */
  warn(message: string): void;
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
   * The options made independent of where the run was started (a relative folder made absolute), as run.json
   * records them: a resumed run reads back the same. Default: as parsed.
   */
  settle?(options: Options, context: AgentCreateContext): Options;
  /** Throws AgentOptionsError when the options (with the environment) do not make a working agent. */
  create(options: Options, context: AgentCreateContext): Agent;
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

/** A name of an environment variable; the set key is never one an agent gets. */
const variableName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'not a variable name')
  .refine((name) => name !== 'MCPBENCH_SET_KEY', 'MCPBENCH_SET_KEY (the set key) never reaches an agent');

const command: AgentDescriptor<CommandAgentChoices> = {
  name: 'command',
  description: "Your agent as a process, one per episode, confined by the run's sandbox backend (MCPBENCH_GATEWAY_URL, MCPBENCH_GOAL ... and the task on stdin).",
  options: z.object({
    command: nonEmpty.meta({ description: 'The program and its arguments, run by /bin/sh -c.' }),
    sandbox: z.enum(AGENT_SANDBOXES).optional().meta({ description: "The backend it runs in (default: the run's); none: a plain process, recorded as a warning." }),
    passEnv: z.array(variableName).optional().meta({ description: 'Names of your variables it gets (its own model key); recorded by name, never by value.' }),
    dir: nonEmpty.optional().meta({ description: "Its folder, read-only inside its sandbox, and its working directory (default: the current one); the run's task files in it are hidden." }),
    allowHosts: z.array(z.string().refine(isAllowHost, ALLOW_HOST_FORMAT)).optional().meta({ description: 'host:port entries its egress proxy forwards to (its model endpoint); default: none.' }),
    gateway: z.enum(['http', 'stdio']).optional().meta({ description: 'How it reaches the gateway: streamable HTTP (default), or MCP over its own stdin/stdout.' }),
  }),
  settle: (options, { cwd }) => ({ ...options, dir: resolve(cwd ?? process.cwd(), options.dir ?? '.') }),
  create: (options, context) => commandAgentFor(options, context),
};

const endpoint: AgentDescriptor<{ url: string }> = {
  name: 'endpoint',
  description: 'POSTs each task to your URL (schemas/endpoint-request.schema.json).',
  options: z.object({ url: z.url().meta({ description: 'The URL each task is POSTed to.' }) }),
  create: (options) => createEndpointAgent({ url: options.url }),
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
 * ones dropped, settled), the agent, and the warnings its creation gave (run.json records them). Throws
 * AgentOptionsError for an unknown agent or bad options.
 */
export function createAgent(
  name: string,
  options: Record<string, unknown>,
  setting: Omit<AgentCreateContext, 'warn'>,
): { agent: Agent; options: Record<string, unknown>; descriptor: AgentDescriptor; warnings: string[] } {
  const descriptor = descriptors.get(name);
  if (!descriptor) throw new AgentOptionsError(name, undefined, `unknown agent ${name}: use ${agentNames().join(', ')}`);
  const defined = Object.fromEntries(Object.entries(options).filter(([, value]) => value !== undefined));
  const parsed = descriptor.options.safeParse(defined);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = issue.path.length ? String(issue.path[0]) : undefined;
    throw new AgentOptionsError(name, option, `the ${name} agent ${option ? `option ${option}` : 'options'}: ${issue.message}`);
  }
  const warnings: string[] = [];
  const context: AgentCreateContext = { ...setting, warn: (message) => void warnings.push(message) };
  const settled = descriptor.settle ? descriptor.settle(parsed.data, context) : parsed.data;
  return { agent: descriptor.create(settled, context), options: settled, descriptor, warnings };
}

/** The variants a task is run as under an agent. */
export function agentVariants(descriptor: AgentDescriptor, agent: Agent, task: Task): string[] {
  return descriptor.variants?.(task) ?? [agent.name];
}
