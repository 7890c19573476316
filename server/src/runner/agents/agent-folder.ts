/**
 * What of a confined agent's own folder it must not see: everything of the run (the run folder and the folder
 * of runs it sits in, every task source given, every task file), version control (`.git`, where committed
 * copies of hidden tasks live), sealed sets (`*.sealed.json`) and any small file holding the set key. Paths
 * are compared by realpath, so a task folder named through a symlink is hidden all the same; the agent's folder
 * is bound at its own realpath so the hidden paths are the ones it would open.
 *
 * A folder of the run that contains the agent's folder (the agent folder is the task folder, or lies in the
 * run folder) cannot be hidden from it: that is an AgentOptionsError, refused before anything runs.
 *
 * The scan for `.git`, sealed sets and key files is bounded (depth and entries, small files only); the
 * top-level `.git` is always hidden.
 */
import { lstatSync, openSync, readdirSync, readSync, closeSync, realpathSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { AgentOptionsError } from './agent.ts';

/** What is hidden: files (an empty one over each) and folders (an empty read-only one over each). */
export interface HiddenPaths {
  files: string[];
  folders: string[];
}

/** Paths of the run the agent never reads, each with what it is (for the refusal's message). */
export interface RunPath {
  path: string;
  what: string;
  /** Hide it only when it lies inside the agent's folder; never refuse over it (a run folder's parent). */
  optional?: boolean;
}

const SCAN_MAX_DEPTH = 6;
const SCAN_MAX_ENTRIES = 20_000;
const KEY_FILE_MAX_BYTES = 4096;
const SKIP_SCAN = new Set(['node_modules']);

const within = (path: string, folder: string) => path === folder || path.startsWith(folder.endsWith('/') ? folder : `${folder}/`);

function real(path: string): string | undefined {
  try {
    return realpathSync(path);
  } catch {
    return undefined;
  }
}

/**
 * The agent's folder as bound (its realpath) and what in it is hidden. Throws AgentOptionsError when a path
 * of the run contains the folder, so it cannot be hidden from the agent.
 */
export function agentFolderView(dir: string, runPaths: readonly RunPath[], setKey?: string): { dir: string; hidden: HiddenPaths } {
  const root = real(dir) ?? dir;
  const files = new Set<string>();
  const folders = new Set<string>();
  const add = (path: string) => {
    let isDir = false;
    try {
      isDir = statSync(path).isDirectory();
    } catch {
      return;
    }
    (isDir ? folders : files).add(path);
  };
  for (const { path, what, optional } of runPaths) {
    const resolved = real(path);
    if (resolved === undefined) continue;
    if (within(root, resolved)) {
      if (optional) continue;
      throw new AgentOptionsError(
        'command',
        'dir',
        `the command agent option dir: ${dir} lies in ${what} ${path}${resolved !== path ? ` (${resolved})` : ''}, which a confined agent must never read and which cannot be hidden from its own folder; give the agent a folder outside it`,
      );
    }
    if (within(resolved, root)) add(resolved);
  }
  scan(root, setKey?.trim(), add);
  // Nothing inside a hidden folder needs hiding again (and could not be: the folder is empty inside).
  const hiddenFolders = [...folders].filter((f) => ![...folders].some((g) => g !== f && within(f, g))).sort();
  const hiddenFiles = [...files].filter((f) => !hiddenFolders.some((g) => within(f, g))).sort();
  return { dir: root, hidden: { files: hiddenFiles, folders: hiddenFolders } };
}

/** `.git`, sealed sets and small files holding the set key under `root` (bounded; symlinks are not followed). */
function scan(root: string, setKey: string | undefined, add: (path: string) => void): void {
  let seen = 0;
  const walk = (folder: string, depth: number) => {
    let entries;
    try {
      entries = readdirSync(folder, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (++seen > SCAN_MAX_ENTRIES) return;
      const path = join(folder, entry.name);
      if (entry.name === '.git' || entry.name.endsWith('.sealed.json')) {
        if (!entry.isSymbolicLink()) add(path);
        continue;
      }
      if (entry.isDirectory()) {
        if (depth < SCAN_MAX_DEPTH && !SKIP_SCAN.has(entry.name)) walk(path, depth + 1);
      } else if (entry.isFile() && setKey && setKey.length >= 12 && holdsKey(path, setKey)) add(path);
    }
  };
  walk(root, 0);
}

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function holdsKey(path: string, key: string): boolean {
  try {
    if (lstatSync(path).size > KEY_FILE_MAX_BYTES) return false;
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(KEY_FILE_MAX_BYTES);
      const n = readSync(fd, buffer, 0, buffer.length, 0);
      return buffer.subarray(0, n).toString('utf8').includes(key);
    } finally {
      closeSync(fd);
    }
  } catch {
    return false;
  }
}

/** The paths of a run an agent never reads: the run folder and its parent (the folder of runs), every task source. */
export function runPathsOf(runDirectory: string | undefined, taskSources: readonly string[]): RunPath[] {
  const paths: RunPath[] = [];
  if (runDirectory) {
    paths.push({ path: runDirectory, what: 'the run folder' });
    paths.push({ path: dirname(runDirectory), what: 'the folder of runs', optional: true });
  }
  // A task folder that holds the agent's folder cannot be hidden as a whole: its task files are, one by one.
  for (const source of new Set(taskSources.map((s) => s.split('#')[0]!))) paths.push({ path: source, what: 'the task source', optional: isFolder(source) });
  return paths;
}
