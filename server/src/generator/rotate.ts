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
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { z } from 'zod';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import type { Registry } from '../mcp/registry.ts';
import { readText, taskFilesIn } from '../tasks/files.ts';
import { canonicalHash } from '../canonical-json.ts';
import { lintTask } from '../tasks/lint.ts';
import type { Task } from '../tasks/model.ts';
import { readAttestations } from './attest.ts';
import { isBatchFolder, primaryNamespace, reviewedCandidates, type ReviewedTask } from './review.ts';
import { readJsonAs, readSetManifest, SET_MANIFEST_FILE, SetManifestError, writeSetManifest, type SetManifest } from '../tasks/set-manifest.ts';
import { hashedRandom, seededShuffle } from '../seeded-random.ts';

/** A rotation that cannot be made (a set.json problem is a SetManifestError, its base). */
export class RotationError extends SetManifestError {
  static override readonly code: string = 'rotation';
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

const AttestationSchema = z.object({ task_id: z.string(), sha256: z.string() });

const HistoricalEntrySchema = AttestationSchema.extend({ file: z.string(), namespace: z.string(), category: z.string(), added: z.string() });

export const HistoricalManifestSchema = z.object({
  kind: z.literal('mcpbench-historical'),
  /** The tag under which the retired month opens: Historical-YYYY-MM. */
  tag: z.string(),
  set: z.string(),
  month: z.string(),
  seed: z.number(),
  share: z.number(),
  /** The published attestations: every retired task's (task_id, canonical sha256). */
  attestations: z.array(AttestationSchema),
  retired: z.array(HistoricalEntrySchema),
  replacements: z.array(AttestationSchema.extend({ file: z.string(), from: z.string() })),
  /** Canonical hashes of the set manifest before and after the rotation. */
  previous_set_sha256: z.string(),
  set_sha256: z.string(),
});

export type HistoricalEntry = z.infer<typeof HistoricalEntrySchema>;
export type HistoricalManifest = z.infer<typeof HistoricalManifestSchema>;

function readHistorical(file: string): HistoricalManifest {
  return readJsonAs(file, HistoricalManifestSchema, 'Historical manifest');
}

/**
 * A rotation killed after it wrote its Historical manifest: the manifest says exactly what the rotation
 * decided, so the rest (set.json, removing the retired files from the set) is finished from it. Undefined
 * when the Historical manifest is of another rotation (the month was rotated before).
 */
function finishRotation(options: RotateOptions, manifest: SetManifest, historicalFile: string, retiredDir: string): RotationResult | undefined {
  const setDir = options.set;
  const historical = readHistorical(historicalFile);
  // Only the same command finishes a rotation: another seed or share is another decision.
  if (historical.seed !== options.seed || historical.share !== options.share || historical.month !== options.month) return undefined;
  const current = canonicalHash(manifest);
  let next: SetManifest;
  if (current === historical.set_sha256) next = manifest;
  else if (current === historical.previous_set_sha256) {
    const retiredIds = new Set(historical.retired.map((t) => t.task_id));
    next = {
      ...manifest,
      month: historical.month,
      tasks: [
        ...manifest.tasks.filter((t) => !retiredIds.has(t.task_id)),
        ...historical.replacements.map((r) => ({ task_id: r.task_id, file: r.file, sha256: r.sha256, added: historical.month })),
      ],
    };
    if (canonicalHash(next) !== historical.set_sha256) return undefined;
    for (const r of historical.replacements) {
      const path = join(setDir, r.file);
      if (!existsSync(path) || canonicalHash(JSON.parse(readText(path))) !== r.sha256) throw new RotationError(`${path}: the replacement the interrupted rotation wrote is missing or changed`);
    }
    for (const t of historical.retired) {
      if (!existsSync(join(retiredDir, t.file))) throw new RotationError(`${join(retiredDir, t.file)}: the retired copy the interrupted rotation wrote is missing`);
    }
    writeSetManifest(setDir, next);
  } else return undefined;
  for (const t of historical.retired) rmSync(join(setDir, t.file), { force: true });
  return { manifest: next, historical, historicalFile, retiredDir };
}

export const isHistoricalFileName = (name: string) => /^Historical-\d{4}-\d{2}\.json$/.test(name);

/** Reads a Historical-YYYY-MM.json manifest, with the file and the first problem in the error. */
export function readHistoricalManifest(file: string): HistoricalManifest {
  return readHistorical(file);
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
  const historyDir = options.historyDir ?? join(dirname(setDir), 'historical', manifest.name);
  const tag = `Historical-${options.month}`;
  const historicalFile = join(historyDir, `${tag}.json`);
  const retiredDir = join(historyDir, tag);
  if (existsSync(historicalFile)) {
    // Written last but one: the rotation was decided. Rerunning the command finishes (or confirms) it.
    const finished = finishRotation(options, manifest, historicalFile, retiredDir);
    if (finished) return finished;
  }
  if (manifest.month && manifest.month >= options.month) {
    throw new RotationError(`${setDir} was last rotated in ${manifest.month}; a rotation for ${options.month} must come after it`);
  }
  if (existsSync(historicalFile)) throw new RotationError(`${historicalFile} already exists: ${options.month} was rotated before`);
  // Retired copies without a Historical manifest are what a killed rotation left: it is redone from the start.
  rmSync(retiredDir, { recursive: true, force: true });

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
    const path = join(setDir, file);
    // The same replacement written by a killed run of this rotation is fine; anything else is not ours to overwrite.
    if (existsSync(path) && readText(path) !== withNewline(d.text)) throw new RotationError(`${path} already exists`);
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

  // Every file is written atomically, in this order: the new tasks and the retired copies, then the Historical
  // manifest (the decision: from here a rerun finishes the rotation from it), then set.json, then the retired
  // files leave the set. Killed anywhere, set.json describes files that are all still there, and the same
  // command run again finishes the job.
  for (const d of added) {
    mkdirSync(dirname(join(setDir, d.file)), { recursive: true });
    writeFileAtomicSync(join(setDir, d.file), withNewline(d.text));
  }
  for (const t of retired) {
    const destination = join(retiredDir, t.file);
    mkdirSync(dirname(destination), { recursive: true });
    writeFileAtomicSync(destination, readFileSync(join(setDir, t.file)));
  }
  mkdirSync(historyDir, { recursive: true });
  writeJsonAtomicSync(historicalFile, historical);
  writeSetManifest(setDir, next);
  for (const t of retired) rmSync(join(setDir, t.file));
  return { manifest: next, historical, historicalFile, retiredDir };
}

function withNewline(text: string): string {
  return text.endsWith('\n') ? text : `${text}\n`;
}
