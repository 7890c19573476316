/**
 * The `openai` agent: the shared tool-calling loop (model-loop.ts) against any OpenAI-compatible
 * chat-completions endpoint (api.openai.com, or a local server such as llama.cpp, vLLM or Ollama).
 *
 * Request: `POST <base_url>/chat/completions` with `model`, `messages` (system prompt, goal, then the
 * conversation), the gateway's tools as `functions` with `tool_choice: auto`, and the sampling settings
 * (`temperature`, `top_p`, `max_tokens`, `seed`) plus `extra_body`. `Authorization: Bearer <key>` when a key
 * is set (local servers need none).
 *
 * Response: `choices[0].message` with `tool_calls` (ids, names and `arguments` as a JSON string, or as an
 * object as some local servers send them; the legacy `function_call` too), or calls written as text in the
 * content; `usage.prompt_tokens`, `completion_tokens`, `prompt_tokens_details.cached_tokens`.
 * `finish_reason: content_filter` (or an error whose code says content filter) is a refusal, not retried;
 * `choices: []` is retried, then a `model-empty-response` error.
 */
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Agent } from './agent.ts';
import { AgentError } from './agent.ts';
import { count, createModelAgent, isRecord, ResponseProblem, textAnswers, type CallAnswer, type ModelRuntime, type ProtocolAdapter, type ProtocolTurn } from './model-loop.ts';
import type { ModelAgentSettings } from './settings.ts';
import { argumentsOf, type AttemptedCall, type TextToolCallFormat } from './tool-call-formats.ts';
import type { TokenUsage } from './usage.ts';

export { DEFAULT_SYSTEM_PROMPT } from './settings.ts';

// ---- The slice of the chat-completions protocol the loop uses.
interface ToolCallMessage {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
}
export type ChatMessage =
  | { role: 'system' | 'user'; content: string }
  | { role: 'assistant'; content: string | null; tool_calls?: ToolCallMessage[] }
  | { role: 'tool'; tool_call_id: string; content: string };

export function openAIAdapter(settings: ModelAgentSettings, apiKey: string | undefined): ProtocolAdapter<ChatMessage> {
  const url = `${settings.base_url.replace(/\/+$/, '')}/chat/completions`;
  return {
    protocol: 'openai',
    url,
    headers: { 'content-type': 'application/json', accept: 'application/json', ...(apiKey ? { authorization: `Bearer ${apiKey}` } : {}) },
    initial: (goal) => [
      { role: 'system', content: settings.system_prompt },
      { role: 'user', content: goal },
    ],
    body(messages, tools, seed) {
      const functions = tools.map(openAIFunction);
      return {
        model: settings.model,
        messages,
        ...(functions.length > 0 ? { tools: functions, tool_choice: 'auto' } : {}),
        ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
        ...(settings.top_p !== undefined ? { top_p: settings.top_p } : {}),
        ...(settings.max_tokens !== undefined ? { max_tokens: settings.max_tokens } : {}),
        ...(seed !== undefined ? { seed } : {}),
        ...settings.extra_body,
      };
    },
    usage: openAIUsage,
    turn: openAITurn,
    refusal(_status, json) {
      const error = isRecord(json) && isRecord(json.error) ? json.error : undefined;
      const code = `${error?.code ?? ''} ${error?.type ?? ''}`;
      return /content_filter|content_policy/i.test(code) ? String(error?.message ?? code.trim()) : undefined;
    },
    reply(messages, turn, answers, textFormat) {
      replyOpenAI(messages, turn, answers, textFormat);
    },
  };
}

export function openAIFunction(tool: Tool) {
  return {
    type: 'function' as const,
    function: { name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), parameters: tool.inputSchema },
  };
}

export function openAIUsage(json: unknown): TokenUsage | null {
  const usage = isRecord(json) && isRecord(json.usage) ? json.usage : undefined;
  if (!usage || (typeof usage.prompt_tokens !== 'number' && typeof usage.completion_tokens !== 'number')) return null;
  const details = isRecord(usage.prompt_tokens_details) ? usage.prompt_tokens_details : {};
  return { prompt_tokens: count(usage.prompt_tokens), completion_tokens: count(usage.completion_tokens), cached_tokens: count(details.cached_tokens), cache_write_tokens: 0 };
}

