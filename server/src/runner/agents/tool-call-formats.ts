/**
 * Tool calls as models really write them. A chat endpoint may hand back its tool calls in the protocol's own
 * structure (`tool_calls`, `tool_use` blocks: the `native` format), or leave them as text in the message when
 * the server did not parse them (llama.cpp without `--jinja`, Ollama templates without tools, a model that
 * ignores its template). This module finds calls written as text in the widespread formats:
 *
 *   hermes       `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` (Hermes, Qwen 2.5/3; an unclosed
 *                last tag counts; Qwen3-Coder's `<function=name><parameter=k>v</parameter></function>` body too)
 *   llama3       Llama 3.x JSON: the whole message is `{"name": ..., "parameters": {...}}` (several joined by
 *                `;`), optionally after `<|python_tag|>`, which may also introduce a Python-style call
 *                `name(k="v")` / `name.call(k="v")`; Llama 3.2's `[name(k="v"), ...]`
 *   mistral      `[TOOL_CALLS] [{"name": ..., "arguments": {...}}]`, and the v11+ `[TOOL_CALLS]name[ARGS]{...}`
 *   fenced-json  a fenced block (```json ... ```) holding a call object or a list of them
 *
 * A call whose shape is unmistakable (a tag, a marker) but whose content is broken (JSON that does not parse,
 * no name, arguments that are not an object) is still returned, with its `problem`: the loop answers it with
 * a tool error so the model can correct itself, and counts it as malformed. An ambiguous shape that does not
 * parse (a bare `{`, a fenced block) is left as text: it may simply be the answer. `<think>` blocks are never
 * searched for calls.
 */

import { TEXT_TOOL_CALL_FORMATS, TOOL_CALL_FORMAT_OPTIONS } from '../../record/agent-settings.ts';

export { TEXT_TOOL_CALL_FORMATS, TOOL_CALL_FORMAT_OPTIONS };
export type TextToolCallFormat = (typeof TEXT_TOOL_CALL_FORMATS)[number];
/** How a call reached us: the protocol's own structure, or text in one of the formats above. */
export type ToolCallFormat = 'native' | TextToolCallFormat;
export type ToolCallFormatOption = (typeof TOOL_CALL_FORMAT_OPTIONS)[number];

export type CallProblemCode = 'no-name' | 'bad-json' | 'arguments-not-object';

/** One call the model attempted, well-formed or not. */
export interface AttemptedCall {
  format: ToolCallFormat;
  /** The protocol's call id, when it gave one (text calls and some local servers give none). */
  id?: string;
  name?: string;
  /** Set when the call is well-formed. */
  arguments?: Record<string, unknown>;
  /** What the model wrote for the arguments (or the whole call, for text formats), for error messages. */
  raw: string;
  problem?: { code: CallProblemCode; message: string };
}

export interface TextToolCalls {
  format: TextToolCallFormat;
  calls: AttemptedCall[];
}

const THINK = /<think>[\s\S]*?<\/think>/g;

/** The message without its `<think>...</think>` reasoning: what is searched for calls and kept as an answer. */
export function withoutThinking(text: string): string {
  return text.replace(THINK, '').trim();
}

/**
 * The calls written as text in `content`, in the first format (in the order above) that has any; undefined
 * when there are none, or when `option` is `native`. `toolNames` (the tools offered) lets a bare or fenced
 * JSON object that names one of them count even without an `arguments` key.
 */
export function extractTextToolCalls(content: string, option: ToolCallFormatOption, toolNames: ReadonlySet<string>): TextToolCalls | undefined {
  if (option === 'native') return undefined;
  const text = withoutThinking(content);
  if (!text) return undefined;
  const formats = option === 'auto' ? TEXT_TOOL_CALL_FORMATS : [option];
  for (const format of formats) {
    const calls = PARSERS[format](text, toolNames);
    if (calls.length > 0) return { format, calls };
  }
  return undefined;
}

