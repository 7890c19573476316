/**
 * The `git` namespace's real server: a repository built with the git CLI from the state, tools that run git
 * on it, and a snapshot that reads the repository back into the state shape.
 *
 * Sandbox layout: the repository is `<sandbox>/repo`; our bookkeeping lives next to it in
 * `<sandbox>/.mcpbench-git.json` (state ids of the seeded commits with their hashes, and the clock agent
 * commits are dated by), so it never shows up in `git status` and the agent cannot reach it.
 *
 * Determinism: seeded commits carry the state's author and date (committer = author); agent commits, merges
 * and tags are made by `MCPBench Agent <agent@mcpbench.local>` at a clock that starts at the newest seeded
 * date and moves one hour per object made. The same state and the same calls give the same hashes.
 *
 * Git runs without a shell, with no system or global configuration, in the C locale, each invocation under
 * a timeout; GIT_DIR and GIT_WORK_TREE are always set, so a missing repository never lets git wander up to an
 * enclosing one.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { devNull } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { ToolError, type NamespaceRuntime } from '../namespace.ts';
import { loadRegistry } from '../registry.ts';
import { serveTools } from '../serve-tools.ts';
import { normalizePath, SEED_AUTHOR, type Changes, type Commit, type GitState } from './state.ts';

export const REPO_DIR = 'repo';
export const META_FILE = '.mcpbench-git.json';
const AGENT_NAME = 'MCPBench Agent';
const AGENT_EMAIL = 'agent@mcpbench.local';
/** Per git invocation; a hung git (a lock, a huge diff) becomes an error result instead of a hung server. */
const GIT_TIMEOUT_MS = 15_000;
const CLOCK_STEP_SECONDS = 3600;
const SEED_EPOCH_SECONDS = Date.UTC(2024, 0, 1) / 1000;
const EMPTY_TREE = '4b825dc642cb6eb9a060e54bf8d69288fbee4904';
const SCRATCH_REF = 'refs/mcpbench/seed';
const MAX_OUTPUT = 64 * 1024 * 1024;

interface Meta {
  version: 1;
  /** Seeded commits in state order: the state id, the real hash and the state's date string. */
  seeded: { id: string; sha: string; date: string }[];
  /** Unix seconds of the last date handed out; the next agent object is dated one step later. */
  clock: number;
}

/** A refusal by git (or by our argument checks): the agent sees git's message as an error result. */
class GitError extends ToolError {}

// ---------------------------------------------------------------------------------------------------------
// Running git

interface GitRun {
  code: number;
  stdout: Buffer;
  stderr: string;
}

interface GitOptions {
  input?: Buffer | string;
  env?: Record<string, string>;
  /** Git's cwd; relative paths in arguments are relative to it. */
  cwd?: string;
}

function baseEnv(sandbox: string): Record<string, string> {
  return {
    PATH: process.env.PATH ?? '/usr/bin:/bin',
    HOME: sandbox,
    LC_ALL: 'C',
    LANG: 'C',
    TZ: 'UTC',
    GIT_CONFIG_NOSYSTEM: '1',
    GIT_CONFIG_GLOBAL: devNull,
    GIT_TERMINAL_PROMPT: '0',
    GIT_PAGER: 'cat',
    PAGER: 'cat',
    GIT_EDITOR: 'true',
    GIT_DIR: join(sandbox, REPO_DIR, '.git'),
    GIT_WORK_TREE: join(sandbox, REPO_DIR),
  };
}

function runGit(sandbox: string, args: string[], options: GitOptions = {}): Promise<GitRun> {
  return new Promise((resolvePromise) => {
    const child = execFile(
      'git',
      args,
      {
        cwd: options.cwd ?? join(sandbox, REPO_DIR),
        env: { ...baseEnv(sandbox), ...options.env },
        encoding: 'buffer',
        maxBuffer: MAX_OUTPUT,
        timeout: GIT_TIMEOUT_MS,
        killSignal: 'SIGKILL',
      },
      (error, stdout, stderr) => {
        const err = error as (Error & { code?: number | string; killed?: boolean; signal?: string }) | null;
        let code = 0;
        let message = stderr.toString('utf8');
        if (err) {
          code = typeof err.code === 'number' ? err.code : 128;
          if (err.killed || err.signal === 'SIGKILL') message = `git ${args[0] ?? ''} timed out after ${GIT_TIMEOUT_MS} ms`;
          else if (typeof err.code === 'string') message = `cannot run git: ${err.message}`;
        }
        resolvePromise({ code, stdout, stderr: message });
      },
    );
    // A git that exits before reading all of its input must not crash us with EPIPE.
    child.stdin?.on('error', () => undefined);
    child.stdin?.end(options.input ?? '');
  });
}

