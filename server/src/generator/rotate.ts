/**
 * Monthly rotation of a private set: retire about `share` of its tasks (oldest first, balanced over
 * namespaces and categories), replace them with reviewed tasks drawn the same way, and publish the retired
 * tasks with (task_id, sha256) attestations under a `Historical-YYYY-MM` manifest.
 *
 * A set is a folder: `set.json` (schemas/set.schema.json) lists its tasks with their canonical hash and the
 * month each was added; task files live beside it (`tasks/<ns>/<id>.json`, paths relative to the folder).
 * Retired tasks move to `<history>/Historical-YYYY-MM/` next to `<history>/Historical-YYYY-MM.json`, the
 * history folder defaulting to `<set's parent>/historical/<set name>/`, outside the set (which is sealed)
 * because it is what gets published.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import type { Registry } from '../mcp/registry.ts';
import { readText } from '../tasks/files.ts';
import { canonicalHash } from '../tasks/hash.ts';
import { lintTask } from '../tasks/lint.ts';
import type { Task } from '../tasks/model.ts';
import { readAttestations, taskFilesIn, type Attestation } from './attest.ts';
import { hashedRandom, seededShuffle } from './perturb.ts';
import { isBatchFolder, primaryNamespace, reviewedCandidates, type ReviewedTask } from './review.ts';

export const SET_MANIFEST_FILE = 'set.json';
export const SET_SCHEMA_ID = 'https://mcpbench.dev/schemas/set.schema.json';

const Month = z
  .string()
  .regex(/^\d{4}-(0[1-9]|1[0-2])$/)
  .meta({ title: 'Month', description: 'A month as YYYY-MM.', examples: ['2026-12'] });

export const SetEntrySchema = z
  .strictObject({
    task_id: z.string().min(1).meta({ title: 'Task id', description: 'The id inside the task file.', examples: ['travel-cheapest-flight-007'] }),
    file: z.string().min(1).meta({ title: 'File', description: "The task file, relative to the set's folder.", examples: ['tasks/travel/travel-cheapest-flight-007.json'] }),
    sha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .meta({ title: 'Canonical hash', description: "SHA-256 (hex) of the task's RFC 8785 canonical JSON (`mcpbench hash`)." }),
    added: Month.meta({ title: 'Added', description: 'The month the task entered the set; the oldest retire first.', examples: ['2026-11'] }),
  })
  .meta({ title: 'Set entry', description: 'One task of the set.' });

export const SetManifestSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ title: 'JSON Schema', description: 'Optional link to this schema, for editors.' }),
    name: z.string().min(1).meta({ title: 'Name', description: 'The set, e.g. private.', examples: ['private'] }),
    month: Month.optional().meta({ title: 'Month', description: 'The month of the last rotation.', examples: ['2026-12'] }),
    tasks: z.array(SetEntrySchema).meta({ title: 'Tasks', description: 'The tasks of the set, each with its attestation.' }),
  })
  .meta({
    id: 'TaskSet',
    title: 'MCPBench task set',
    description: 'A rotated task set (sets/<name>/set.json): its tasks with (task_id, sha256) attestations and the month each was added.',
  });

export type SetEntry = z.infer<typeof SetEntrySchema>;
export type SetManifest = z.infer<typeof SetManifestSchema>;

/** schemas/set.schema.json as emitted from the zod schema (the committed file is checked against it). */
export function emitSetSchema(): Record<string, unknown> {
  const json = z.toJSONSchema(SetManifestSchema, { target: 'draft-2020-12', io: 'input' }) as Record<string, unknown>;
  const { $schema, ...rest } = json;
  return { $schema, $id: SET_SCHEMA_ID, ...rest };
}

export class RotationError extends Error {}

/** A JSON file read against its schema; the error names the file and every problem. */
function readManifest<T>(file: string, schema: z.ZodType<T>, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(readText(file));
  } catch (error) {
    throw new RotationError(`${file}: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RotationError(`${file}: ${what}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  }
  return parsed.data;
}

export function readSetManifest(setDir: string): SetManifest {
  const file = join(setDir, SET_MANIFEST_FILE);
  if (!existsSync(file)) throw new RotationError(`${setDir}: not a task set (no ${SET_MANIFEST_FILE})`);
  return readManifest(file, SetManifestSchema, 'invalid set manifest');
}

export function writeSetManifest(setDir: string, manifest: SetManifest): void {
  writeFileSync(join(setDir, SET_MANIFEST_FILE), JSON.stringify(manifest, null, 2) + '\n');
}

