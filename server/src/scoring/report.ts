/**
 * `mcpbench report runs/<run-id>`: reads a run directory (run.json, episodes.jsonl) and writes report.json
 * (scores + config), junit.xml and report.html next to them. The CLI only maps argv onto `writeReport` and
 * prints the warnings.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { NodeVerdict } from '../predicates/evaluate.ts';
import type { EpisodeResult } from '../runner/types.ts';
import { computeScores, latestByKey, type ScoreOptions, type Scores } from './metrics.ts';
import { loadPlotAssets, renderHtml, type PlotAssets } from './report-html.ts';
import { countModes, type FailureDiagnosis, type FailureMode } from '../results/failure-modes.ts';

// One place names the run directory's files: the journal that writes them.
import { EPISODES_FILE as JOURNAL_FILE, RUN_FILE } from '../runner/journal.ts';

export { JOURNAL_FILE, RUN_FILE };

/**
 * What the report reads of `run.json` (the journal's RunConfig): the fields it shows, and the rest carried
 * through untouched, so runs written by older versions still report.
 */
export interface RunConfig {
  run_id: string;
  agent: string;
  fault_profile: string;
  seed: number;
  /** The task ids (or files) the run was started with. */
  tasks: string[];
  /** ISO 8601. */
  created_at: string;
  trials?: number;
  perturbations?: string[];
  concurrency?: number;
  /** Anything else the runner records (agent options, versions) is carried through untouched. */
  [extra: string]: unknown;
}

export interface RunData {
  directory: string;
  config: RunConfig;
  /** Journal records in file order (retried infra errors included; scoring picks one per key). */
  results: EpisodeResult[];
  warnings: string[];
}

/** The failure mode of each failed episode (results/failure-modes.ts), and their counts. */
export interface FailureSummary {
  counts: Record<FailureMode, number>;
  /** Failed episodes diagnosed. */
  failed: number;
  /** Share of them with a specific mode rather than `unknown`; null when none failed. */
  specific_share: number | null;
  episodes: ({ task_id: string; trial: number; variant: string; fault_profile: string; perturbation: string } & FailureDiagnosis)[];
}

export interface ReportJson {
  run: RunConfig;
  scores: Scores;
  /** Present when the report was written with a failure diagnoser (the CLI always passes one). */
  failures?: FailureSummary;
  warnings: string[];
}

/** Diagnoses the failed episodes among `results` (one per key). */
export function summarizeFailures(results: readonly EpisodeResult[], diagnose: (result: EpisodeResult) => FailureDiagnosis | null): FailureSummary {
  const episodes = results.flatMap((r) => {
    const d = diagnose(r);
    return d ? [{ task_id: r.task_id, trial: r.trial, variant: r.variant, fault_profile: r.fault_profile, perturbation: r.perturbation, ...d }] : [];
  });
  const counts = countModes(episodes.map((e) => e.mode));
  return { counts, failed: episodes.length, specific_share: episodes.length ? 1 - counts.unknown / episodes.length : null, episodes };
}

function readConfig(directory: string): RunConfig {
  const path = join(directory, RUN_FILE);
  if (!existsSync(path)) throw new Error(`${path} not found: is ${directory} a run directory?`);
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    throw new Error(`${path} is not valid JSON: ${(error as Error).message}`);
  }
  const config = raw as Record<string, unknown>;
  const problems: string[] = [];
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) problems.push('not an object');
  else {
    for (const key of ['run_id', 'agent', 'fault_profile', 'created_at'] as const) {
      if (typeof config[key] !== 'string') problems.push(`${key} must be a string`);
    }
    if (typeof config.seed !== 'number') problems.push('seed must be a number');
    if (!Array.isArray(config.tasks) || !config.tasks.every((t) => typeof t === 'string')) problems.push('tasks must be an array of strings');
  }
  if (problems.length > 0) throw new Error(`${path}: ${problems.join('; ')}`);
  return raw as RunConfig;
}

/**
 * The journal, one EpisodeResult per line. A run killed mid-write leaves a torn last line: it is skipped
 * with a warning (that episode was never committed, `--resume` re-runs it). A bad line elsewhere is skipped
 * too, but the warning says the journal is damaged.
 */
export function readJournal(path: string): { results: EpisodeResult[]; warnings: string[] } {
  const warnings: string[] = [];
  const results: EpisodeResult[] = [];
  if (!existsSync(path)) return { results, warnings: [`${path} not found: no episode was recorded`] };
  const lines = readFileSync(path, 'utf8').split('\n');
  // The last element is what follows the final newline: empty for a journal whose last write completed.
  let last = lines.length - 1;
  while (last >= 0 && lines[last]!.trim() === '') last--;
  for (let i = 0; i <= last; i++) {
    const line = lines[i]!;
    if (line.trim() === '') continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    const record = parsed as Partial<EpisodeResult> | undefined;
    const valid = typeof record === 'object' && record !== null && typeof record.task_id === 'string' && typeof record.status === 'string' && Array.isArray(record.calls);
    if (valid) results.push(record as EpisodeResult);
    else if (i === last) warnings.push(`${path}:${i + 1}: skipped a torn last line (the run was interrupted while writing it)`);
    else warnings.push(`${path}:${i + 1}: skipped a line that is not an episode result: the journal is damaged`);
  }
  return { results, warnings };
}