function failure(run: GitRun): string {
  const text = (run.stderr.trim() || run.stdout.toString('utf8').trim()).replace(/\n{3,}/g, '\n\n');
  return text || `git exited with code ${run.code}`;
}

/** Runs git and returns stdout as text; a non-zero exit becomes a GitError with git's message. */
async function git(sandbox: string, args: string[], options: GitOptions = {}): Promise<string> {
  const run = await runGit(sandbox, args, options);
  if (run.code !== 0) throw new GitError(failure(run));
  return run.stdout.toString('utf8');
}

async function revParse(sandbox: string, rev: string): Promise<string | undefined> {
  const run = await runGit(sandbox, ['rev-parse', '--verify', '-q', '--end-of-options', rev]);
  return run.code === 0 ? run.stdout.toString('utf8').trim() : undefined;
}

// ---------------------------------------------------------------------------------------------------------
// Bookkeeping

function readMeta(sandbox: string): Meta {
  try {
    const meta = JSON.parse(readFileSync(join(sandbox, META_FILE), 'utf8')) as Meta;
    if (Array.isArray(meta.seeded) && typeof meta.clock === 'number') return meta;
  } catch {
    // A repository we did not seed: no state ids, clock from the epoch.
  }
  return { version: 1, seeded: [], clock: SEED_EPOCH_SECONDS };
}

function writeMeta(sandbox: string, meta: Meta): void {
  const file = join(sandbox, META_FILE);
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, JSON.stringify(meta, null, 2) + '\n');
  renameSync(temporary, file);
}

// ---------------------------------------------------------------------------------------------------------
// Seeding

/** A state path as a safe repository-relative path: never outside the work tree, never into `.git`. */
function safePath(raw: string): string {
  const path = normalizePath(raw);
  const segments = path.split('/');
  if (path === '' || segments.includes('..') || segments[0] === '.git') throw new Error(`git state: unusable path ${JSON.stringify(raw)}`);
  return path;
}

function seconds(date: string): number {
  const ms = Date.parse(date);
  if (Number.isNaN(ms)) throw new Error(`git state: unreadable date ${JSON.stringify(date)}`);
  return Math.floor(ms / 1000);
}

/** fast-import's C-style quoting, which it accepts for every path. */
function quotePath(path: string): string {
  return `"${path.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`;
}

function dataBlock(text: string): Buffer[] {
  const bytes = Buffer.from(text, 'utf8');
  return [Buffer.from(`data ${bytes.length}\n`), bytes, Buffer.from('\n')];
}

/**
 * The whole history as one fast-import stream: each commit's changes are against its first parent, exactly
 * as the state records them, and merges are `from` + `merge`. Messages get the trailing newline git's own
 * commands add, which the snapshot strips again.
 */
function fastImportStream(state: GitState): { stream: Buffer; marks: Map<string, number> } {
  const chunks: Buffer[] = [];
  const marks = new Map<string, number>();
  const line = (text: string): void => void chunks.push(Buffer.from(`${text}\n`));
  const mark = (id: string, what: string): number => {
    const n = marks.get(id);
    if (n === undefined) throw new Error(`git state: ${what} refers to unknown commit ${JSON.stringify(id)}`);
    return n;
  };
  // Names and authors go into the stream's command lines: a line break there would be a command of its own.
  const oneLine = (value: string, what: string): string => {
    if (/[\0-\x1f\x7f]/.test(value)) throw new Error(`git state: ${what} ${JSON.stringify(value)} contains a control character`);
    return value;
  };
  for (const c of state.commits) oneLine(c.author, `author of ${c.id}`);
  for (const name of [...Object.keys(state.branches), ...Object.keys(state.tags)]) oneLine(name, 'ref name');
  line('feature done');
  state.commits.forEach((commit, i) => {
    if (marks.has(commit.id)) throw new Error(`git state: duplicate commit id ${JSON.stringify(commit.id)}`);
    const parents = commit.parents.map((p) => mark(p, `commit ${commit.id}`));
    const when = `${seconds(commit.date)} +0000`;
    // Without a reset, a parentless commit would continue from the scratch ref's previous tip.
    line(`reset ${SCRATCH_REF}`);
    line(`commit ${SCRATCH_REF}`);
    line(`mark :${i + 1}`);
    line(`author ${commit.author} ${when}`);
    line(`committer ${commit.author} ${when}`);
    chunks.push(...dataBlock(`${commit.message}\n`));
    const [first, ...rest] = parents;
    if (first !== undefined) line(`from :${first}`);
    for (const p of rest) line(`merge :${p}`);
    for (const [raw, content] of Object.entries(commit.files)) {
      const path = quotePath(safePath(raw));
      if (content === null) line(`D ${path}`);
      else {
        line(`M 100644 inline ${path}`);
        chunks.push(...dataBlock(content));
      }
    }
    line('');
    marks.set(commit.id, i + 1);
  });
  for (const [name, tip] of Object.entries(state.branches)) {
    line(`reset refs/heads/${name}`);
    line(`from :${mark(tip, `branch ${name}`)}`);
    line('');
  }
  for (const [name, tag] of Object.entries(state.tags)) {
    const target = mark(tag.commit, `tag ${name}`);
    if (tag.message === null) {
      line(`reset refs/tags/${name}`);
      line(`from :${target}`);
      line('');
    } else {
      // The tagger is the tagged commit's author at its date: derived from the state, so reproducible.
      const commit = state.commits[target - 1]!;
      line(`tag ${name}`);
      line(`from :${target}`);
      line(`tagger ${commit.author} ${seconds(commit.date)} +0000`);
      chunks.push(...dataBlock(`${tag.message}\n`));
    }
  }
  line('done');
  return { stream: Buffer.concat(chunks), marks };
}

