/**
 * The review view's side of the `mcpbench review` commands: which arguments to start the CLI with, how to read
 * what it prints, how to say what happened. No review logic here: listing, diffing, deciding and accepting are
 * the CLI's (server/src/generator/review.ts); this module only speaks its command line.
 */
import * as path from 'node:path';
import type { AcceptReport, CandidateDiff, CandidateStatus } from '../../server/src/engine/protocol.ts';

export type { AcceptReport, CandidateDiff, CandidateStatus };

/** `batch.json`, `<name>.batch.json`: the files that make a folder a review batch. */
export function isBatchManifestName(name: string): boolean {
  return name === 'batch.json' || name.endsWith('.batch.json');
}

/** The batch folder a command was invoked on: a manifest's folder, or the folder itself. */
export function batchDirectoryOf(fsPath: string): string {
  return isBatchManifestName(path.basename(fsPath)) ? path.dirname(fsPath) : fsPath;
}

export function reviewListArgs(batch: string): string[] {
  return ['review', 'list', batch, '--format', 'json'];
}

/** `also`: task folders whose variants of the same template count as siblings (the set the batch feeds). */
export function reviewDiffArgs(batch: string, taskId: string, also: string[] = []): string[] {
  return ['review', 'diff', batch, taskId, '--format', 'json', ...(also.length ? ['--also', ...also] : [])];
}

export function reviewDecideArgs(batch: string, taskId: string, decision: 'accept' | 'reject', reason: string, reviewer?: string): string[] {
  return ['review', 'decide', batch, taskId, decision, '--reason', reason, ...(reviewer ? ['--reviewer', reviewer] : [])];
}

export function reviewAcceptArgs(batch: string, into: string): string[] {
  return ['review', 'accept', batch, '--into', into, '--format', 'json'];
}

export class CliOutputError extends Error {}

export interface CliResult {
  code: number | null;
  stdout: string;
  stderr: string;
  error?: Error;
}

/** What went wrong, in the CLI's own words (its `mcpbench: ...` line) where it gave any. */
export function cliFailure(what: string, result: CliResult): string {
  if (result.error) return `${what}: could not start mcpbench: ${result.error.message}`;
  const said = result.stderr
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line && !line.startsWith('warning:'))
    .map((line) => line.replace(/^mcpbench: /, ''));
  return `${what} failed (exit ${result.code})${said.length ? `: ${said.join(' ')}` : ''}`;
}

/** The JSON a `--format json` command printed; exit codes other than those in `ok` are failures. */
export function parseCliJson<T>(what: string, result: CliResult, ok: readonly number[] = [0]): T {
  if (result.code === null || !ok.includes(result.code)) throw new CliOutputError(cliFailure(what, result));
  try {
    return JSON.parse(result.stdout) as T;
  } catch {
    throw new CliOutputError(`${what}: mcpbench printed no JSON (${result.stdout.slice(0, 200) || 'nothing'})`);
  }
}

export interface CandidateCounts {
  total: number;
  accepted: number;
  rejected: number;
  undecided: number;
}

export function countCandidates(candidates: readonly Pick<CandidateStatus, 'state'>[]): CandidateCounts {
  const of = (state: CandidateStatus['state']) => candidates.filter((c) => c.state === state).length;
  return { total: candidates.length, accepted: of('accepted'), rejected: of('rejected'), undecided: of('undecided') };
}

/** One sentence for a notification after `review accept`, and whether it deserves a warning. */
export function acceptSummary(report: AcceptReport, into: string): { text: string; warning: boolean } {
  const parts: string[] = [];
  if (report.accepted.length) parts.push(`${report.accepted.length} accepted into ${into} (${report.accepted.map((a) => a.task_id).join(', ')})`);
  else parts.push(`nothing new accepted into ${into}`);
  if (report.skipped.length) parts.push(`${report.skipped.length} skipped`);
  if (report.refused.length) {
    const undecided = report.refused.filter((r) => /no review decision/.test(r.reason)).length;
    const other = report.refused.length - undecided;
    if (undecided) parts.push(`${undecided} still undecided`);
    if (other) parts.push(`${other} refused: ${report.refused.filter((r) => !/no review decision/.test(r.reason)).map((r) => `${r.task_id} (${r.reason})`).join('; ')}`);
  }
  return { text: parts.join('; ') + '.', warning: report.refused.some((r) => !/no review decision/.test(r.reason)) };
}
