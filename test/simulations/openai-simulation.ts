/**
 * A faithful local SIMULATION of an OpenAI-compatible chat-completions endpoint (api.openai.com, or llama.cpp,
 * vLLM, Ollama behind `/v1`), for testing the `openai` agent: no hosted model can be reached here, so this
 * server stands in for one. It accepts `POST /v1/chat/completions`, checks what a real endpoint checks (a
 * `model`, non-empty `messages`, valid tool definitions and sampling fields, every `role: tool` message
 * answering a `tool_calls` id of the assistant message before it, every call answered before the
 * conversation goes on, named calls in the history) and answers with the next scripted step in the
 * protocol's response shape (`chat.completion`, `choices[0].message`, `finish_reason`, `usage` with
 * `prompt_tokens_details.cached_tokens`). Errors use the protocol's `{ error: { message, type, code } }` body.
 *
 * A step scripts any behaviour real endpoints show: tool calls native or written as text in the content,
 * arguments as a JSON string (possibly broken) or as an object, calls without an id or a name, null content,
 * `finish_reason: content_filter`, `choices: []`, an HTTP error (429 with Retry-After, 5xx), a body that is not
 * JSON, a slow stream, a hang, a reset connection, usage present, absent or given. Unless a step gives its
 * usage, a response reports a deterministic count (four characters a token; from the second turn of a
 * conversation on, half the prompt is reported as cached). Every request is recorded, and the usage of every
 * delivered response is summed (`served`).
 */
import { json, startSimulationServer, tokensOf, type Delivery, type Handling, type RecordedRequest, type ServedUsage, type SimulationServer } from './http.ts';

export type { RecordedRequest };

export interface SimToolCall {
  /** Omitted: the call has no id (some local servers). */
  id?: string;
  /** Omitted: the call has no function name. */
  name?: string;
  /** An object is serialized as the protocol does; a string is sent as is (to script malformed JSON). */
  arguments?: Record<string, unknown> | string;
  /** Send `arguments` as a JSON object rather than a string, as some local servers do. */
  objectArguments?: boolean;
}

export interface SimUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

export type ScriptStep =
  | {
      message: { content?: string | null; tool_calls?: SimToolCall[] };
      /** null: the response carries no usage; omitted: a count of the request and the message. */
      usage?: SimUsage | null;
      finish_reason?: string;
      slow?: { chunks: number; delayMs: number };
    }
  | { status: number; error?: string; code?: string; headers?: Record<string, string> }
  | { emptyChoices: true; usage?: SimUsage | null }
  | { body: string; status?: number; contentType?: string }
  | { hang: true }
  | { reset: true };

export type Script = ScriptStep[] | ((index: number, body: any) => ScriptStep);

export type OpenAISimulation = SimulationServer;

