/**
 * Generation with a self-test: `generate --check` runs check on every candidate of a review batch (as
 * `mcpbench check` does, its journal in `<batch>/check/`) and records the verdicts in the batch manifest.
 */
import { rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { batchDirectory, CHECK_RUN_FOLDER, readBatchManifest, recordBatchChecks, writeBatch } from '../generator/batch.ts';
import { generateVariants, type GenerateResult } from '../generator/generate.ts';
import { lintTemplate } from '../generator/lint-template.ts';
import { TemplateSchema, type BatchManifest, type Template } from '../generator/model.ts';
import type { Registry } from '../mcp/registry.ts';
import type { Diagnostic } from '../tasks/diagnostics.ts';
import { readText } from '../tasks/files.ts';
import type { TaskCheck } from '../runner/check.ts';
import { loadTasks } from '../tasks/load.ts';
import type { RunEvent } from './protocol.ts';
import { runCheck, type CheckOptions } from './session.ts';

/** As for any check run; the batch decides where its run folder goes and what it is called. */
export type CheckBatchOptions = Omit<CheckOptions, 'mode' | 'tasks' | 'directory' | 'out' | 'runId'> & { onEvent?: (event: RunEvent) => void };

/**
 * Runs check on every candidate of the batch (journal in `<batch>/check/`), records `check` per candidate in
 * the manifest, and returns the per-task verdicts. An interrupted check records nothing.
 */
export async function checkBatch(directory: string, options: CheckBatchOptions): Promise<{ checks: TaskCheck[]; interrupted: boolean; manifest: BatchManifest }> {
  const manifest = readBatchManifest(directory);
  const tasks = loadTasks(manifest.candidates.map((c) => join(directory, c.file)), options.registry);
  const runDirectory = join(directory, CHECK_RUN_FOLDER);
  rmSync(runDirectory, { recursive: true, force: true });
  const { onEvent, ...session } = options;
  const { checks, interrupted } = await runCheck(tasks, { ...session, directory: runDirectory, runId: `check-${manifest.template.id}-${manifest.seed}` }, onEvent);
  if (interrupted) return { checks, interrupted: true, manifest };
  return { checks, interrupted: false, manifest: recordBatchChecks(directory, manifest, checks) };
}

export type SampledBatch =
  | { ok: false; diagnostics: Diagnostic[] }
  | { ok: true; diagnostics: Diagnostic[]; directory: string; template: Template; manifest: BatchManifest; result: GenerateResult };

/**
 * Lints a template (its errors stop it: `ok: false`) and samples `count` variants into a review batch
 * `<outDir>/<template id>-<seed>/`. `templateFile` is how the manifest names the template.
 */
export function sampleBatch(path: string, options: { registry: Registry; outDir: string; count: number; seed: number; templateFile: string }): SampledBatch {
  const text = readText(path);
  const { diagnostics } = lintTemplate(path, text, options.registry);
  if (diagnostics.some((d) => d.severity === 'error')) return { ok: false, diagnostics };
  const template: Template = TemplateSchema.parse(JSON.parse(text));
  const directory = batchDirectory(options.outDir, template.id, options.seed);
  const result = generateVariants(template, { count: options.count, seed: options.seed, registry: options.registry, uriFor: (id) => resolve(directory, `${id}.json`) });
  const manifest = writeBatch({ directory, template, templateFile: options.templateFile, seed: options.seed, count: options.count, result });
  return { ok: true, diagnostics, directory, template, manifest, result };
}