function writeWorkFile(repo: string, path: string, content: string): void {
  const file = join(repo, path);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, content);
}

function removeWorkFile(repo: string, path: string): void {
  rmSync(join(repo, path), { force: true });
}

const REPO_CONFIG = [
  '[core]',
  '\tautocrlf = false',
  '\tquotepath = false',
  '[gc]',
  '\tauto = 0',
  '[commit]',
  '\tgpgsign = false',
  '[tag]',
  '\tgpgsign = false',
  '[advice]',
  '\tdetachedHead = false',
  '[user]',
  `\tname = ${AGENT_NAME}`,
  `\temail = ${AGENT_EMAIL}`,
  '',
].join('\n');

async function seedGit(state: GitState, sandbox: string): Promise<void> {
  const repo = join(sandbox, REPO_DIR);
  // Reseeding replaces the repository: it is ours, and a half-old history would be neither state.
  rmSync(repo, { recursive: true, force: true });
  rmSync(join(sandbox, META_FILE), { force: true });
  mkdirSync(repo, { recursive: true });
  await git(sandbox, ['-c', 'init.defaultBranch=main', 'init', '-q', '--template=', repo], { cwd: sandbox });
  writeFileSync(join(repo, '.git', 'config'), readFileSync(join(repo, '.git', 'config'), 'utf8') + REPO_CONFIG);

  const { stream, marks } = fastImportStream(state);
  const marksFile = join(sandbox, '.mcpbench-git-marks');
  try {
    await git(sandbox, ['fast-import', '--quiet', '--date-format=raw', `--export-marks=${marksFile}`], { input: stream });
    const shaOfMark = new Map<number, string>();
    if (existsSync(marksFile)) {
      for (const entry of readFileSync(marksFile, 'utf8').split('\n')) {
        const m = /^:(\d+) ([0-9a-f]{40,64})$/.exec(entry);
        if (m) shaOfMark.set(Number(m[1]), m[2]!);
      }
    }
    const seeded = state.commits.map((c) => ({ id: c.id, sha: shaOfMark.get(marks.get(c.id)!)!, date: c.date }));
    if (state.commits.length > 0) await git(sandbox, ['update-ref', '-d', SCRATCH_REF]);
    const clock = Math.max(SEED_EPOCH_SECONDS, ...state.commits.map((c) => seconds(c.date)));

    // HEAD: a branch (existing, or unborn when it names no commit), else a detached commit.
    const detached = !Object.prototype.hasOwnProperty.call(state.branches, state.head) && marks.has(state.head);
    if (detached) {
      await git(sandbox, ['update-ref', '--no-deref', 'HEAD', shaOfMark.get(marks.get(state.head)!)!]);
    } else {
      await git(sandbox, ['check-ref-format', `refs/heads/${state.head}`]).catch(() => {
        throw new Error(`git state: head ${JSON.stringify(state.head)} is not a valid branch name`);
      });
      await git(sandbox, ['symbolic-ref', 'HEAD', `refs/heads/${state.head}`]);
    }
    if ((await revParse(sandbox, 'HEAD')) !== undefined) await git(sandbox, ['reset', '-q', '--hard', 'HEAD']);

    const literal = { env: { GIT_LITERAL_PATHSPECS: '1' } };
    const stagedWrites = Object.entries(state.staged).filter(([, c]) => c !== null);
    const stagedDeletes = Object.entries(state.staged).filter(([, c]) => c === null);
    for (const [raw, content] of stagedWrites) writeWorkFile(repo, safePath(raw), content!);
    if (stagedWrites.length) await git(sandbox, ['add', '-f', '--', ...stagedWrites.map(([p]) => safePath(p))], literal);
    if (stagedDeletes.length) await git(sandbox, ['rm', '-q', '-r', '--cached', '--ignore-unmatch', '--', ...stagedDeletes.map(([p]) => safePath(p))], literal);
    for (const [raw] of stagedDeletes) removeWorkFile(repo, safePath(raw));
    for (const [raw, content] of Object.entries(state.working_tree)) {
      if (content === null) removeWorkFile(repo, safePath(raw));
      else writeWorkFile(repo, safePath(raw), content);
    }
    writeMeta(sandbox, { version: 1, seeded, clock });
  } finally {
    rmSync(marksFile, { force: true });
  }
}

