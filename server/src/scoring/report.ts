/**
 * `mcpbench report runs/<run-id>`: reads a run folder through the run store and writes report.json (the run,
 * its scores, and every episode's outcome and reason), junit.xml and report.html next to it, each atomically.
 * The run's numbers come from `deriveRun` (derive.ts); the CLI only maps argv onto `reportRun`.
 */
import { existsSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fsyncDirectory, writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import { openRun, REPORT_FILES, VIEWS_DIR } from '../record/run-folder.ts';
import { isSealedRun } from '../record/trace.ts';
import type { Task } from '../tasks/model.ts';
import { renderEpisodeHtml } from './episode-html.ts';
import type { Scores } from './metrics.ts';
import { loadPlotAssets, renderHtml, type PlotAssets } from './report-html.ts';
import { deriveRun, type DeriveOptions, type DerivedRun, type FailureSummary } from './derive.ts';
import type { NodeVerdict, EpisodeError, EpisodeFailure, EpisodeRecord, EpisodeStatus, RunRecord } from '../record/schema.ts';
import { latestByWorkUnit, outcomeReason } from '../record/work-units.ts';


/** One episode's outcome as report.json lists it (the standing record of each work unit). */
export interface EpisodeOutcome {
  work_unit: string;
  task_id: string;
  variant: string;
  trial: number;
  fault_profile: string;
  perturbation: string;
  status: EpisodeStatus;
  /** Why it did not pass, in one line (empty when it passed). */
  reason: string;
  error?: EpisodeError;
  /** Why a failed episode was stopped before it finished (`token-budget`). */
  failure?: EpisodeFailure;
  /** A model agent's tokens (prompt + completion) and cost (null: no price) in this episode. */
  tokens?: number;
  cost?: number | null;
  attempt: number;
}

export interface ReportJson {
  run: RunRecord;
  scores: Scores;
  episodes: EpisodeOutcome[];
  /** Present when the report was written with a failure diagnoser (the CLI always passes one). */
  failures?: FailureSummary;
  warnings: string[];
}

export function episodeOutcomes(records: readonly EpisodeRecord[]): EpisodeOutcome[] {
  return latestByWorkUnit(records).map((r) => ({
    work_unit: r.work_unit,
    task_id: r.task_id,
    variant: r.variant,
    trial: r.trial,
    fault_profile: r.fault_profile,
    perturbation: r.perturbation,
    status: r.status,
    reason: outcomeReason(r),
    ...(r.error ? { error: r.error } : {}),
    ...(r.failure ? { failure: r.failure } : {}),
    ...(r.model ? { tokens: r.model.prompt_tokens + r.model.completion_tokens, cost: r.model.cost } : {}),
    attempt: r.attempt,
  }));
}

// ---------------------------------------------------------------------------------------------------------
// Verdict trees as text

const truth = (value: boolean | undefined) => (value === true ? 'true' : value === false ? 'false' : 'unknown');

/** JSON on one line, cut to `max` characters: evidence can be a whole file. */
export function compactJson(value: unknown, max = 200): string {
  let text: string;
  try {
    text = JSON.stringify(value) ?? String(value);
  } catch {
    text = String(value);
  }
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/**
 * One node per line, children indented by two spaces: `all = false`, `filesystem.fileExists = false
 * (evidence: ...)`. The failure message of a JUnit test case and the plain-text view of the editor.
 */
export function verdictText(verdict: NodeVerdict, depth = 0): string {
  const label = verdict.kind === 'leaf' ? (verdict.name ?? 'leaf') : verdict.kind;
  let line = `${'  '.repeat(depth)}${label} = ${truth(verdict.value)}`;
  if (verdict.undecided) line += ` (undecided: ${verdict.undecided})`;
  if (verdict.evidence !== undefined) line += ` (evidence: ${compactJson(verdict.evidence)})`;
  const children = (verdict.children ?? []).map((child) => verdictText(child, depth + 1));
  return [line, ...children].join('\n');
}

// ---------------------------------------------------------------------------------------------------------
// JUnit XML

/**
 * Text safe for XML 1.0 content and attribute values: the five markup characters escaped, and characters
 * XML 1.0 cannot carry at all (controls other than tab/LF/CR, lone surrogates, U+FFFE/U+FFFF) replaced by
 * U+FFFD, since no escape makes them legal. Line breaks in attributes are kept as character references so
 * a parser does not normalise them to spaces.
 */
export function xmlEscape(text: string, attribute = false): string {
  let out = '';
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    const ch = text[i]!;
    if (code >= 0xd800 && code <= 0xdbff) {
      const next = text.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        out += ch + text[i + 1]!;
        i++;
      } else out += '\uFFFD';
      continue;
    }
    if (code >= 0xdc00 && code <= 0xdfff) out += '\uFFFD';
    else if (ch === '&') out += '&amp;';
    else if (ch === '<') out += '&lt;';
    else if (ch === '>') out += '&gt;';
    else if (ch === '"') out += '&quot;';
    else if (ch === "'") out += '&apos;';
    else if (code === 0x9 || code === 0xa || code === 0xd) out += attribute ? `&#${code};` : ch;
    else if (code < 0x20 || code === 0xfffe || code === 0xffff) out += '\uFFFD';
    else out += ch;
  }
  return out;
}

