/**
 * A small JSON file read against its zod schema: the parsed value, or one message that names the file and
 * every field that is wrong (`prices.json: models.gpt.output: Required`). Callers wrap the message in their
 * own error type.
 */
import { readFileSync } from 'node:fs';
import type { z } from 'zod';

export function zodIssues(error: z.ZodError, label: (path: PropertyKey[]) => string = (p) => p.join('.') || '(root)'): string {
  return error.issues.map((i) => `${label(i.path)}: ${i.message}`).join('; ');
}

export function readJsonFile<T>(path: string, schema: z.ZodType<T>): { ok: true; value: T } | { ok: false; message: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(readFileSync(path, 'utf8'));
  } catch (error) {
    return { ok: false, message: `${path}: ${(error as NodeJS.ErrnoException).code === 'ENOENT' ? 'no such file' : (error as Error).message}` };
  }
  const parsed = schema.safeParse(raw);
  return parsed.success ? { ok: true, value: parsed.data } : { ok: false, message: `${path}: ${zodIssues(parsed.error)}` };
}