// ---------------------------------------------------------------------------------------------------------
// Snapshot

/** Reads many objects in one `git cat-file --batch`. */
async function readObjects(sandbox: string, shas: string[]): Promise<Map<string, { type: string; body: Buffer }>> {
  const out = new Map<string, { type: string; body: Buffer }>();
  const unique = [...new Set(shas)];
  if (unique.length === 0) return out;
  const run = await runGit(sandbox, ['cat-file', '--batch'], { input: unique.join('\n') + '\n' });
  if (run.code !== 0) throw new Error(`git cat-file: ${failure(run)}`);
  const buf = run.stdout;
  let at = 0;
  for (const sha of unique) {
    const end = buf.indexOf(0x0a, at);
    if (end < 0) break;
    const header = buf.subarray(at, end).toString('utf8').split(' ');
    at = end + 1;
    if (header[1] === 'missing' || header.length < 3) continue;
    const size = Number(header[2]);
    out.set(sha, { type: header[1]!, body: buf.subarray(at, at + size) });
    at += size + 1;
  }
  return out;
}

interface ParsedCommit {
  tree: string;
  parents: string[];
  author: string;
  time: number;
  message: string;
}

function splitObject(body: Buffer): { headers: string[]; message: string } {
  const text = body.toString('utf8');
  const gap = text.indexOf('\n\n');
  const head = gap < 0 ? text : text.slice(0, gap);
  const message = gap < 0 ? '' : text.slice(gap + 2);
  // Continuation lines (a signature's) start with a space and belong to the header before them.
  const headers = head.split('\n').filter((l) => !l.startsWith(' '));
  // Git's own commands end messages with a newline (and the seed adds one): that newline is not content.
  return { headers, message: message.endsWith('\n') ? message.slice(0, -1) : message };
}

function parseCommit(body: Buffer): ParsedCommit {
  const { headers, message } = splitObject(body);
  const parsed: ParsedCommit = { tree: EMPTY_TREE, parents: [], author: SEED_AUTHOR, time: SEED_EPOCH_SECONDS, message };
  for (const h of headers) {
    const space = h.indexOf(' ');
    const key = h.slice(0, space);
    const value = h.slice(space + 1);
    if (key === 'tree') parsed.tree = value;
    else if (key === 'parent') parsed.parents.push(value);
    else if (key === 'author') {
      const m = /^(.*) (-?\d+) [+-]\d{4}$/.exec(value);
      if (m) {
        parsed.author = m[1]!;
        parsed.time = Number(m[2]);
      }
    }
  }
  return parsed;
}

/** path → blob hash of a commit's (or the index's) files. */
async function lsTree(sandbox: string, rev: string): Promise<Map<string, string>> {
  const out = await git(sandbox, ['ls-tree', '-r', '-z', '--full-tree', rev]);
  const files = new Map<string, string>();
  for (const entry of out.split('\0')) {
    const m = /^\d+ (\w+) ([0-9a-f]+)\t(.*)$/s.exec(entry);
    if (m && m[1] === 'blob') files.set(m[3]!, m[2]!);
  }
  return files;
}

async function lsIndex(sandbox: string): Promise<Map<string, string>> {
  const out = await git(sandbox, ['ls-files', '-s', '-z']);
  const files = new Map<string, string>();
  for (const entry of out.split('\0')) {
    const m = /^\d+ ([0-9a-f]+) (\d)\t(.*)$/s.exec(entry);
    // Conflict stages never survive (merges are aborted on conflict); stage 0 is the file.
    if (m && (m[2] === '0' || !files.has(m[3]!))) files.set(m[3]!, m[1]!);
  }
  return files;
}

function blobHash(content: Buffer): string {
  return createHash('sha1').update(`blob ${content.length}\0`).update(content).digest('hex');
}

/** Every regular file of the work tree (tracked, untracked and ignored alike), path → bytes. */
function walkWorkTree(root: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const visit = (dir: string, prefix: string): void => {
    for (const name of readdirSync(dir).sort()) {
      if (name === '.git') continue;
      const full = join(dir, name);
      const stat = lstatSync(full);
      const rel = prefix ? `${prefix}/${name}` : name;
      if (stat.isDirectory()) visit(full, rel);
      else if (stat.isFile()) files.set(rel, readFileSync(full));
    }
  };
  if (existsSync(root)) visit(root, '');
  return files;
}

