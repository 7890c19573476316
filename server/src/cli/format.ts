/**
 * The text the run commands print: scores, model usage, outcomes, and a check's verdicts. Pure functions of
 * what the engine returns.
 */
import type { TaskCheck } from '../runner/check.ts';
import { setMutationScore } from '../runner/mutants.ts';
import { PERTURBATION_LEVELS } from '../runner/perturb.ts';
import type { Scores } from '../scoring/metrics.ts';
import type { ImportOutcome } from '../results/import.ts';

const pct = (v: number | null | undefined) => (v === null || v === undefined ? '   -  ' : `${(v * 100).toFixed(1).padStart(5)}%`);
const ci = (i: { low: number; high: number } | null | undefined) => (i ? ` [${(i.low * 100).toFixed(1)}, ${(i.high * 100).toFixed(1)}]` : '');

export function formatScores(scores: Scores): string {
  const lines = [
    '',
    `Scores (${scores.tasks} tasks, ${scores.episodes.scored} episodes scored; infrastructure errors are not scored)`,
    `  success rate            ${pct(scores.success_rate.value)}${ci(scores.success_rate.ci)}  (${scores.success_rate.numerator}/${scores.success_rate.denominator})`,
    `  tool-call efficiency    ${scores.tool_call_efficiency.value === null ? '   -  ' : scores.tool_call_efficiency.value.toFixed(3).padStart(6)}   (tool calls / max_steps over passed; lower is better)`,
    `  hallucinated-tool rate  ${pct(scores.hallucinated_tool_rate.value)}  (${scores.hallucinated_tool_rate.numerator}/${scores.hallucinated_tool_rate.denominator} calls)`,
    `  recovery-from-error     ${pct(scores.recovery_rate.value)}  (${scores.recovery_rate.numerator}/${scores.recovery_rate.denominator} recovery episodes that saw an error)`,
  ];
  if (scores.model || scores.malformed_call_rate.numerator > 0) {
    lines.splice(5, 0, `  malformed-call rate     ${pct(scores.malformed_call_rate.value)}  (${scores.malformed_call_rate.numerator}/${scores.malformed_call_rate.denominator} attempted calls rejected before the gateway)`);
  }
  if (scores.model) lines.push(...formatModelScores(scores.model));
  for (const p of scores.pass_k) lines.push(`  pass^${p.k}${' '.repeat(Math.max(1, 18 - String(p.k).length))}${pct(p.value)}${ci(p.ci)}`);
  // The reliability surface, when the run spans more than one cell (several perturbation levels or profiles).
  const cells = [...new Map(scores.surface.map((c) => [JSON.stringify([c.perturbation, c.fault_profile]), c])).values()];
  if (cells.length > 1) {
    const ks = [...new Set(scores.surface.map((c) => c.k))].sort((a, b) => a - b);
    const order = (level: string) => {
      const i = (PERTURBATION_LEVELS as readonly string[]).indexOf(level);
      return i < 0 ? PERTURBATION_LEVELS.length : i;
    };
    cells.sort((a, b) => a.fault_profile.localeCompare(b.fault_profile) || order(a.perturbation) - order(b.perturbation) || a.perturbation.localeCompare(b.perturbation));
    const width = Math.max(14, ...cells.map((c) => c.perturbation.length + 2));
    const faultWidth = Math.max(8, ...cells.map((c) => c.fault_profile.length + 2));
    lines.push('  reliability surface (pass^k by perturbation level and fault profile):');
    lines.push(`    ${'perturbation'.padEnd(width)}${'faults'.padEnd(faultWidth)}${ks.map((k) => `pass^${k}`.padStart(9)).join('')}`);
    for (const cell of cells) {
      const values = ks.map((k) => {
        const found = scores.surface.find((c) => c.k === k && c.perturbation === cell.perturbation && c.fault_profile === cell.fault_profile);
        return (found ? pct(found.pass_k) : '   -  ').padStart(9);
      });
      lines.push(`    ${cell.perturbation.padEnd(width)}${cell.fault_profile.padEnd(faultWidth)}${values.join('')}  (${cell.tasks} tasks)`);
    }
  }
  if (scores.by_namespace.length) {
    lines.push('  by server:');
    for (const b of scores.by_namespace) lines.push(`    ${b.key.padEnd(20)} ${pct(b.success_rate)}  (${b.passed}/${b.attempted})`);
  }
  if (scores.by_category.length) {
    lines.push('  by category:');
    for (const b of scores.by_category) lines.push(`    ${b.key.padEnd(20)} ${pct(b.success_rate)}  (${b.passed}/${b.attempted})`);
  }
  const faults = scores.fault_outcomes.filter((f) => f.decided > 0);
  if (faults.length) {
    lines.push('  faults (decided by the profile / delivered to the agent):');
    for (const f of faults) lines.push(`    ${f.type.padEnd(20)} ${String(f.decided).padStart(5)} / ${String(f.delivered).padEnd(5)}${f.delivered < f.decided ? `  (${f.decided - f.delivered} could not be delivered)` : ''}`);
  }
  lines.push(...formatOutcomes(scores));
  return lines.join('\n') + '\n';
}

