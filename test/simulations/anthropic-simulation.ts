/**
 * A faithful local SIMULATION of the Anthropic Messages API, for testing the `anthropic` agent: no hosted
 * model can be reached here, so this server stands in for one. It accepts `POST /v1/messages` with the
 * `anthropic-version` header (and `x-api-key` when a key is required), checks what the real API checks
 * (`model`, a positive `max_tokens`, non-empty `messages` starting with a user turn, no unknown top-level
 * field such as `seed`, valid tools, non-empty text blocks, `tool_use` only from the assistant and
 * `tool_result` only from the user, every `tool_use` answered by a `tool_result` in the very next message and
 * no `tool_result` for an id the previous turn did not use), and answers with the next scripted step in the
 * API's shape (`type: message`, content blocks, `stop_reason`, `usage` with `input_tokens`, `output_tokens`,
 * `cache_read_input_tokens`, `cache_creation_input_tokens`). Errors use `{ type: 'error', error: { type,
 * message } }`; 529 is `overloaded_error`.
 *
 * A step scripts what real endpoints and the proxies in front of them do: text and `tool_use` blocks, calls
 * written as text, a `tool_use` without an id or a name or with `input` as a (broken) JSON string,
 * `stop_reason: refusal`, HTTP errors, bodies that are not JSON or not a message, slow streams, hangs, usage
 * present, absent or given. Unless a step gives its usage, a response reports a deterministic count (four
 * characters a token; the first turn of a conversation writes a quarter of its prompt to the cache, later
 * turns read half of theirs from it). The usage of every delivered response is summed (`served`).
 */
import { json, startSimulationServer, tokensOf, type Delivery, type Handling, type ServedUsage, type SimulationServer } from './http.ts';

export interface SimToolUse {
  /** Omitted: the block has no id. */
  id?: string;
  /** Omitted: the block has no name. */
  name?: string;
  /** An object, or a string sent as is (a proxy that passes the model's raw text, possibly broken JSON). */
  input?: Record<string, unknown> | string;
}

export interface SimAnthropicUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_input_tokens?: number;
  cache_creation_input_tokens?: number;
}

export type AnthropicStep =
  | {
      message: { text?: string | null; tool_uses?: SimToolUse[] };
      usage?: SimAnthropicUsage | null;
      stop_reason?: string;
      slow?: { chunks: number; delayMs: number };
    }
  | { status: number; error?: string; errorType?: string; headers?: Record<string, string> }
  | { notAMessage: true; usage?: SimAnthropicUsage | null }
  | { body: string; status?: number; contentType?: string }
  | { hang: true }
  | { reset: true };

export type AnthropicScript = AnthropicStep[] | ((index: number, body: any) => AnthropicStep);

export interface AnthropicSimulationOptions {
  /** Answer 401 to requests without this `x-api-key`. */
  apiKey?: string;
}

const TOP_LEVEL = new Set(['model', 'messages', 'max_tokens', 'system', 'tools', 'tool_choice', 'temperature', 'top_p', 'top_k', 'stop_sequences', 'metadata', 'stream', 'thinking', 'service_tier']);

const ERROR_TYPES: Record<number, string> = { 400: 'invalid_request_error', 401: 'authentication_error', 403: 'permission_error', 404: 'not_found_error', 413: 'request_too_large', 429: 'rate_limit_error', 500: 'api_error', 529: 'overloaded_error' };

