/**
 * Hash attestations: (task_id, sha256) pairs, sha256 being the canonical hash of server/src/tasks/hash.ts
 * (SHA-256 of the task's RFC 8785 JSON). Retired tasks are published with them, so anyone can check a
 * published task is exactly what was in the private set: any changed value, key or character of a task
 * changes its hash. Whitespace and key order do not, by design: they are not part of the task.
 */
import { basename } from 'node:path';
import { readText, taskFilesIn } from '../tasks/files.ts';
import { canonicalHash } from '../canonical-json.ts';
import { McpbenchError } from '../errors.ts';

export interface Attestation {
  task_id: string;
  sha256: string;
}

export class AttestationError extends McpbenchError {
  static override readonly code: string = 'attestation';
}

/**
 * The attestations in a file: a Historical manifest (`attestations`), a set manifest (`tasks`, whose
 * entries carry task_id and sha256) or a bare array of { task_id, sha256 }.
 */
export function readAttestations(file: string): Attestation[] {
  let value: any;
  try {
    value = JSON.parse(readText(file));
  } catch (error) {
    throw new AttestationError(`${file}: ${(error as Error).message}`);
  }
  const list = Array.isArray(value) ? value : Array.isArray(value?.attestations) ? value.attestations : Array.isArray(value?.tasks) ? value.tasks : undefined;
  if (!list) throw new AttestationError(`${file}: no attestations (expected "attestations", "tasks" or an array of { task_id, sha256 })`);
  return list.map((entry: any, i: number) => {
    if (typeof entry?.task_id !== 'string' || typeof entry?.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256)) {
      throw new AttestationError(`${file}: entry ${i} is not { task_id, sha256 (64 hex digits) }`);
    }
    return { task_id: entry.task_id, sha256: entry.sha256 };
  });
}

export interface VerifyFinding {
  task_id: string;
  kind: 'mismatch' | 'missing' | 'unattested' | 'duplicate' | 'unreadable';
  file?: string;
  expected?: string;
  actual?: string;
  message: string;
}

export interface VerifyReport {
  ok: boolean;
  /** Tasks whose hash was recomputed. */
  checked: number;
  findings: VerifyFinding[];
}

/**
 * Recomputes the canonical hash of every task and compares it with its attestation: a task whose hash
 * differs, an attested task that is missing, and a task nobody attested are each reported by id.
 */
export function verifyTasks(tasks: readonly { file: string; text: string }[], attestations: readonly Attestation[]): VerifyReport {
  const findings: VerifyFinding[] = [];
  const expected = new Map<string, string>();
  for (const a of attestations) {
    if (expected.has(a.task_id) && expected.get(a.task_id) !== a.sha256) {
      findings.push({ task_id: a.task_id, kind: 'duplicate', message: `${a.task_id} is attested twice with different hashes` });
    }
    expected.set(a.task_id, a.sha256);
  }
  const seen = new Set<string>();
  let checked = 0;
  for (const { file, text } of tasks) {
    let task: any;
    try {
      task = JSON.parse(text);
    } catch (error) {
      findings.push({ task_id: basename(file, '.json'), kind: 'unreadable', file, message: `${file} is not JSON: ${(error as Error).message}` });
      continue;
    }
    const id = typeof task?.id === 'string' ? task.id : basename(file, '.json');
    if (seen.has(id)) {
      findings.push({ task_id: id, kind: 'duplicate', file, message: `${id} appears in more than one file (${file})` });
      continue;
    }
    seen.add(id);
    checked++;
    const actual = canonicalHash(task);
    const want = expected.get(id);
    if (want === undefined) findings.push({ task_id: id, kind: 'unattested', file, actual, message: `${id} (${file}) has no attestation` });
    else if (want !== actual) {
      findings.push({ task_id: id, kind: 'mismatch', file, expected: want, actual, message: `${id} (${file}) does not match its attestation: sha256 ${actual}, attested ${want}` });
    }
  }
  for (const [id, sha256] of expected) {
    if (!seen.has(id)) findings.push({ task_id: id, kind: 'missing', expected: sha256, message: `${id} is attested but no task has this id` });
  }
  return { ok: findings.length === 0, checked, findings };
}

/** Verifies the task files of a folder (a set, or a published Historical folder) against an attestations file. */
export function verifyFolder(dir: string, attestationsFile: string): VerifyReport {
  const tasks = taskFilesIn(dir).map((file) => ({ file, text: readText(file) }));
  return verifyTasks(tasks, readAttestations(attestationsFile));
}
