/**
 * A faithful local simulation of the OpenAI chat-completions protocol, for testing the `openai` agent: a
 * hosted LLM cannot exist in the test environment, so this server stands in for one. It listens on
 * 127.0.0.1 (random port), accepts `POST /v1/chat/completions` with the request shape the protocol defines,
 * checks the rules a real endpoint enforces (a `model`, non-empty `messages`, every `role: tool` message
 * answering a `tool_calls` id of the assistant message before it, every tool call answered before the
 * conversation goes on), and replies with the next scripted assistant message in the protocol's response
 * shape (`chat.completion`, `choices[0].message` with `tool_calls` whose `arguments` are JSON strings,
 * `finish_reason`, `usage`). Errors use the protocol's `{ error: { message, type } }` body. A step of the
 * script may instead be an HTTP error (a 429 with `Retry-After`, a 503 ...) or a request that never gets an
 * answer. Every request received is recorded for assertions.
 */
import { createServer, type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedToolCall {
  id: string;
  name: string;
  /** An object is serialized as the protocol does; a string is sent as is (to script malformed JSON). */
  arguments: Record<string, unknown> | string;
}

export type ScriptStep =
  | { message: { content?: string | null; tool_calls?: ScriptedToolCall[] } }
  | { status: number; error?: string; headers?: Record<string, string> }
  | { hang: true };

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when it was not JSON). */
  body: any;
}

export interface ScriptedOpenAIServer {
  /** Base URL to give the agent, e.g. http://127.0.0.1:40123/v1 */
  baseUrl: string;
  requests: RecordedRequest[];
  close(): Promise<void>;
}

/** `script` is a list consumed in order, or a function of the request's index for endless scripts. */
export async function startScriptedOpenAIServer(
  script: ScriptStep[] | ((index: number, body: any) => ScriptStep),
): Promise<ScriptedOpenAIServer> {
  const requests: RecordedRequest[] = [];
  let completions = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0] ?? '/';
      requests.push({ method: req.method ?? '', path, headers: req.headers, body });
      const fail = (status: number, message: string, type: string, headers: Record<string, string> = {}) => {
        res.writeHead(status, { 'content-type': 'application/json', ...headers });
        res.end(JSON.stringify({ error: { message, type, param: null, code: null } }));
      };
      if (req.method !== 'POST' || path !== '/v1/chat/completions') {
        return fail(404, `Unknown request URL: ${req.method} ${path}`, 'invalid_request_error');
      }
      if (body === undefined) return fail(400, 'We could not parse the JSON body of your request.', 'invalid_request_error');
      const problem = protocolProblem(body);
      if (problem) return fail(400, problem, 'invalid_request_error');

      const index = completions++;
      const step = typeof script === 'function' ? script(index, body) : script[index];
      if (step === undefined) return fail(500, `scripted server: the script has no step ${index}`, 'server_error');
      if ('hang' in step) return; // never answered: the client must give up on its own
      if ('status' in step) {
        const type = step.status === 429 ? 'rate_limit_exceeded' : 'server_error';
        return fail(step.status, step.error ?? `scripted HTTP ${step.status}`, type, step.headers);
      }
      const calls = step.message.tool_calls ?? [];
      const message = {
        role: 'assistant',
        content: step.message.content ?? null,
        ...(calls.length > 0
          ? {
              tool_calls: calls.map((call) => ({
                id: call.id,
                type: 'function',
                function: {
                  name: call.name,
                  arguments: typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments),
                },
              })),
            }
          : {}),
        refusal: null,
      };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id: `chatcmpl-scripted-${index}`,
          object: 'chat.completion',
          created: 1_700_000_000 + index,
          model: body.model,
          choices: [{ index: 0, message, logprobs: null, finish_reason: calls.length > 0 ? 'tool_calls' : 'stop' }],
          usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The request-shape rules a real chat-completions endpoint answers with 400. */
function protocolProblem(body: any): string | undefined {
  if (typeof body !== 'object' || body === null) return 'The request body must be a JSON object.';
  if (typeof body.model !== 'string' || !body.model) return "you must provide a model parameter";
  if (!Array.isArray(body.messages) || body.messages.length === 0) return "'messages' must be a non-empty array";
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
      for (const call of message.tool_calls) {
        if (call.type !== 'function' || typeof call.function?.arguments !== 'string') {
          return `messages[${i}].tool_calls: each call must be { id, type: 'function', function: { name, arguments: string } }`;
        }
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