const attrs = (values: Record<string, string | number>) =>
  Object.entries(values)
    .map(([k, v]) => ` ${k}="${xmlEscape(String(v), true)}"`)
    .join('');

const compareText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Which suite an episode belongs to: its namespace, or `a+b` for a cross-server task. */
export function suiteName(result: EpisodeRecord): string {
  return result.namespaces.length > 0 ? [...result.namespaces].sort().join('+') : 'unknown';
}

/** Unique within a suite: task, trial, variant, and the conditions the run varied. */
export function testCaseName(result: EpisodeRecord): string {
  return `${result.task_id} [trial ${result.trial}] [${result.variant}] [faults ${result.fault_profile}] [perturbation ${result.perturbation}]`;
}

function failureMessage(result: EpisodeRecord): string {
  if (result.failure) return `${result.failure.code}: ${result.failure.message.split('\n')[0]}`;
  if (result.budget_exceeded) return `step budget exceeded (${result.tool_calls} calls, max_steps ${result.max_steps})`;
  if (!result.verdict) return 'no verdict: the predicate was not evaluated';
  return `success predicate ${truth(result.verdict.value)}`;
}

/** The text of an `<error>`: the message, the process's fate, its stderr tail, and the verdict if one was taken. */
function errorBody(result: EpisodeRecord): string {
  const error = result.error!;
  const lines = [error.message];
  const fate = [
    error.namespace !== undefined ? `namespace ${error.namespace}` : '',
    error.exit_code !== undefined && error.exit_code !== null ? `exit code ${error.exit_code}` : '',
    error.signal ? `signal ${error.signal}` : '',
    error.exited !== undefined ? (error.exited ? 'the process had exited' : 'the process was still running') : '',
    error.http_status !== undefined ? `HTTP ${error.http_status}` : '',
    error.attempts !== undefined ? `${error.attempts} attempt${error.attempts === 1 ? '' : 's'}` : '',
  ].filter(Boolean);
  if (fate.length) lines.push(fate.join(', '));
  if (error.stderr_tail) lines.push('', '--- last lines of its stderr ---', error.stderr_tail);
  if (result.verdict) lines.push('', verdictText(result.verdict));
  return lines.join('\n');
}

function failureBody(result: EpisodeRecord): string {
  const lines = [result.verdict ? verdictText(result.verdict) : 'no verdict'];
  if (result.answer !== undefined) lines.push('', `answer: ${compactJson(result.answer, 2000)}`);
  const faults = result.calls.filter((c) => c.fault).map((c) => `#${c.index} ${c.tool}: ${c.fault!.type}`);
  if (faults.length > 0) lines.push('', `injected faults: ${faults.join(', ')}`);
  return lines.join('\n');
}

/**
 * One testsuite per namespace (cross-server tasks under `a+b`), one testcase per work unit (task x trial x
 * variant x fault profile x perturbation). A failed episode is a `<failure>` whose body is the verdict tree;
 * an agent error or an infrastructure error (one that no retry resolved) is an `<error>` whose type says
 * which and whose message is the error's.
 */
