/**
 * What a model agent spends: tokens per request (prompt, completion, cached), summed per episode and priced
 * from a price file the user provides; model latency per turn; and every tool call the model attempted, with
 * the format it was written in and whether it was well-formed enough to reach the gateway.
 *
 * The episode hands its agent a `ModelMeter` and reads it when the agent has stopped, however it stopped
 * (answer, turn limit, budget, endpoint error, timeout), so nothing spent goes unrecorded.
 *
 * Price file (`--prices FILE`, `schemas/prices.schema.json`): prices per million tokens, in one currency,
 * per model name; a key ending in `*` matches every model name that starts with what precedes it (the
 * longest such key wins, an exact name always first).
 */
import { z } from 'zod';
import { readJsonFile } from '../../json-file.ts';
import type { AttemptedCallRecord, MODEL_ENDS, ModelRecord } from '../../record/schema.ts';
import { McpbenchError } from '../../errors.ts';

export type { AttemptedCallRecord, ModelRecord };

/** Usage of one model response, normalised across protocols. */
export interface TokenUsage {
  /** Every input token, cached ones included (OpenAI's `prompt_tokens`; Anthropic's input + cache read + cache write). */
  prompt_tokens: number;
  completion_tokens: number;
  /** Input tokens read from the provider's prompt cache (part of prompt_tokens). */
  cached_tokens: number;
  /** Input tokens written to the cache (Anthropic's cache_creation_input_tokens; part of prompt_tokens). */
  cache_write_tokens: number;
}

export const ModelPriceSchema = z
  .object({
    input: z.number().nonnegative().meta({ description: 'Price of one million input (prompt) tokens that were not read from the cache.', examples: [2.5] }),
    output: z.number().nonnegative().meta({ description: 'Price of one million output (completion) tokens.', examples: [10] }),
    cached_input: z.number().nonnegative().optional().meta({ description: 'Price of one million input tokens read from the prompt cache (default: the input price).', examples: [1.25] }),
    cache_write: z.number().nonnegative().optional().meta({ description: 'Price of one million input tokens written to the prompt cache (default: the input price).', examples: [3.75] }),
  })
  .strict()
  .meta({ title: 'Model price', description: 'Prices per million tokens for one model.' });
export type ModelPrice = z.infer<typeof ModelPriceSchema>;

export const PriceFileSchema = z
  .object({
    $schema: z.string().optional().meta({ description: 'The JSON Schema this file follows.', examples: ['../schemas/prices.schema.json'] }),
    currency: z.string().regex(/^[A-Z]{3}$/).default('USD').meta({ title: 'Currency', description: 'ISO 4217 code of every price in the file, and of --max-cost.', examples: ['USD', 'EUR'] }),
    models: z
      .record(z.string().min(1), ModelPriceSchema)
      .meta({
        title: 'Prices by model',
        description: 'Model name as sent to the endpoint -> prices per million tokens. A name ending in `*` matches every model name that starts with the rest (the longest match wins; an exact name comes first).',
        examples: [{ 'gpt-4o-mini': { input: 0.15, output: 0.6, cached_input: 0.075 }, 'claude-sonnet-4*': { input: 3, output: 15, cached_input: 0.3, cache_write: 3.75 } }],
      }),
  })
  .strict()
  .meta({ title: 'MCPBench price file', description: 'Token prices per model, for the cost columns of scores and reports and for --max-cost.' });
export type PriceFile = z.infer<typeof PriceFileSchema>;

export class PriceFileError extends McpbenchError {
  static override readonly code: string = 'price-file';
}

export function readPriceFile(path: string): PriceFile {
  const read = readJsonFile(path, PriceFileSchema);
  if (!read.ok) throw new PriceFileError(read.message);
  return read.value;
}

/** The price of `model` in a price file: an exact key, else the longest `prefix*` key it starts with. */
export function priceFor(prices: PriceFile, model: string): ModelPrice | undefined {
  const exact = prices.models[model];
  if (exact) return exact;
  let best: [string, ModelPrice] | undefined;
  for (const [key, price] of Object.entries(prices.models)) {
    if (!key.endsWith('*')) continue;
    const prefix = key.slice(0, -1);
    if (model.startsWith(prefix) && (!best || prefix.length > best[0].length)) best = [prefix, price];
  }
  return best?.[1];
}