const PARSERS: Record<TextToolCallFormat, (text: string, toolNames: ReadonlySet<string>) => AttemptedCall[]> = {
  hermes: parseHermes,
  llama3: parseLlama3,
  mistral: parseMistral,
  'fenced-json': parseFencedJson,
};

// ---------------------------------------------------------------------------------------------------------
// One call object, whatever its keys

const NAME_KEYS = ['name', 'function', 'tool', 'tool_name'] as const;
const ARGUMENT_KEYS = ['arguments', 'parameters', 'args', 'input'] as const;

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Whether a parsed JSON value looks like a call: a string name and arguments, or the name of an offered tool. */
function looksLikeCall(value: unknown, toolNames: ReadonlySet<string>): boolean {
  if (!isObject(value)) return false;
  const inner = isObject(value.function) ? value.function : value;
  const name = NAME_KEYS.map((key) => inner[key]).find((v) => typeof v === 'string');
  if (typeof name !== 'string') return false;
  return ARGUMENT_KEYS.some((key) => key in inner) || toolNames.has(name);
}

/**
 * A call from a parsed object: `{name, arguments}`, `{name, parameters}` (Llama), `{function: {name, arguments}}`
 * (an OpenAI call written out), arguments as an object or as a JSON string.
 */
export function callFromObject(value: unknown, format: ToolCallFormat, raw: string, id?: string): AttemptedCall {
  const base = { format, raw, ...(id !== undefined ? { id } : {}) };
  if (!isObject(value)) return { ...base, problem: { code: 'bad-json', message: 'a tool call must be a JSON object with a name and arguments' } };
  const inner = isObject(value.function) ? value.function : value;
  const ownId = typeof value.id === 'string' && value.id ? value.id : undefined;
  const named = NAME_KEYS.map((key) => inner[key]).find((v) => typeof v === 'string' && v.trim() !== '') as string | undefined;
  const argsKey = ARGUMENT_KEYS.find((key) => key in inner);
  const call: AttemptedCall = { ...base, ...(id === undefined && ownId ? { id: ownId } : {}), ...(named ? { name: named.trim() } : {}) };
  if (!named) return { ...call, problem: { code: 'no-name', message: 'the tool call has no function name' } };
  const args = argumentsOf(argsKey === undefined ? {} : inner[argsKey]);
  return 'problem' in args ? { ...call, problem: args.problem } : { ...call, arguments: args.value };
}

/** Arguments as an object: an object, a JSON string of one, or nothing (no arguments). */
export function argumentsOf(value: unknown): { value: Record<string, unknown> } | { problem: NonNullable<AttemptedCall['problem']> } {
  if (value === undefined || value === null || (typeof value === 'string' && value.trim() === '')) return { value: {} };
  let parsed = value;
  if (typeof value === 'string') {
    try {
      parsed = JSON.parse(value);
    } catch (error) {
      return { problem: { code: 'bad-json', message: `the arguments are not valid JSON (${(error as Error).message})` } };
    }
  }
  if (!isObject(parsed)) return { problem: { code: 'arguments-not-object', message: `the arguments must be a JSON object, not ${Array.isArray(parsed) ? 'an array' : typeof parsed}` } };
  return { value: parsed };
}

/** A call whose text cannot be parsed: what we can still tell (its name, if one is legible) and why. */
function brokenCall(format: ToolCallFormat, raw: string, reason: string): AttemptedCall {
  const name = /"(?:name|function)"\s*:\s*"([^"]+)"/.exec(raw)?.[1];
  return { format, raw, ...(name ? { name } : {}), problem: { code: 'bad-json', message: `the tool call is not valid JSON (${reason})` } };
}

function parseJson(text: string): { value: unknown } | { error: string } {
  try {
    return { value: JSON.parse(text) };
  } catch (error) {
    return { error: (error as Error).message };
  }
}

/** One JSON value (object or array) per call: an array spreads into several calls. */
function callsFromJsonText(text: string, format: ToolCallFormat): AttemptedCall[] {
  const parsed = parseJson(text);
  if ('error' in parsed) return [brokenCall(format, text, parsed.error)];
  const values = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
  return values.map((value) => callFromObject(value, format, JSON.stringify(value) ?? text));
}

