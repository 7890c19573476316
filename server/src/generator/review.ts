/**
 * Review batches: `mcpbench generate` writes one folder per batch, one candidate task file per variant and a
 * manifest (`batch.json`, schemas/batch.schema.json) with each candidate's hash, lint and check results. A
 * reviewer records a decision with a reason per candidate; `acceptBatch` moves accepted candidates into a
 * task set. Nothing unreviewed, rejected, failing lint or changed since the batch was written enters a set.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import { isAbsolute, join, normalize, relative } from 'node:path';
import type { Registry } from '../mcp/registry.ts';
import { collectTaskFiles, readText } from '../tasks/files.ts';
import { canonicalHash } from '../canonical-json.ts';
import { lintTask } from '../tasks/lint.ts';
import { type Task } from '../tasks/model.ts';
import { taskNamespaces } from '../tasks/vocabulary.ts';
import { McpbenchError } from '../errors.ts';

export const BATCH_MANIFEST_FILE = 'batch.json';

export type ReviewDecision = 'accepted' | 'rejected';

export interface CandidateReview {
  decision: ReviewDecision;
  reason: string;
  reviewer?: string;
  /** ISO 8601 time of the decision. */
  at: string;
}

export interface BatchCandidate {
  /** The candidate's task file, relative to the batch folder. */
  file: string;
  task_id: string;
  /** SHA-256 of the candidate as written (see `candidateHashMatches`). */
  sha256: string;
  parameters: Record<string, unknown>;
  lint: { errors: number | unknown[]; warnings: number | unknown[] };
  check?: { ok: boolean; problems: unknown[] };
  review?: CandidateReview;
  [key: string]: unknown;
}

export interface BatchManifest {
  template: unknown;
  seed: number;
  created_at: string;
  candidates: BatchCandidate[];
  [key: string]: unknown;
}

export class BatchError extends McpbenchError {
  static override readonly code: string = 'review';
}

/** The manifest file of a batch folder: `batch.json`, or the folder's one `*.batch.json`. */
export function findBatchManifest(batchDir: string): string {
  const standard = join(batchDir, BATCH_MANIFEST_FILE);
  if (existsSync(standard)) return standard;
  let entries: string[];
  try {
    entries = readdirSync(batchDir);
  } catch {
    throw new BatchError(`${batchDir}: no such batch folder`);
  }
  const named = entries.filter((name) => name.endsWith('.batch.json'));
  if (named.length === 1) return join(batchDir, named[0]!);
  throw new BatchError(`${batchDir}: not a review batch (no ${BATCH_MANIFEST_FILE}${named.length > 1 ? `, and ${named.length} *.batch.json files` : ''})`);
}

export function isBatchFolder(dir: string): boolean {
  try {
    findBatchManifest(dir);
    return true;
  } catch {
    return false;
  }
}

const count = (value: unknown): number => (typeof value === 'number' ? value : Array.isArray(value) ? value.length : NaN);

/** Checks the parts of a batch manifest this module relies on; every problem is listed at once. */
export function validateBatchManifest(value: unknown, where: string): BatchManifest {
  const problems: string[] = [];
  const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);
  if (!isObject(value)) throw new BatchError(`${where}: a batch manifest is a JSON object`);
  if (value.template === undefined) problems.push('missing "template"');
  if (typeof value.seed !== 'number' || !Number.isInteger(value.seed)) problems.push('"seed" must be an integer');
  if (typeof value.created_at !== 'string') problems.push('"created_at" must be a string');
  if (!Array.isArray(value.candidates)) problems.push('"candidates" must be an array');
  const ids = new Set<string>();
  for (const [i, c] of (Array.isArray(value.candidates) ? value.candidates : []).entries()) {
    const at = `candidates[${i}]`;
    if (!isObject(c)) {
      problems.push(`${at} must be an object`);
      continue;
    }
    if (typeof c.file !== 'string' || !c.file || isAbsolute(c.file) || normalize(c.file).startsWith('..')) problems.push(`${at}.file must be a path inside the batch folder`);
    if (typeof c.task_id !== 'string' || !c.task_id) problems.push(`${at}.task_id must be a string`);
    else if (ids.has(c.task_id)) problems.push(`${at}.task_id ${c.task_id} appears twice`);
    else ids.add(c.task_id);
    if (typeof c.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(c.sha256)) problems.push(`${at}.sha256 must be 64 lower-case hex digits`);
    if (!isObject(c.lint) || Number.isNaN(count(c.lint.errors)) || Number.isNaN(count(c.lint.warnings))) problems.push(`${at}.lint must be { errors, warnings }`);
    if (c.check !== undefined && (!isObject(c.check) || typeof c.check.ok !== 'boolean')) problems.push(`${at}.check must be { ok, problems }`);
    if (c.review !== undefined) {
      const r = c.review;
      if (!isObject(r) || (r.decision !== 'accepted' && r.decision !== 'rejected')) problems.push(`${at}.review.decision must be "accepted" or "rejected"`);
      else if (typeof r.reason !== 'string' || !r.reason.trim()) problems.push(`${at}.review.reason must say why`);
      else if (typeof r.at !== 'string') problems.push(`${at}.review.at must be an ISO time`);
    }
  }
  if (problems.length) throw new BatchError(`${where}: invalid batch manifest: ${problems.join('; ')}`);
  return value as unknown as BatchManifest;
}

