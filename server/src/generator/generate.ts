/**
 * `generateVariants`: samples a template into distinct, linted tasks. The batch seed seeds a generator that
 * hands each attempt its own variant seed (recorded in the variant's provenance, so one variant replays
 * alone); duplicates are dropped by the canonical hash of the task without its id and provenance; every
 * variant is linted against the registry, and variants with lint errors are reported, never returned as
 * variants. Same template, seed and count: the same variants, byte for byte.
 */
import type { Registry } from '../mcp/registry.ts';
import type { Diagnostic } from '../tasks/diagnostics.ts';
import { canonicalHash } from '../canonical-json.ts';
import { lintTask } from '../tasks/lint.ts';
import type { Task } from '../tasks/model.ts';
import { MAX_VARIANTS, type Template } from './model.ts';
import { createRandom } from './random.ts';
import { compileTemplate, sampleVariant, type CompiledTemplate } from './sample.ts';

/** What generated files point their `$schema` at: right for tasks/<ns>/ and for batches/<batch>/ alike. */
export const TASK_SCHEMA_LINK = '../../schemas/task.schema.json';
/** Attempts per requested variant before giving up on a small parameter space. */
const ATTEMPTS_PER_VARIANT = 20;

export interface GenerateOptions {
  count: number;
  seed: number;
  registry: Registry;
  /** Upper bound on samples drawn (default 20 per requested variant + 100). */
  maxAttempts?: number;
  /** The uri lint diagnostics carry (default `<task id>.json`). */
  uriFor?: (taskId: string) => string;
  /** Skip linting (benchmarks measure generation alone with it). */
  lint?: boolean;
}

export interface Candidate {
  task: Task;
  /** The file text: `$schema` first, two-space indented, trailing newline. */
  text: string;
  /** Canonical hash of the file's value (provenance included): what `mcpbench hash` prints for the file. */
  sha256: string;
  /** Canonical hash without id and provenance: what duplicates are recognised by. */
  contentHash: string;
  seed: number;
  parameters: Record<string, unknown>;
  diagnostics: Diagnostic[];
  errors: number;
  warnings: number;
}

export interface GenerateResult {
  /** The lint-clean, distinct variants (at most `count`), in generation order. */
  variants: Task[];
  /** The same variants with their text, hashes and lint results. */
  candidates: Candidate[];
  /** Distinct samples with lint errors: reported, not variants. */
  invalid: Candidate[];
  dropped: { duplicates: number; invalid: number };
  /** Samples drawn in all. */
  attempts: number;
}

/** `<template id>-<first 8 hex digits of the content hash>`: the same variant gets the same id in every batch. */
export function variantId(templateId: string, contentHash: string): string {
  return `${templateId}-${contentHash.slice(0, 8)}`;
}

/** One variant from its seed (what provenance records), not yet linted. */
export function buildVariant(compiled: CompiledTemplate, seed: number): Omit<Candidate, 'diagnostics' | 'errors' | 'warnings'> {
  const { body, parameters } = sampleVariant(compiled, seed);
  const contentHash = canonicalHash(body);
  const template = compiled.template;
  const task = {
    id: variantId(template.id, contentHash),
    ...body,
    template: { id: template.id, version: template.version, parameters, seed },
  } as Task;
  const file = { $schema: TASK_SCHEMA_LINK, ...task };
  return { task, text: JSON.stringify(file, null, 2) + '\n', sha256: canonicalHash(file), contentHash, seed, parameters };
}

export function generateVariants(template: Template, options: GenerateOptions): GenerateResult {
  if (!Number.isInteger(options.count) || options.count < 0 || options.count > MAX_VARIANTS) {
    throw new RangeError(`count ${options.count}: a batch holds at most ${MAX_VARIANTS} variants`);
  }
  const compiled = compileTemplate(template);
  const random = createRandom(options.seed);
  const maxAttempts = options.maxAttempts ?? options.count * ATTEMPTS_PER_VARIANT + 100;
  const seen = new Set<string>();
  const result: GenerateResult = { variants: [], candidates: [], invalid: [], dropped: { duplicates: 0, invalid: 0 }, attempts: 0 };
  while (result.candidates.length < options.count && result.attempts < maxAttempts) {
    result.attempts++;
    const built = buildVariant(compiled, random.uint32());
    if (seen.has(built.contentHash)) {
      result.dropped.duplicates++;
      continue;
    }
    seen.add(built.contentHash);
    const diagnostics = options.lint === false ? [] : lintTask(options.uriFor?.(built.task.id) ?? `${built.task.id}.json`, built.text, options.registry).diagnostics;
    const candidate: Candidate = {
      ...built,
      diagnostics,
      errors: diagnostics.filter((d) => d.severity === 'error').length,
      warnings: diagnostics.filter((d) => d.severity === 'warning').length,
    };
    if (candidate.errors > 0) {
      result.invalid.push(candidate);
      result.dropped.invalid++;
    } else {
      result.candidates.push(candidate);
      result.variants.push(candidate.task);
    }
  }
  return result;
}