// ---------------------------------------------------------------------------------------------------------
// hermes / qwen

function parseHermes(text: string): AttemptedCall[] {
  const calls: AttemptedCall[] = [];
  for (const match of text.matchAll(/<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g)) {
    const body = match[1]!.trim();
    if (body.startsWith('<function=')) calls.push(parseQwenXml(body));
    else calls.push(...callsFromJsonText(body, 'hermes'));
  }
  return calls;
}

/** Qwen3-Coder: `<function=name><parameter=key>value</parameter>...</function>`; a value is JSON when it parses. */
function parseQwenXml(body: string): AttemptedCall {
  const name = /^<function=([^>\s]+)>/.exec(body)?.[1];
  if (!name) return { format: 'hermes', raw: body, problem: { code: 'no-name', message: 'the tool call has no function name' } };
  const args: Record<string, unknown> = {};
  for (const match of body.matchAll(/<parameter=([^>\s]+)>([\s\S]*?)<\/parameter>/g)) {
    const value = match[2]!.replace(/^\n|\n$/g, '');
    const parsed = parseJson(value);
    args[match[1]!] = 'value' in parsed ? parsed.value : value;
  }
  return { format: 'hermes', raw: body, name, arguments: args };
}

// ---------------------------------------------------------------------------------------------------------
// llama 3

const PYTHON_TAG = '<|python_tag|>';

