/**
 * Review batches: `batches/<template id>-<seed>/` holds one file per candidate and `batch.json`, the manifest
 * (schemas/batch.schema.json) that the review step reads and writes. `writeBatch` lays a generation out;
 * `recordBatchChecks` records each candidate's self-test (`checkBatch` in engine/generate.ts runs it, as
 * `mcpbench check` does). A batch that already carries review decisions is never overwritten.
 */
import { existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import type { TaskCheck } from '../runner/check.ts';
import type { GenerateResult } from './generate.ts';
import { BatchManifestSchema, type BatchManifest, type Template } from './model.ts';
import { McpbenchError } from '../errors.ts';

export const BATCH_FILE = 'batch.json';
export const CHECK_RUN_FOLDER = 'check';
const BATCH_SCHEMA_LINK = '../../schemas/batch.schema.json';

export class BatchError extends McpbenchError {
  static override readonly code: string = 'batch';
}

export function batchDirectory(outDir: string, templateId: string, seed: number): string {
  return join(outDir, `${templateId}-${seed}`);
}

export function readBatchManifest(directory: string): BatchManifest {
  const file = join(directory, BATCH_FILE);
  let value: unknown;
  try {
    value = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new BatchError(`${file}: cannot read the batch manifest: ${(error as Error).message}`);
  }
  const parsed = BatchManifestSchema.safeParse(value);
  if (!parsed.success) throw new BatchError(`${file}: not a batch manifest: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export function writeBatchManifest(directory: string, manifest: BatchManifest): void {
  writeJsonAtomicSync(join(directory, BATCH_FILE), manifest);
}

export interface WriteBatchOptions {
  directory: string;
  template: Template;
  /** The template file as the manifest should name it (relative to where generate ran). */
  templateFile: string;
  seed: number;
  count: number;
  result: GenerateResult;
  now?: Date;
}

/**
 * Writes the candidates and the manifest. An earlier unreviewed batch in the folder is replaced (the same
 * seed writes the same files); a batch with any review decision is refused.
 */
export function writeBatch(options: WriteBatchOptions): BatchManifest {
  const { directory, result } = options;
  if (existsSync(join(directory, BATCH_FILE))) {
    const previous = readBatchManifest(directory);
    const reviewed = previous.candidates.filter((c) => c.review).length;
    if (reviewed) throw new BatchError(`${directory} holds a batch with ${reviewed} reviewed candidate(s): finish that review, or generate with another seed or --out`);
    for (const c of previous.candidates) rmSync(join(directory, c.file), { force: true });
    rmSync(join(directory, CHECK_RUN_FOLDER), { recursive: true, force: true });
  }
  mkdirSync(directory, { recursive: true });
  const manifest: BatchManifest = {
    $schema: BATCH_SCHEMA_LINK,
    template: { id: options.template.id, version: options.template.version, file: options.templateFile },
    seed: options.seed,
    count: options.count,
    created_at: (options.now ?? new Date()).toISOString(),
    dropped: { ...result.dropped },
    invalid: result.invalid.map((c) => ({
      task_id: c.task.id,
      seed: c.seed,
      problems: c.diagnostics.filter((d) => d.severity === 'error').map((d) => `${d.start.line + 1}:${d.start.character + 1} ${d.code} ${d.message}`),
    })),
    candidates: result.candidates.map((c) => ({
      file: `${c.task.id}.json`,
      task_id: c.task.id,
      sha256: c.sha256,
      parameters: c.parameters,
      seed: c.seed,
      lint: { errors: c.errors, warnings: c.warnings },
    })),
  };
  for (const c of result.candidates) writeFileAtomicSync(join(directory, `${c.task.id}.json`), c.text);
  writeBatchManifest(directory, manifest);
  return manifest;
}

/**
 * Records each candidate's check verdict in the manifest (what `generate --check` ran over the batch's
 * candidates into `<batch>/check/`; engine/generate.ts runs it).
 */
export function recordBatchChecks(directory: string, manifest: BatchManifest, checks: readonly Pick<TaskCheck, 'task_id' | 'ok' | 'problems'>[]): BatchManifest {
  const byId = new Map(checks.map((c) => [c.task_id, c]));
  for (const candidate of manifest.candidates) {
    const check = byId.get(candidate.task_id);
    if (check) candidate.check = { ok: check.ok, problems: check.problems };
  }
  manifest.check_run = CHECK_RUN_FOLDER;
  writeBatchManifest(directory, manifest);
  return manifest;
}