const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** Tokens, cost, latency and call formats of the model agents of a run. */
export function formatModelScores(m: NonNullable<Scores['model']>): string[] {
  const money = (v: number) => `${m.currency ?? ''} ${v.toFixed(4)}`.trim();
  const lines = [
    `  tokens                  ${int(m.total_tokens)}  (prompt ${int(m.prompt_tokens)}, ${int(m.cached_tokens)} of them cached; completion ${int(m.completion_tokens)}) in ${int(m.requests)} requests, ${int(m.retries)} retried`,
  ];
  if (m.responses_without_usage > 0) lines.push(`                          ${int(m.responses_without_usage)} response(s) reported no usage: their tokens are not counted`);
  if (m.tokens_per_passed !== null) lines.push(`  tokens per passed task  ${int(m.tokens_per_passed)}`);
  lines.push(
    m.cost === null
      ? '  cost                    not counted (no price for the model: --prices FILE)'
      : `  cost                    ${money(m.cost)}  (${m.cost_per_passed === null ? 'no passed task' : `${money(m.cost_per_passed)} per passed task`}${m.unpriced_episodes ? `; ${m.unpriced_episodes} episode(s) without a price not counted` : ''})`,
  );
  if (m.latency_per_turn_ms) {
    const l = m.latency_per_turn_ms;
    lines.push(`  model latency per turn  mean ${int(l.mean)} ms, p50 ${int(l.p50)} ms, p95 ${int(l.p95)} ms over ${int(l.turns)} turns`);
  }
  const formats = Object.entries(m.calls_by_format);
  if (formats.length) lines.push(`  tool calls by format    ${formats.map(([format, n]) => `${format} ${int(n)}`).join(', ')}`);
  return lines;
}

/** The three outcomes apart, and the most frequent error messages. */
export function formatOutcomes(scores: Scores): string[] {
  const e = scores.episodes;
  const retried = e.infra_errors - e.infra_unresolved;
  const lines = [
    `Outcomes: ${e.passed} passed, ${e.failed} failed, ${e.agent_errors} agent error${e.agent_errors === 1 ? '' : 's'}, ${e.infra_unresolved} infrastructure error${e.infra_unresolved === 1 ? '' : 's'}${retried > 0 ? ` (${retried} infrastructure failure${retried === 1 ? '' : 's'} retried)` : ''}`,
  ];
  if (scores.errors.length) {
    lines.push('  most frequent errors:');
    for (const x of scores.errors.slice(0, 5)) lines.push(`    ${String(x.count).padStart(4)}x ${x.kind === 'agent' ? 'agent' : 'infra'} ${x.code}: ${x.message}`);
  }
  return lines;
}

