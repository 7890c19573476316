/**
 * Where episode sandboxes live. An episode writes and removes a whole sandbox: a postgres data directory is
 * ~40 MB in ~1,000 files, a git sandbox a repository. On a disk file system that is most of a postgres
 * episode's cost (bench/run/phases: copying the data directory 225-370 ms and removing it 40-70 ms on this
 * machine's ext4, against 17-35 ms and 8-10 ms on tmpfs), so sandboxes go to a memory-backed file system when
 * the machine has one with room to spare: the temporary folder when it is one (as on Debian 13 and Fedora),
 * else `/dev/shm`. Otherwise, and whenever `MCPBENCH_SCRATCH` names a folder, they stay where they were.
 *
 * A sandbox on tmpfs holds memory until the episode removes it (a postgres sandbox ~40 MB; a run holds
 * `concurrency + 2` of them at most). What a hostile agent makes its servers write is bounded wherever the
 * sandboxes are (`sandboxMaxBytes`, measured while the agent runs); `MCPBENCH_SCRATCH=/var/tmp` keeps them on disk.
 */
import { accessSync, constants, statfsSync } from 'node:fs';
import { lstat, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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

/** Why sandboxes go where they do, in a sentence's words (`mcpbench doctor`). */
export function describeScratch(choice: ScratchChoice): string {
  const reasons: Record<ScratchChoice['reason'], string> = {
    MCPBENCH_SCRATCH: 'named by MCPBENCH_SCRATCH',
    tmpfs: 'memory-backed, with room',
    'temporary folder': `the temporary folder: no memory-backed file system with ${SCRATCH_MIN_FREE_BYTES / 1024 ** 3} GiB free`,
  };
  return `${choice.path} (${reasons[choice.reason]})`;
}

/** The folder episode sandboxes are made in. */
export function scratchRoot(): string {
  return scratch().path;
}

/**
 * The most an episode's sandboxes may hold (bytes on disk or in memory): `MCPBENCH_SANDBOX_MAX_BYTES`, else
 * 2 GiB. A data directory is ~40 MB and the largest dev-set state a few; past this, an agent is filling the
 * file system (a postgres `INSERT ... SELECT generate_series(...)` writes gigabytes in one call).
 */
export function sandboxMaxBytes(): number {
  const named = Number(process.env.MCPBENCH_SANDBOX_MAX_BYTES);
  return Number.isSafeInteger(named) && named > 0 ? named : 2 * 1024 ** 3;
}

/** How often an episode's sandboxes are measured while its agent runs. */
export const SANDBOX_CHECK_MS = 1000;

/** Bytes allocated under `path` (st_blocks: sparse files count what they hold); files going away meanwhile are skipped. */
export async function treeBytes(path: string): Promise<number> {
  let stats;
  try {
    stats = await lstat(path);
  } catch {
    return 0;
  }
  let bytes = stats.blocks * 512;
  if (!stats.isDirectory()) return bytes;
  let names: string[];
  try {
    names = await readdir(path);
  } catch {
    return bytes;
  }
  for (const name of names) bytes += await treeBytes(join(path, name));
  return bytes;
}

/**
 * Measures `path` every `everyMs` until stopped, and calls `over` once (then stops) when it holds more than
 * `limit` bytes. Returns the stop function. A measurement never overlaps the one before it.
 */
export function watchTreeSize(path: string, limit: number, everyMs: number, over: (bytes: number) => void): () => void {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const tick = async () => {
    const bytes = await treeBytes(path);
    if (stopped) return;
    if (bytes > limit) {
      stopped = true;
      over(bytes);
      return;
    }
    timer = setTimeout(() => void tick(), everyMs);
    timer.unref();
  };
  timer = setTimeout(() => void tick(), everyMs);
  timer.unref();
  return () => {
    stopped = true;
    clearTimeout(timer);
  };
}

/** Every folder a run's sandboxes may have been left in (this one, and where earlier versions made them). */
export function scratchRoots(): string[] {
  return [...new Set([scratchRoot(), tmpdir()])];
}
