/**
 * The settings of a model agent (`openai`, `anthropic`): endpoint, model, sampling, limits, the system
 * prompt, extra request fields, the tool-call format, the token budget and the price file. They come from
 * three places, the first that sets a field winning:
 *
 *   1. command-line flags (`--temperature 0.2` ...; the CLI maps them onto the same keys);
 *   2. the agent profile file (`--agent-config FILE`, `schemas/agent-config.schema.json`), whose relative
 *      paths are relative to the file;
 *   3. the environment: `MCPBENCH_AGENT_<KEY>` for every key of the profile (`MCPBENCH_AGENT_TEMPERATURE`,
 *      `MCPBENCH_AGENT_EXTRA_BODY` as JSON ...), plus the protocol's own `MCPBENCH_OPENAI_BASE_URL`,
 *      `MCPBENCH_OPENAI_MODEL`, `OPENAI_API_KEY` (or `MCPBENCH_ANTHROPIC_*`, `ANTHROPIC_API_KEY`);
 *
 * then the defaults. The resolved settings are the agent's options (`agent_options` in `run.json`, checked by
 * `modelSettingsSchema` when a run is resumed); the API key never is: it is read from the environment
 * variable `api_key_env` names, again on resume.
 */
import { readFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { z } from 'zod';
import { readJsonFile, zodIssues } from '../../json-file.ts';
import { TOOL_CALL_FORMAT_OPTIONS, type ToolCallFormatOption } from './tool-call-formats.ts';
import { ModelPriceSchema, priceFor, readPriceFile, PriceFileError } from './usage.ts';
import { McpbenchError } from '../../errors.ts';

export const MODEL_AGENTS = ['openai', 'anthropic'] as const;
export type ModelAgentName = (typeof MODEL_AGENTS)[number];

export const DEFAULT_SYSTEM_PROMPT = [
  'You are an agent that completes tasks by calling the tools you are given.',
  'Use only those tools. If a call fails, read the error and decide whether to retry, try another way, or stop.',
  'When the task is done, reply with a short final answer without calling any tool;',
  'if the task asks for information, that answer must contain it.',
].join(' ');

const PROTOCOL_DEFAULTS: Record<ModelAgentName, { base_url: string; env: { base_url: string; model: string; api_key: string } }> = {
  openai: { base_url: 'https://api.openai.com/v1', env: { base_url: 'MCPBENCH_OPENAI_BASE_URL', model: 'MCPBENCH_OPENAI_MODEL', api_key: 'OPENAI_API_KEY' } },
  anthropic: { base_url: 'https://api.anthropic.com/v1', env: { base_url: 'MCPBENCH_ANTHROPIC_BASE_URL', model: 'MCPBENCH_ANTHROPIC_MODEL', api_key: 'ANTHROPIC_API_KEY' } },
};

export const DEFAULTS = { max_turns: 50, request_timeout_s: 120, max_retries: 4, tool_call_format: 'auto' as ToolCallFormatOption, anthropic_max_tokens: 4096 };

/** Fields of a request a profile's `extra_body` may not replace: the loop owns them. */
const OWNED_FIELDS = ['model', 'messages', 'tools', 'system', 'stream'];

export const AgentConfigSchema = z
  .object({
    $schema: z.string().optional().meta({ description: 'The JSON Schema this file follows.', examples: ['../schemas/agent-config.schema.json'] }),
    agent: z.enum(MODEL_AGENTS).optional().meta({ title: 'Agent', description: 'The protocol: `openai` (chat completions) or `anthropic` (Messages API). Used when --agent is not given; must agree with it when it is.', examples: ['openai'] }),
    base_url: z.url().optional().meta({ title: 'Base URL', description: 'The endpoint without its last path segment: `/chat/completions` (openai) or `/messages` (anthropic) is appended.', examples: ['http://127.0.0.1:8080/v1', 'https://api.anthropic.com/v1'] }),
    model: z.string().min(1).optional().meta({ title: 'Model', description: 'The model name sent with every request (and looked up in the price file).', examples: ['qwen2.5-7b-instruct', 'claude-sonnet-4-5'] }),
    api_key_env: z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/).optional().meta({ title: 'API key variable', description: 'The environment variable holding the API key (default OPENAI_API_KEY or ANTHROPIC_API_KEY). The key itself never goes in this file or in run.json.', examples: ['TOGETHER_API_KEY'] }),
    temperature: z.number().min(0).max(2).optional().meta({ title: 'Temperature', description: 'Sampling temperature sent to the endpoint (the endpoint\'s default when unset).', examples: [0, 0.7] }),
    top_p: z.number().gt(0).max(1).optional().meta({ title: 'Top-p', description: 'Nucleus sampling mass sent to the endpoint.', examples: [0.95] }),
    seed: z.number().int().min(0).optional().meta({ title: 'Sampling seed', description: 'The seed sent to an openai endpoint (the run seed by default); trial t sends seed + t, so k trials are k samples and a rerun repeats them. The Messages API has no seed: anthropic records it only.', examples: [1] }),
    max_tokens: z.number().int().positive().optional().meta({ title: 'Max tokens per response', description: 'Longest response the model may write (anthropic needs one: 4096 by default).', examples: [1024] }),
    max_turns: z.number().int().positive().optional().meta({ title: 'Max turns', description: 'Most model requests per episode before it ends without an answer (default 50).', examples: [20] }),
    request_timeout_s: z.number().positive().optional().meta({ title: 'Request timeout', description: 'Seconds one model request may take, body included, before it is retried (default 120).', examples: [300] }),
    system_prompt_file: z.string().min(1).optional().meta({ title: 'System prompt file', description: 'A text file whose content replaces the default system prompt (relative to this file).', examples: ['prompts/agent.txt'] }),
    extra_body: z.record(z.string(), z.unknown()).optional().meta({ title: 'Extra request fields', description: 'Added to every request body as they are (e.g. `top_k`, `min_p`, `repetition_penalty` for local servers); may not replace model, messages, tools, system or stream.', examples: [{ top_k: 20, min_p: 0 }] }),
    tool_call_format: z.enum(TOOL_CALL_FORMAT_OPTIONS).optional().meta({ title: 'Tool-call format', description: 'Where tool calls are read from: `auto` (native calls, else calls written as text in any known format), `native` (only the protocol\'s own), or one text format.', examples: ['auto', 'hermes'] }),
    max_retries: z.number().int().min(0).max(20).optional().meta({ title: 'Max retries', description: 'Retries of one request after a 429, 5xx, timeout, refused connection or unreadable body, with exponential back-off (default 4).', examples: [4] }),
    max_tokens_per_episode: z.number().int().positive().optional().meta({ title: 'Token budget per episode', description: 'Prompt + completion tokens an episode may spend; once reached, the episode ends before the next tool call and fails (failure code token-budget).', examples: [200000] }),
    prices: z.string().min(1).optional().meta({ title: 'Price file', description: 'A price file (schemas/prices.schema.json) giving this model\'s prices per million tokens (relative to this file).', examples: ['prices.json'] }),
  })
  .strict()
  .meta({ title: 'MCPBench agent profile', description: 'Settings of a model agent (`--agent openai|anthropic --agent-config FILE`). Flags override the file; the file overrides the environment.' });
