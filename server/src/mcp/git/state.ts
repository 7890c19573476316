/**
 * The git state as predicates read it. Authors write a small history (commits with changes, branches, tags,
 * HEAD, staged and working-tree changes); snapshots have the same shape, so the model below is shared: trees
 * are rebuilt by replaying each commit's changes onto its first parent's tree.
 */
export type Changes = Record<string, string | null>;

export interface Commit {
  id: string;
  message: string;
  author: string;
  date: string;
  parents: string[];
  files: Changes;
}

interface Tag {
  commit: string;
  message: string | null;
}

export interface GitState {
  commits: Commit[];
  branches: Record<string, string>;
  tags: Record<string, Tag>;
  head: string;
  staged: Changes;
  working_tree: Changes;
}

export const SEED_AUTHOR = 'MCPBench Seed <seed@mcpbench.local>';
const SEED_EPOCH = Date.UTC(2024, 0, 1);

interface RawCommit {
  id: string;
  message: string;
  author?: string;
  date?: string;
  parents?: string[];
  files?: Changes;
}

interface RawState {
  commits?: RawCommit[];
  branches?: Record<string, string>;
  tags?: Record<string, string | { commit: string; message?: string }>;
  head?: string;
  staged?: Changes;
  working_tree?: Changes;
}

export function normalizeState(state: unknown): GitState {
  const raw = (state ?? {}) as RawState;
  const commits: Commit[] = (raw.commits ?? []).map((c, i, all) => ({
    id: c.id,
    message: c.message,
    author: c.author ?? SEED_AUTHOR,
    date: c.date ?? new Date(SEED_EPOCH + i * 3_600_000).toISOString(),
    parents: c.parents ?? (i > 0 ? [all[i - 1]!.id] : []),
    files: { ...(c.files ?? {}) },
  }));
  const head = raw.head ?? 'main';
  const last = commits[commits.length - 1];
  const branches = raw.branches ? { ...raw.branches } : last ? { [head]: last.id } : {};
  const tags: Record<string, Tag> = {};
  for (const [name, t] of Object.entries(raw.tags ?? {})) {
    tags[name] = typeof t === 'string' ? { commit: t, message: null } : { commit: t.commit, message: t.message ?? null };
  }
  return { commits, branches, tags, head, staged: { ...(raw.staged ?? {}) }, working_tree: { ...(raw.working_tree ?? {}) } };
}

export class Repo {
  readonly byId = new Map<string, Commit>();
  private readonly trees = new Map<string, Map<string, string>>();

  constructor(readonly state: GitState) {
    for (const c of state.commits) if (!this.byId.has(c.id)) this.byId.set(c.id, c);
  }

  /** The commit HEAD points to; undefined on an unborn branch. */
  headCommit(): string | undefined {
    if (Object.prototype.hasOwnProperty.call(this.state.branches, this.state.head)) return this.state.branches[this.state.head];
    return this.byId.has(this.state.head) ? this.state.head : undefined;
  }

  /** True when HEAD is on a branch (possibly unborn: no commit yet). */
  onBranch(): boolean {
    return Object.prototype.hasOwnProperty.call(this.state.branches, this.state.head) || !this.byId.has(this.state.head);
  }

  /**
   * A ref to a commit id: `HEAD`, a branch, a tag, a commit id or an unambiguous id prefix (4+ characters),
   * each optionally followed by `~n` / `^` (first-parent steps). Branches win over tags, as in git.
   */
  resolve(ref: string): string | undefined {
    const m = /^(.*?)((?:~\d*|\^1?)*)$/.exec(ref.trim());
    const base = m?.[1] ?? ref;
    const suffix = m?.[2] ?? '';
    let id: string | undefined;
    if (base === 'HEAD' || base === '@') id = this.headCommit();
    else if (Object.prototype.hasOwnProperty.call(this.state.branches, base)) id = this.state.branches[base];
    else if (Object.prototype.hasOwnProperty.call(this.state.tags, base)) id = this.state.tags[base]!.commit;
    else if (this.byId.has(base)) id = base;
    else if (base.length >= 4) {
      const hits = [...this.byId.keys()].filter((k) => k.startsWith(base));
      if (hits.length === 1) id = hits[0];
    }
    for (const step of suffix.match(/~\d*|\^1?/g) ?? []) {
      const n = step.startsWith('~') ? (step.length > 1 ? Number(step.slice(1)) : 1) : 1;
      for (let i = 0; i < n && id !== undefined; i++) id = this.byId.get(id)?.parents[0];
    }
    return id !== undefined && this.byId.has(id) ? id : undefined;
  }

  /** Ids reachable from `id` (itself included), following every parent. */
  ancestors(id: string): Set<string> {
    const seen = new Set<string>();
    const stack = [id];
    while (stack.length) {
      const next = stack.pop()!;
      if (seen.has(next) || !this.byId.has(next)) continue;
      seen.add(next);
      stack.push(...this.byId.get(next)!.parents);
    }
    return seen;
  }

  /** Every commit reachable from a branch, a tag or HEAD, in state order. */
  reachableFromAnyRef(): Commit[] {
    const seen = new Set<string>();
    const tips = [...Object.values(this.state.branches), ...Object.values(this.state.tags).map((t) => t.commit), this.headCommit()];
    for (const tip of tips) if (tip !== undefined) for (const id of this.ancestors(tip)) seen.add(id);
    return this.state.commits.filter((c) => seen.has(c.id));
  }

  commitsFrom(id: string): Commit[] {
    const set = this.ancestors(id);
    return this.state.commits.filter((c) => set.has(c.id));
  }

  tree(id: string): Map<string, string> {
    const cached = this.trees.get(id);
    if (cached) return cached;
    // Iterative over the first-parent chain: long histories must not overflow the stack.
    const chain: Commit[] = [];
    let cursor: string | undefined = id;
    const visited = new Set<string>();
    while (cursor !== undefined && !this.trees.has(cursor) && this.byId.has(cursor) && !visited.has(cursor)) {
      visited.add(cursor);
      const commit: Commit = this.byId.get(cursor)!;
      chain.push(commit);
      cursor = commit.parents[0];
    }
    let tree = new Map(cursor !== undefined ? (this.trees.get(cursor) ?? []) : []);
    for (const commit of chain.reverse()) {
      tree = applyChanges(tree, commit.files);
      this.trees.set(commit.id, tree);
    }
    return this.trees.get(id) ?? new Map();
  }

  headTree(): Map<string, string> {
    const id = this.headCommit();
    return id === undefined ? new Map() : this.tree(id);
  }

  index(): Map<string, string> {
    return applyChanges(this.headTree(), this.state.staged);
  }

  workingTree(): Map<string, string> {
    return applyChanges(this.index(), this.state.working_tree);
  }
}

export function normalizePath(path: string): string {
  return path
    .replace(/\\/g, '/')
    .split('/')
    .filter((s) => s !== '' && s !== '.')
    .join('/');
}

function applyChanges(tree: Map<string, string>, changes: Changes): Map<string, string> {
  const next = new Map(tree);
  for (const [rawPath, content] of Object.entries(changes)) {
    const path = normalizePath(rawPath);
    if (content === null) next.delete(path);
    else next.set(path, content);
  }
  return next;
}

/** The paths whose content differs between two trees. */
export function changedPaths(a: Map<string, string>, b: Map<string, string>): string[] {
  const out = new Set<string>();
  for (const [p, c] of a) if (b.get(p) !== c) out.add(p);
  for (const p of b.keys()) if (!a.has(p)) out.add(p);
  return [...out].sort();
}
