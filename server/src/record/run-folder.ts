/**
 * The run record: the one reader and writer of a run folder, used by the CLI, the session, the reports, the
 * language server and the extension alike.
 *
 *   runs/<run-id>/run.json                   RunRecord: what the run was asked to do (written atomically)
 *   runs/<run-id>/episodes.jsonl             one EpisodeRecord per line, appended and fsynced per episode
 *   runs/<run-id>/episodes.quarantine.jsonl  lines that did not parse, moved here byte for byte on resume
 *   runs/<run-id>/checks.json                CheckRecords of a check run (written atomically at its end)
 *   runs/<run-id>/views/<work-unit>.html     the episode viewer's page of each episode (written with the report)
 *   runs/<run-id>/states/<end-state>.json    EndStateFile: the end states an episode was judged on, by their hash
 *                                            (`end_state`), each written once (atomically), so a run can be re-judged
 *
 * Every episode carries its work-unit key (`workUnitKey`): a hash of what decides its outcome (task hash,
 * variant, trial, fault profile, perturbation level, run seed), never of volatile config. Resume, retries,
 * scoring and the queue all identify an episode by it.
 *
 * Reading never changes a folder: `openRun` reports damaged lines (and a torn last line, which a writer may
 * still be finishing) and reads every good line, before and after the damage. `resumeRun` opens a run to
 * append to it: it first moves damaged lines to the quarantine file, so their work units run again and no
 * good episode is ever dropped. Every reader reads the same episodes.
 *
 * Versions: run.json has `version` (RUN_RECORD_VERSION). A run.json without a numeric version (written
 * before the record was typed, where `version` held the package version) is read and upgraded in memory,
 * its episode lines too (their work unit is computed from their fields); a newer version is refused with a
 * message that says so.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readdirSync, readFileSync, statSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import { RUN_RECORD_VERSION, EndStateFileSchema, type EndStateFile, EpisodeRecordSchema, episodeRecordProblem, LegacyEpisodeSchema, RunRecordSchema, LegacyRunSchema, ChecksFileSchema, type RunRecord, type EpisodeRecord, type CheckRecord, type NewRunRecord } from './schema.ts';
import { workUnitKey, type OutcomeCounts, outcomeCounts } from './work-units.ts';
import { McpbenchError } from '../errors.ts';

export const RUN_FILE = 'run.json';
export const EPISODES_FILE = 'episodes.jsonl';
export const QUARANTINE_FILE = 'episodes.quarantine.jsonl';
export const CHECKS_FILE = 'checks.json';
export const REPORT_FILES = { json: 'report.json', junit: 'junit.xml', html: 'report.html' } as const;
/** The end states episodes were judged on, content-addressed (`states/<end_state>.json`). */
export const STATES_DIR = 'states';
/** The largest end state kept whole (bytes of its JSON); a larger one is kept as a marker that says it was cut. */
export const END_STATE_MAX_BYTES = 8 * 1024 * 1024;

/** The episode viewer's pages, one per standing episode, written with the report. */
export const VIEWS_DIR = 'views';

/** The page of an episode in the episode viewer (it exists once the run's report was written). */
export function episodeViewFile(directory: string, workUnit: string): string {
  return join(directory, VIEWS_DIR, `${workUnit}.html`);
}

export class RunStoreError extends McpbenchError {
  static override readonly code: string = 'run-store';
  /** The file at fault. */
  declare readonly file: string;
  declare readonly code: 'not-a-run' | 'unreadable' | 'invalid' | 'newer-version' | 'exists';
  constructor(message: string, file: string, code: RunStoreError['code']) {
    super(message, { file, code });
  }
}

// ---- Schemas --------------------------------------------------------------------------------------------
// ---- Work units -----------------------------------------------------------------------------------------
// ---- Reading lines --------------------------------------------------------------------------------------

/** A journal line that is not an episode record. */
export interface DamagedLine {
  /** 1-based line number in the journal. */
  line: number;
  /** Why it was not read. */
  reason: string;
  /** The last line, without its newline: a write that was cut off (or is still being made). */
  torn: boolean;
  /** The line's exact bytes (without its newline). */
  bytes: Buffer;
}