export type AgentConfig = z.infer<typeof AgentConfigSchema>;

/**
 * The settings a model agent runs with, as run.json records them (its `agent_options`; never an API key).
 * Fields a version did not record take today's defaults, so older runs resume.
 */
export function modelSettingsSchema(agent: ModelAgentName) {
  const shape = AgentConfigSchema.shape;
  return z
    .object({
      base_url: z.url().default(PROTOCOL_DEFAULTS[agent].base_url),
      model: z.string().min(1),
      api_key_env: shape.api_key_env.unwrap().default(PROTOCOL_DEFAULTS[agent].env.api_key),
      temperature: shape.temperature,
      top_p: shape.top_p,
      /** The base sampling seed (trial t sends seed + t); the run seed when none was set. */
      seed: shape.seed,
      max_tokens: shape.max_tokens,
      max_turns: shape.max_turns.unwrap().default(DEFAULTS.max_turns),
      request_timeout_s: shape.request_timeout_s.unwrap().default(DEFAULTS.request_timeout_s),
      /** The system prompt itself (read from `system_prompt_file` when one was given). */
      system_prompt: z.string().min(1).default(DEFAULT_SYSTEM_PROMPT),
      system_prompt_file: z.string().optional(),
      extra_body: shape.extra_body,
      tool_call_format: shape.tool_call_format.unwrap().default(DEFAULTS.tool_call_format),
      max_retries: shape.max_retries.unwrap().default(DEFAULTS.max_retries),
      max_tokens_per_episode: shape.max_tokens_per_episode,
      /** The price file and the model's price in it (absent when the file has none for the model). */
      prices: z.object({ file: z.string(), currency: z.string(), model: ModelPriceSchema.optional() }).optional(),
    })
    .strict();
}
export type ModelAgentSettings = z.output<ReturnType<typeof modelSettingsSchema>>;

