/**
 * Which episode viewer page a request names (no vscode here, so it is tested as plain code). The runner
 * panel's page is not trusted to name paths: it names a run id and a work unit, and only a page of a run
 * folder under the workspace's runs/ is opened.
 */
import path from 'node:path';
import { episodeViewFile } from '../../server/src/record/run-folder.ts';

const WORK_UNIT = /^[0-9a-f]{64}$/;
const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]*$/;

/** The page of `workUnit` in run `runId` under `runsDirectory`, or undefined when either is not well formed. */
export function episodeViewTarget(runsDirectory: string, runId: unknown, workUnit: unknown): string | undefined {
  if (typeof runId !== 'string' || !RUN_ID.test(runId) || runId.includes('..')) return undefined;
  if (typeof workUnit !== 'string' || !WORK_UNIT.test(workUnit)) return undefined;
  return episodeViewFile(path.join(runsDirectory, runId), workUnit);
}

/** A work unit as people see it in a list: its first 12 hex digits. */
export const shortUnit = (workUnit: string): string => workUnit.slice(0, 12);