/** A set manifest for the task files already in a folder, all added in `month` (to start a set). */
export function createSetManifest(setDir: string, name: string, month: string): SetManifest {
  const tasks = taskFilesIn(setDir).map((path) => {
    const task = JSON.parse(readText(path)) as Task;
    return { task_id: task.id, file: path.slice(setDir.length + 1).split('\\').join('/'), sha256: canonicalHash(task), added: month };
  });
  return SetManifestSchema.parse({ name, month, tasks });
}

// ---- Choosing what retires ------------------------------------------------------------------------------

export interface Retirable {
  task_id: string;
  namespace: string;
  category: string;
  added: string;
}

/** `total` split over groups in proportion to their sizes (largest remainder; ties by the seeded stream). */
function proportionalQuotas(sizes: Map<string, number>, total: number, random: () => number): Map<string, number> {
  const n = [...sizes.values()].reduce((a, b) => a + b, 0);
  const quotas = new Map<string, number>();
  const remainders: { key: string; fraction: number; tie: number }[] = [];
  for (const key of [...sizes.keys()].sort()) {
    const exact = n === 0 ? 0 : (sizes.get(key)! * total) / n;
    quotas.set(key, Math.floor(exact));
    remainders.push({ key, fraction: exact - Math.floor(exact), tie: random() });
  }
  let left = total - [...quotas.values()].reduce((a, b) => a + b, 0);
  for (const r of remainders.sort((a, b) => b.fraction - a.fraction || a.tie - b.tie)) {
    if (left-- <= 0) break;
    quotas.set(r.key, quotas.get(r.key)! + 1);
  }
  return quotas;
}

/**
 * Picks `count` tasks to retire: each namespace and each category gets its proportional share (largest
 * remainder), and within those quotas the oldest `added` go first, ties in seeded order. When the two
 * quotas cannot both be met, the namespace quota wins, then age alone fills up.
 */
export function chooseRetirements<T extends Retirable>(tasks: readonly T[], count: number, seed: number): T[] {
  const random = hashedRandom(['retire', seed]);
  const tally = (key: (t: T) => string) => {
    const sizes = new Map<string, number>();
    for (const t of tasks) sizes.set(key(t), (sizes.get(key(t)) ?? 0) + 1);
    return sizes;
  };
  const nsLeft = proportionalQuotas(tally((t) => t.namespace), count, random);
  const catLeft = proportionalQuotas(tally((t) => t.category), count, random);
  const order = seededShuffle(random, [...tasks].sort((a, b) => a.task_id.localeCompare(b.task_id)));
  const rank = new Map(order.map((t, i) => [t.task_id, i]));
  const byAge = [...tasks].sort((a, b) => a.added.localeCompare(b.added) || rank.get(a.task_id)! - rank.get(b.task_id)!);
  const chosen: T[] = [];
  const taken = new Set<string>();
  const passes: ((t: T) => boolean)[] = [
    (t) => nsLeft.get(t.namespace)! > 0 && catLeft.get(t.category)! > 0,
    (t) => nsLeft.get(t.namespace)! > 0,
    () => true,
  ];
  for (const allowed of passes) {
    for (const t of byAge) {
      if (chosen.length >= count) break;
      if (taken.has(t.task_id) || !allowed(t)) continue;
      chosen.push(t);
      taken.add(t.task_id);
      nsLeft.set(t.namespace, nsLeft.get(t.namespace)! - 1);
      catLeft.set(t.category, catLeft.get(t.category)! - 1);
    }
  }
  return chosen;
}

/**
 * One replacement per retired task: the same namespace and category when the pool has one, else the same
 * namespace, else the same category, else any; among equals in seeded order. The set keeps its shape.
 */
export function drawReplacements<R extends { task_id: string; namespace: string; category: string }>(
  retired: readonly { namespace: string; category: string }[],
  pool: readonly R[],
  seed: number,
): R[] {
  const random = hashedRandom(['replace', seed]);
  const available = seededShuffle(random, [...pool].sort((a, b) => a.task_id.localeCompare(b.task_id)));
  const drawn: R[] = [];
  const matchers: ((r: R, t: { namespace: string; category: string }) => boolean)[] = [
    (r, t) => r.namespace === t.namespace && r.category === t.category,
    (r, t) => r.namespace === t.namespace,
    (r, t) => r.category === t.category,
    () => true,
  ];
  for (const t of retired) {
    for (const matches of matchers) {
      const i = available.findIndex((r) => matches(r, t));
      if (i >= 0) {
        drawn.push(available.splice(i, 1)[0]!);
        break;
      }
    }
  }
  return drawn;
}

// ---- The rotation ---------------------------------------------------------------------------------------