/** `script` is a list consumed in order, or a function of the request's index (and body) for endless scripts. */
export async function startOpenAISimulation(script: Script): Promise<OpenAISimulation> {
  let completions = 0;
  return startSimulationServer('/v1', (request): Handling => {
    const fail = (status: number, message: string, type: string, code: string | null = null, headers: Record<string, string> = {}) =>
      json(status, { error: { message, type, param: null, code } }, { headers });
    if (request.method !== 'POST' || request.path !== '/v1/chat/completions') return fail(404, `Unknown request URL: ${request.method} ${request.path}`, 'invalid_request_error');
    if (request.body === undefined) return fail(400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
    const problem = protocolProblem(request.body);
    if (problem) return fail(400, problem, 'invalid_request_error');

    const index = completions++;
    const step = typeof script === 'function' ? script(index, request.body) : script[index];
    if (step === undefined) return fail(500, `simulation: the script has no step ${index}`, 'server_error');
    if ('hang' in step || 'reset' in step) return step;
    if ('body' in step) return { status: step.status ?? 200, headers: { 'content-type': step.contentType ?? 'text/html' }, body: step.body };
    if ('status' in step) {
      const type = step.status === 429 ? 'rate_limit_exceeded' : step.status >= 500 ? 'server_error' : 'invalid_request_error';
      return fail(step.status, step.error ?? `simulated HTTP ${step.status}`, type, step.code ?? null, step.headers);
    }
    const envelope = { id: `chatcmpl-sim-${index}`, object: 'chat.completion', created: 1_700_000_000 + index, model: request.body.model, system_fingerprint: 'fp_simulation' };
    if ('emptyChoices' in step) {
      const usage = usageFor(step.usage, request.body, []);
      return respond({ ...envelope, choices: [], ...(usage ? { usage: wireUsage(usage) } : {}) }, usage);
    }
    const calls = step.message.tool_calls ?? [];
    const message = {
      role: 'assistant',
      content: step.message.content === undefined ? (calls.length > 0 ? null : '') : step.message.content,
      ...(calls.length > 0 ? { tool_calls: calls.map(wireCall) } : {}),
      refusal: null,
    };
    const usage = usageFor(step.usage, request.body, message);
    return respond(
      {
        ...envelope,
        choices: [{ index: 0, message, logprobs: null, finish_reason: step.finish_reason ?? (calls.length > 0 ? 'tool_calls' : 'stop') }],
        ...(usage ? { usage: wireUsage(usage) } : {}),
      },
      usage,
      step.slow,
    );
  });
}

function respond(body: unknown, usage: ServedUsage | undefined, slow?: Delivery['slow']): Delivery {
  return json(200, body, { model: true, ...(usage ? { usage } : {}), ...(slow ? { slow } : {}) });
}

function wireCall(call: SimToolCall) {
  const args = call.arguments ?? {};
  return {
    ...(call.id !== undefined ? { id: call.id } : {}),
    type: 'function',
    function: {
      ...(call.name !== undefined ? { name: call.name } : {}),
      arguments: call.objectArguments || typeof args === 'string' ? args : JSON.stringify(args),
    },
  };
}

function usageFor(given: SimUsage | null | undefined, body: any, output: unknown): ServedUsage | undefined {
  if (given === null) return undefined;
  if (given) return { prompt_tokens: given.prompt_tokens, completion_tokens: given.completion_tokens, cached_tokens: given.cached_tokens ?? 0, cache_write_tokens: 0 };
  const prompt = tokensOf(body.messages) + tokensOf(body.tools ?? []);
  const assistantTurns = body.messages.filter((m: { role: string }) => m.role === 'assistant').length;
  return { prompt_tokens: prompt, completion_tokens: Math.max(1, tokensOf(output)), cached_tokens: assistantTurns > 0 ? Math.floor(prompt / 2) : 0, cache_write_tokens: 0 };
}

function wireUsage(usage: ServedUsage) {
  return {
    prompt_tokens: usage.prompt_tokens,
    completion_tokens: usage.completion_tokens,
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
    prompt_tokens_details: { cached_tokens: usage.cached_tokens },
  };
}

/** The request-shape rules a real chat-completions endpoint answers with 400. */
function protocolProblem(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'The request body must be a JSON object.';
  if (typeof body.model !== 'string' || !body.model) return 'you must provide a model parameter';
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "'messages' must be a non-empty array";
  if (body.temperature !== undefined && !(typeof body.temperature === 'number' && body.temperature >= 0 && body.temperature <= 2)) return `Invalid 'temperature': ${body.temperature}`;
  if (body.top_p !== undefined && !(typeof body.top_p === 'number' && body.top_p >= 0 && body.top_p <= 1)) return `Invalid 'top_p': ${body.top_p}`;
  if (body.seed !== undefined && !Number.isInteger(body.seed)) return `Invalid 'seed': expected an integer`;
  if (body.max_tokens !== undefined && !(Number.isInteger(body.max_tokens) && body.max_tokens > 0)) return `Invalid 'max_tokens': expected a positive integer`;
  if (body.tools !== undefined) {
    if (!Array.isArray(body.tools)) return "'tools' must be an array";
    for (const tool of body.tools) {
      if (tool?.type !== 'function' || typeof tool.function?.name !== 'string') return "each tool must be { type: 'function', function: { name, ... } }";
      if (!/^[a-zA-Z0-9_-]{1,64}$/.test(tool.function.name)) return `Invalid 'tools.function.name': '${tool.function.name}'`;
      if (tool.function.parameters !== undefined && tool.function.parameters?.type !== 'object') {
        return `Invalid schema for function '${tool.function.name}': schema must be a JSON Schema of 'type: "object"'`;
      }
    }
  }
  let open = new Set<string>();
  for (const [i, message] of body.messages.entries()) {
    const role = message?.role;
    if (!['system', 'user', 'assistant', 'tool', 'developer'].includes(role)) return `Invalid value for 'messages[${i}].role'`;
    if (role === 'tool') {
      if (typeof message.tool_call_id !== 'string' || !open.has(message.tool_call_id)) {
        return `messages[${i}]: messages with role 'tool' must be a response to a preceding message with 'tool_calls'`;
      }
      if (typeof message.content !== 'string') return `messages[${i}].content must be a string`;
      open.delete(message.tool_call_id);
      continue;
    }
    if (open.size > 0) {
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing: ${[...open].join(', ')}`;
    }
    if (role === 'assistant' && Array.isArray(message.tool_calls)) {
      open = new Set(message.tool_calls.map((call: any) => call.id));
      if (open.size !== message.tool_calls.length) return `messages[${i}].tool_calls: ids must be unique strings`;
      for (const call of message.tool_calls) {
        if (typeof call.id !== 'string' || !call.id) return `messages[${i}].tool_calls: each call needs an id`;
        if (call.type !== 'function' || typeof call.function?.arguments !== 'string') {
          return `messages[${i}].tool_calls: each call must be { id, type: 'function', function: { name, arguments: string } }`;
        }
        if (typeof call.function.name !== 'string' || !/^[a-zA-Z0-9_-]{1,64}$/.test(call.function.name)) return `Invalid 'messages[${i}].tool_calls.function.name': '${call.function.name}'`;
      }
    } else if (typeof message.content !== 'string') {
      return `messages[${i}].content must be a string`;
    }
  }
  if (open.size > 0) {
    return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. Missing: ${[...open].join(', ')}`;
  }
  return undefined;
}