export function renderJunit(config: Pick<RunRecord, 'run_id' | 'agent' | 'fault_profile' | 'seed' | 'created_at'>, results: readonly EpisodeRecord[]): string {
  const episodes = latestByWorkUnit(results);
  const suites = new Map<string, EpisodeRecord[]>();
  for (const result of episodes) {
    const name = suiteName(result);
    let suite = suites.get(name);
    if (!suite) suites.set(name, (suite = []));
    suite.push(result);
  }
  const count = (list: readonly EpisodeRecord[]) => ({
    tests: list.length,
    failures: list.filter((r) => r.status === 'failed').length,
    errors: list.filter((r) => r.status === 'agent_error' || r.status === 'infra_error').length,
    time: (list.reduce((s, r) => s + r.duration_ms, 0) / 1000).toFixed(3),
  });
  const out = ['<?xml version="1.0" encoding="UTF-8"?>', `<testsuites${attrs({ name: `mcpbench ${config.run_id}`, ...count(episodes) })}>`];
  for (const [name, suite] of [...suites.entries()].sort((a, b) => compareText(a[0], b[0]))) {
    suite.sort((a, b) => compareText(a.task_id, b.task_id) || a.trial - b.trial || compareText(a.variant, b.variant) || compareText(a.fault_profile, b.fault_profile) || compareText(a.perturbation, b.perturbation));
    out.push(`  <testsuite${attrs({ name, ...count(suite), skipped: 0, timestamp: config.created_at })}>`);
    out.push('    <properties>');
    for (const [key, value] of [['run_id', config.run_id], ['agent', config.agent], ['fault_profile', config.fault_profile], ['seed', String(config.seed)]] as const) {
      out.push(`      <property${attrs({ name: key, value })}/>`);
    }
    out.push('    </properties>');
    for (const result of suite) {
      const head = `    <testcase${attrs({ classname: `${name}.${result.task_id}`, name: testCaseName(result), time: (result.duration_ms / 1000).toFixed(3) })}`;
      if (result.error && (result.status === 'agent_error' || result.status === 'infra_error')) {
        const what = result.status === 'agent_error' ? 'agent error' : 'infrastructure error (not counted as an agent failure)';
        out.push(`${head}>`);
        out.push(`      <error${attrs({ message: `${what}: ${result.error.code}: ${result.error.message.split('\n')[0]}`, type: result.status })}>${xmlEscape(errorBody(result))}</error>`);
        out.push('    </testcase>');
      } else if (!result.passed) {
        out.push(`${head}>`);
        out.push(`      <failure${attrs({ message: failureMessage(result), type: result.failure?.code ?? (result.budget_exceeded ? 'budget_exceeded' : 'predicate') })}>${xmlEscape(failureBody(result))}</failure>`);
        out.push('    </testcase>');
      } else out.push(`${head}/>`);
    }
    out.push('  </testsuite>');
  }
  out.push('</testsuites>', '');
  return out.join('\n');
}

// ---------------------------------------------------------------------------------------------------------

export interface ReportOptions {
  /** The plotting libraries to inline; found in node_modules when omitted. */
  assets?: PlotAssets;
  /** The tasks the episodes ran, by canonical hash: their goals go into the episode viewer's pages (never a sealed run's). */
  tasks?: ReadonlyMap<string, Task>;
}

export interface ReportOutput {
  files: { json: string; junit: string; html: string };
  report: ReportJson;
  warnings: string[];
}

/** Writes report.json, junit.xml and report.html of a derived run into `directory`, atomically. */
export function writeReport(directory: string, run: DerivedRun, options: ReportOptions = {}): ReportOutput {
  const warnings = [...run.warnings];
  const { scores, failures } = run;
  const report: ReportJson = { run: run.config, scores, episodes: episodeOutcomes(run.records), ...(failures ? { failures } : {}), warnings };
  const files = { json: join(directory, REPORT_FILES.json), junit: join(directory, REPORT_FILES.junit), html: join(directory, REPORT_FILES.html) };
  writeJsonAtomicSync(files.json, report);
  writeFileAtomicSync(files.junit, renderJunit(run.config, run.records));
  writeEpisodeViews(directory, run, options.tasks);
  writeFileAtomicSync(files.html, renderHtml({ config: run.config, scores, results: [...run.standing], warnings, ...(failures ? { failures } : {}) }, options.assets ?? loadPlotAssets(), { views: true }));
  return { files, report, warnings };
}

/**
 * The episode viewer's pages of a run's standing episodes, in `views/`: written into a new folder that then
 * replaces the old one, so a reader sees one report's pages, never a mix. Pages are derived (a report writes
 * them again), so they are not fsynced one by one. A sealed run's pages hold no task goal but a perturbed one.
 */
export function writeEpisodeViews(directory: string, run: Pick<DerivedRun, 'config' | 'standing'>, tasks?: ReadonlyMap<string, Task>): string {
  const target = join(directory, VIEWS_DIR);
  const fresh = mkdtempSync(join(directory, `${VIEWS_DIR}.new-`));
  const sealed = isSealedRun(run.config);
  for (const record of run.standing) {
    const goal = sealed ? undefined : tasks?.get(record.task_hash)?.goal;
    writeFileSync(join(fresh, `${record.work_unit}.html`), renderEpisodeHtml(record, run.config, goal !== undefined ? { goal } : {}));
  }
  const old = existsSync(target) ? `${target}.old-${process.pid}-${Date.now()}` : undefined;
  if (old) renameSync(target, old);
  renameSync(fresh, target);
  fsyncDirectory(directory);
  if (old) rmSync(old, { recursive: true, force: true });
  return target;
}

/** `mcpbench report`: reads `directory` through the run folder API, derives the run and writes its report. */
export function reportRun(directory: string, options: DeriveOptions & ReportOptions = {}): ReportOutput {
  const { assets, ...derive } = options;
  return writeReport(directory, deriveRun(openRun(directory), derive), { ...(assets ? { assets } : {}), ...(derive.tasks ? { tasks: derive.tasks } : {}) });
}