/** The cost of some usage at a price (per million tokens). */
export function costOf(usage: TokenUsage, price: ModelPrice): number {
  const uncached = Math.max(0, usage.prompt_tokens - usage.cached_tokens - usage.cache_write_tokens);
  return (
    (uncached * price.input +
      usage.cached_tokens * (price.cached_input ?? price.input) +
      usage.cache_write_tokens * (price.cache_write ?? price.input) +
      usage.completion_tokens * price.output) /
    1_000_000
  );
}

/** How a model agent's episode ended, from the loop's side. */
export type ModelEnd = (typeof MODEL_ENDS)[number];

/** Counts that add up across episodes and runs. */
export interface UsageTotals extends TokenUsage {
  /** HTTP requests made to the model endpoint, retries included. */
  requests: number;
  /** Model responses the loop acted on (one per turn). */
  turns: number;
  /** Requests retried after a transient failure (429, 5xx, timeouts, unreadable bodies). */
  retries: number;
  /** Responses that carried no usage (their tokens are unknown, not zero). */
  responses_without_usage: number;
}


export const emptyUsage = (): TokenUsage => ({ prompt_tokens: 0, completion_tokens: 0, cached_tokens: 0, cache_write_tokens: 0 });

export function totalTokens(usage: Pick<TokenUsage, 'prompt_tokens' | 'completion_tokens'>): number {
  return usage.prompt_tokens + usage.completion_tokens;
}

/** Accumulates one episode's model usage; the agent writes, the episode reads `record()` at the end. */
export class ModelMeter {
  private protocol = '';
  private model = '';
  private price: ModelPrice | undefined;
  private currency: string | undefined;
  private budget: number | undefined;
  private readonly usage = emptyUsage();
  private requests = 0;
  private retries = 0;
  private withoutUsage = 0;
  private readonly latencies: number[] = [];
  private readonly calls: AttemptedCallRecord[] = [];
  private end: ModelEnd | undefined;
  private used = false;

  /** Who is spending, at what price (undefined: cost not counted), under which token budget. */
  begin(options: { protocol: string; model: string; price?: ModelPrice; currency?: string; maxTokensPerEpisode?: number }): void {
    this.used = true;
    this.protocol = options.protocol;
    this.model = options.model;
    this.price = options.price;
    this.currency = options.currency;
    this.budget = options.maxTokensPerEpisode;
  }

  /** Usage an external agent reported for its whole episode (the endpoint protocol's `usage`). */
  reported(options: { protocol: string; model: string; requests: number; usage: TokenUsage | null; turnLatencyMs: number[]; price?: ModelPrice; currency?: string }): void {
    this.begin(options);
    this.requests += options.requests;
    this.response(options.usage);
    this.latencies.push(...options.turnLatencyMs.map((ms) => Math.round(ms)));
    this.finish('answer');
  }

  /** One HTTP request sent (`retry` when it repeats one that failed). */
  request(retry: boolean): void {
    this.requests++;
    if (retry) this.retries++;
  }

  /** The usage a response reported (null: it reported none). Counted for every response, retried ones too. */
  response(usage: TokenUsage | null): void {
    if (!usage) {
      this.withoutUsage++;
      return;
    }
    this.usage.prompt_tokens += usage.prompt_tokens;
    this.usage.completion_tokens += usage.completion_tokens;
    this.usage.cached_tokens += usage.cached_tokens;
    this.usage.cache_write_tokens += usage.cache_write_tokens;
  }

  turn(latencyMs: number): void {
    this.latencies.push(Math.round(latencyMs));
  }

  call(record: AttemptedCallRecord): void {
    this.calls.push(record);
  }

  finish(end: ModelEnd): void {
    this.end ??= end;
  }

  /** Tokens spent so far (prompt + completion). */
  tokens(): number {
    return totalTokens(this.usage);
  }

  /** Whether the per-episode token budget is used up. */
  overBudget(): boolean {
    return this.budget !== undefined && this.tokens() >= this.budget;
  }

  malformed(): number {
    return this.calls.filter((c) => c.status === 'malformed').length;
  }

  /** The episode's record, or undefined when no model agent used this meter. */
  record(): ModelRecord | undefined {
    if (!this.used) return undefined;
    return {
      protocol: this.protocol,
      model: this.model,
      requests: this.requests,
      turns: this.latencies.length,
      retries: this.retries,
      ...this.usage,
      responses_without_usage: this.withoutUsage,
      cost: this.price ? costOf(this.usage, this.price) : null,
      ...(this.currency ? { currency: this.currency } : {}),
      turn_latency_ms: [...this.latencies],
      calls: [...this.calls],
      ...(this.end ? { end: this.end } : {}),
      ...(this.budget !== undefined ? { max_tokens_per_episode: this.budget } : {}),
    };
  }
}
