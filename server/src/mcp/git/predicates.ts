import type { PredicateFunction, Verdict } from '../namespace.ts';
import { changedPaths, normalizePath, Repo, type Commit, type GitState } from './state.ts';

type P = PredicateFunction<GitState>;

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}

function withinBounds(n: number, b: Bounds): boolean {
  return (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);
}

interface CommitFilters {
  message?: string;
  message_contains?: string;
  author_contains?: string;
  touches?: string;
  merge?: boolean;
  case_insensitive?: boolean;
}

function summary(c: Commit): { id: string; message: string; author: string; parents: string[] } {
  const subject = c.message.length > 120 ? `${c.message.slice(0, 120)}…` : c.message;
  return { id: c.id, message: subject, author: c.author, parents: c.parents };
}

/** The paths a commit changes against its first parent (from the trees, so it is right for merges too). */
function touched(repo: Repo, c: Commit): string[] {
  const parent = c.parents[0];
  return changedPaths(parent !== undefined && repo.byId.has(parent) ? repo.tree(parent) : new Map(), repo.tree(c.id));
}

function matches(repo: Repo, c: Commit, f: CommitFilters): boolean {
  const fold = (s: string): string => (f.case_insensitive ? s.toLowerCase() : s);
  if (f.message !== undefined && fold(c.message.trim()) !== fold(f.message.trim())) return false;
  if (f.message_contains !== undefined && !fold(c.message).includes(fold(f.message_contains))) return false;
  if (f.author_contains !== undefined && !fold(c.author).includes(fold(f.author_contains))) return false;
  if (f.merge !== undefined && c.parents.length >= 2 !== f.merge) return false;
  if (f.touches !== undefined && !touched(repo, c).includes(normalizePath(f.touches))) return false;
  return true;
}

function unresolved(ref: string, repo: Repo): Verdict {
  return {
    value: false,
    evidence: { ref, resolved: false, branches: Object.keys(repo.state.branches).slice(0, 20), tags: Object.keys(repo.state.tags).slice(0, 20) },
  };
}

interface ContentArgs {
  contains?: string;
  equals?: string;
  trim?: boolean;
}

function checkContent(path: string, content: string | undefined, args: ContentArgs, where: Record<string, unknown>): Verdict {
  if (content === undefined) return { value: false, evidence: { ...where, path, exists: false } };
  const okContains = args.contains === undefined || content.includes(args.contains);
  const okEquals = args.equals === undefined || (args.trim ? content.trim() === args.equals.trim() : content === args.equals);
  const ok = okContains && okEquals;
  return { value: ok, evidence: { ...where, path, ...(ok ? {} : { content: content.length > 200 ? `${content.slice(0, 200)}…` : content }) } };
}

