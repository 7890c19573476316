/**
 * A memory bound on a whole sandbox (all its processes together), where the machine lets the runner make a
 * cgroup: cgroup v2 with the memory controller enabled for the runner's own cgroup, or cgroup v1's memory
 * hierarchy, writable (as root, or delegated). The sandbox's first process joins it before it runs anything
 * (`sh -c 'echo $$ > cgroup.procs; exec ...'`), so every process it makes is inside. Where no cgroup can be made,
 * a sandbox is bounded per process only (RLIMIT_DATA, and the number of processes): `memoryCgroup` says so.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface MemoryCgroup {
  path: string;
  /** The command that runs `command args` inside the cgroup. */
  wrap(command: string, args: string[]): { command: string; args: string[] };
  /** Removes the cgroup once its processes are gone (retries briefly; a leftover is harmless and empty). */
  remove(): void;
}

let counter = 0;

/** The runner's own cgroup folder for a hierarchy: v2 (`0::/path`) or v1's `memory` line. */
function ownFolder(): { dir: string; v2: boolean } | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  const v1 = lines.map((l) => l.split(':')).find((f) => f[1]?.split(',').includes('memory'));
  if (v1 && existsSync('/sys/fs/cgroup/memory')) return { dir: join('/sys/fs/cgroup/memory', v1[2] ?? '/'), v2: false };
  const v2 = lines.map((l) => l.split(':')).find((f) => f[0] === '0' && f[1] === '');
  if (v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')) return { dir: join('/sys/fs/cgroup', v2[2] ?? '/'), v2: true };
  return undefined;
}

/** A new cgroup bounding its processes' memory to `bytes` in all, or undefined where none can be made here. */
export function memoryCgroup(bytes: number): MemoryCgroup | undefined {
  if (process.platform !== 'linux') return undefined;
  const own = ownFolder();
  if (!own) return undefined;
  const path = join(own.dir, `mcpbench-${process.pid}-${++counter}`);
  try {
    if (own.v2 && !readFileSync(join(own.dir, 'cgroup.subtree_control'), 'utf8').split(/\s+/).includes('memory')) return undefined;
    mkdirSync(path);
    if (own.v2) {
      writeFileSync(join(path, 'memory.max'), String(bytes));
      writeFileSync(join(path, 'memory.swap.max'), '0');
    } else {
      writeFileSync(join(path, 'memory.limit_in_bytes'), String(bytes));
    }
  } catch {
    try {
      rmdirSync(path);
    } catch {
      // not made
    }
    return undefined;
  }
  const procs = join(path, 'cgroup.procs');
  return {
    path,
    wrap: (command, args) => ({ command: '/bin/sh', args: ['-c', `echo $$ > '${procs}' && exec "$@"`, 'mcpbench-cgroup', command, ...args] }),
    remove: () => {
      for (let i = 0; i < 50; i++) {
        try {
          rmdirSync(path);
          return;
        } catch {
          Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 20);
        }
      }
    },
  };
}