function openAITurn(json: unknown): ProtocolTurn {
  if (!isRecord(json)) throw new ResponseProblem('model-bad-response', `the response is not a JSON object: ${JSON.stringify(json)?.slice(0, 200)}`);
  if (!Array.isArray(json.choices)) {
    const error = isRecord(json.error) ? `: ${String(json.error.message ?? JSON.stringify(json.error))}` : '';
    throw new ResponseProblem('model-bad-response', `the response has no choices${error}`);
  }
  if (json.choices.length === 0) throw new ResponseProblem('model-empty-response', 'the response has no choices (choices: [])');
  const choice = json.choices[0];
  if (!isRecord(choice) || !isRecord(choice.message)) throw new ResponseProblem('model-bad-response', 'choices[0] has no message');
  if (choice.finish_reason === 'content_filter') throw new AgentError('model-content-filter', 'the endpoint stopped the response by content filter (finish_reason: content_filter)');
  const message = choice.message;
  const native: AttemptedCall[] = [];
  if (Array.isArray(message.tool_calls)) {
    for (const raw of message.tool_calls) native.push(nativeCall(raw));
  } else if (isRecord(message.function_call)) native.push(nativeCall({ function: message.function_call }));
  const content = contentText(message.content);
  const refusal = typeof message.refusal === 'string' ? message.refusal : '';
  return { text: content || refusal, native };
}

/** One entry of `tool_calls`: `{ id, type, function: { name, arguments } }`, arguments a JSON string or an object. */
function nativeCall(raw: unknown): AttemptedCall {
  const call = isRecord(raw) ? raw : {};
  const fn = isRecord(call.function) ? call.function : {};
  const id = typeof call.id === 'string' && call.id ? call.id : undefined;
  const name = typeof fn.name === 'string' && fn.name.trim() ? fn.name.trim() : undefined;
  const rawArgs = typeof fn.arguments === 'string' ? fn.arguments : JSON.stringify(fn.arguments ?? {});
  const base: AttemptedCall = { format: 'native', raw: rawArgs, ...(id ? { id } : {}), ...(name ? { name } : {}) };
  if (!name) return { ...base, problem: { code: 'no-name', message: 'the tool call has no function name' } };
  const args = argumentsOf(fn.arguments);
  return 'problem' in args ? { ...base, problem: args.problem } : { ...base, arguments: args.value };
}

/** Chat content is a string, or (some servers) an array of parts. */
function contentText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (typeof part === 'string' ? part : isRecord(part) && typeof part.text === 'string' ? part.text : '')).join('');
  return '';
}

/**
 * Native calls: the assistant message with its named calls (arguments as the JSON we parsed, `{}` for ones
 * that did not parse, so strict servers accept the history), a `tool` message per named call, and a user
 * message for calls without a name (no tool message can answer them). Text calls: the assistant's text as
 * it wrote it, and the results in one user message.
 */
function replyOpenAI(messages: ChatMessage[], turn: ProtocolTurn, answers: readonly CallAnswer[], textFormat: TextToolCallFormat | undefined): void {
  if (textFormat) {
    messages.push({ role: 'assistant', content: turn.text });
    messages.push({ role: 'user', content: textAnswers(textFormat, answers) });
    return;
  }
  const named = answers.filter((a) => a.call.name !== undefined);
  const unnamed = answers.filter((a) => a.call.name === undefined);
  messages.push(
    named.length > 0
      ? {
          role: 'assistant',
          content: turn.text || null,
          tool_calls: named.map((a) => ({ id: a.call.id, type: 'function', function: { name: a.call.name!, arguments: JSON.stringify(a.call.arguments ?? {}) } })),
        }
      : { role: 'assistant', content: turn.text },
  );
  for (const a of named) messages.push({ role: 'tool', tool_call_id: a.call.id, content: a.content });
  if (unnamed.length > 0) messages.push({ role: 'user', content: unnamed.map((a) => a.content).join('\n') });
}

export function createOpenAIAgent(settings: ModelAgentSettings, runtime: ModelRuntime = {}): Agent {
  return createModelAgent(settings, runtime, openAIAdapter(settings, runtime.apiKey));
}
