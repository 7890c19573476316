/**
 * Where episode sandboxes live. An episode writes and removes a whole sandbox: a postgres data directory is
 * ~40 MB in ~1,000 files, a git sandbox a repository. On a disk file system that is most of a postgres
 * episode's cost (bench/run/phases: copying the data directory 225-370 ms and removing it 40-70 ms on this
 * machine's ext4, against 17-35 ms and 8-10 ms on tmpfs), so sandboxes go to a memory-backed file system when
 * the machine has one with room to spare: the temporary folder when it is one (as on Debian 13 and Fedora),
 * else `/dev/shm`. Otherwise, and whenever `MCPBENCH_SCRATCH` names a folder, they stay where they were.
 *
 * A sandbox on tmpfs holds memory until the episode removes it (a postgres sandbox ~40 MB; a run holds
 * `concurrency + 2` of them at most). What a hostile agent makes a server write counts against that file
 * system's size, as on disk it counts against the disk: `MCPBENCH_SCRATCH=/var/tmp` keeps it on disk.
 */
import { accessSync, constants, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';

/** statfs's f_type for tmpfs (linux/magic.h). */
const TMPFS_MAGIC = 0x01021994;
/** A memory-backed file system is used only with this much free: a run's sandboxes need well under 1 GiB. */
export const SCRATCH_MIN_FREE_BYTES = 4 * 1024 ** 3;

export interface ScratchChoice {
  path: string;
  /** Why this folder: the variable, a memory-backed file system with room, or the temporary folder. */
  reason: 'MCPBENCH_SCRATCH' | 'tmpfs' | 'temporary folder';
}

let chosen: ScratchChoice | undefined;

/** Memory-backed, writable by this user, with at least `SCRATCH_MIN_FREE_BYTES` free. */
function roomyTmpfs(path: string): boolean {
  try {
    const stats = statfsSync(path);
    if (Number(stats.type) !== TMPFS_MAGIC) return false;
    if (Number(stats.bavail) * Number(stats.bsize) < SCRATCH_MIN_FREE_BYTES) return false;
    accessSync(path, constants.W_OK | constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

/** The folder episode sandboxes are made in, and why (decided once per process). */
export function scratch(): ScratchChoice {
  const named = process.env.MCPBENCH_SCRATCH;
  if (named) return { path: named, reason: 'MCPBENCH_SCRATCH' };
  if (!chosen) {
    const temporary = tmpdir();
    const memory = [temporary, '/dev/shm'].find(roomyTmpfs);
    chosen = memory ? { path: memory, reason: 'tmpfs' } : { path: temporary, reason: 'temporary folder' };
  }
  return chosen;
}

/** The folder episode sandboxes are made in. */
export function scratchRoot(): string {
  return scratch().path;
}

/** Every folder a run's sandboxes may have been left in (this one, and where earlier versions made them). */
export function scratchRoots(): string[] {
  return [...new Set([scratchRoot(), tmpdir()])];
}
