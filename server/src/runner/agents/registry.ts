/**
 * Agents are plug-ins: a descriptor per agent (its name, the options run.json records for it, how a task's
 * episodes are planned for it, and how to create it). The session, the CLI and the editor's settings all
 * read this registry; adding an agent is adding a descriptor, nothing else.
 *
 * Options are what a run records and a resumed run reads back, so they never hold a secret: API keys come
 * from the environment the agent is created in. Two steps, each with one job:
 * - `prepare` (a new run only, `prepareAgent`): what the user gave (flags, a profile file, the environment,
 *   relative paths) made into the options run.json records, independent of where and when the run started:
 *   the model agents resolve their settings, the command agent's folder and the endpoint's price file become
 *   absolute. A resumed run never prepares again: it creates the same agent from the record alone, whatever
 *   its environment or current directory say by then.
 * - `create` (every run, new and resumed, `createAgent`): the recorded options, checked against the
 *   descriptor's schema, made into an agent in this run's setting (environment, sandbox backend, task files).
 * Either step may `warn`: something the run goes on with but records in run.json's `warnings` and shows (a
 * model without a price, an agent that is not confined). A resumed run adds the warnings its own creation
 * gives (another backend, say) to the record.
 */
import { resolve } from 'node:path';
import { z } from 'zod';
import type { Task } from '../../tasks/model.ts';
import type { SandboxBackend } from '../sandbox.ts';
import { AgentOptionsError, type Agent } from './agent.ts';
import { AGENT_SANDBOXES, commandAgentFor, type CommandAgentChoices } from './command.ts';
import { ALLOW_HOST_FORMAT, isAllowHost } from './egress.ts';
import { createEndpointAgent, ENDPOINT_SIGNING_KEY_ENV } from './endpoint.ts';
import { imageAgentFor, prepareImageAgent, type ImageAgentChoices } from './image.ts';
import { cachingFetch, modelCacheFromEnv } from './model-cache.ts';
import { createAnthropicAgent } from './anthropic.ts';
import { createOpenAIAgent } from './openai.ts';
import { createReferenceAgent, noopAgent } from './reference.ts';
import type { ModelRuntime } from './model-loop.ts';
import { MODEL_AGENTS, modelSettingsSchema, prepareModelSettings, SettingsError, type ModelAgentName, type ModelAgentSettings } from './settings.ts';
import { PriceFileError, readPriceFile } from './usage.ts';

export { AgentOptionsError } from './agent.ts';

/** Where a run sets its agent up: what creating it needs besides its options. */
export interface AgentSetting {
  /** Where keys and endpoint defaults come from (MCPBENCH_OPENAI_MODEL, OPENAI_API_KEY ...). */
  env: Record<string, string | undefined>;
  /** Where relative paths in the options resolve (default: the current directory). */
  cwd?: string;
  /** The run's sandbox backend: where an agent process is confined unless its options say otherwise. */
  backend?: SandboxBackend;
  /** The run's task files (sealed-set entries as `<file>#<path>`): an agent process never reads them. */
  taskFiles?: readonly string[];
  /** The task sources as given (files, folders, sealed sets): an agent process never reads them either. */
  taskSources?: readonly string[];
  /** The run folder: hidden from an agent process, with the folder of runs it lies in. */
  runDirectory?: string;
}

export interface AgentCreateContext extends AgentSetting {
  /** Something the run goes on with but records in run.json (`warnings`) and shows: an unconfined agent. */
  warn(message: string): void;
}

export interface AgentPrepareContext extends AgentCreateContext {
  /** Where relative paths in the options resolve (the price file, a profile file, a folder). */
  cwd: string;
  /** The run seed. */
  seed: number;
}

/** Options as a step made them, and the warnings it gave. */
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
   * For a new run: what the user gave (flags, files, the environment, relative paths) made into the options
   * run.json records, so that a resumed run creates the same agent from the record alone. Default: the input
   * as it is. Throws AgentOptionsError; may `warn`.
   */
  prepare?(input: Record<string, unknown>, context: AgentPrepareContext): Record<string, unknown>;
  /** Throws AgentOptionsError when the options (with the environment) do not make a working agent. */
  create(options: Options, context: AgentCreateContext): Agent;
  /**
   * The endpoint the agent calls, as its recorded options name it: what a queue caps the episodes in flight
   * by, across all workers (`mcpbench run --queue --max-in-flight`). Default: the agent's name and options.
   */
  endpoint?(options: Options): string;
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
    dir: nonEmpty.optional().meta({ description: "Its folder, read-only inside its sandbox, and its working directory (default: the current one); the run's folder, task sources, .git, sealed sets and set key files in it are hidden." }),
    allowHosts: z.array(z.string().refine(isAllowHost, ALLOW_HOST_FORMAT)).optional().meta({ description: 'host:port entries its egress proxy forwards to (its model endpoint); default: none.' }),
    gateway: z.enum(['http', 'stdio']).optional().meta({ description: 'How it reaches the gateway: streamable HTTP (default), or MCP over its own stdin/stdout.' }),
  }),
  // Its folder made absolute (the current one by default); a blank one is left for the schema to refuse.
  prepare: (input, { cwd }) => ({ ...input, dir: typeof input.dir === 'string' && input.dir.trim() ? resolve(cwd, input.dir.trim()) : (input.dir ?? cwd) }),
  create: (options, context) => commandAgentFor(options, context),
};

