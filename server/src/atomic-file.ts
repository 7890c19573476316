/**
 * Files that record a decision or a result (run.json, checks.json, reports, batch.json, set.json,
 * Historical-*.json, sealed sets) are written atomically: write-file-atomic writes a temporary file beside
 * the target, fsyncs it and renames it over the target, so a reader (or a process killed at any point) sees
 * the old file or the new one, never half of one. The folder is fsynced after the rename, so the rename
 * itself survives a power loss.
 */
import fs from 'node:fs';
import { dirname } from 'node:path';
import writeFileAtomic from 'write-file-atomic';

/** Writes `data` to `path` atomically and durably (temp file in the same folder, fsync, rename, fsync folder). */
export function writeFileAtomicSync(path: string, data: string | Uint8Array): void {
  writeFileAtomic.sync(path, typeof data === 'string' ? data : Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  fsyncDirectory(dirname(path));
}

/** `JSON.stringify(value, null, 2)` and a final newline, written atomically. */
export function writeJsonAtomicSync(path: string, value: unknown): void {
  writeFileAtomicSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

/** Makes a folder's entries (a file created or renamed in it) durable. */
export function fsyncDirectory(directory: string): void {
  let fd: number;
  try {
    fd = fs.openSync(directory, 'r');
  } catch {
    return; // a platform that cannot open folders (Windows) has nothing to fsync here
  }
  try {
    fs.fsyncSync(fd);
  } catch {
    // some file systems refuse fsync on a folder (EINVAL); the rename is still atomic
  } finally {
    fs.closeSync(fd);
  }
}