export interface RotateOptions {
  /** The set folder (holding set.json). */
  set: string;
  /** The rotation month, YYYY-MM. */
  month: string;
  /** The share of the set to retire, 0..1 (0.25: about a quarter). */
  share: number;
  seed: number;
  /** Review batch folders (their accepted candidates) and pool folders of reviewed task files. */
  replacements: string[];
  /** Lints replacements; one with a lint error is never drawn. */
  registry?: Registry;
  /** Where Historical-YYYY-MM.json and the retired files go (default: <parent>/historical/<name>). */
  historyDir?: string;
  /** Rotate even when there are fewer reviewed replacements than retirements (the set shrinks). */
  allowShrink?: boolean;
}

export interface HistoricalEntry extends Attestation {
  file: string;
  namespace: string;
  category: string;
  added: string;
}

export interface HistoricalManifest {
  kind: 'mcpbench-historical';
  /** The tag under which the retired month opens: Historical-YYYY-MM. */
  tag: string;
  set: string;
  month: string;
  seed: number;
  share: number;
  /** The published attestations: every retired task's (task_id, canonical sha256). */
  attestations: Attestation[];
  retired: HistoricalEntry[];
  replacements: (Attestation & { file: string; from: string })[];
  /** Canonical hashes of the set manifest before and after the rotation. */
  previous_set_sha256: string;
  set_sha256: string;
}

const Sha256 = z.string().regex(/^[0-9a-f]{64}$/);

/** Historical-YYYY-MM.json as `rotate` writes it (what the results database imports). */
export const HistoricalManifestSchema = z.object({
  kind: z.literal('mcpbench-historical'),
  tag: z.string().regex(/^Historical-\d{4}-(0[1-9]|1[0-2])$/),
  set: z.string().min(1),
  month: Month,
  seed: z.number(),
  share: z.number(),
  attestations: z.array(z.object({ task_id: z.string(), sha256: Sha256 })),
  retired: z.array(z.object({ task_id: z.string(), sha256: Sha256, file: z.string(), namespace: z.string(), category: z.string(), added: z.string() })),
  replacements: z.array(z.object({ task_id: z.string(), sha256: Sha256, file: z.string(), from: z.string() })),
  previous_set_sha256: Sha256,
  set_sha256: Sha256,
});

export const isHistoricalFileName = (name: string) => /^Historical-\d{4}-\d{2}\.json$/.test(name);

/** Reads a Historical-YYYY-MM.json manifest, with the file and the first problem in the error. */
export function readHistoricalManifest(file: string): HistoricalManifest {
  return readManifest(file, HistoricalManifestSchema, 'not a Historical manifest');
}

export interface RotationResult {
  manifest: SetManifest;
  historical: HistoricalManifest;
  historicalFile: string;
  retiredDir: string;
}

interface PoolTask extends ReviewedTask {
  namespace: string;
  category: string;
  from: string;
}

function loadPool(dirs: readonly string[], registry: Registry | undefined): PoolTask[] {
  const pool: PoolTask[] = [];
  for (const dir of dirs) {
    if (!existsSync(dir)) throw new RotationError(`${dir}: no such batch or pool folder`);
    const reviewed: ReviewedTask[] = isBatchFolder(dir)
      ? reviewedCandidates(dir, registry)
      : taskFilesIn(dir).flatMap((path) => {
          const text = readText(path);
          let task: Task;
          try {
            task = JSON.parse(text) as Task;
          } catch {
            return [];
          }
          if (registry && lintTask(path, text, registry).diagnostics.some((d) => d.severity === 'error')) return [];
          return [{ task_id: task.id, path, text, task, sha256: canonicalHash(task) }];
        });
    for (const r of reviewed) pool.push({ ...r, namespace: primaryNamespace(r.task), category: r.task.category, from: dir });
  }
  return pool;
}

function previousAttestations(historyDir: string): Set<string> {
  const ids = new Set<string>();
  if (!existsSync(historyDir)) return ids;
  for (const name of readdirSync(historyDir)) {
    if (isHistoricalFileName(name)) for (const a of readAttestations(join(historyDir, name))) ids.add(a.task_id);
  }
  return ids;
}