const image: AgentDescriptor<ImageAgentChoices> = {
  name: 'image',
  description: "Your agent as a container image, a fresh container per episode with no network but the gateway on its loopback (the command agent's contract: MCPBENCH_GATEWAY_URL, MCPBENCH_GOAL ... and the task on stdin).",
  options: z.object({
    image: nonEmpty.meta({ description: 'The image reference; it must be on this machine (nothing is pulled at run time).' }),
    imageId: z.string().regex(/^(sha256:)?[0-9a-f]{12,64}$/, 'not an image id').optional().meta({ description: 'Its id, recorded when the run was made: what every episode runs.' }),
    engine: z.enum(['docker', 'podman']).optional().meta({ description: "The container engine (default: the run's --sandbox when it is one, else podman, else docker)." }),
    args: z.array(z.string()).optional().meta({ description: "Arguments appended to the image's entrypoint and command." }),
    passEnv: z.array(variableName).optional().meta({ description: 'Names of your variables it gets (its own model key); recorded by name, never by value.' }),
    allowHosts: z.array(z.string().refine(isAllowHost, ALLOW_HOST_FORMAT)).optional().meta({ description: 'host:port entries its egress proxy forwards to (its model endpoint); default: none.' }),
    gateway: z.enum(['http', 'stdio']).optional().meta({ description: 'How it reaches the gateway: streamable HTTP on its loopback (default), or MCP over its own stdin/stdout.' }),
  }),
  prepare: (input, context) => prepareImageAgent(input, context),
  create: (options, context) => imageAgentFor(options, context),
};

const endpoint: AgentDescriptor<{ url: string; prices?: string }> = {
  name: 'endpoint',
  description: 'POSTs each task to your URL (schemas/endpoint-request.schema.json); the usage it reports is priced from `prices`.',
  options: z.object({
    url: z.url().meta({ description: 'The URL each task is POSTed to.' }),
    prices: nonEmpty.optional().meta({ description: 'A price file (schemas/prices.schema.json) for the usage the endpoint reports, by the model it names.' }),
  }),
  prepare: (input, { cwd }) => (typeof input.prices === 'string' ? { ...input, prices: resolve(cwd, input.prices) } : input),
  create: (options, context) => {
    try {
      const signingKey = context.env[ENDPOINT_SIGNING_KEY_ENV];
      return createEndpointAgent({ url: options.url, ...(options.prices ? { prices: readPriceFile(options.prices) } : {}), ...(signingKey ? { signingKey } : {}) });
    } catch (error) {
      if (error instanceof PriceFileError) throw new AgentOptionsError('endpoint', 'prices', `price file ${error.message}`);
      throw error;
    }
  },
  endpoint: (options) => `endpoint ${options.url}`,
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
        for (const message of warnings) context.warn(message);
        return settings;
      } catch (error) {
        if (error instanceof SettingsError) throw new AgentOptionsError(name, undefined, error.message);
        throw error;
      }
    },
    create: (settings, { env }) => {
      const apiKey = env[settings.api_key_env]?.trim();
      const cache = modelCacheFromEnv(env);
      return create(settings, { name, ...(apiKey ? { apiKey } : {}), ...(cache ? { fetch: cachingFetch(cache) } : {}) });
    },
    // The resolved settings name the model endpoint: what a queue caps the episodes in flight by.
    endpoint: (settings) => `${name} ${settings.base_url} ${settings.model}`,
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

for (const descriptor of [reference, noop, command, image, endpoint, openai, anthropic] as AgentDescriptor<never>[]) registerAgent(descriptor);

export function agentNames(): string[] {
  return [...descriptors.keys()];
}

export function agentDescriptor(name: string): AgentDescriptor | undefined {
  return descriptors.get(name);
}

/**
 * The agent a run names, created from its recorded options checked against its descriptor: the options as
 * parsed (unset ones dropped), the agent, and the warnings its creation gave (run.json records them). Throws
 * AgentOptionsError for an unknown agent or bad options.
 */
export function createAgent(
  name: string,
  options: Record<string, unknown>,
  setting: AgentSetting,
): { agent: Agent; options: Record<string, unknown>; descriptor: AgentDescriptor; warnings: string[] } {
  const descriptor = knownDescriptor(name);
  const parsed = descriptor.options.safeParse(definedOptions(options));
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const option = issue.path.length ? String(issue.path[0]) : undefined;
    throw new AgentOptionsError(name, option, `the ${name} agent ${option ? `option ${option}` : 'options'}: ${issue.message}`);
  }
  const warnings: string[] = [];
  const agent = descriptor.create(parsed.data, { ...setting, warn: (message) => void warnings.push(message) });
  return { agent, options: parsed.data, descriptor, warnings };
}

/**
 * The options a new run records for an agent: its descriptor's `prepare` over what the user gave (unset
 * ones dropped), and the warnings it gave. Throws AgentOptionsError for an unknown agent or options it refuses.
 */
export function prepareAgent(name: string, input: Record<string, unknown>, setting: Omit<AgentPrepareContext, 'warn'>): PreparedOptions {
  const descriptor = knownDescriptor(name);
  const defined = definedOptions(input);
  const warnings: string[] = [];
  const options = descriptor.prepare?.(defined, { ...setting, warn: (message) => void warnings.push(message) }) ?? defined;
  return { options, warnings };
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

/** The endpoint an agent with these (recorded) options calls: its descriptor's `endpoint`, else its name and options. */
export function agentEndpoint(name: string, options: Record<string, unknown>): string {
  const descriptor = descriptors.get(name);
  if (descriptor?.endpoint) return descriptor.endpoint(options);
  const keys = Object.keys(options).sort();
  return keys.length ? `${name} ${JSON.stringify(options, keys)}` : name;
}