const issuesText = (error: z.ZodError) =>
  error.issues
    .slice(0, 3)
    .map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`)
    .join('; ');

/** Parses one journal line: a current record, or a legacy one upgraded; else why not. */
export function parseEpisodeLine(text: string): { record: EpisodeRecord } | { reason: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { reason: `not JSON: ${(error as Error).message}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { reason: 'not an object' };
  if ('work_unit' in value) {
    const parsed = EpisodeRecordSchema.safeParse(value);
    if (!parsed.success) return { reason: `not an episode record: ${issuesText(parsed.error)}` };
    const problem = episodeRecordProblem(parsed.data);
    return problem ? { reason: `not an episode record: ${problem}` } : { record: parsed.data };
  }
  const legacy = LegacyEpisodeSchema.safeParse(value);
  if (!legacy.success) return { reason: `not an episode record of any version: ${issuesText(legacy.error)}` };
  return { record: upgradeEpisode(legacy.data) };
}

function upgradeEpisode(legacy: z.infer<typeof LegacyEpisodeSchema>): EpisodeRecord {
  const { infra_error, agent_error, status, ...rest } = legacy;
  const base = { work_unit: workUnitKey(legacy), ...rest };
  if (status === 'infra_error') return { ...base, status, passed: false, error: { kind: 'infra', code: 'legacy', message: infra_error ?? 'infrastructure error' } };
  if (agent_error !== undefined) return { ...base, status: 'agent_error', passed: false, error: { kind: 'agent', code: 'legacy', message: agent_error } };
  return { ...base, status };
}

interface JournalContent {
  episodes: EpisodeRecord[];
  damaged: DamagedLine[];
  /** Bytes of the good lines, each with its newline, in file order (what a repaired journal holds). */
  good: Buffer[];
}

function readJournal(file: string): JournalContent {
  const content: JournalContent = { episodes: [], damaged: [], good: [] };
  if (!existsSync(file)) return content;
  const buffer = readFileSync(file);
  let start = 0;
  let line = 0;
  while (start < buffer.length) {
    line++;
    const newline = buffer.indexOf(0x0a, start);
    const end = newline < 0 ? buffer.length : newline;
    const bytes = buffer.subarray(start, end);
    start = end + 1;
    const text = bytes.toString('utf8');
    if (text.trim() === '') continue;
    if (newline < 0) {
      content.damaged.push({ line, reason: 'a torn last line (the write was cut off, or is still being made)', torn: true, bytes: Buffer.from(bytes) });
      break;
    }
    const parsed = parseEpisodeLine(text);
    if ('record' in parsed) {
      content.episodes.push(parsed.record);
      content.good.push(buffer.subarray(end - bytes.length, end + 1));
    } else content.damaged.push({ line, reason: parsed.reason, torn: false, bytes: Buffer.from(bytes) });
  }
  return content;
}

/** Lines kept in the quarantine file (one per line, exactly as they were). */
function readQuarantine(file: string): Buffer[] {
  if (!existsSync(file)) return [];
  const buffer = readFileSync(file);
  const lines: Buffer[] = [];
  let start = 0;
  while (start < buffer.length) {
    const newline = buffer.indexOf(0x0a, start);
    const end = newline < 0 ? buffer.length : newline;
    if (end > start) lines.push(buffer.subarray(start, end));
    start = end + 1;
  }
  return lines;
}

function readRunRecord(directory: string): { record: RunRecord; legacy: boolean } {
  const file = join(directory, RUN_FILE);
  if (!existsSync(file)) throw new RunStoreError(`${directory} is not a run folder (no ${RUN_FILE})`, file, 'not-a-run');
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RunStoreError(`${file}: not readable JSON: ${(error as Error).message}`, file, 'unreadable');
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new RunStoreError(`${file}: not a run record (not a JSON object)`, file, 'invalid');
  const version = (value as { version?: unknown }).version;
  if (typeof version === 'number') {
    if (version > RUN_RECORD_VERSION) {
      throw new RunStoreError(`${file}: written by a newer mcpbench (run record version ${version}; this one reads up to ${RUN_RECORD_VERSION})`, file, 'newer-version');
    }
    const parsed = RunRecordSchema.safeParse(value);
    if (!parsed.success) throw new RunStoreError(`${file}: not a run record: ${issuesText(parsed.error)}`, file, 'invalid');
    return { record: parsed.data, legacy: false };
  }
  const legacy = LegacyRunSchema.safeParse(value);
  if (!legacy.success) throw new RunStoreError(`${file}: not a run record of any version: ${issuesText(legacy.error)}`, file, 'invalid');
  return { record: upgradeRun(legacy.data), legacy: true };
}