export class SettingsError extends McpbenchError {
  static override readonly code: string = 'agent-settings';
}

/** Settings from one source: the file, the flags or the environment, with paths already absolute. */
type Layer = Partial<AgentConfig>;

/** The profile file, validated, its relative paths made absolute. */
export function readAgentConfig(path: string): Layer {
  const read = readJsonFile(path, AgentConfigSchema);
  if (!read.ok) throw new SettingsError(read.message);
  return absolutePaths(read.value, dirname(path));
}

function absolutePaths(layer: Layer, base: string): Layer {
  const out = { ...layer };
  if (out.system_prompt_file) out.system_prompt_file = resolve(base, out.system_prompt_file);
  if (out.prices) out.prices = resolve(base, out.prices);
  return out;
}

/** The environment variable of a profile key: `MCPBENCH_AGENT_TOP_P`. */
export const envName = (key: string) => `MCPBENCH_AGENT_${key.toUpperCase()}`;

/** `MCPBENCH_AGENT_<KEY>` values, typed by the schema (numbers, JSON for extra_body), then the protocol's own names. */
export function environmentLayer(agent: ModelAgentName, env: Record<string, string | undefined>, cwd: string): Layer {
  const shape = AgentConfigSchema.shape;
  const raw: Record<string, unknown> = {};
  for (const key of Object.keys(shape) as (keyof typeof shape)[]) {
    if (key === '$schema' || key === 'agent') continue;
    const value = env[envName(key)]?.trim();
    if (!value) continue;
    if (key === 'extra_body') {
      try {
        raw[key] = JSON.parse(value);
      } catch {
        throw new SettingsError(`${envName(key)}: not JSON`);
      }
    } else raw[key] = NUMERIC_KEYS.has(key) ? Number(value) : value;
  }
  const names = PROTOCOL_DEFAULTS[agent].env;
  raw.base_url ??= env[names.base_url]?.trim() || undefined;
  raw.model ??= env[names.model]?.trim() || undefined;
  for (const key of Object.keys(raw)) if (raw[key] === undefined) delete raw[key];
  const parsed = AgentConfigSchema.safeParse(raw);
  if (!parsed.success) throw new SettingsError(`environment: ${zodIssues(parsed.error, (p) => envName(String(p[0])))}`);
  return absolutePaths(parsed.data, cwd);
}

const NUMERIC_KEYS = new Set(['temperature', 'top_p', 'seed', 'max_tokens', 'max_turns', 'request_timeout_s', 'max_retries', 'max_tokens_per_episode']);

export interface SettingsSources {
  /** From command-line flags, under the profile's keys (paths relative to `cwd`); checked against the profile schema. */
  flags?: Record<string, unknown>;
  /** `--agent-config FILE`. */
  configFile?: string;
  env?: Record<string, string | undefined>;
  cwd: string;
}

/**
 * The agent a profile names when `--agent` was not given, checked against it when it was. Returns the
 * profile's agent (or `flagAgent`).
 */
export function profileAgent(configFile: string, flagAgent: string | undefined): string | undefined {
  const fromFile = readAgentConfig(configFile).agent;
  if (fromFile && flagAgent && fromFile !== flagAgent) throw new SettingsError(`${configFile} is a profile for --agent ${fromFile}, not ${flagAgent}`);
  return flagAgent ?? fromFile;
}