/** Rotates a set in place and writes the Historical manifest; see the module comment for the layout. */
export function rotate(options: RotateOptions): RotationResult {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(options.month)) throw new RotationError(`--month ${options.month}: expected YYYY-MM`);
  if (!(options.share >= 0 && options.share <= 1)) throw new RotationError(`--share ${options.share}: expected a number from 0 to 1`);
  const setDir = options.set;
  const manifest = readSetManifest(setDir);
  if (manifest.month && manifest.month >= options.month) {
    throw new RotationError(`${setDir} was last rotated in ${manifest.month}; a rotation for ${options.month} must come after it`);
  }
  const historyDir = options.historyDir ?? join(dirname(setDir), 'historical', manifest.name);
  const tag = `Historical-${options.month}`;
  const historicalFile = join(historyDir, `${tag}.json`);
  const retiredDir = join(historyDir, tag);
  if (existsSync(historicalFile) || existsSync(retiredDir)) throw new RotationError(`${historicalFile} already exists: ${options.month} was rotated before`);

  // A tampered set must not be rotated: its attestations would publish the tampered tasks.
  const entries = manifest.tasks.map((entry) => {
    const path = join(setDir, entry.file);
    if (!existsSync(path)) throw new RotationError(`${setDir}: ${entry.task_id} is listed but ${entry.file} is missing`);
    const task = JSON.parse(readText(path)) as Task;
    const sha256 = canonicalHash(task);
    if (sha256 !== entry.sha256 || task.id !== entry.task_id) {
      throw new RotationError(`${setDir}: ${entry.task_id} (${entry.file}) does not match set.json (mcpbench verify ${setDir} --attestations ${join(setDir, SET_MANIFEST_FILE)})`);
    }
    return { ...entry, task, namespace: primaryNamespace(task), category: task.category };
  });

  const target = entries.length === 0 ? 0 : Math.max(options.share > 0 ? 1 : 0, Math.round(entries.length * options.share));
  const retired = chooseRetirements(entries, target, options.seed);
  const retiredIds = new Set(retired.map((t) => t.task_id));

  const inSet = new Set(entries.map((e) => e.task_id));
  const hashesInSet = new Set(entries.map((e) => e.sha256));
  const everRetired = previousAttestations(historyDir);
  const seen = new Set<string>();
  const pool = loadPool(options.replacements, options.registry).filter((p) => {
    // A retired id never comes back (its attestation is public), and the same task never enters twice.
    if (inSet.has(p.task_id) || everRetired.has(p.task_id) || hashesInSet.has(p.sha256) || seen.has(p.task_id) || seen.has(p.sha256)) return false;
    seen.add(p.task_id).add(p.sha256);
    return true;
  });
  const drawn = drawReplacements(retired, pool, options.seed);
  if (drawn.length < retired.length && !options.allowShrink) {
    throw new RotationError(
      `only ${drawn.length} reviewed replacement(s) for ${retired.length} retired task(s); review more candidates or pass --allow-shrink`,
    );
  }

  const added = drawn.map((d) => {
    const file = `tasks/${d.namespace}/${d.task_id}.json`;
    if (existsSync(join(setDir, file))) throw new RotationError(`${join(setDir, file)} already exists`);
    return { ...d, file };
  });
  const next: SetManifest = {
    ...manifest,
    month: options.month,
    tasks: [
      ...manifest.tasks.filter((t) => !retiredIds.has(t.task_id)),
      ...added.map((d) => ({ task_id: d.task_id, file: d.file, sha256: d.sha256, added: options.month })),
    ],
  };
  const historical: HistoricalManifest = {
    kind: 'mcpbench-historical',
    tag,
    set: manifest.name,
    month: options.month,
    seed: options.seed,
    share: options.share,
    attestations: retired.map((t) => ({ task_id: t.task_id, sha256: t.sha256 })),
    retired: retired.map((t) => ({ task_id: t.task_id, sha256: t.sha256, file: t.file, namespace: t.namespace, category: t.category, added: t.added })),
    replacements: added.map((d) => ({ task_id: d.task_id, sha256: d.sha256, file: d.file, from: d.from })),
    previous_set_sha256: canonicalHash(manifest),
    set_sha256: canonicalHash(next),
  };

  // Write the new tasks and the history first, then move the retired files, then the manifest last: an
  // interrupted rotation leaves set.json describing files that are all still there.
  for (const d of added) {
    mkdirSync(dirname(join(setDir, d.file)), { recursive: true });
    writeFileSync(join(setDir, d.file), d.text.endsWith('\n') ? d.text : `${d.text}\n`);
  }
  for (const t of retired) {
    const destination = join(retiredDir, t.file);
    mkdirSync(dirname(destination), { recursive: true });
    writeFileSync(destination, readFileSync(join(setDir, t.file)));
  }
  mkdirSync(historyDir, { recursive: true });
  writeFileSync(historicalFile, JSON.stringify(historical, null, 2) + '\n');
  writeSetManifest(setDir, next);
  for (const t of retired) rmSync(join(setDir, t.file));
  return { manifest: next, historical, historicalFile, retiredDir };
}
