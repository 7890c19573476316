/**
 * One writer per folder: a lock held beside a folder (`<folder>.lock`, made with mkdir by `proper-lockfile`,
 * its mtime refreshed while the holder lives, so the lock of a process that died goes stale and is taken
 * over; at once when its holder was a process of this machine that is gone), and who holds it (`<folder>.lock-owner.json`: pid, host, what it does, since when) for the message a
 * second writer gets. A second writer waits up to `waitMs`, then fails with a FolderLockError naming the holder.
 */
import { mkdirSync, readFileSync, rmSync, utimesSync } from 'node:fs';
import { dirname } from 'node:path';
import { hostname } from 'node:os';
import lockfile from 'proper-lockfile';
import writeFileAtomic from 'write-file-atomic';
import { z } from 'zod';
import { McpbenchError } from './errors.ts';

const OwnerSchema = z.object({ pid: z.number().int(), host: z.string(), purpose: z.string(), since: z.string() });
export type LockOwner = z.infer<typeof OwnerSchema>;

export interface FolderLockOptions {
  /** What the holder does, for the message another writer gets (`results import`, `run`). */
  purpose: string;
  /** How long a second writer waits for the lock before it fails (default 0: fail at once). */
  waitMs?: number;
  /** After how long without a refresh a lock counts as left by a dead process (default 30 s, at least 2 s). */
  staleMs?: number;
}

export interface FolderLock {
  readonly path: string;
  /** Whether the lock was lost while held (its refresh was late past the stale time, or another took it). */
  readonly compromised: boolean;
  release(): Promise<void>;
}

export class FolderLockError extends McpbenchError {
  static override readonly code: string = 'folder-locked';
  readonly kind = 'locked' as const;
  constructor(
    message: string,
    readonly folder: string,
    readonly holder: LockOwner | undefined,
  ) {
    super(message);
  }
}

const lockPath = (folder: string) => `${folder}.lock`;
const ownerPath = (folder: string) => `${folder}.lock-owner.json`;

/** Who holds the lock of `folder`, when it says so (undefined when unknown or unreadable). */
export function lockOwner(folder: string): LockOwner | undefined {
  try {
    const parsed = OwnerSchema.safeParse(JSON.parse(readFileSync(ownerPath(folder), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

export const ownerText = (owner: LockOwner | undefined) => (owner ? `${owner.purpose} (pid ${owner.pid} on ${owner.host}, since ${owner.since})` : 'another process');

/** Whether a process of this machine is running (signal 0 checks without sending; EPERM: it runs as another user). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Takes the lock of `folder` (the folder itself need not exist), waiting up to `waitMs` for a holder to let go. */
export async function lockFolder(folder: string, options: FolderLockOptions): Promise<FolderLock> {
  const staleMs = Math.max(2000, options.staleMs ?? 30_000);
  const waitMs = options.waitMs ?? 0;
  let compromised = false;
  let release: () => Promise<void>;
  mkdirSync(dirname(folder), { recursive: true });
  const started = Date.now();
  const takenOver = new Set<number>();
  for (;;) {
    try {
      release = await lockfile.lock(folder, {
        realpath: false,
        lockfilePath: lockPath(folder),
        stale: staleMs,
        update: Math.max(1000, Math.floor(staleMs / 3)),
        onCompromised: () => {
          compromised = true;
        },
      });
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ELOCKED') throw error;
      // A holder on this machine whose process is gone: its lock is marked stale at once (aged past the stale
      // time), and the next try takes it over the way any stale lock is.
      const holder = lockOwner(folder);
      if (holder && holder.host === hostname() && !takenOver.has(holder.pid) && !processAlive(holder.pid)) {
        takenOver.add(holder.pid);
        try {
          const past = new Date(Date.now() - 2 * staleMs);
          utimesSync(lockPath(folder), past, past);
          continue;
        } catch {
          // The lock went away meanwhile: try again.
        }
      }
      if (Date.now() - started >= waitMs) {
        const holder = lockOwner(folder);
        const waited = waitMs > 0 ? ` (waited ${Math.round(waitMs / 1000)} s)` : '';
        throw new FolderLockError(`${folder} is in use by ${ownerText(holder)}${waited}: try again when it has finished`, folder, holder);
      }
      await new Promise((resolve) => setTimeout(resolve, 100 + Math.floor(Math.random() * 150)));
    }
  }
  const owner: LockOwner = { pid: process.pid, host: hostname(), purpose: options.purpose, since: new Date().toISOString() };
  writeFileAtomic.sync(ownerPath(folder), JSON.stringify(owner) + '\n');
  let released = false;
  return {
    path: lockPath(folder),
    get compromised() {
      return compromised;
    },
    async release() {
      if (released) return;
      released = true;
      const now = lockOwner(folder);
      if (now?.pid === owner.pid && now.since === owner.since) rmSync(ownerPath(folder), { force: true });
      await release().catch(() => undefined);
    },
  };
}
