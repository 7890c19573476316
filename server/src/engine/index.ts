/**
 * The engine's facade: every operation an adapter offers (the `mcpbench` commands, the language server, the
 * extension through them), without argv, editor or HTTP. An adapter maps its input onto these and prints or
 * sends what they return; errors are McpbenchErrors carrying their code and exit status (../errors.ts).
 */
import { resolve } from 'node:path';
import { readAttestations, verifyFolder, verifyTasks, type VerifyReport } from '../generator/attest.ts';
import type { Registry } from '../mcp/registry.ts';
import { openRun } from '../record/run-folder.ts';
import { reportRun, type ReportOutput } from '../scoring/report.ts';
import { loadRunTasks } from '../tasks/load.ts';
import { keyFromEnvironment, readSealedTasks } from '../tasks/seal.ts';

export { EXIT_BUDGET, EXIT_FINDINGS, EXIT_INTERRUPTED, EXIT_OK, EXIT_UNMEASURED, EXIT_USAGE, McpbenchError } from '../errors.ts';
export { loadRegistry, type Registry } from '../mcp/registry.ts';

// Tasks: lint, stats, a namespace state from a file, a new task's skeleton, hashes.
export { lintPaths, setComposition, stateFromFile, type LintedFile } from './lint.ts';
export { taskSkeleton, CATEGORIES, DIFFICULTIES, type SkeletonOptions } from '../tasks/skeleton.ts';
export { canonicalHash } from '../canonical-json.ts';

// Runs and checks: a session streams RunEvents (protocol.ts) until run-finished.
export { startRun, runToEnd, runCheck, type SessionOptions } from './session.ts';
export type { RunEvent, RunFinished } from './protocol.ts';
export { runHistory, runView } from './history.ts';
export { doctor } from './doctor.ts';
export { startQueueWorker } from '../queue/worker.ts';
export { queueExecutor } from '../queue/coordinator.ts';
export { checkRedis, redisTarget } from '../queue/redis.ts';

// Generation, review, rotation, sealed sets.
export { sampleBatch, checkBatch, type SampledBatch } from './generate.ts';
export { acceptBatch, candidateDiff, listCandidates, setDecision } from '../generator/review.ts';
export { rotate } from '../generator/rotate.ts';
export { keyFromEnvironment, seal, unseal } from '../tasks/seal.ts';

// The results database.
export { withResultsDb } from '../results/db.ts';
export { importPaths, type ImportOutcome } from '../results/import.ts';
export { listRuns } from '../results/list.ts';
export { configurationText } from '../results/configuration.ts';
export { compare } from '../results/compare.ts';
export { detectAnomalies, loadHistory } from '../results/anomalies.ts';
export { writeLeaderboard } from '../results/leaderboard.ts';
export { isRunFolder, openSourceRun } from '../results/run-source.ts';

/** Writes report.json, junit.xml and report.html for a run folder, judged against the run's own task files. */
export function reportFolder(directory: string, registry: Registry): ReportOutput {
  const folder = resolve(directory);
  return reportRun(folder, { registry, tasks: loadRunTasks(openRun(folder).config) });
}

/** Checks a set (a folder, or a sealed set opened with MCPBENCH_SET_KEY) against its attestations. */
export function verifySet(set: string, attestations: string): VerifyReport {
  return set.endsWith('.sealed.json') ? verifyTasks(readSealedTasks(set, keyFromEnvironment()), readAttestations(attestations)) : verifyFolder(set, attestations);
}
