/**
 * The reference agent: replays one of the task's reference solutions or counterexamples through the gateway,
 * step by step, as written. With `retry`, it backs off and retries a call that failed in a way a robust
 * agent would retry (a timeout, a rate limit with its retry-after, a reset connection, a transient server
 * error), so `check` can show a task stays solvable under each recoverable fault.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { SolutionStep, Task } from '../../tasks/model.ts';
import { exposedName, type Agent, type AgentContext, type AgentOutcome } from './agent.ts';

export interface ReferenceAgentOptions {
  retry?: boolean;
  /** Most retries of one step. */
  maxRetries?: number;
  /** First back-off; doubles each retry unless the error names a retry-after. */
  backoffMs?: number;
}

/** The steps a variant names: `reference:0`, `counterexample:2`. */
export function variantSteps(task: Task, variant: string): SolutionStep[] {
  const [kind, index] = variant.split(':');
  const list = kind === 'reference' ? task.reference_solutions : kind === 'counterexample' ? (task.counterexamples ?? []) : undefined;
  const steps = list?.[Number(index)];
  if (!steps) throw new Error(`task ${task.id} has no ${variant}`);
  return steps;
}

const RETRYABLE = /time(d)?\s?out|rate.?limit|\b429\b|retry.?after|temporar|unavailable|connection reset|ECONNRESET|\b50[234]\b|cascad/i;

function errorText(result: CallToolResult): string {
  return result.content.map((c) => (c.type === 'text' ? c.text : '')).join(' ');
}

function retryAfterMs(text: string): number | undefined {
  const match = /retry[_ -]?after[_ -]?(ms)?["':\s]*(\d+(?:\.\d+)?)\s*(ms|s)?/i.exec(text);
  if (!match) return undefined;
  const value = Number(match[2]);
  return match[1] || match[3] === 'ms' ? value : value * 1000;
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

export function createReferenceAgent(options: ReferenceAgentOptions = {}): Agent {
  const maxRetries = options.maxRetries ?? 6;
  const backoffMs = options.backoffMs ?? 100;
  return {
    name: options.retry ? 'reference+retry' : 'reference',
    async run(context: AgentContext): Promise<AgentOutcome> {
      const steps = context.steps ?? variantSteps(context.task, context.variant);
      const client = new Client({ name: 'mcpbench-reference-agent', version: '0.1.0' });
      // In process when the gateway offers it (an episode's does): no HTTP hop per call.
      await client.connect((await context.gateway.connectInProcess?.()) ?? new StreamableHTTPClientTransport(new URL(context.gateway.url)));
      let answer: string | undefined;
      try {
        for (const step of steps) {
          if ('answer' in step) {
            answer = step.answer;
            continue;
          }
          const name = exposedName(step.tool);
          for (let attempt = 0; ; attempt++) {
            if (context.signal.aborted) throw context.signal.reason;
            let retryable = false;
            let wait: number | undefined;
            try {
              const result = (await client.callTool({ name, arguments: step.arguments ?? {} })) as CallToolResult;
              if (result.isError) {
                const text = errorText(result);
                retryable = RETRYABLE.test(text);
                wait = retryAfterMs(text);
              }
            } catch (error) {
              // A protocol-level failure (a reset connection): the call may be retried.
              retryable = true;
              wait = retryAfterMs(String((error as Error).message));
            }
            if (!retryable || !options.retry || attempt >= maxRetries) break;
            await sleep(wait ?? backoffMs * 2 ** attempt, context.signal);
          }
        }
      } finally {
        await client.close().catch(() => undefined);
      }
      return answer === undefined ? {} : { answer };
    },
  };
}

/** Does nothing: a task it passes is broken. */
export const noopAgent: Agent = {
  name: 'noop',
  callsNoTools: true,
  async run() {
    return {};
  },
};