/** Flags over the profile file over the environment over the defaults; the API key from the environment. */
export function resolveModelSettings(agent: ModelAgentName, sources: SettingsSources): { settings: ModelAgentSettings; apiKey?: string; warnings: string[] } {
  const env = sources.env ?? process.env;
  const flags = sources.flags ? absolutePaths(validated(sources.flags, 'flags'), sources.cwd) : {};
  const file = sources.configFile ? readAgentConfig(resolve(sources.cwd, sources.configFile)) : {};
  if (file.agent && file.agent !== agent) throw new SettingsError(`${sources.configFile} is a profile for --agent ${file.agent}, not ${agent}`);
  const merged: Layer = { ...environmentLayer(agent, env, sources.cwd), ...defined(file), ...defined(flags) };
  if (!merged.model) {
    const names = PROTOCOL_DEFAULTS[agent].env;
    throw new SettingsError(`${agent} agent: no model; pass --model, set "model" in the --agent-config file, or set ${names.model}`);
  }
  const warnings: string[] = [];
  let systemPrompt = DEFAULT_SYSTEM_PROMPT;
  if (merged.system_prompt_file) {
    try {
      systemPrompt = readFileSync(merged.system_prompt_file, 'utf8').trim();
    } catch (error) {
      throw new SettingsError(`system prompt ${merged.system_prompt_file}: ${(error as Error).message}`);
    }
    if (!systemPrompt) throw new SettingsError(`system prompt ${merged.system_prompt_file} is empty`);
  }
  const owned = Object.keys(merged.extra_body ?? {}).filter((key) => OWNED_FIELDS.includes(key));
  if (owned.length) throw new SettingsError(`extra_body may not set ${owned.join(', ')}: the agent loop sends those`);
  let prices: ModelAgentSettings['prices'];
  if (merged.prices) {
    try {
      const file = readPriceFile(merged.prices);
      const price = priceFor(file, merged.model);
      prices = { file: merged.prices, currency: file.currency, ...(price ? { model: price } : {}) };
      if (!price) warnings.push(`${merged.prices} has no price for model ${merged.model}: its cost is not counted`);
    } catch (error) {
      if (error instanceof PriceFileError) throw new SettingsError(`price file ${error.message}`);
      throw error;
    }
  }
  const apiKeyEnv = merged.api_key_env ?? PROTOCOL_DEFAULTS[agent].env.api_key;
  const apiKey = env[apiKeyEnv]?.trim() || undefined;
  const settings: ModelAgentSettings = {
    base_url: merged.base_url ?? PROTOCOL_DEFAULTS[agent].base_url,
    model: merged.model,
    api_key_env: apiKeyEnv,
    ...pick(merged, ['temperature', 'top_p', 'seed']),
    ...(merged.max_tokens !== undefined ? { max_tokens: merged.max_tokens } : agent === 'anthropic' ? { max_tokens: DEFAULTS.anthropic_max_tokens } : {}),
    max_turns: merged.max_turns ?? DEFAULTS.max_turns,
    request_timeout_s: merged.request_timeout_s ?? DEFAULTS.request_timeout_s,
    system_prompt: systemPrompt,
    ...(merged.system_prompt_file ? { system_prompt_file: merged.system_prompt_file } : {}),
    ...(merged.extra_body ? { extra_body: merged.extra_body } : {}),
    tool_call_format: merged.tool_call_format ?? DEFAULTS.tool_call_format,
    max_retries: merged.max_retries ?? DEFAULTS.max_retries,
    ...(merged.max_tokens_per_episode !== undefined ? { max_tokens_per_episode: merged.max_tokens_per_episode } : {}),
    ...(prices ? { prices } : {}),
  };
  return { settings, ...(apiKey ? { apiKey } : {}), warnings };
}

/** Settings for programmatic use and tests: a model and any fields, the rest defaulted (no environment read). */
export function modelSettings(agent: ModelAgentName, fields: Partial<ModelAgentSettings> & { model: string }): ModelAgentSettings {
  const { settings } = resolveModelSettings(agent, { cwd: process.cwd(), env: {}, flags: { model: fields.model } });
  return { ...settings, ...fields };
}

/**
 * The options a new run records for a model agent (agents/registry.ts): `input` holds the profile's keys as
 * flags set them and `agent_config`, the profile file; the run seed is the sampling seed unless one was set.
 */
export function prepareModelSettings(
  agent: ModelAgentName,
  input: Record<string, unknown>,
  context: { env: Record<string, string | undefined>; cwd: string; seed?: number },
): { settings: ModelAgentSettings; warnings: string[] } {
  const { agent_config: configFile, ...flags } = input;
  if (configFile !== undefined && typeof configFile !== 'string') throw new SettingsError('--agent-config: expected a file path');
  const { settings, warnings } = resolveModelSettings(agent, { flags, ...(configFile ? { configFile } : {}), env: context.env, cwd: context.cwd });
  const seed = settings.seed ?? (context.seed !== undefined && context.seed >= 0 ? context.seed : undefined);
  return { settings: { ...settings, ...(seed !== undefined ? { seed } : {}) }, warnings };
}

function validated(layer: Record<string, unknown>, source: string): Layer {
  const parsed = AgentConfigSchema.safeParse(defined(layer));
  if (!parsed.success) throw new SettingsError(`${source}: ${zodIssues(parsed.error, (p) => `--${String(p[0]).replace(/_/g, '-')}`)}`);
  return parsed.data;
}

function defined<T extends object>(layer: T): Partial<T> {
  return Object.fromEntries(Object.entries(layer).filter(([, v]) => v !== undefined)) as Partial<T>;
}

function pick<T extends object, K extends keyof T>(value: T, keys: K[]): Partial<Pick<T, K>> {
  const out: Partial<Pick<T, K>> = {};
  for (const key of keys) if (value[key] !== undefined) out[key] = value[key];
  return out;
}