export function readRun(directory: string): RunData {
  const config = readConfig(directory);
  const { results, warnings } = readJournal(join(directory, JOURNAL_FILE));
  return { directory, config, results, warnings };
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
export function suiteName(result: EpisodeResult): string {
  return result.namespaces.length > 0 ? [...result.namespaces].sort().join('+') : 'unknown';
}

/** Unique within a suite: task, trial, variant, and the conditions the run varied. */
export function testCaseName(result: EpisodeResult): string {
  return `${result.task_id} [trial ${result.trial}] [${result.variant}] [faults ${result.fault_profile}] [perturbation ${result.perturbation}]`;
}

function failureMessage(result: EpisodeResult): string {
  if (result.budget_exceeded) return `step budget exceeded (${result.tool_calls} calls, max_steps ${result.max_steps})`;
  if (!result.verdict) return 'no verdict: the predicate was not evaluated';
  return `success predicate ${truth(result.verdict.value)}`;
}

function failureBody(result: EpisodeResult): string {
  const lines = [result.verdict ? verdictText(result.verdict) : 'no verdict'];
  if (result.answer !== undefined) lines.push('', `answer: ${compactJson(result.answer, 2000)}`);
  const faults = result.calls.filter((c) => c.fault).map((c) => `#${c.index} ${c.tool}: ${c.fault!.type}`);
  if (faults.length > 0) lines.push('', `injected faults: ${faults.join(', ')}`);
  return lines.join('\n');
}

/**
 * One testsuite per namespace (cross-server tasks under `a+b`), one testcase per task x trial x variant
 * (and fault profile and perturbation, when a run varies them). A failed episode is a `<failure>` whose body
 * is the verdict tree; an episode that never got past an infrastructure failure is an `<error>`.
 */
export function renderJunit(config: RunConfig, results: readonly EpisodeResult[]): string {
  const episodes = latestByKey(results);
  const suites = new Map<string, EpisodeResult[]>();
  for (const result of episodes) {
    const name = suiteName(result);
    let suite = suites.get(name);
    if (!suite) suites.set(name, (suite = []));
    suite.push(result);
  }
  const count = (list: readonly EpisodeResult[]) => ({
    tests: list.length,
    failures: list.filter((r) => r.status !== 'infra_error' && !r.passed).length,
    errors: list.filter((r) => r.status === 'infra_error').length,
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
      if (result.status === 'infra_error') {
        out.push(`${head}>`);
        out.push(`      <error${attrs({ message: 'infrastructure error (not counted as an agent failure)', type: 'infra_error' })}>${xmlEscape(result.infra_error ?? 'unknown infrastructure error')}</error>`);
        out.push('    </testcase>');
      } else if (!result.passed) {
        out.push(`${head}>`);
        out.push(`      <failure${attrs({ message: failureMessage(result), type: result.budget_exceeded ? 'budget_exceeded' : 'predicate' })}>${xmlEscape(failureBody(result))}</failure>`);
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
  scoring?: ScoreOptions;
  /** The plotting libraries to inline; found in node_modules when omitted. */
  assets?: PlotAssets;
  /** Classifies a failed episode (results/run-source.ts failureDiagnoser); without it the report has no failure modes. */
  diagnose?: (result: EpisodeResult) => FailureDiagnosis | null;
}

export interface ReportOutput {
  files: { json: string; junit: string; html: string };
  report: ReportJson;
  warnings: string[];
}

/** Reads `directory` and writes report.json, junit.xml and report.html into it. */
export function writeReport(directory: string, options: ReportOptions = {}): ReportOutput {
  const run = readRun(directory);
  // Bootstrap draws follow the run's seed unless the caller says otherwise, so a report is reproducible.
  const scores = computeScores(run.results, { seed: run.config.seed, ...options.scoring });
  const latest = latestByKey(run.results);
  const failures = options.diagnose ? summarizeFailures(latest, options.diagnose) : undefined;
  const report: ReportJson = { run: run.config, scores, ...(failures ? { failures } : {}), warnings: run.warnings };
  const files = { json: join(directory, 'report.json'), junit: join(directory, 'junit.xml'), html: join(directory, 'report.html') };
  writeFileSync(files.json, JSON.stringify(report, null, 2) + '\n');
  writeFileSync(files.junit, renderJunit(run.config, run.results));
  writeFileSync(files.html, renderHtml({ config: run.config, scores, results: latest, warnings: run.warnings, ...(failures ? { failures } : {}) }, options.assets ?? loadPlotAssets()));
  return { files, report, warnings: run.warnings };
}