export function readBatch(batchDir: string): { path: string; manifest: BatchManifest } {
  const path = findBatchManifest(batchDir);
  let value: unknown;
  try {
    value = JSON.parse(readText(path));
  } catch (error) {
    throw new BatchError(`${path}: ${(error as Error).message}`);
  }
  return { path, manifest: validateBatchManifest(value, path) };
}

function writeBatch(path: string, manifest: BatchManifest): void {
  writeJsonAtomicSync(path, manifest);
}

/**
 * Whether a candidate file still is what the manifest recorded: the SHA-256 of its canonical JSON (the
 * task's identity everywhere else) or of its exact bytes — either way a changed value is caught.
 */
export function candidateHashMatches(text: string, sha256: string): boolean {
  if (createHash('sha256').update(text, 'utf8').digest('hex') === sha256) return true;
  try {
    return canonicalHash(JSON.parse(text)) === sha256;
  } catch {
    return false;
  }
}

export type CandidateState = 'accepted' | 'rejected' | 'undecided';

export interface CandidateStatus {
  task_id: string;
  file: string;
  path: string;
  state: CandidateState;
  review?: CandidateReview;
  /** `changed`: the file no longer matches the manifest's sha256; `missing`: no such file. */
  integrity: 'ok' | 'changed' | 'missing';
  lint: { errors: number; warnings: number };
  check?: { ok: boolean; problems: unknown[] };
  parameters: Record<string, unknown>;
  /** The candidate's goal as its file states it (absent when the file is missing or not a task). */
  goal?: string;
}

function goalOf(text: string | undefined): string | undefined {
  if (text === undefined) return undefined;
  try {
    const value = JSON.parse(text) as { goal?: unknown };
    return typeof value?.goal === 'string' ? value.goal : undefined;
  } catch {
    return undefined;
  }
}

/** Every candidate of a batch with its decision, integrity, lint and check results, in manifest order. */
export function listCandidates(batchDir: string): CandidateStatus[] {
  const { manifest } = readBatch(batchDir);
  return manifest.candidates.map((c) => {
    const path = join(batchDir, c.file);
    const text = existsSync(path) ? readFileSync(path, 'utf8') : undefined;
    const integrity = text === undefined ? 'missing' : candidateHashMatches(text, c.sha256) ? 'ok' : 'changed';
    const goal = goalOf(text);
    return {
      task_id: c.task_id,
      file: c.file,
      path,
      state: c.review?.decision ?? 'undecided',
      ...(c.review ? { review: c.review } : {}),
      integrity,
      lint: { errors: count(c.lint.errors), warnings: count(c.lint.warnings) },
      ...(c.check ? { check: c.check } : {}),
      parameters: c.parameters ?? {},
      ...(goal !== undefined ? { goal } : {}),
    };
  });
}

export interface DecisionOptions {
  reviewer?: string;
  now?: Date;
}

/** Records a decision in the batch manifest (the one place decisions live); returns the updated candidate. */
export function setDecision(
  batchDir: string,
  taskId: string,
  decision: ReviewDecision | 'accept' | 'reject',
  reason: string,
  reviewer?: string,
  options: DecisionOptions = {},
): BatchCandidate {
  const normalized: ReviewDecision | undefined =
    decision === 'accept' || decision === 'accepted' ? 'accepted' : decision === 'reject' || decision === 'rejected' ? 'rejected' : undefined;
  if (!normalized) throw new BatchError(`decision must be accept or reject, not ${JSON.stringify(decision)}`);
  if (!reason.trim()) throw new BatchError(`a decision needs a reason (why ${taskId} is ${normalized})`);
  const { path, manifest } = readBatch(batchDir);
  const candidate = manifest.candidates.find((c) => c.task_id === taskId);
  if (!candidate) throw new BatchError(`${path}: no candidate ${taskId}; candidates are ${manifest.candidates.map((c) => c.task_id).join(', ')}`);
  const who = reviewer ?? options.reviewer;
  candidate.review = { decision: normalized, reason: reason.trim(), ...(who ? { reviewer: who } : {}), at: (options.now ?? new Date()).toISOString() };
  writeBatch(path, manifest);
  return candidate;
}

