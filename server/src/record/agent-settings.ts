/**
 * The one table of agent settings: each row is a setting's key, its `mcpbench run` flag, the kind of value it
 * takes (which gives the flag's parser and the JSON schema of the value), its help, the agents that read it
 * under which option name (their `agent_options` in run.json; a model agent's are its profile's keys), and
 * the extension's setting that feeds it, if any. The CLI's options, the flag named in an error about an
 * option, the agent options a run records and the extension's arguments all come from here; a test checks
 * the extension's settings schema (package.json) against it.
 *
 * Adding a model setting is one row here plus its use in the agent (settings.ts, the model loop).
 */

export type AgentSettingKind = 'string' | 'number' | 'integer' | 'boolean' | 'json-object' | 'list' | 'choice';

export interface AgentSetting {
  /** The setting's name: a model agent's profile key, else the option's name. */
  key: string;
  /** The flag and its argument as `mcpbench run --help` shows it. */
  flag: string;
  kind: AgentSettingKind;
  choices?: readonly string[];
  /** The flag's default (commander's). */
  default?: string | boolean | readonly string[];
  help: string;
  /** The agents that read it, each under its option name. */
  agents: Readonly<Record<string, string>>;
  /** Some agents take only some choices (the image agent's engine: docker or podman). */
  accepts?: Readonly<Record<string, readonly string[]>>;
  /** A model agent's flag that also means something to the run (the paraphrase endpoint): no error with other agents. */
  sharedWithRun?: boolean;
  /** The extension's setting (package.json `contributes.configuration`) that feeds it. */
  setting?: string;
}

const MODEL = (key: string) => ({ openai: key, anthropic: key });

/** The text formats a model agent reads tool calls in (runner/agents/tool-call-formats.ts parses them). */
export const TEXT_TOOL_CALL_FORMATS = ['hermes', 'llama3', 'mistral', 'fenced-json'] as const;
/** `--tool-call-format`: `auto` reads native calls and, when there are none, text in any format; `native` reads no text. */
export const TOOL_CALL_FORMAT_OPTIONS = ['auto', 'native', ...TEXT_TOOL_CALL_FORMATS] as const;

export const AGENT_SETTINGS: readonly AgentSetting[] = [
  { key: 'command', flag: '--agent-command <command>', kind: 'string', agents: { command: 'command' }, setting: 'mcpbench.agentCommand', help: 'for --agent command: the program to run (gets MCPBENCH_GATEWAY_URL, MCPBENCH_GOAL ...)' },
  {
    key: 'agent_sandbox',
    flag: '--agent-sandbox <backend>',
    kind: 'choice',
    choices: ['bwrap', 'docker', 'podman', 'none'],
    agents: { command: 'sandbox', image: 'engine' },
    accepts: { image: ['docker', 'podman'] },
    help: "for --agent command: the sandbox it runs in (default: the run's --sandbox), or none (a warning is recorded); for --agent image: the engine (docker or podman)",
  },
  { key: 'pass_env', flag: '--agent-env <name>', kind: 'list', default: [], agents: { command: 'passEnv', image: 'passEnv' }, help: 'for --agent command: pass this variable of yours to the agent (repeatable; nothing else of your environment reaches it)' },
  { key: 'dir', flag: '--agent-dir <dir>', kind: 'string', agents: { command: 'dir' }, help: "for --agent command: its folder, read-only inside the sandbox (default: the current directory; the run's task files in it are hidden)" },
  { key: 'allow_hosts', flag: '--agent-allow-host <host:port>', kind: 'list', default: [], agents: { command: 'allowHosts', image: 'allowHosts' }, help: 'for --agent command: a host its egress proxy may reach, e.g. api.openai.com:443 (repeatable; default: none)' },
  { key: 'gateway', flag: '--agent-gateway <transport>', kind: 'choice', choices: ['http', 'stdio'], default: 'http', agents: { command: 'gateway', image: 'gateway' }, help: 'for --agent command: reach the gateway over streamable HTTP or over its own stdin/stdout' },
  { key: 'image', flag: '--agent-image <ref>', kind: 'string', agents: { image: 'image' }, help: 'for --agent image: the container image of your agent (on this machine; run with no network but the gateway; --agent-env, --agent-allow-host, --agent-gateway apply; --agent-sandbox docker|podman picks the engine)' },
  { key: 'url', flag: '--endpoint <url>', kind: 'string', agents: { endpoint: 'url' }, setting: 'mcpbench.endpoint', help: 'for --agent endpoint: the URL tasks are POSTed to' },
  { key: 'agent_config', flag: '--agent-config <file>', kind: 'string', agents: MODEL('agent_config'), setting: 'mcpbench.agentConfig', help: 'model agents (openai, anthropic): a settings profile (schemas/agent-config.schema.json); the flags below override it' },
  { key: 'model', flag: '--model <model>', kind: 'string', agents: MODEL('model'), sharedWithRun: true, setting: 'mcpbench.openai.model', help: 'model agents: the model (or MCPBENCH_OPENAI_MODEL / MCPBENCH_ANTHROPIC_MODEL)' },
  { key: 'base_url', flag: '--base-url <url>', kind: 'string', agents: MODEL('base_url'), sharedWithRun: true, setting: 'mcpbench.openai.baseUrl', help: 'model agents: the base URL, /chat/completions or /messages appended (or MCPBENCH_OPENAI_BASE_URL / MCPBENCH_ANTHROPIC_BASE_URL)' },
  { key: 'temperature', flag: '--temperature <t>', kind: 'number', agents: MODEL('temperature'), help: 'model agents: sampling temperature' },
  { key: 'top_p', flag: '--top-p <p>', kind: 'number', agents: MODEL('top_p'), help: 'model agents: nucleus sampling mass' },
  { key: 'seed', flag: '--model-seed <n>', kind: 'integer', agents: MODEL('seed'), help: 'model agents: the sampling seed sent (default: the run seed; trial t sends seed + t)' },
  { key: 'max_tokens', flag: '--max-tokens <n>', kind: 'integer', agents: MODEL('max_tokens'), help: 'model agents: longest response per request' },
  { key: 'max_turns', flag: '--max-turns <n>', kind: 'integer', agents: MODEL('max_turns'), help: 'model agents: most model requests per episode (default 50)' },
  { key: 'request_timeout_s', flag: '--request-timeout <s>', kind: 'number', agents: MODEL('request_timeout_s'), help: 'model agents: seconds one model request may take (default 120)' },
  { key: 'system_prompt_file', flag: '--system-prompt <file>', kind: 'string', agents: MODEL('system_prompt_file'), help: 'model agents: a text file that replaces the default system prompt' },
  { key: 'extra_body', flag: '--extra-body <json>', kind: 'json-object', agents: MODEL('extra_body'), help: 'model agents: extra request fields, a JSON object (e.g. \'{"top_k": 20}\')' },
  { key: 'tool_call_format', flag: '--tool-call-format <format>', kind: 'choice', choices: TOOL_CALL_FORMAT_OPTIONS, agents: MODEL('tool_call_format'), help: 'model agents: where tool calls are read from (auto: native calls, else text in any known format)' },
  { key: 'prices', flag: '--prices <file>', kind: 'string', agents: { ...MODEL('prices'), endpoint: 'prices' }, setting: 'mcpbench.prices', help: 'model agents: a price file (schemas/prices.schema.json), for cost and --max-cost' },
  { key: 'max_tokens_per_episode', flag: '--max-tokens-per-episode <n>', kind: 'integer', agents: MODEL('max_tokens_per_episode'), help: 'model agents: stop an episode once it has used this many tokens (it fails: token-budget)' },
  { key: 'retry', flag: '--retry', kind: 'boolean', agents: { reference: 'retry' }, help: 'reference agent: back off and retry recoverable faults' },
];