const percent = (score: number | null) => (score === null ? 'n/a' : `${(score * 100).toFixed(1)}%`);

export function formatCheck(checks: TaskCheck[], cwd: string): string {
  const lines: string[] = [];
  const relative = (file: string) => (file.startsWith(cwd) ? file.slice(cwd.length + 1) : file);
  for (const c of checks) {
    const paths = `${c.coverage.paths.covered}/${c.coverage.paths.total} solution path${c.coverage.paths.total === 1 ? '' : 's'} covered`;
    const leaves = `${c.coverage.leaves.covered}/${c.coverage.leaves.total} leaves witnessed`;
    const faults = Object.entries(c.faults).map(([type, ok]) => `${type}${ok ? '' : ' FAIL'}`).length;
    const m = c.mutation;
    const mutants = m ? `, mutants ${m.killed}/${m.killed + m.survived} killed (${percent(m.score)}; ${m.equivalent + m.declared} equivalent)` : '';
    lines.push(`${c.ok ? 'ok  ' : 'FAIL'} ${c.task_id}  ${paths}, ${leaves}, recovers under ${Object.values(c.faults).filter(Boolean).length}/${faults} fault types${mutants}  (${relative(c.file)})`);
    const explained = new Set(c.findings.map((f) => f.message));
    for (const problem of c.problems) if (!explained.has(problem)) lines.push(`       - ${problem}`);
    for (const f of c.findings) {
      const where = f.start ? `${relative(c.file)}:${f.start.line + 1}:${f.start.character + 1}` : relative(c.file);
      lines.push(`       ${where}  ${f.severity} ${f.code}: ${f.message}`);
      const survivor = f.mutant !== undefined ? m?.mutants.find((v) => v.id === f.mutant) : undefined;
      for (const line of survivor?.diff ?? []) lines.push(`           ${line}`);
    }
    const unwitnessed = c.coverage.items.filter((i) => !i.witnessed);
    for (const item of unwitnessed) lines.push(`       never witnessed: ${item.kind} ${item.label} at ${item.path.join('.')}`);
  }
  const failed = checks.filter((c) => !c.ok).length;
  const warnings = checks.reduce((n, c) => n + c.findings.filter((f) => f.severity === 'warning').length, 0);
  lines.push(`${checks.length} task${checks.length === 1 ? '' : 's'} checked: ${checks.length - failed} ok, ${failed} failing${warnings ? `, ${warnings} warning${warnings === 1 ? '' : 's'}` : ''}`);
  const reports = checks.flatMap((c) => (c.mutation ? [c.mutation] : []));
  if (reports.length) {
    const set = setMutationScore(reports);
    lines.push(`mutation score ${percent(set.score)}: ${set.killed}/${set.killed + set.survived} killed, ${set.survived} surviving, ${set.equivalent} equivalent (same end state), ${set.declared} declared equivalent, of ${set.total} mutants`);
  }
  const shortcuts = checks.flatMap((c) => (c.shortcuts ? [c.shortcuts] : []));
  if (shortcuts.length) {
    const sum = (f: (s: (typeof shortcuts)[number]) => number) => shortcuts.reduce((n, s) => n + f(s), 0);
    lines.push(`shortcuts: ${sum((s) => s.tried)} tried, ${sum((s) => s.passed.length - s.accepted.length)} passing, ${sum((s) => s.accepted.length)} accepted with a reason`);
  }
  return lines.join('\n') + '\n';
}


/** One line per imported run or rotation. */
export function outcomeLine(o: ImportOutcome): string {
  if (o.kind === 'run' && o.refused) return `refused   run ${o.run_id} (${o.path}): ${o.refused.message}`;
  return o.kind === 'run'
    ? `${o.status.padEnd(9)} run ${o.run_id}: ${o.episodes} episodes, ${o.calls} calls, ${o.completeness} (${o.path})`
    : `${o.status.padEnd(9)} rotation ${o.set} ${o.month}: ${o.tasks} retired tasks (${o.path})`;
}