export interface ReviewedTask {
  task_id: string;
  /** The candidate file in the batch (or the task file in a pool folder). */
  path: string;
  text: string;
  task: Task;
  sha256: string;
}

/** Why an accepted candidate cannot enter a set, or undefined when it can (lint with `registry` when given). */
function refusal(batchDir: string, c: BatchCandidate, registry?: Registry): { reason: string } | { task: ReviewedTask } {
  if (!c.review) return { reason: 'no review decision: accept or reject it first (mcpbench review decide)' };
  if (c.review.decision !== 'accepted') return { reason: `rejected: ${c.review.reason}` };
  const path = join(batchDir, c.file);
  if (!existsSync(path)) return { reason: `${c.file} is missing from the batch folder` };
  const text = readFileSync(path, 'utf8');
  if (!candidateHashMatches(text, c.sha256)) {
    return { reason: `${c.file} changed after the batch was written (its hash no longer matches the manifest's sha256 ${c.sha256.slice(0, 12)}…); regenerate the batch or restore the file, then review it again` };
  }
  if (count(c.lint.errors) > 0) return { reason: `the batch recorded ${count(c.lint.errors)} lint error(s)` };
  if (c.check && !c.check.ok) return { reason: 'its self-check failed (check.ok is false)' };
  let task: Task;
  try {
    task = JSON.parse(text) as Task;
  } catch (error) {
    return { reason: `${c.file} is not JSON: ${(error as Error).message}` };
  }
  if (task.id !== c.task_id) return { reason: `${c.file} holds task ${task.id}, not ${c.task_id}` };
  if (registry) {
    const errors = lintTask(path, text, registry).diagnostics.filter((d) => d.severity === 'error');
    if (errors.length) return { reason: `lint errors: ${errors.map((d) => `${d.code} ${d.message}`).join('; ')}` };
  }
  return { task: { task_id: c.task_id, path, text, task, sha256: canonicalHash(task) } };
}

/** The accepted, intact, lint-clean candidates of a batch: what rotation may draw from. */
export function reviewedCandidates(batchDir: string, registry?: Registry): ReviewedTask[] {
  const { manifest } = readBatch(batchDir);
  const out: ReviewedTask[] = [];
  for (const c of manifest.candidates) {
    const result = refusal(batchDir, c, registry);
    if ('task' in result) out.push(result.task);
  }
  return out;
}

export interface AcceptOptions {
  /** The task set folder; accepted candidates go to `<into>/<namespace>/<id>.json`. */
  into: string;
  registry?: Registry;
}

export interface AcceptReport {
  accepted: { task_id: string; file: string }[];
  /** Rejected candidates, and accepted ones already in the set with the same content. */
  skipped: { task_id: string; reason: string }[];
  /** Candidates that cannot enter the set; the command fails when there are any. */
  refused: { task_id: string; reason: string }[];
}

export const primaryNamespace = (task: Pick<Task, 'server'>): string => taskNamespaces(task)[0]!;

function idsInFolder(dir: string): Map<string, { file: string; sha256: string }> {
  const ids = new Map<string, { file: string; sha256: string }>();
  if (!existsSync(dir)) return ids;
  for (const file of collectTaskFiles([dir])) {
    try {
      const task = JSON.parse(readFileSync(file, 'utf8')) as Task;
      if (typeof task.id === 'string') ids.set(task.id, { file, sha256: canonicalHash(task) });
    } catch {
      // Not a task we can read: the linter reports it; it cannot hold an id we would clash with.
    }
  }
  return ids;
}

/**
 * Copies every accepted candidate into the set, as it was reviewed (its `template` provenance included).
 * The batch keeps its files, so it stays the record of what was reviewed. Undecided candidates, lint or
 * check failures, changed files and ids already in the set are refused, each with its reason.
 */
export function acceptBatch(batchDir: string, options: AcceptOptions): AcceptReport {
  const { manifest } = readBatch(batchDir);
  const report: AcceptReport = { accepted: [], skipped: [], refused: [] };
  const existing = idsInFolder(options.into);
  for (const c of manifest.candidates) {
    if (c.review?.decision === 'rejected') {
      report.skipped.push({ task_id: c.task_id, reason: `rejected: ${c.review.reason}` });
      continue;
    }
    const result = refusal(batchDir, c, options.registry);
    if ('reason' in result) {
      report.refused.push({ task_id: c.task_id, reason: result.reason });
      continue;
    }
    const { task, text, sha256 } = result.task;
    const already = existing.get(task.id);
    if (already) {
      if (already.sha256 === sha256) report.skipped.push({ task_id: task.id, reason: `already in the set as ${relative(options.into, already.file)}` });
      else report.refused.push({ task_id: task.id, reason: `the id ${task.id} is already in the set (${already.file}) with other content` });
      continue;
    }
    const target = join(options.into, primaryNamespace(task), `${task.id}.json`);
    mkdirSync(join(options.into, primaryNamespace(task)), { recursive: true });
    writeFileAtomicSync(target, text.endsWith('\n') ? text : `${text}\n`);
    existing.set(task.id, { file: target, sha256 });
    report.accepted.push({ task_id: task.id, file: target });
  }
  return report;
}

