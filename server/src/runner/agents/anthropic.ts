/**
 * The `anthropic` agent: the shared tool-calling loop (model-loop.ts) against the Anthropic Messages API
 * (api.anthropic.com, or a server that speaks the same protocol).
 *
 * Request: `POST <base_url>/messages` (base https://api.anthropic.com/v1) with headers `x-api-key` and
 * `anthropic-version: 2023-06-01`; body `model`, `max_tokens` (required by the API: 4096 unless set),
 * `system`, `messages` (user/assistant turns of content blocks), the gateway's tools as
 * `{ name, description, input_schema }`, `temperature`, `top_p` and `extra_body`. The Messages API has no
 * sampling seed and refuses unknown fields, so the seed is recorded but not sent.
 *
 * Response: `content` blocks (`text`, `tool_use` with `id`, `name`, `input`), `stop_reason` (`end_turn`,
 * `tool_use`, `max_tokens`, `refusal`), `usage` (`input_tokens`, `output_tokens`,
 * `cache_read_input_tokens`, `cache_creation_input_tokens`). Tool results go back as `tool_result` blocks
 * (first in the next user message, `is_error` for errors). HTTP 529 (overloaded) is retried like a 5xx;
 * `stop_reason: refusal` is a content-filter refusal.
 */
import type { Agent } from './agent.ts';
import { AgentError } from './agent.ts';
import { count, createModelAgent, isRecord, ResponseProblem, textAnswers, type CallAnswer, type ModelRuntime, type ProtocolAdapter, type ProtocolTurn } from './model-loop.ts';
import type { ModelAgentSettings } from './settings.ts';
import { argumentsOf, type AttemptedCall, type TextToolCallFormat } from './tool-call-formats.ts';
import type { TokenUsage } from './usage.ts';

export const ANTHROPIC_VERSION = '2023-06-01';

type Block =
  | { type: 'text'; text: string }
  | { type: 'tool_use'; id: string; name: string; input: Record<string, unknown> }
  | { type: 'tool_result'; tool_use_id: string; content: string; is_error?: boolean };
export interface AnthropicMessage {
  role: 'user' | 'assistant';
  content: string | Block[];
}

export function anthropicAdapter(settings: ModelAgentSettings, apiKey: string | undefined): ProtocolAdapter<AnthropicMessage> {
  return {
    protocol: 'anthropic',
    url: `${settings.base_url.replace(/\/+$/, '')}/messages`,
    headers: { 'content-type': 'application/json', accept: 'application/json', 'anthropic-version': ANTHROPIC_VERSION, ...(apiKey ? { 'x-api-key': apiKey } : {}) },
    initial: (goal) => [{ role: 'user', content: goal }],
    body(messages, tools) {
      return {
        model: settings.model,
        max_tokens: settings.max_tokens ?? 4096,
        system: settings.system_prompt,
        messages,
        ...(tools.length > 0
          ? { tools: tools.map((tool) => ({ name: tool.name, ...(tool.description !== undefined ? { description: tool.description } : {}), input_schema: tool.inputSchema })) }
          : {}),
        ...(settings.temperature !== undefined ? { temperature: settings.temperature } : {}),
        ...(settings.top_p !== undefined ? { top_p: settings.top_p } : {}),
        ...settings.extra_body,
      };
    },
    usage: anthropicUsage,
    turn: anthropicTurn,
    reply: replyAnthropic,
  };
}

export function anthropicUsage(json: unknown): TokenUsage | null {
  const usage = isRecord(json) && isRecord(json.usage) ? json.usage : undefined;
  if (!usage || (typeof usage.input_tokens !== 'number' && typeof usage.output_tokens !== 'number')) return null;
  const read = count(usage.cache_read_input_tokens);
  const write = count(usage.cache_creation_input_tokens);
  return { prompt_tokens: count(usage.input_tokens) + read + write, completion_tokens: count(usage.output_tokens), cached_tokens: read, cache_write_tokens: write };
}

function anthropicTurn(json: unknown): ProtocolTurn {
  if (!isRecord(json)) throw new ResponseProblem('model-bad-response', 'the response is not a JSON object');
  if (json.type === 'error' || !Array.isArray(json.content)) {
    const error = isRecord(json.error) ? `: ${String(json.error.message ?? JSON.stringify(json.error))}` : '';
    throw new ResponseProblem('model-bad-response', `the response is not a message${error}`);
  }
  if (json.stop_reason === 'refusal') throw new AgentError('model-content-filter', 'the model refused (stop_reason: refusal)');
  const texts: string[] = [];
  const native: AttemptedCall[] = [];
  for (const block of json.content) {
    if (!isRecord(block)) continue;
    if (block.type === 'text' && typeof block.text === 'string') texts.push(block.text);
    else if (block.type === 'tool_use') native.push(toolUse(block));
  }
  return { text: texts.join(''), native };
}

function toolUse(block: Record<string, unknown>): AttemptedCall {
  const id = typeof block.id === 'string' && block.id ? block.id : undefined;
  const name = typeof block.name === 'string' && block.name.trim() ? block.name.trim() : undefined;
  const raw = typeof block.input === 'string' ? block.input : JSON.stringify(block.input ?? {});
  const base: AttemptedCall = { format: 'native', raw, ...(id ? { id } : {}), ...(name ? { name } : {}) };
  if (!name) return { ...base, problem: { code: 'no-name', message: 'the tool call has no function name' } };
  const args = argumentsOf(block.input);
  return 'problem' in args ? { ...base, problem: args.problem } : { ...base, arguments: args.value };
}

/**
 * Native calls: the assistant's text and its named `tool_use` blocks (input `{}` for ones that did not parse),
 * then one user message with a `tool_result` per named call first and a text block for calls without a name.
 * Text calls: the assistant's text as written, and the results as a user text block.
 */
function replyAnthropic(messages: AnthropicMessage[], turn: ProtocolTurn, answers: readonly CallAnswer[], textFormat: TextToolCallFormat | undefined): void {
  // The API refuses empty text blocks and empty assistant turns.
  const said: Block[] = turn.text.trim() ? [{ type: 'text', text: turn.text }] : [];
  if (textFormat) {
    messages.push({ role: 'assistant', content: said.length ? said : [{ type: 'text', text: '(tool calls)' }] });
    messages.push({ role: 'user', content: [{ type: 'text', text: textAnswers(textFormat, answers) }] });
    return;
  }
  const named = answers.filter((a) => a.call.name !== undefined);
  const unnamed = answers.filter((a) => a.call.name === undefined);
  const uses: Block[] = named.map((a) => ({ type: 'tool_use', id: a.call.id, name: a.call.name!, input: a.call.arguments ?? {} }));
  messages.push({ role: 'assistant', content: [...said, ...uses].length ? [...said, ...uses] : [{ type: 'text', text: '(tool call without a name)' }] });
  messages.push({
    role: 'user',
    content: [
      ...named.map((a): Block => ({ type: 'tool_result', tool_use_id: a.call.id, content: a.content, ...(a.isError ? { is_error: true } : {}) })),
      ...(unnamed.length > 0 ? [{ type: 'text' as const, text: unnamed.map((a) => a.content).join('\n') }] : []),
    ],
  });
}

export function createAnthropicAgent(settings: ModelAgentSettings, runtime: ModelRuntime = {}): Agent {
  return createModelAgent(settings, runtime, anthropicAdapter(settings, runtime.apiKey));
}