function upgradeRun(legacy: z.infer<typeof LegacyRunSchema>): RunRecord {
  const old = legacy.agent_options ?? {};
  // The old CLI recorded every agent flag for every agent; each descriptor now reads its own option names.
  const agentOptions: Record<string, unknown> = {};
  if (legacy.agent === 'reference' && legacy.retry !== undefined) agentOptions.retry = legacy.retry;
  if (legacy.agent === 'command' && typeof old.agentCommand === 'string') agentOptions.command = old.agentCommand;
  if (legacy.agent === 'endpoint' && typeof old.endpoint === 'string') agentOptions.url = old.endpoint;
  if (legacy.agent === 'openai' || legacy.agent === 'anthropic') {
    if (typeof old.model === 'string') agentOptions.model = old.model;
    if (typeof old.baseUrl === 'string') agentOptions.base_url = old.baseUrl;
    // Settings recorded in full are the options as they are now (the descriptor checks them on resume).
    Object.assign(agentOptions, legacy.agent_settings ?? {});
    delete agentOptions.agent;
  }
  return {
    version: RUN_RECORD_VERSION,
    kind: legacy.agent === 'check' ? 'check' : 'run',
    run_id: legacy.run_id,
    created_at: legacy.created_at,
    ...(legacy.version !== undefined ? { mcpbench_version: legacy.version } : {}),
    task_files: legacy.task_files,
    tasks: legacy.tasks,
    agent: legacy.agent,
    agent_options: agentOptions,
    fault_profile: legacy.fault_profile,
    ...(typeof old.faultRate === 'number' ? { fault_rate: old.faultRate } : {}),
    ...(legacy.max_cost !== undefined ? { max_cost: legacy.max_cost } : {}),
    perturbations: legacy.perturbations ?? legacy.perturbation.split(',').map((l) => l.trim()).filter(Boolean),
    ...(legacy.paraphrase ? { paraphrase: legacy.paraphrase } : {}),
    trials: legacy.trials,
    seed: legacy.seed,
    concurrency: legacy.concurrency,
    sandbox: legacy.sandbox,
    ...(legacy.set ? { set: legacy.set } : {}),
  };
}

// ---- Runs -----------------------------------------------------------------------------------------------

/** A run folder as read: the same for every reader. */
export interface StoredRun {
  readonly directory: string;
  /** run.json (upgraded in memory when it was written by an older version). */
  readonly config: RunRecord;
  /** Every episode record, in file order (retried infra errors included; `latestByWorkUnit` picks one per unit). */
  readonly episodes: readonly EpisodeRecord[];
  /** Journal lines that are not episode records (left in place by `openRun`, moved by `resumeRun`). */
  readonly damaged: readonly DamagedLine[];
  /** Lines already moved to the quarantine file. */
  readonly quarantined: number;
  /** One sentence per damaged or quarantined line (`file:line: why`), for reports and the editor. */
  readonly warnings: readonly string[];
}

/** A run open for appending (created, or resumed). */
export interface WritableRun extends StoredRun {
  /** Appends one finished episode and makes it durable (fsync) before returning; refuses an invalid record. */
  append(record: EpisodeRecord): void;
  /** Writes checks.json (atomically). */
  writeChecks(checks: readonly CheckRecord[]): void;
  /** Changes what a resume may change in run.json (the cost budget, the warnings) and rewrites it atomically. */
  updateRecord(update: RunRecordUpdate): void;
  /**
   * Keeps the end states an episode was judged on under their hash (its record's `end_state`), once per hash;
   * past `maxBytes` (default END_STATE_MAX_BYTES, or MCPBENCH_END_STATE_MAX_BYTES) only a marker that says so.
   */
  keepEndState(hash: string, states: Record<string, unknown>, maxBytes?: number): void;
}

/** The fields of run.json a resumed run may change: a new cost budget, the warnings with the resume's own added, the plan. */
export type RunRecordUpdate = Partial<Pick<RunRecord, 'max_cost' | 'warnings' | 'plan'>>;

function warningsOf(directory: string, damaged: readonly DamagedLine[], quarantined: number): string[] {
  const journal = join(directory, EPISODES_FILE);
  const warnings = damaged.map((d) => `${journal}:${d.line}: ${d.torn ? 'skipped' : 'skipped a damaged line'}: ${d.reason}`);
  if (quarantined) warnings.push(`${join(directory, QUARANTINE_FILE)}: ${quarantined} damaged line(s) were moved here; their work units were run again`);
  return warnings;
}

class RunFolder implements WritableRun {
  readonly warnings: string[];
  constructor(
    readonly directory: string,
    public config: RunRecord,
    readonly episodes: EpisodeRecord[],
    readonly damaged: DamagedLine[],
    readonly quarantined: number,
  ) {
    this.warnings = warningsOf(directory, damaged, quarantined);
  }