function diffMaps(from: Map<string, string>, to: Map<string, string>): { changed: string[]; deleted: string[] } {
  const changed: string[] = [];
  const deleted: string[] = [];
  for (const [path, sha] of to) if (from.get(path) !== sha) changed.push(path);
  for (const path of from.keys()) if (!to.has(path)) deleted.push(path);
  return { changed: changed.sort(), deleted: deleted.sort() };
}

/**
 * The state as the schema writes it: a lightweight tag is its commit id, an annotated one `{ commit, message }`
 * (GitState's normalised `message: null` is not schema-valid, and snapshots are validated before predicates
 * read them). Everything else already has the normalised form.
 */
type GitSnapshot = Omit<GitState, 'tags'> & { tags: Record<string, string | { commit: string; message: string }> };

async function snapshotGit(sandbox: string): Promise<GitSnapshot> {
  const meta = readMeta(sandbox);
  const idOf = new Map<string, string>();
  for (const s of meta.seeded) if (!idOf.has(s.sha)) idOf.set(s.sha, s.id);
  const seededDate = new Map(meta.seeded.map((s) => [s.sha, s.date]));
  const label = (sha: string): string => idOf.get(sha) ?? sha.slice(0, 12);

  const headSha = await revParse(sandbox, 'HEAD');
  const symbolic = await runGit(sandbox, ['symbolic-ref', '-q', 'HEAD']);
  const headRef = symbolic.code === 0 ? symbolic.stdout.toString('utf8').trim() : undefined;

  const refsOut = await git(sandbox, ['for-each-ref', '--format=%(objectname) %(objecttype) %(refname)', 'refs/heads', 'refs/tags']);
  const branchTips = new Map<string, string>();
  const tagRefs: { name: string; sha: string; type: string }[] = [];
  for (const entry of refsOut.split('\n')) {
    const m = /^([0-9a-f]+) (\w+) (refs\/(heads|tags)\/.+)$/.exec(entry);
    if (!m) continue;
    if (m[4] === 'heads') branchTips.set(m[3]!.slice('refs/heads/'.length), m[1]!);
    else tagRefs.push({ name: m[3]!.slice('refs/tags/'.length), sha: m[1]!, type: m[2]! });
  }

  // Annotated tags: their message, and the commit they finally point to.
  const tagObjects = await readObjects(sandbox, tagRefs.filter((t) => t.type === 'tag').map((t) => t.sha));
  const tagTargets: { name: string; commit: string; message: string | null }[] = [];
  for (const t of tagRefs) {
    const commit = t.type === 'commit' ? t.sha : await revParse(sandbox, `${t.sha}^{commit}`);
    if (commit === undefined) continue;
    const body = tagObjects.get(t.sha)?.body;
    tagTargets.push({ name: t.name, commit, message: t.type === 'tag' && body ? splitObject(body).message : null });
  }

  const tips = new Set<string>([...branchTips.values(), ...tagTargets.map((t) => t.commit)]);
  if (headSha !== undefined) tips.add(headSha);
  const reachable = tips.size ? (await git(sandbox, ['rev-list', '--topo-order', '--reverse', ...tips])).split('\n').filter(Boolean) : [];
  // Seeded commits first, in the state's order (kept even when no ref reaches them any more: the objects
  // are still there, and ids in tasks keep resolving); then new commits, parents before children.
  const objects = await readObjects(sandbox, meta.seeded.map((s) => s.sha));
  const seededPresent = meta.seeded.filter((s, i, all) => objects.get(s.sha)?.type === 'commit' && all.findIndex((o) => o.sha === s.sha) === i);
  const seededShas = new Set(seededPresent.map((s) => s.sha));
  const order = [...seededPresent.map((s) => s.sha), ...reachable.filter((sha) => !seededShas.has(sha))];
  const newObjects = await readObjects(sandbox, order.filter((sha) => !objects.has(sha)));
  for (const [sha, o] of newObjects) objects.set(sha, o);

  const trees = new Map<string, Map<string, string>>();
  const treeOf = async (sha: string): Promise<Map<string, string>> => {
    let tree = trees.get(sha);
    if (!tree) trees.set(sha, (tree = await lsTree(sandbox, sha)));
    return tree;
  };
  const wanted: string[] = [];
  const pending: { commit: ParsedCommit; sha: string; changed: [string, string][]; deleted: string[] }[] = [];
  for (const sha of order) {
    const commit = parseCommit(objects.get(sha)!.body);
    const first = commit.parents[0];
    const { changed, deleted } = diffMaps(first === undefined ? new Map() : await treeOf(first), await treeOf(sha));
    const tree = await treeOf(sha);
    const changedBlobs = changed.map((p): [string, string] => [p, tree.get(p)!]);
    wanted.push(...changedBlobs.map(([, b]) => b));
    pending.push({ commit, sha, changed: changedBlobs, deleted });
  }

  const headTree = headSha === undefined ? new Map<string, string>() : await treeOf(headSha);
  const index = await lsIndex(sandbox);
  const stagedDiff = diffMaps(headTree, index);
  wanted.push(...stagedDiff.changed.map((p) => index.get(p)!));
  const blobs = await readObjects(sandbox, wanted);
  const text = (sha: string): string => blobs.get(sha)?.body.toString('utf8') ?? '';

  const commits: Commit[] = pending.map(({ commit, sha, changed, deleted }) => {
    const files: Changes = {};
    for (const [p, blob] of changed) files[p] = text(blob);
    for (const p of deleted) files[p] = null;
    const stateDate = seededDate.get(sha);
    const date = stateDate !== undefined && seconds(stateDate) === commit.time ? stateDate : new Date(commit.time * 1000).toISOString();
    return { id: label(sha), message: commit.message, author: commit.author, date, parents: commit.parents.map(label), files };
  });

  const staged: Changes = {};
  for (const p of stagedDiff.changed) staged[p] = text(index.get(p)!);
  for (const p of stagedDiff.deleted) staged[p] = null;

  const working_tree: Changes = {};
  const work = walkWorkTree(join(sandbox, REPO_DIR));
  for (const [p, bytes] of work) if (index.get(p) !== blobHash(bytes)) working_tree[p] = bytes.toString('utf8');
  for (const p of index.keys()) if (!work.has(p)) working_tree[p] = null;

  const branches: Record<string, string> = {};
  for (const [name, sha] of branchTips) branches[name] = label(sha);
  const tags: GitSnapshot['tags'] = {};
  for (const t of tagTargets) tags[t.name] = t.message === null ? label(t.commit) : { commit: label(t.commit), message: t.message };
  const head = headRef?.startsWith('refs/heads/') ? headRef.slice('refs/heads/'.length) : headSha !== undefined ? label(headSha) : 'main';
  return { commits, branches, tags, head, staged: sorted(staged), working_tree: sorted(working_tree) };
}

