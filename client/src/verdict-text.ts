/**
 * Plain-text renderings of what a run produced, for test messages and test output: the predicate verdict
 * tree with each node's value, an episode's failure, one call of the trace.
 */
import type { CallRecord, EpisodeRecord } from '../../server/src/record/schema.ts';

export type Verdict = NonNullable<EpisodeRecord['verdict']>;

const MARK = { true: '✓', false: '✗', undefined: '?' } as const;
const MAX_EVIDENCE = 160;

export function compactJson(value: unknown, max = MAX_EVIDENCE): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

function nodeLabel(node: Verdict): string {
  if (node.kind === 'leaf') return node.name ?? 'leaf';
  return node.kind;
}

/**
 * One line per node, children indented under their parent:
 * `✗ all = false` / `  ✓ filesystem.fileExists = true  evidence: {...}`. Undecided nodes show `?` and why.
 */
export function renderVerdictTree(verdict: Verdict, indent = '  '): string {
  const lines: string[] = [];
  const visit = (node: Verdict, depth: number) => {
    const value = node.value === undefined ? 'undecided' : String(node.value);
    let line = `${indent.repeat(depth)}${MARK[String(node.value) as keyof typeof MARK]} ${nodeLabel(node)} = ${value}`;
    if (node.undecided) line += `  (${node.undecided})`;
    if (node.evidence !== undefined) line += `  evidence: ${compactJson(node.evidence)}`;
    lines.push(line);
    for (const child of node.children ?? []) visit(child, depth + 1);
  };
  visit(verdict, 0);
  return lines.join('\n');
}

/**
 * The node a failed predicate fails at, for pointing the editor at it: the first false child of an `all`, down to
 * a leaf; an `any` none of whose paths holds, or a `not` whose inner predicate holds, is itself the place.
 */
export function failingNode(verdict: Verdict): Verdict {
  if (verdict.kind === 'all') {
    const child = verdict.children?.find((c) => c.value === false);
    return child ? failingNode(child) : verdict;
  }
  return verdict;
}

/** The message of a failed or errored episode: why, then the verdict tree. */
export function episodeMessage(result: EpisodeRecord): string {
  const parts: string[] = [];
  const where = `${result.variant}, faults ${result.fault_profile}, trial ${result.trial}`;
  const error = result.error;
  if (result.status === 'infra_error') parts.push(`Infrastructure error (${where}, attempt ${result.attempt}): ${error ? `${error.code}: ${error.message}` : 'unknown'}`);
  else if (result.status === 'agent_error') parts.push(`Agent error (${where}): ${error ? `${error.code}: ${error.message}` : 'unknown'}`);
  else parts.push(`${result.passed ? 'Passed' : 'Failed'} (${where}): ${result.tool_calls}/${result.max_steps} tool calls${result.unlisted_calls ? `, ${result.unlisted_calls} unlisted` : ''}`);
  if (error) {
    const fate = [
      error.exit_code !== undefined && error.exit_code !== null ? `exit code ${error.exit_code}` : '',
      error.signal ? `signal ${error.signal}` : '',
      error.http_status !== undefined ? `HTTP ${error.http_status}` : '',
      error.attempts !== undefined ? `${error.attempts} attempt${error.attempts === 1 ? '' : 's'}` : '',
    ].filter(Boolean);
    if (fate.length) parts.push(fate.join(', '));
    if (error.stderr_tail) parts.push(`Last lines of its stderr:\n${error.stderr_tail}`);
  }
  if (result.failure) parts.push(`Stopped before it finished (${result.failure.code}): ${result.failure.message}`);
  if (result.model) {
    const m = result.model;
    const cost = m.cost === null ? '' : `, ${m.currency ? `${m.currency} ` : ''}${m.cost.toFixed(4)}`;
    parts.push(`Model ${m.model}: ${m.turns} turns, ${m.prompt_tokens + m.completion_tokens} tokens${cost}${result.malformed_calls ? `, ${result.malformed_calls} malformed calls` : ''}`);
  }
  if (result.budget_exceeded) parts.push('The agent went over max_steps.');
  if (result.answer !== undefined) parts.push(`Answer: ${compactJson(result.answer, 400)}`);
  if (result.verdict && result.verdict.value === false) {
    const failing = failingNode(result.verdict);
    parts.push(`Fails at ${nodeLabel(failing)} (${failing.path.map((p) => (typeof p === 'number' ? `[${p}]` : `.${p}`)).join('').slice(1)})`);
  }
  if (result.verdict) parts.push('Predicate:\n' + renderVerdictTree(result.verdict));
  return parts.join('\n');
}

/** One trace line; faults are marked with ⚡ so they stand out in test output and logs. */
export function formatCall(call: CallRecord): string {
  const fault = call.fault ? `  ⚡ ${call.fault.type}${call.fault.executed ? ' (executed)' : ''}${call.fault.detail ? `: ${call.fault.detail}` : ''}` : '';
  return `#${call.index} ${call.qualified ?? call.tool} ${compactJson(call.arguments, 120)} → ${call.status} ${Math.round(call.latency_ms)} ms${fault}`;
}