  append(record: EpisodeRecord): void {
    // Nothing goes into the journal that its readers would refuse.
    const parsed = EpisodeRecordSchema.safeParse(record);
    const problem = parsed.success ? episodeRecordProblem(parsed.data) : issuesText(parsed.error);
    if (problem) throw new RunStoreError(`${join(this.directory, EPISODES_FILE)}: refused to append an invalid episode record: ${problem}`, join(this.directory, EPISODES_FILE), 'invalid');
    const fd = openSync(join(this.directory, EPISODES_FILE), 'a');
    try {
      writeSync(fd, `${JSON.stringify(record)}\n`);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.episodes.push(record);
  }

  writeChecks(checks: readonly CheckRecord[]): void {
    writeJsonAtomicSync(join(this.directory, CHECKS_FILE), { version: RUN_RECORD_VERSION, run_id: this.config.run_id, checks });
  }

  updateRecord(update: RunRecordUpdate): void {
    const record = RunRecordSchema.parse({ ...this.config, ...update });
    writeJsonAtomicSync(join(this.directory, RUN_FILE), record);
    this.config = record;
  }

  keepEndState(hash: string, states: Record<string, unknown>, maxBytes = endStateLimit()): void {
    if (!/^[0-9a-f]{64}$/.test(hash)) throw new RunStoreError(`refused to keep an end state under ${JSON.stringify(hash)} (not a SHA-256)`, join(this.directory, STATES_DIR), 'invalid');
    const file = join(this.directory, STATES_DIR, `${hash}.json`);
    if (existsSync(file)) return;
    const text = JSON.stringify(states);
    const bytes = Buffer.byteLength(text);
    mkdirSync(join(this.directory, STATES_DIR), { recursive: true });
    const kept: EndStateFile = bytes <= maxBytes ? { version: 1, hash, states } : { version: 1, hash, cut: { bytes, limit: maxBytes } };
    writeJsonAtomicSync(file, kept);
  }
}

function endStateLimit(): number {
  const value = Number(process.env.MCPBENCH_END_STATE_MAX_BYTES);
  return Number.isInteger(value) && value > 0 ? value : END_STATE_MAX_BYTES;
}

/** A JSON file of the record read and checked against its schema; RunStoreError when it is not readable or not `what`. */
function readRecordFile<T>(file: string, schema: z.ZodType<T>, what: string): { data: T } {
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new RunStoreError(`${file}: not readable JSON: ${(error as Error).message}`, file, 'unreadable');
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new RunStoreError(`${file}: not ${what}: ${issuesText(parsed.error)}`, file, 'invalid');
  return { data: parsed.data };
}

/**
 * The end states an episode was judged on (`states` of its record's `end_state`): the states themselves, a
 * marker that they were larger than the limit when the run kept them, or undefined when the run kept none
 * (one made before end states were kept, or one whose episodes ran on queue workers).
 */
export function readEndState(directory: string, hash: string): EndStateFile | undefined {
  if (!/^[0-9a-f]{64}$/.test(hash)) return undefined;
  const file = join(directory, STATES_DIR, `${hash}.json`);
  if (!existsSync(file)) return undefined;
  const parsed = readRecordFile(file, EndStateFileSchema, 'an end state');
  if (parsed.data.hash !== hash) throw new RunStoreError(`${file}: holds the end state ${parsed.data.hash}, not ${hash}`, file, 'invalid');
  return parsed.data;
}

/** Starts a run folder (run.json written atomically, an empty journal); refuses a folder that holds a run. */
export function createRun(directory: string, config: NewRunRecord): WritableRun {
  const file = join(directory, RUN_FILE);
  if (existsSync(file)) throw new RunStoreError(`${directory} already holds a run: resume it (mcpbench run --resume ${directory})`, file, 'exists');
  const record = RunRecordSchema.parse({ version: RUN_RECORD_VERSION, ...config });
  mkdirSync(directory, { recursive: true });
  writeFileAtomicSync(join(directory, EPISODES_FILE), '');
  // run.json last: a folder with a run.json always has its journal.
  writeJsonAtomicSync(file, record);
  return new RunFolder(directory, record, [], [], 0);
}

/** Reads a run folder; never writes to it. Throws RunStoreError when run.json is missing or invalid. */
export function openRun(directory: string): StoredRun {
  const { record } = readRunRecord(directory);
  const journal = readJournal(join(directory, EPISODES_FILE));
  return new RunFolder(directory, record, journal.episodes, journal.damaged, readQuarantine(join(directory, QUARANTINE_FILE)).length);
}

/**
 * Opens a run to append to it. Damaged lines (a torn last line included) are first moved, byte for byte,
 * to the quarantine file (fsynced), then the journal is rewritten atomically without them: every good
 * episode, before and after the damage, is kept as it was. A run.json of an older version is rewritten in
 * the current one. `moved` lists what was quarantined now.
 */
export function resumeRun(directory: string): WritableRun & { readonly moved: readonly DamagedLine[] } {
  const { record, legacy } = readRunRecord(directory);
  const journalFile = join(directory, EPISODES_FILE);
  const quarantineFile = join(directory, QUARANTINE_FILE);
  const journal = readJournal(journalFile);
  const already = readQuarantine(quarantineFile);
  if (journal.damaged.length) {
    // A kill between the two steps leaves the lines in both files: the next resume does not copy them again.
    const known = new Set(already.map((b) => b.toString('latin1')));
    const fresh = journal.damaged.filter((d) => !known.has(d.bytes.toString('latin1')));
    if (fresh.length) {
      const fd = openSync(quarantineFile, 'a');
      try {
        for (const d of fresh) writeSync(fd, Buffer.concat([d.bytes, Buffer.from('\n')]));
        fsyncSync(fd);
      } finally {
        closeSync(fd);
      }
    }
    writeFileAtomicSync(journalFile, Buffer.concat(journal.good));
  }
  if (legacy) writeJsonAtomicSync(join(directory, RUN_FILE), record);
  const quarantined = readQuarantine(quarantineFile).length;
  const run = new RunFolder(directory, record, journal.episodes, [], quarantined);
  return Object.assign(run, { moved: journal.damaged });
}

/** checks.json of a check run, or undefined when there is none (the check was interrupted, or is running). */
export function readChecks(directory: string): CheckRecord[] | undefined {
  const file = join(directory, CHECKS_FILE);
  if (!existsSync(file)) return undefined;
  return readRecordFile(file, ChecksFileSchema, 'a checks record').data.checks;
}

/** One entry of `listRuns`. */
export interface RunListing {
  directory: string;
  /** The run id (the folder name when run.json cannot be read). */
  id: string;
  config?: RunRecord;
  /** Why the folder could not be read. */
  error?: string;
  /** Outcomes over the standing record of each work unit. */
  outcomes: OutcomeCounts;
  /** Work units recorded. */
  episodes: number;
  damaged: number;
  /** report.html, when the run has one. */
  report?: string;
  /**
   * A check run's verdicts (checks.json): the tasks judged and those that fail. Absent while the check runs
   * and when it was interrupted (a resumed check writes it).
   */
  checks?: CheckListing;
}

/** What a check run decided, in a line: `ok` when every task it judged is ok. */
export interface CheckListing {
  tasks: number;
  /** Ids of the tasks whose check fails. */
  failing: string[];
}

/** The runs under `runsDirectory` (each sub-folder with a run.json), newest first. */
export function listRuns(runsDirectory: string): RunListing[] {
  if (!existsSync(runsDirectory)) return [];
  const listings: (RunListing & { created: string })[] = [];
  for (const name of readdirSync(runsDirectory)) {
    const directory = join(runsDirectory, name);
    try {
      if (!statSync(directory).isDirectory() || !existsSync(join(directory, RUN_FILE))) continue;
    } catch {
      continue;
    }
    const report = join(directory, REPORT_FILES.html);
    const extra = existsSync(report) ? { report } : {};
    try {
      const run = openRun(directory);
      const outcomes = outcomeCounts([...run.episodes]);
      const checks = run.config.kind === 'check' ? readChecks(directory) : undefined;
      listings.push({
        directory,
        id: run.config.run_id,
        config: run.config,
        outcomes,
        episodes: outcomes.passed + outcomes.failed + outcomes.agent_error + outcomes.infra_error,
        damaged: run.damaged.length,
        created: run.config.created_at,
        ...(checks ? { checks: { tasks: checks.length, failing: checks.filter((c) => !c.ok).map((c) => c.task_id) } } : {}),
        ...extra,
      });
    } catch (error) {
      listings.push({ directory, id: name, error: (error as Error).message, outcomes: { passed: 0, failed: 0, agent_error: 0, infra_error: 0 }, episodes: 0, damaged: 0, created: '', ...extra });
    }
  }
  return listings.sort((a, b) => b.created.localeCompare(a.created) || b.id.localeCompare(a.id)).map(({ created: _created, ...listing }) => listing);
}