function sorted(changes: Changes): Changes {
  return Object.fromEntries(Object.entries(changes).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

// ---------------------------------------------------------------------------------------------------------
// The server

/** Revisions and names reach git as arguments: one that looks like an option would be read as one. */
function argument(value: string, what: string): string {
  if (value.startsWith('-')) throw new GitError(`invalid ${what} ${JSON.stringify(value)}: must not start with '-'`);
  if (value.includes('\0') || value.includes('\n')) throw new GitError(`invalid ${what} ${JSON.stringify(value)}`);
  return value;
}

type Args = Record<string, unknown>;
type Handler = (args: Args) => Promise<string>;

class GitTools {
  private readonly repo: string;
  private meta: Meta;

  constructor(private readonly sandbox: string) {
    this.repo = join(sandbox, REPO_DIR);
    this.meta = readMeta(sandbox);
  }

  private git(args: string[], options: GitOptions = {}): Promise<string> {
    return git(this.sandbox, args, options);
  }

  /** Runs a command that makes objects (commits, tags) at the next clock tick; the tick is kept on success. */
  private async dated(args: string[]): Promise<string> {
    const tick = this.meta.clock + CLOCK_STEP_SECONDS;
    const when = `@${tick} +0000`;
    const out = await this.git(args, {
      env: {
        GIT_AUTHOR_NAME: AGENT_NAME,
        GIT_AUTHOR_EMAIL: AGENT_EMAIL,
        GIT_COMMITTER_NAME: AGENT_NAME,
        GIT_COMMITTER_EMAIL: AGENT_EMAIL,
        GIT_AUTHOR_DATE: when,
        GIT_COMMITTER_DATE: when,
      },
    });
    this.meta = { ...this.meta, clock: tick };
    writeMeta(this.sandbox, this.meta);
    return out;
  }

  checkRepoPath(repoPath: unknown): void {
    if (repoPath === undefined) return;
    const given = resolve(this.repo, String(repoPath));
    const real = (p: string): string => (existsSync(p) ? realpathSync(p) : p);
    if (real(given) !== real(this.repo)) throw new GitError(`repo_path must be the repository root ('.' or ${this.repo}), got ${JSON.stringify(repoPath)}`);
  }

  private async commitOf(rev: string, what: string): Promise<string> {
    const sha = await revParse(this.sandbox, `${argument(rev, what)}^{commit}`);
    if (sha === undefined) throw new GitError(`${what} ${JSON.stringify(rev)} is not a branch, tag or commit of this repository`);
    return sha;
  }

  readonly handlers: Record<string, Handler> = {
    git_status: async () => `Repository status:\n${await this.git(['status'])}`,

    git_diff_unstaged: async (a) => `Unstaged changes:\n${await this.git(['diff', `--unified=${(a.context_lines as number | undefined) ?? 3}`])}`,

    git_diff_staged: async (a) => `Staged changes:\n${await this.git(['diff', '--cached', `--unified=${(a.context_lines as number | undefined) ?? 3}`])}`,

    git_diff: async (a) => {
      const target = argument(String(a.target), 'target');
      // `--` makes git read the target as a revision (or range), never as a path.
      return `Diff with ${target}:\n${await this.git(['diff', `--unified=${(a.context_lines as number | undefined) ?? 3}`, target, '--'])}`;
    },

    git_commit: async (a) => {
      const staged = await runGit(this.sandbox, ['diff', '--cached', '--quiet']);
      if (staged.code === 0) throw new GitError('nothing to commit: no changes are staged (use git_add first)');
      if (staged.code !== 1) throw new GitError(failure(staged));
      await this.dated(['commit', '-q', '--no-verify', '-m', String(a.message)]);
      const sha = (await this.git(['rev-parse', 'HEAD'])).trim();
      return `Changes committed successfully with hash ${sha}`;
    },

    git_add: async (a) => {
      await this.git(['add', '--', ...(a.files as string[])]);
      return 'Files staged successfully';
    },

    git_reset: async () => {
      if ((await revParse(this.sandbox, 'HEAD')) === undefined) await this.git(['rm', '-r', '-q', '--cached', '--ignore-unmatch', '--', '.']);
      else await this.git(['reset', '-q']);
      return 'All staged changes reset';
    },

    git_log: async (a) => {
      if ((await revParse(this.sandbox, 'HEAD')) === undefined) return 'Commit history:\n(no commits yet on the current branch)';
      const args = ['log', `--max-count=${(a.max_count as number | undefined) ?? 10}`, '--format=%H%x00%an <%ae>%x00%aI%x00%B%x1e'];
      if (typeof a.start_timestamp === 'string') args.push(`--since=${a.start_timestamp}`);
      if (typeof a.end_timestamp === 'string') args.push(`--until=${a.end_timestamp}`);
      const out = await this.git([...args, 'HEAD', '--']);
      const entries = out
        .split('\x1e')
        .map((e) => e.replace(/^\n/, ''))
        .filter((e) => e.trim() !== '')
        .map((e) => {
          const [hash, author, date, message] = e.split('\0');
          return `Commit: ${hash}\nAuthor: ${author}\nDate: ${date}\nMessage: ${(message ?? '').trim()}\n`;
        });
      return `Commit history:\n${entries.length ? entries.join('\n') : '(no commits match)'}`;
    },

    git_create_branch: async (a) => {
      const name = argument(String(a.branch_name), 'branch name');
      const base = typeof a.base_branch === 'string' ? a.base_branch : undefined;
      const start = base === undefined ? 'HEAD' : await this.commitOf(base, 'base_branch');
      await this.git(['branch', name, start]);
      return `Created branch '${name}' from '${base ?? 'HEAD'}'`;
    },

    git_checkout: async (a) => {
      const name = argument(String(a.branch_name), 'branch name');
      if ((await revParse(this.sandbox, `refs/heads/${name}`)) === undefined) {
        throw new GitError(`error: branch '${name}' not found (git_checkout switches to an existing local branch; create it with git_create_branch)`);
      }
      await this.git(['switch', '-q', name]);
      return `Switched to branch '${name}'`;
    },

    git_show: async (a) => {
      const revision = argument(String(a.revision), 'revision');
      if (revision.includes(':')) {
        const content = await this.git(['show', revision, '--']);
        return content;
      }
      const sha = await this.commitOf(revision, 'revision');
      const header = await this.git(['log', '-1', '--format=%H%x00%an <%ae>%x00%aI%x00%B%x00%P', sha, '--']);
      const [hash, author, date, message, parents] = header.replace(/\n$/, '').split('\0');
      const first = (parents ?? '').split(' ').filter(Boolean)[0] ?? EMPTY_TREE;
      const diff = await this.git(['diff', '--unified=3', first, sha, '--']);
      return `Commit: ${hash}\nAuthor: ${author}\nDate: ${date}\nMessage: ${(message ?? '').trim()}\n\n${diff}`;
    },

    git_branch: async (a) => {
      const args = ['branch'];
      if (a.branch_type === 'remote') args.push('--remotes');
      else if (a.branch_type === 'all') args.push('--all');
      if (typeof a.contains === 'string') args.push('--contains', argument(a.contains, 'contains'));
      if (typeof a.not_contains === 'string') args.push('--no-contains', argument(a.not_contains, 'not_contains'));
      const out = await this.git(args);
      return out.trim() === '' ? 'No branches' : out;
    },

    git_merge: async (a) => {
      const name = argument(String(a.branch_name), 'branch_name');
      // Merging the commit (not an annotated tag object) keeps fast-forwards possible, as the tool promises.
      const sha = await this.commitOf(name, 'branch_name');
      const message = typeof a.message === 'string' ? a.message : `Merge branch '${name}'`;
      const args = ['merge', '--no-edit', '--no-verify', a.no_ff === true ? '--no-ff' : '--ff', '-m', message, sha];
      try {
        const out = await this.dated(args);
        return out.trim() || `Merged ${name}`;
      } catch (error) {
        if ((await revParse(this.sandbox, 'MERGE_HEAD')) === undefined) {
          const staged = await runGit(this.sandbox, ['diff', '--cached', '--quiet']);
          // Git refuses a merge commit while anything is staged, even in files the merge does not touch.
          if (staged.code === 1 && error instanceof GitError) {
            throw new GitError(`${error.message}\n(git does not make a merge commit while changes are staged: commit them, or unstage them with git_reset, first)`);
          }
          throw error;
        }
        const conflicted = (await this.git(['diff', '--name-only', '--diff-filter=U', '-z'])).split('\0').filter(Boolean);
        await this.git(['merge', '--abort']);
        throw new GitError(`Merge of ${name} aborted: conflicts in ${conflicted.join(', ') || '(unknown files)'}. The repository is unchanged.`);
      }
    },

    git_tag: async (a) => {
      const name = argument(String(a.tag_name), 'tag_name');
      const revision = typeof a.revision === 'string' ? a.revision : 'HEAD';
      const sha = await this.commitOf(revision, 'revision');
      if (typeof a.message === 'string') await this.dated(['tag', '-a', '-m', a.message, name, sha]);
      else await this.git(['tag', name, sha]);
      return `Created ${typeof a.message === 'string' ? 'annotated' : 'lightweight'} tag '${name}' at ${sha.slice(0, 12)} (${revision})`;
    },

    git_list_tags: async () => {
      const out = await this.git(['for-each-ref', '--sort=refname', '--format=%(refname:strip=2)%00%(objecttype)%00%(objectname)%00%(*objectname)%00%(contents:subject)', 'refs/tags']);
      const lines = out
        .split('\n')
        .filter(Boolean)
        .map((entry) => {
          const [name, type, object, peeled, subject] = entry.split('\0');
          const commit = (type === 'tag' ? peeled : object) ?? '';
          return type === 'tag' ? `${name} -> ${commit.slice(0, 12)} (annotated: ${subject})` : `${name} -> ${commit.slice(0, 12)} (lightweight)`;
        });
      return lines.length ? lines.join('\n') : 'No tags';
    },

    git_delete_branch: async (a) => {
      const name = argument(String(a.branch_name), 'branch_name');
      return (await this.git(['branch', a.force === true ? '-D' : '-d', name])).trim();
    },

    git_restore: async (a) => {
      const files = a.files as string[];
      await this.git(['restore', '--', ...files]);
      return `Restored ${files.join(', ')}`;
    },
  };
}

async function createGitServer(sandbox: string, version: string): Promise<Server> {
  const info = (await loadRegistry()).get('git');
  if (!info) throw new Error('namespace git is not registered');
  if (!existsSync(join(sandbox, REPO_DIR, '.git'))) throw new Error(`${sandbox}: no seeded git repository (${REPO_DIR}/.git missing)`);
  // A sandbox without git (a container image that lacks it) fails the start, ours, not every call, the agent's.
  const probe = await runGit(sandbox, ['--version']);
  if (probe.code !== 0) throw new Error(`the git server cannot run git here: ${failure(probe)}`);
  const tools = new GitTools(sandbox);
  const server = new Server({ name: 'mcpbench-git', version }, { capabilities: { tools: {} } });
  // Every tool takes the repository's path first, as mcp-server-git's do: it must name the one repository.
  const handlers = Object.fromEntries(
    Object.entries(tools.handlers).map(([name, handler]) => [
      name,
      (args: Record<string, unknown>) => {
        tools.checkRepoPath(args.repo_path);
        return handler(args);
      },
    ]),
  );
  serveTools(server, info, { handlers });
  return server;
}

export const runtime: NamespaceRuntime<GitState> = {
  seed: seedGit,
  // The runtime contract types the snapshot as the state; ours is its schema form, which normalizeState reads.
  snapshot: (sandbox) => snapshotGit(sandbox) as unknown as Promise<GitState>,
  createServer: createGitServer,
};