// ---- Diff against the template's other variants ------------------------------------------------------------

export interface JsonChange {
  /** JSON Pointer (RFC 6901) of the change. */
  path: string;
  kind: 'added' | 'removed' | 'changed';
  before?: unknown;
  after?: unknown;
}

const pointerToken = (key: string | number) => String(key).replace(/~/g, '~0').replace(/\//g, '~1');
const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** A structural diff: the JSON Pointers where `after` differs from `before`, in document order. */
export function jsonDiff(before: unknown, after: unknown, path = '', out: JsonChange[] = []): JsonChange[] {
  if (Array.isArray(before) && Array.isArray(after)) {
    for (let i = 0; i < Math.max(before.length, after.length); i++) {
      const at = `${path}/${i}`;
      if (i >= before.length) out.push({ path: at, kind: 'added', after: after[i] });
      else if (i >= after.length) out.push({ path: at, kind: 'removed', before: before[i] });
      else jsonDiff(before[i], after[i], at, out);
    }
  } else if (isPlainObject(before) && isPlainObject(after)) {
    for (const key of new Set([...Object.keys(before), ...Object.keys(after)])) {
      const at = `${path}/${pointerToken(key)}`;
      if (!(key in after)) out.push({ path: at, kind: 'removed', before: before[key] });
      else if (!(key in before)) out.push({ path: at, kind: 'added', after: after[key] });
      else jsonDiff(before[key], after[key], at, out);
    }
  } else if (canonicalHash(before ?? null) !== canonicalHash(after ?? null)) {
    out.push({ path: path || '/', kind: 'changed', before, after });
  }
  return out;
}

export interface CandidateDiff {
  task_id: string;
  /** The nearest other variant of the same template (fewest differences), if there is one. */
  sibling?: { task_id: string; path: string };
  /** From the sibling to the candidate (the id left out). */
  changes: JsonChange[];
}

const templateId = (task: unknown): string | undefined => (isPlainObject(task) && isPlainObject(task.template) && typeof task.template.id === 'string' ? task.template.id : undefined);

/**
 * The candidate against its nearest sibling: the other candidates of the batch, plus tasks of the same
 * template in `also` (the set it would join), by fewest structural differences (ties: manifest order).
 */
export function candidateDiff(batchDir: string, taskId: string, options: { also?: string[] } = {}): CandidateDiff {
  const { manifest } = readBatch(batchDir);
  const target = manifest.candidates.find((c) => c.task_id === taskId);
  if (!target) throw new BatchError(`${batchDir}: no candidate ${taskId}`);
  const read = (path: string): unknown => {
    try {
      return JSON.parse(readFileSync(path, 'utf8'));
    } catch {
      return undefined;
    }
  };
  const withoutId = (task: unknown) => {
    if (!isPlainObject(task)) return task;
    const { id: _id, ...rest } = task;
    return rest;
  };
  const candidate = read(join(batchDir, target.file));
  if (candidate === undefined) throw new BatchError(`${join(batchDir, target.file)}: cannot read the candidate as JSON`);
  const siblings: { task_id: string; path: string; value: unknown }[] = [];
  for (const c of manifest.candidates) {
    if (c.task_id === taskId) continue;
    const path = join(batchDir, c.file);
    const value = read(path);
    if (value !== undefined) siblings.push({ task_id: c.task_id, path, value });
  }
  const template = templateId(candidate);
  if (options.also?.length && template) {
    for (const path of collectTaskFiles(options.also)) {
      const value = read(path);
      if (templateId(value) === template && isPlainObject(value) && value.id !== taskId) siblings.push({ task_id: String(value.id), path, value });
    }
  }
  let best: { task_id: string; path: string; changes: JsonChange[] } | undefined;
  for (const s of siblings) {
    const changes = jsonDiff(withoutId(s.value), withoutId(candidate));
    if (!best || changes.length < best.changes.length) best = { task_id: s.task_id, path: s.path, changes };
  }
  if (!best) return { task_id: taskId, changes: jsonDiff({}, withoutId(candidate)) };
  return { task_id: taskId, sibling: { task_id: best.task_id, path: best.path }, changes: best.changes };
}