export async function startAnthropicSimulation(script: AnthropicScript, options: AnthropicSimulationOptions = {}): Promise<SimulationServer> {
  let index = 0;
  return startSimulationServer('/v1', (request): Handling => {
    const fail = (status: number, message: string, type = ERROR_TYPES[status] ?? 'api_error', headers: Record<string, string> = {}) =>
      json(status, { type: 'error', error: { type, message } }, { headers: { 'request-id': `req_sim_${index}`, ...headers } });
    if (request.method !== 'POST' || request.path !== '/v1/messages') return fail(404, `Not found: ${request.method} ${request.path}`);
    if (options.apiKey !== undefined && request.headers['x-api-key'] !== options.apiKey) return fail(401, 'invalid x-api-key');
    if (typeof request.headers['anthropic-version'] !== 'string') return fail(400, 'anthropic-version: header is required');
    if (request.body === undefined) return fail(400, 'There was an issue with the request body: not valid JSON');
    const problem = protocolProblem(request.body);
    if (problem) return fail(400, problem);

    const n = index++;
    const step = typeof script === 'function' ? script(n, request.body) : script[n];
    if (step === undefined) return fail(500, `simulation: the script has no step ${n}`);
    if ('hang' in step || 'reset' in step) return step;
    if ('body' in step) return { status: step.status ?? 200, headers: { 'content-type': step.contentType ?? 'text/html' }, body: step.body };
    if ('status' in step) return fail(step.status, step.error ?? `simulated HTTP ${step.status}`, step.errorType, step.headers);
    const envelope = { id: `msg_sim_${n}`, type: 'message', role: 'assistant', model: request.body.model };
    if ('notAMessage' in step) {
      const usage = usageFor(step.usage, request.body, '');
      return respond({ ...envelope, type: 'completion', completion: '', ...(usage ? { usage: wireUsage(usage) } : {}) }, usage);
    }
    const uses = step.message.tool_uses ?? [];
    const content = [
      ...(step.message.text ? [{ type: 'text', text: step.message.text }] : []),
      ...uses.map((use) => ({ type: 'tool_use', ...(use.id !== undefined ? { id: use.id } : {}), ...(use.name !== undefined ? { name: use.name } : {}), input: use.input ?? {} })),
    ];
    const usage = usageFor(step.usage, request.body, content);
    return respond(
      { ...envelope, content, stop_reason: step.stop_reason ?? (uses.length > 0 ? 'tool_use' : 'end_turn'), stop_sequence: null, ...(usage ? { usage: wireUsage(usage) } : {}) },
      usage,
      step.slow,
    );
  });
}

function respond(body: unknown, usage: ServedUsage | undefined, slow?: Delivery['slow']): Delivery {
  return json(200, body, { model: true, ...(usage ? { usage } : {}), ...(slow ? { slow } : {}) });
}

function usageFor(given: SimAnthropicUsage | null | undefined, body: any, output: unknown): ServedUsage | undefined {
  if (given === null) return undefined;
  let input: number;
  let read: number;
  let write: number;
  let completion: number;
  if (given) {
    input = given.input_tokens;
    read = given.cache_read_input_tokens ?? 0;
    write = given.cache_creation_input_tokens ?? 0;
    completion = given.output_tokens;
  } else {
    const prompt = tokensOf(body.system ?? '') + tokensOf(body.messages) + tokensOf(body.tools ?? []);
    const later = body.messages.some((m: { role: string }) => m.role === 'assistant');
    read = later ? Math.floor(prompt / 2) : 0;
    write = later ? 0 : Math.floor(prompt / 4);
    input = prompt - read - write;
    completion = Math.max(1, tokensOf(output));
  }
  return { prompt_tokens: input + read + write, completion_tokens: completion, cached_tokens: read, cache_write_tokens: write };
}

function wireUsage(usage: ServedUsage) {
  return {
    input_tokens: usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens,
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: usage.cache_write_tokens,
    cache_read_input_tokens: usage.cached_tokens,
  };
}