function parseLlama3(text: string, toolNames: ReadonlySet<string>): AttemptedCall[] {
  const tagged = text.indexOf(PYTHON_TAG);
  if (tagged >= 0) {
    const body = text.slice(tagged + PYTHON_TAG.length).replace(/<\|eom_id\|>|<\|eot_id\|>/g, '').trim();
    const calls = body.startsWith('{') || body.startsWith('[{') ? jsonSequence(body, 'llama3') : pythonCalls(body);
    return calls ?? [brokenCall('llama3', body, 'neither JSON nor a Python-style call')];
  }
  if (text.startsWith('{')) {
    const values = jsonValues(text);
    if (values) return values.length > 0 && values.every((value) => looksLikeCall(value, toolNames)) ? values.map((value) => callFromObject(value, 'llama3', JSON.stringify(value))) : [];
    // Broken JSON that names a function and its parameters was meant as a call.
    return /"name"\s*:/.test(text) && /"(parameters|arguments)"\s*:/.test(text) ? [brokenCall('llama3', text, 'unterminated or invalid')] : [];
  }
  // Llama 3.2's pythonic list: the whole message is `[name(...), ...]`.
  if (/^\[[A-Za-z_][\w.]*\(/.test(text) && text.endsWith(']')) {
    const calls = pythonCalls(text.slice(1, -1));
    return calls && calls.every((call) => call.name !== undefined && toolNames.has(call.name)) ? calls : [];
  }
  return [];
}

/** JSON values joined by `;` or whitespace (Llama's parallel calls); undefined when the text is not only that. */
function jsonValues(text: string): unknown[] | undefined {
  const values: unknown[] = [];
  let at = 0;
  while (at < text.length) {
    while (at < text.length && /[\s;]/.test(text[at]!)) at++;
    if (at >= text.length) break;
    const end = scanJson(text, at);
    if (end < 0) return undefined;
    const parsed = parseJson(text.slice(at, end));
    if ('error' in parsed) return undefined;
    if (Array.isArray(parsed.value)) values.push(...parsed.value);
    else values.push(parsed.value);
    at = end;
  }
  return values;
}

function jsonSequence(text: string, format: ToolCallFormat): AttemptedCall[] | undefined {
  return jsonValues(text)?.map((value) => callFromObject(value, format, JSON.stringify(value)));
}

/**
 * The end (exclusive) of the JSON object or array starting at `start`, by bracket balance outside strings;
 * -1 when it never closes.
 */
export function scanJson(text: string, start: number): number {
  const open = text[start];
  if (open !== '{' && open !== '[') return -1;
  let depth = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const ch = text[i]!;
    if (inString) {
      if (ch === '\\') i++;
      else if (ch === '"') inString = false;
      continue;
    }
    if (ch === '"') inString = true;
    else if (ch === '{' || ch === '[') depth++;
    else if (ch === '}' || ch === ']') {
      depth--;
      if (depth === 0) return i + 1;
    }
  }
  return -1;
}

/** `name(k=v, ...)` or `name.call(k=v)` calls joined by `,` `;` or newlines, with Python literal values. */
function pythonCalls(text: string): AttemptedCall[] | undefined {
  const calls: AttemptedCall[] = [];
  const reader = new PythonReader(text);
  for (;;) {
    reader.skip(/[\s,;]/);
    if (reader.done()) break;
    const start = reader.at;
    const name = reader.identifier();
    if (!name || !reader.take('(')) return undefined;
    const args: Record<string, unknown> = {};
    try {
      reader.skip(/\s/);
      while (!reader.take(')')) {
        const key = reader.identifier();
        if (!key || !reader.take('=')) throw new SyntaxError('expected key=value');
        args[key] = reader.value();
        reader.skip(/\s/);
        if (!reader.take(',')) {
          reader.skip(/\s/);
          if (!reader.take(')')) throw new SyntaxError('expected , or )');
          break;
        }
        reader.skip(/\s/);
      }
    } catch (error) {
      calls.push({ format: 'llama3', raw: text.slice(start), name: name.replace(/\.call$/, ''), problem: { code: 'bad-json', message: `the arguments cannot be read (${(error as Error).message})` } });
      return calls;
    }
    calls.push({ format: 'llama3', raw: text.slice(start, reader.at), name: name.replace(/\.call$/, ''), arguments: args });
  }
  return calls.length > 0 ? calls : undefined;
}

/** Just enough of Python's literal syntax for tool arguments: strings, numbers, True/False/None, lists, dicts. */
class PythonReader {
  at = 0;
  constructor(private readonly text: string) {}
  done(): boolean {
    return this.at >= this.text.length;
  }
  skip(pattern: RegExp): void {
    while (!this.done() && pattern.test(this.text[this.at]!)) this.at++;
  }
  take(token: string): boolean {
    if (this.text.startsWith(token, this.at)) {
      this.at += token.length;
      return true;
    }
    return false;
  }
  identifier(): string | undefined {
    const match = /^[A-Za-z_][\w.]*/.exec(this.text.slice(this.at));
    if (!match) return undefined;
    this.at += match[0].length;
    return match[0];
  }
  value(): unknown {
    this.skip(/\s/);
    const ch = this.text[this.at];
    if (ch === '"' || ch === "'") return this.string(ch);
    if (ch === '[' || ch === '(') {
      const close = ch === '[' ? ']' : ')';
      this.at++;
      const items: unknown[] = [];
      for (this.skip(/\s/); !this.take(close); this.skip(/\s/)) {
        items.push(this.value());
        this.skip(/\s/);
        if (!this.take(',')) {
          this.skip(/\s/);
          if (!this.take(close)) throw new SyntaxError(`expected , or ${close}`);
          break;
        }
      }
      return items;
    }
    if (ch === '{') {
      this.at++;
      const entries: Record<string, unknown> = {};
      for (this.skip(/\s/); !this.take('}'); this.skip(/\s/)) {
        const key = this.value();
        this.skip(/\s/);
        if (!this.take(':')) throw new SyntaxError('expected :');
        entries[String(key)] = this.value();
        this.skip(/\s/);
        if (!this.take(',')) {
          this.skip(/\s/);
          if (!this.take('}')) throw new SyntaxError('expected , or }');
          break;
        }
      }
      return entries;
    }
    for (const [word, value] of [['True', true], ['False', false], ['None', null]] as const) if (this.take(word)) return value;
    const number = /^-?\d+(\.\d+)?([eE][+-]?\d+)?/.exec(this.text.slice(this.at));
    if (number) {
      this.at += number[0].length;
      return Number(number[0]);
    }
    throw new SyntaxError(`unexpected ${ch === undefined ? 'end' : JSON.stringify(ch)}`);
  }
  private string(quote: string): string {
    this.at++;
    let out = '';
    while (!this.done()) {
      const ch = this.text[this.at++]!;
      if (ch === quote) return out;
      if (ch === '\\') {
        const next = this.text[this.at++] ?? '';
        out += next === 'n' ? '\n' : next === 't' ? '\t' : next;
      } else out += ch;
    }
    throw new SyntaxError('unterminated string');
  }
}

// ---------------------------------------------------------------------------------------------------------
// mistral

const MISTRAL = '[TOOL_CALLS]';

function parseMistral(text: string): AttemptedCall[] {
  const marker = text.indexOf(MISTRAL);
  if (marker < 0) return [];
  const calls: AttemptedCall[] = [];
  // Every `[TOOL_CALLS]` starts one or more calls (v11+ repeats the marker per call).
  for (const segment of text.slice(marker + MISTRAL.length).split(MISTRAL)) {
    const body = segment.trim();
    if (body.startsWith('[') || body.startsWith('{')) {
      const end = scanJson(body, 0);
      calls.push(...callsFromJsonText(end < 0 ? body : body.slice(0, end), 'mistral'));
      continue;
    }
    // v11+: name[ARGS]{...} or name[CALL_ID]id[ARGS]{...}
    const match = /^([^[\s]+)(?:\[CALL_ID\]([^[\s]+))?\[ARGS\]/.exec(body);
    if (!match) {
      calls.push({ format: 'mistral', raw: body, problem: { code: body ? 'bad-json' : 'no-name', message: body ? 'the tool call after [TOOL_CALLS] cannot be read' : 'the tool call has no function name' } });
      continue;
    }
    const rest = body.slice(match[0].length).trim();
    const end = scanJson(rest, 0);
    const rawArgs = end < 0 ? rest : rest.slice(0, end);
    const args = argumentsOf(rawArgs);
    calls.push({
      format: 'mistral',
      raw: body,
      name: match[1]!,
      ...(match[2] ? { id: match[2] } : {}),
      ...('problem' in args ? { problem: args.problem } : { arguments: args.value }),
    });
  }
  return calls;
}

// ---------------------------------------------------------------------------------------------------------
// fenced JSON

function parseFencedJson(text: string, toolNames: ReadonlySet<string>): AttemptedCall[] {
  const calls: AttemptedCall[] = [];
  for (const match of text.matchAll(/```[ \t]*([\w-]*)[ \t]*\n([\s\S]*?)```/g)) {
    const language = match[1]!.toLowerCase();
    const body = match[2]!.trim();
    if (language !== '' && language !== 'json' && !language.startsWith('tool')) continue;
    const parsed = parseJson(body);
    if ('error' in parsed) {
      // Only a block that names a function and its arguments was meant as a call.
      if (/"(name|function|tool)"\s*:/.test(body) && /"(arguments|parameters|args|input)"\s*:/.test(body)) calls.push(brokenCall('fenced-json', body, parsed.error));
      continue;
    }
    const values = Array.isArray(parsed.value) ? parsed.value : [parsed.value];
    if (values.length === 0 || !values.every((value) => looksLikeCall(value, toolNames))) continue;
    calls.push(...values.map((value) => callFromObject(value, 'fenced-json', JSON.stringify(value))));
  }
  return calls;
}

// ---------------------------------------------------------------------------------------------------------
// Results back to the model

/**
 * How the results of text calls go back: a user message, since the conversation holds no protocol-level call
 * to answer. Hermes models were trained on `<tool_response>` blocks; the others get one labelled line each.
 */
export function textToolResults(format: TextToolCallFormat, results: readonly { name: string; content: string; isError: boolean }[]): string {
  if (format === 'hermes') {
    return results.map((r) => `<tool_response>\n${JSON.stringify({ name: r.name, content: r.content })}\n</tool_response>`).join('\n');
  }
  return results.map((r) => `${r.isError ? 'Error from' : 'Result of'} ${r.name}:\n${r.content}`).join('\n\n');
}