export const predicates: Record<string, P> = {
  branchExists: ({ name }, { state }) => {
    const tip = state.branches[name];
    return Object.prototype.hasOwnProperty.call(state.branches, name)
      ? { value: true, evidence: { branch: name, tip } }
      : { value: false, evidence: { branch: name, branches: Object.keys(state.branches).slice(0, 20) } };
  },

  currentBranch: ({ name }, { state }) => {
    const repo = new Repo(state);
    const onBranch = repo.onBranch();
    return { value: onBranch && state.head === name, evidence: onBranch ? { head: state.head } : { head: state.head, detached: true } };
  },

  branchPointsTo: ({ branch, ref }, { state }) => {
    const repo = new Repo(state);
    if (!Object.prototype.hasOwnProperty.call(state.branches, branch)) return { value: false, evidence: { branch, exists: false } };
    const target = repo.resolve(ref);
    if (target === undefined) return unresolved(ref, repo);
    const tip = state.branches[branch];
    return { value: tip === target, evidence: { branch, tip, ref, target } };
  },

  tagExists: ({ name, at, annotated, message_contains }, { state }) => {
    const repo = new Repo(state);
    const tag = Object.prototype.hasOwnProperty.call(state.tags, name) ? state.tags[name] : undefined;
    if (!tag) return { value: false, evidence: { tag: name, exists: false, tags: Object.keys(state.tags).slice(0, 20) } };
    const evidence: Record<string, unknown> = { tag: name, commit: tag.commit, annotated: tag.message !== null };
    let ok = true;
    if (at !== undefined) {
      const target = repo.resolve(at);
      evidence.at = at;
      evidence.expected = target ?? null;
      ok &&= target !== undefined && target === tag.commit;
    }
    if (annotated !== undefined) ok &&= (tag.message !== null) === annotated;
    if (message_contains !== undefined) {
      evidence.message = tag.message;
      ok &&= tag.message !== null && tag.message.includes(message_contains);
    }
    return { value: ok, evidence };
  },

  commitExists: (args, { state }) => {
    const repo = new Repo(state);
    let pool: Commit[];
    if (args.branch !== undefined) {
      const tip = repo.resolve(args.branch);
      if (tip === undefined) return unresolved(args.branch, repo);
      pool = repo.commitsFrom(tip);
    } else {
      pool = repo.reachableFromAnyRef();
    }
    const hit = pool.find((c) => matches(repo, c, args));
    if (hit) return { value: true, evidence: { commit: summary(hit) } };
    // Newest first: the commits an agent most likely meant.
    return { value: false, evidence: { searched: pool.length, latest: pool.slice(-5).reverse().map(summary) } };
  },

  commitAt: (args, { state }) => {
    const repo = new Repo(state);
    const id = repo.resolve(args.ref);
    if (id === undefined) return unresolved(args.ref, repo);
    const commit = repo.byId.get(id)!;
    const ok = matches(repo, commit, args);
    return { value: ok, evidence: { ref: args.ref, commit: summary(commit), ...(args.touches !== undefined && !ok ? { touched: touched(repo, commit) } : {}) } };
  },

  commitCount: (args, { state }) => {
    const repo = new Repo(state);
    const ref = args.branch ?? 'HEAD';
    const tip = repo.resolve(ref);
    const pool = tip === undefined ? [] : repo.commitsFrom(tip);
    const needle = args.message_contains === undefined ? undefined : String(args.message_contains).toLowerCase();
    const n = pool.filter((c) => needle === undefined || c.message.toLowerCase().includes(needle)).length;
    return { value: withinBounds(n, args), evidence: { ref, count: n, ...(tip === undefined ? { resolved: false } : {}) } };
  },

  branchContainsCommit: ({ branch, ref }, { state }) => {
    const repo = new Repo(state);
    if (!Object.prototype.hasOwnProperty.call(state.branches, branch)) return { value: false, evidence: { branch, exists: false } };
    const target = repo.resolve(ref);
    if (target === undefined) return unresolved(ref, repo);
    const ok = repo.ancestors(state.branches[branch]!).has(target);
    return { value: ok, evidence: { branch, tip: state.branches[branch], ref, commit: target } };
  },

  branchMerged: ({ source, target }, { state }) => {
    const repo = new Repo(state);
    for (const b of [source, target]) {
      if (!Object.prototype.hasOwnProperty.call(state.branches, b)) return { value: false, evidence: { branch: b, exists: false } };
    }
    const sourceTip = state.branches[source]!;
    const targetTip = state.branches[target]!;
    const reach = repo.ancestors(targetTip);
    const missing = repo.commitsFrom(sourceTip).filter((c) => !reach.has(c.id));
    return { value: missing.length === 0, evidence: { source: sourceTip, target: targetTip, ...(missing.length ? { notMerged: missing.slice(-5).map(summary) } : {}) } };
  },

  fileAtRef: (args, { state }) => {
    const repo = new Repo(state);
    const id = repo.resolve(args.ref);
    if (id === undefined) return unresolved(args.ref, repo);
    const path = normalizePath(args.path);
    return checkContent(path, repo.tree(id).get(path), args, { ref: args.ref, commit: id });
  },

  fileInWorkingTree: (args, { state }) => {
    const path = normalizePath(args.path);
    return checkContent(path, new Repo(state).workingTree().get(path), args, {});
  },

  workingTreeClean: ({ ignore_untracked }, { state }) => {
    const repo = new Repo(state);
    const head = repo.headTree();
    const index = repo.index();
    const work = repo.workingTree();
    const staged = changedPaths(head, index);
    const unstaged = changedPaths(index, work).filter((p) => !(ignore_untracked && !index.has(p)));
    const clean = staged.length === 0 && unstaged.length === 0;
    return { value: clean, evidence: clean ? { clean: true } : { staged: staged.slice(0, 20), unstaged: unstaged.slice(0, 20) } };
  },

  stagedFile: ({ path: raw, deleted, contains }, { state }) => {
    const repo = new Repo(state);
    const path = normalizePath(raw);
    const head = repo.headTree();
    const index = repo.index();
    const stagedPaths = changedPaths(head, index);
    if (!stagedPaths.includes(path)) return { value: false, evidence: { path, staged: false, stagedPaths: stagedPaths.slice(0, 20) } };
    const content = index.get(path);
    const isDeletion = content === undefined;
    let ok = deleted === undefined || deleted === isDeletion;
    if (contains !== undefined) ok &&= content !== undefined && content.includes(contains);
    return { value: ok, evidence: { path, staged: true, deletion: isDeletion } };
  },

  unstagedChange: ({ path: raw }, { state }) => {
    const repo = new Repo(state);
    const path = normalizePath(raw);
    const index = repo.index();
    const work = repo.workingTree();
    const changed = index.get(path) !== work.get(path);
    const kind = !changed ? 'unchanged' : !index.has(path) ? 'untracked' : !work.has(path) ? 'deleted' : 'modified';
    return { value: changed, evidence: { path, change: kind } };
  },
};