/** The request rules the Messages API answers with 400 invalid_request_error. */
function protocolProblem(body: any): string | undefined {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) return 'the request body must be a JSON object';
  for (const key of Object.keys(body)) if (!TOP_LEVEL.has(key)) return `${key}: Extra inputs are not permitted`;
  if (typeof body.model !== 'string' || !body.model) return 'model: Field required';
  if (!Number.isInteger(body.max_tokens) || body.max_tokens < 1) return 'max_tokens: Field required (a positive integer)';
  if (body.temperature !== undefined && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 1)) return 'temperature: Input should be less than or equal to 1';
  if (body.top_p !== undefined && !(typeof body.top_p === 'number' && body.top_p >= 0 && body.top_p <= 1)) return 'top_p: Input should be between 0 and 1';
  if (body.system !== undefined && typeof body.system !== 'string' && !Array.isArray(body.system)) return 'system: Input should be a valid string or list of text blocks';
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return 'tools: Input should be a valid list';
    for (const [i, tool] of body.tools.entries()) {
      if (typeof tool?.name !== 'string' || !/^[a-zA-Z0-9_-]{1,128}$/.test(tool.name)) return `tools.${i}.name: String should match pattern '^[a-zA-Z0-9_-]{1,128}$'`;
      if (tool.input_schema?.type !== 'object') return `tools.${i}.input_schema: the input schema must be of type object`;
      for (const key of Object.keys(tool)) if (!['name', 'description', 'input_schema', 'cache_control', 'type'].includes(key)) return `tools.${i}.${key}: Extra inputs are not permitted`;
    }
  }
  if (!Array.isArray(body.messages) || body.messages.length === 0) return 'messages: at least one message is required';
  if (body.messages[0]?.role !== 'user') return 'messages: first message must use the "user" role';
  let pending: Set<string> = new Set();
  for (const [i, message] of body.messages.entries()) {
    if (message?.role !== 'user' && message?.role !== 'assistant') return `messages.${i}.role: Input should be 'user' or 'assistant'`;
    const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
    if (!Array.isArray(blocks)) return `messages.${i}.content: Input should be a valid string or list`;
    if (blocks.length === 0 && i < body.messages.length - 1) return `messages.${i}: all messages must have non-empty content except for the optional final assistant message`;
    const results = new Set<string>();
    const uses = new Set<string>();
    for (const [j, block] of blocks.entries()) {
      if (block?.type === 'text') {
        if (typeof block.text !== 'string' || block.text === '') return `messages.${i}.content.${j}.text: text content blocks must be non-empty`;
      } else if (block?.type === 'tool_use') {
        if (message.role !== 'assistant') return `messages.${i}.content.${j}: tool_use blocks are only allowed in assistant messages`;
        if (typeof block.id !== 'string' || !/^[a-zA-Z0-9_-]+$/.test(block.id)) return `messages.${i}.content.${j}.tool_use.id: String should match pattern '^[a-zA-Z0-9_-]+$'`;
        if (typeof block.name !== 'string' || !block.name) return `messages.${i}.content.${j}.tool_use.name: Field required`;
        if (typeof block.input !== 'object' || block.input === null || Array.isArray(block.input)) return `messages.${i}.content.${j}.tool_use.input: Input should be a valid dictionary`;
        if (uses.has(block.id)) return `messages.${i}: tool_use ids must be unique`;
        uses.add(block.id);
      } else if (block?.type === 'tool_result') {
        if (message.role !== 'user') return `messages.${i}.content.${j}: tool_result blocks are only allowed in user messages`;
        if (!pending.has(block.tool_use_id)) return `messages.${i}.content.${j}: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
        if (block.content !== undefined && typeof block.content !== 'string' && !Array.isArray(block.content)) return `messages.${i}.content.${j}.content: Input should be a valid string or list`;
        results.add(block.tool_use_id);
      } else return `messages.${i}.content.${j}.type: Input tag '${block?.type}' does not match any of the expected tags`;
    }
    const missing = [...pending].filter((id) => !results.has(id));
    if (missing.length > 0) return `messages.${i - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${missing.join(', ')}. Each \`tool_use\` block must have a corresponding \`tool_result\` block in the next message.`;
    pending = uses;
  }
  if (pending.size > 0) return `messages.${body.messages.length - 1}: \`tool_use\` ids were found without \`tool_result\` blocks immediately after: ${[...pending].join(', ')}`;
  return undefined;
}