/** The flag's name without its argument: `--agent-env`. */
export const flagName = (setting: Pick<AgentSetting, 'flag'>): string => setting.flag.split(' ')[0]!;

/** The property commander gives a flag: `--agent-env` -> `agentEnv`. */
export const flagProperty = (setting: Pick<AgentSetting, 'flag'>): string => flagName(setting).slice(2).replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());

export function agentSetting(key: string): AgentSetting {
  const found = AGENT_SETTINGS.find((s) => s.key === key);
  if (!found) throw new Error(`no agent setting ${key}`);
  return found;
}

/** The flag that sets an agent's option (its name as the agent reads it), for messages about it. */
export function flagOfOption(option: string): string | undefined {
  const found = AGENT_SETTINGS.find((s) => s.key === option || Object.values(s.agents).includes(option));
  return found ? flagName(found) : undefined;
}

/** The JSON schema of a setting's value. */
export function settingSchema(setting: AgentSetting): Record<string, unknown> {
  switch (setting.kind) {
    case 'string':
      return { type: 'string' };
    case 'number':
      return { type: 'number' };
    case 'integer':
      return { type: 'integer', minimum: 0 };
    case 'boolean':
      return { type: 'boolean' };
    case 'json-object':
      return { type: 'object' };
    case 'list':
      return { type: 'array', items: { type: 'string' } };
    case 'choice':
      return { type: 'string', enum: [...(setting.choices ?? [])] };
  }
}

/**
 * The options an agent gets from the settings given (by key): each row it reads, under its option name; an
 * empty list is no value; a choice it does not accept is none.
 */
export function agentOptionsOf(agent: string, given: Readonly<Record<string, unknown>>): Record<string, unknown> {
  const options: Record<string, unknown> = {};
  for (const setting of AGENT_SETTINGS) {
    const name = setting.agents[agent];
    if (name === undefined) continue;
    let value = given[setting.key];
    if (Array.isArray(value) && value.length === 0) value = undefined;
    const accepted = setting.accepts?.[agent];
    if (accepted && !accepted.includes(String(value))) value = undefined;
    if (setting.kind === 'boolean') value = Boolean(value);
    options[name] = value;
  }
  return options;
}
