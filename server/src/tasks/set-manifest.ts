/**
 * A set folder's manifest, `set.json`: the set's name, its month and an entry (id, hash, provenance) per
 * task. Read by task sources and sealing, written by `rotate`.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomicSync } from '../atomic-file.ts';
import { readText, taskFilesIn } from './files.ts';
import { canonicalHash } from '../canonical-json.ts';
import type { Task } from './model.ts';
import { McpbenchError } from '../errors.ts';
/** A set.json that cannot be read or is not a manifest. */
export class SetManifestError extends McpbenchError {
  static override readonly code: string = 'set-manifest';
}

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

/** A JSON file read against its schema; every problem names the file and the field. */
export function readJsonAs<T>(file: string, schema: z.ZodType<T>, what: string): T {
  let value: unknown;
  try {
    value = JSON.parse(readText(file));
  } catch (error) {
    throw new SetManifestError(`${file}: ${(error as Error).message}`);
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw new SetManifestError(`${file}: invalid ${what}: ${parsed.error.issues.map((i) => `${i.path.join('.') || '(root)'}: ${i.message}`).join('; ')}`);
  return parsed.data;
}

export function readSetManifest(setDir: string): SetManifest {
  const file = join(setDir, SET_MANIFEST_FILE);
  if (!existsSync(file)) throw new SetManifestError(`${setDir}: not a task set (no ${SET_MANIFEST_FILE})`);
  return readJsonAs(file, SetManifestSchema, 'set manifest');
}

export function writeSetManifest(setDir: string, manifest: SetManifest): void {
  writeJsonAtomicSync(join(setDir, SET_MANIFEST_FILE), manifest);
}

/** A set manifest for the task files already in a folder, all added in `month` (to start a set). */
export function createSetManifest(setDir: string, name: string, month: string): SetManifest {
  const tasks = taskFilesIn(setDir).map((path) => {
    const task = JSON.parse(readText(path)) as Task;
    return { task_id: task.id, file: path.slice(setDir.length + 1).split('\\').join('/'), sha256: canonicalHash(task), added: month };
  });
  return SetManifestSchema.parse({ name, month, tasks });
}
