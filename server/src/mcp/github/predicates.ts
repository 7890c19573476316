import type { PredicateContext, Verdict } from '../namespace.ts';
import {
  headBranch,
  normalizePath,
  type GhIssue,
  type GhPull,
  type GhRepository,
  type GithubState,
  type MergeMethod,
  type ReviewState,
} from './state.ts';

type Ctx = PredicateContext<GithubState>;
type Texts = string | string[] | undefined;

// ---- helpers

/** GitHub logins, repository names and label names are all case-insensitive. */
const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const fold = (s: string): string => s.normalize('NFKC').replace(/\s+/gu, ' ').trim().toLowerCase();
const containsFolded = (hay: string, needle: string): boolean => fold(hay).includes(fold(needle));
const asList = (t: Texts): string[] => (t === undefined ? [] : Array.isArray(t) ? t : [t]);
const containsAll = (hay: string, t: Texts): boolean => asList(t).every((n) => containsFolded(hay, n));
const clip = (s: string, n = 120): string => (s.length > n ? `${s.slice(0, n)}…` : s);

function findRepo(state: GithubState, ref: string): GhRepository | undefined {
  const exact = state.repositories[ref];
  if (exact) return exact;
  const key = Object.keys(state.repositories).find((k) => same(k, ref));
  return key === undefined ? undefined : state.repositories[key];
}

function noRepo(state: GithubState, repo: string): Verdict {
  return { value: false, evidence: { repo, found: false, repositories: Object.keys(state.repositories).slice(0, 20) } };
}

const prBrief = (p: GhPull): Record<string, unknown> => ({
  number: p.number,
  title: clip(p.title),
  head: p.head,
  base: p.base,
  state: p.state,
  merged: p.merged,
  draft: p.draft,
  ...(p.merge_method ? { merge_method: p.merge_method } : {}),
});

const issueBrief = (i: GhIssue): Record<string, unknown> => ({
  number: i.number,
  title: clip(i.title),
  state: i.state,
  ...(i.state_reason ? { state_reason: i.state_reason } : {}),
  labels: i.labels,
  assignees: i.assignees,
});

interface PrSelector {
  repo: string;
  number?: number;
  head?: string;
  base?: string;
}

function selectPrs(repo: GhRepository, sel: PrSelector): GhPull[] {
  return repo.pull_requests.filter(
    (p) =>
      (sel.number === undefined || p.number === sel.number) &&
      (sel.head === undefined || p.head === headBranch(sel.head)) &&
      (sel.base === undefined || p.base === sel.base),
  );
}

/** Shared shape of the "chosen pull request has property X" predicates: true when any chosen one has it. */
function onPrs(sel: PrSelector, state: GithubState, test: (p: GhPull) => boolean, detail: (p: GhPull) => unknown = prBrief): Verdict {
  const repo = findRepo(state, sel.repo);
  if (!repo) return noRepo(state, sel.repo);
  const chosen = selectPrs(repo, sel);
  if (chosen.length === 0) {
    return { value: false, evidence: { selector: { number: sel.number, head: sel.head, base: sel.base }, found: false, pull_requests: repo.pull_requests.slice(-5).map(prBrief) } };
  }
  const hit = chosen.find(test);
  return hit ? { value: true, evidence: { pull_request: detail(hit) } } : { value: false, evidence: { pull_requests: chosen.slice(0, 5).map(detail) } };
}

type PrState = 'open' | 'closed' | 'merged' | 'any';
function prInState(p: GhPull, state: PrState): boolean {
  switch (state) {
    case 'open':
      return p.state === 'open';
    case 'closed':
      return p.state === 'closed' && !p.merged;
    case 'merged':
      return p.merged;
    default:
      return true;
  }
}

/** An issue-API record: issues, and pull requests (which GitHub also serves through the issues API). */
function issueLike(repo: GhRepository, number: number): GhIssue | GhPull | undefined {
  return repo.issues.find((i) => i.number === number) ?? repo.pull_requests.find((p) => p.number === number);
}

function onIssueLike(args: { repo: string; number: number }, state: GithubState, test: (i: GhIssue | GhPull) => boolean, detail: (i: GhIssue | GhPull) => unknown): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const item = issueLike(repo, args.number);
  if (!item) return { value: false, evidence: { number: args.number, found: false } };
  return { value: test(item), evidence: detail(item) };
}

function milestoneMatches(repo: GhRepository, number: number | undefined, ref: number | string): boolean {
  if (number === undefined) return false;
  if (typeof ref === 'number') return number === ref;
  const m = repo.milestones.find((x) => x.number === number);
  return m !== undefined && same(m.title.trim(), ref.trim());
}

function countVerdict(n: number, b: { equals?: number; min?: number; max?: number }, sample: unknown[]): Verdict {
  const bounded = b.equals !== undefined || b.min !== undefined || b.max !== undefined;
  const value = bounded
    ? (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max)
    : n > 0;
  return { value, evidence: { count: n, sample: sample.slice(0, 5) } };
}

/** Each reviewer's latest review: what GitHub's merge box counts. */
export function latestReviews(p: GhPull): Map<string, ReviewState> {
  const latest = new Map<string, ReviewState>();
  for (const r of p.reviews) {
    // A COMMENTED review does not override an earlier approval or change request on GitHub.
    if (r.state === 'COMMENTED' && latest.has(r.user.toLowerCase())) continue;
    latest.set(r.user.toLowerCase(), r.state);
  }
  return latest;
}

// ---- pull requests

export function prMerged(args: PrSelector & { merge_method?: MergeMethod }, { state }: Ctx): Verdict {
  return onPrs(args, state, (p) => p.merged && (args.merge_method === undefined || p.merge_method === args.merge_method));
}

export function prOpen(args: PrSelector & { draft?: boolean }, { state }: Ctx): Verdict {
  return onPrs(args, state, (p) => p.state === 'open' && (args.draft === undefined || p.draft === args.draft));
}

export function prClosed(args: PrSelector, { state }: Ctx): Verdict {
  return onPrs(args, state, (p) => p.state === 'closed' && !p.merged);
}

export function prExists(
  args: { repo: string; head?: string; base?: string; title_contains?: Texts; body_contains?: Texts; state?: PrState; draft?: boolean; author?: string },
  { state }: Ctx,
): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const match = selectPrs(repo, args).find(
    (p) =>
      prInState(p, args.state ?? 'any') &&
      containsAll(p.title, args.title_contains) &&
      containsAll(p.body, args.body_contains) &&
      (args.draft === undefined || p.draft === args.draft) &&
      (args.author === undefined || same(p.user, args.author)),
  );
  return match
    ? { value: true, evidence: { pull_request: prBrief(match) } }
    : { value: false, evidence: { pull_requests: repo.pull_requests.slice(-5).map(prBrief) } };
}

export function prHasReview(
  args: PrSelector & { state: ReviewState; user?: string; body_contains?: string; latest?: boolean },
  { state }: Ctx,
): Verdict {
  return onPrs(
    args,
    state,
    (p) => {
      const latest = latestReviews(p);
      return p.reviews.some(
        (r) =>
          r.state === args.state &&
          (args.user === undefined || same(r.user, args.user)) &&
          (args.body_contains === undefined || containsFolded(r.body, args.body_contains)) &&
          (!args.latest || latest.get(r.user.toLowerCase()) === args.state),
      );
    },
    (p) => ({ ...prBrief(p), reviews: p.reviews.slice(-10).map((r) => ({ user: r.user, state: r.state, body: clip(r.body, 80) })) }),
  );
}

export function prHasLabel(args: PrSelector & { label: string }, { state }: Ctx): Verdict {
  return onPrs(args, state, (p) => p.labels.some((l) => same(l, args.label)), (p) => ({ ...prBrief(p), labels: p.labels }));
}

export function prHasComment(args: PrSelector & { contains: string; user?: string }, { state }: Ctx): Verdict {
  return onPrs(
    args,
    state,
    (p) => p.comments.some((c) => containsFolded(c.body, args.contains) && (args.user === undefined || same(c.user, args.user))),
    (p) => ({ ...prBrief(p), comments: p.comments.slice(-5).map((c) => ({ user: c.user, body: clip(c.body, 80) })) }),
  );
}

export function prReviewRequested(args: PrSelector & { reviewer: string }, { state }: Ctx): Verdict {
  return onPrs(
    args,
    state,
    (p) => p.requested_reviewers.some((r) => same(r, args.reviewer)) || p.reviews.some((r) => same(r.user, args.reviewer)),
    (p) => ({ ...prBrief(p), requested_reviewers: p.requested_reviewers, reviewers: [...new Set(p.reviews.map((r) => r.user))] }),
  );
}

export function prCount(
  args: { repo: string; state?: PrState; base?: string; head?: string; label?: string; author?: string; equals?: number; min?: number; max?: number },
  { state }: Ctx,
): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return countVerdict(0, args, []);
  const matches = selectPrs(repo, { repo: args.repo, head: args.head, base: args.base }).filter(
    (p) =>
      prInState(p, args.state ?? 'any') &&
      (args.label === undefined || p.labels.some((l) => same(l, args.label!))) &&
      (args.author === undefined || same(p.user, args.author)),
  );
  return countVerdict(matches.length, args, matches.map(prBrief));
}

// ---- issues

function issueFilter(
  repo: GhRepository,
  f: { title_contains?: Texts; body_contains?: Texts; labels?: string[]; assignees?: string[]; state?: 'open' | 'closed' | 'any'; milestone?: number | string; author?: string },
): GhIssue[] {
  return repo.issues.filter(
    (i) =>
      (f.state === undefined || f.state === 'any' || i.state === f.state) &&
      containsAll(i.title, f.title_contains) &&
      containsAll(i.body, f.body_contains) &&
      (f.labels ?? []).every((l) => i.labels.some((x) => same(x, l))) &&
      (f.assignees ?? []).every((a) => i.assignees.some((x) => same(x, a))) &&
      (f.milestone === undefined || milestoneMatches(repo, i.milestone, f.milestone)) &&
      (f.author === undefined || same(i.user, f.author)),
  );
}

export function issueExists(
  args: { repo: string; title_contains?: Texts; body_contains?: Texts; labels?: string[]; assignees?: string[]; state?: 'open' | 'closed' | 'any'; milestone?: number | string; author?: string },
  { state }: Ctx,
): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const match = issueFilter(repo, args)[0];
  return match
    ? { value: true, evidence: { issue: issueBrief(match) } }
    : { value: false, evidence: { issues: repo.issues.slice(-5).map(issueBrief) } };
}

export function issueOpen(args: { repo: string; number: number }, { state }: Ctx): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const issue = repo.issues.find((i) => i.number === args.number);
  if (!issue) return { value: false, evidence: { number: args.number, found: false } };
  return { value: issue.state === 'open', evidence: { issue: issueBrief(issue) } };
}

export function issueClosed(
  args: { repo: string; number: number; state_reason?: 'completed' | 'not_planned' | 'duplicate'; duplicate_of?: number },
  { state }: Ctx,
): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const issue = repo.issues.find((i) => i.number === args.number);
  if (!issue) return { value: false, evidence: { number: args.number, found: false } };
  const value =
    issue.state === 'closed' &&
    (args.state_reason === undefined || issue.state_reason === args.state_reason) &&
    (args.duplicate_of === undefined || issue.duplicate_of === args.duplicate_of);
  return { value, evidence: { issue: { ...issueBrief(issue), ...(issue.duplicate_of ? { duplicate_of: issue.duplicate_of } : {}) } } };
}

export function issueHasLabel(args: { repo: string; number: number; label: string }, { state }: Ctx): Verdict {
  return onIssueLike(args, state, (i) => i.labels.some((l) => same(l, args.label)), (i) => ({ number: i.number, labels: i.labels }));
}

export function issueHasComment(args: { repo: string; number: number; contains: string; user?: string }, { state }: Ctx): Verdict {
  return onIssueLike(
    args,
    state,
    (i) => i.comments.some((c) => containsFolded(c.body, args.contains) && (args.user === undefined || same(c.user, args.user))),
    (i) => ({ number: i.number, comments: i.comments.slice(-5).map((c) => ({ user: c.user, body: clip(c.body, 80) })) }),
  );
}

export function issueAssigned(args: { repo: string; number: number; assignee: string }, { state }: Ctx): Verdict {
  return onIssueLike(args, state, (i) => i.assignees.some((a) => same(a, args.assignee)), (i) => ({ number: i.number, assignees: i.assignees }));
}

export function issueText(
  args: { repo: string; number: number; title_equals?: string; title_contains?: string; body_contains?: Texts },
  { state }: Ctx,
): Verdict {
  return onIssueLike(
    args,
    state,
    (i) =>
      (args.title_equals === undefined || fold(i.title) === fold(args.title_equals)) &&
      (args.title_contains === undefined || containsFolded(i.title, args.title_contains)) &&
      containsAll(i.body, args.body_contains),
    (i) => ({ number: i.number, title: i.title, body: clip(i.body, 200) }),
  );
}

export function issueMilestone(args: { repo: string; number: number; milestone: number | string }, { state }: Ctx): Verdict {
  const repo = findRepo(state, args.repo);
  return onIssueLike(
    args,
    state,
    (i) => repo !== undefined && milestoneMatches(repo, i.milestone, args.milestone),
    (i) => ({ number: i.number, milestone: i.milestone ?? null, milestones: repo?.milestones.map((m) => ({ number: m.number, title: m.title })) }),
  );
}

export function issueCount(
  args: { repo: string; state?: 'open' | 'closed' | 'any'; labels?: string[]; assignee?: string; title_contains?: string; equals?: number; min?: number; max?: number },
  { state }: Ctx,
): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return countVerdict(0, args, []);
  const matches = issueFilter(repo, {
    state: args.state,
    labels: args.labels,
    assignees: args.assignee === undefined ? undefined : [args.assignee],
    title_contains: args.title_contains,
  });
  return countVerdict(matches.length, args, matches.map(issueBrief));
}

// ---- branches, files, commits

export function branchExists(args: { repo: string; branch: string }, { state }: Ctx): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const names = Object.keys(repo.branches);
  return { value: names.includes(args.branch), evidence: { branch: args.branch, branches: names.slice(0, 30) } };
}

function onBranch(args: { repo: string; branch?: string }, state: GithubState, then: (files: Record<string, string>, repo: GhRepository, branch: string) => Verdict): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const name = args.branch ?? repo.default_branch;
  const branch = repo.branches[name];
  if (!branch) return { value: false, evidence: { branch: name, found: false, branches: Object.keys(repo.branches).slice(0, 30) } };
  return then(branch.files, repo, name);
}

/** Near misses for a file path: same base name elsewhere, or same directory. */
function nearPaths(files: Record<string, string>, path: string): string[] {
  const baseName = path.split('/').pop()!.toLowerCase();
  return Object.keys(files)
    .filter((p) => p.split('/').pop()!.toLowerCase() === baseName || p.toLowerCase() === path.toLowerCase())
    .slice(0, 10);
}

export function fileExists(args: { repo: string; path: string; branch?: string }, { state }: Ctx): Verdict {
  return onBranch(args, state, (files, _repo, branch) => {
    const path = normalizePath(args.path);
    return path in files
      ? { value: true, evidence: { branch, path, size: files[path]!.length } }
      : { value: false, evidence: { branch, path, similar: nearPaths(files, path) } };
  });
}

export function fileContains(args: { repo: string; path: string; branch?: string; contains: Texts; case_sensitive?: boolean }, { state }: Ctx): Verdict {
  return onBranch(args, state, (files, _repo, branch) => {
    const path = normalizePath(args.path);
    const content = files[path];
    if (content === undefined) return { value: false, evidence: { branch, path, found: false, similar: nearPaths(files, path) } };
    const cs = args.case_sensitive ?? true;
    const hay = cs ? content : content.toLowerCase();
    const missing = asList(args.contains).filter((n) => !hay.includes(cs ? n : n.toLowerCase()));
    return { value: missing.length === 0, evidence: { branch, path, missing, excerpt: clip(content, 300) } };
  });
}

export function fileEquals(args: { repo: string; path: string; branch?: string; content: string }, { state }: Ctx): Verdict {
  const canonical = (s: string): string => s.replace(/\r\n?/g, '\n').replace(/\n$/, '');
  return onBranch(args, state, (files, _repo, branch) => {
    const path = normalizePath(args.path);
    const content = files[path];
    if (content === undefined) return { value: false, evidence: { branch, path, found: false, similar: nearPaths(files, path) } };
    return { value: canonical(content) === canonical(args.content), evidence: { branch, path, content: clip(content, 300) } };
  });
}

export function commitExists(args: { repo: string; branch?: string; message_contains: string; author?: string }, { state }: Ctx): Verdict {
  const repo = findRepo(state, args.repo);
  if (!repo) return noRepo(state, args.repo);
  const name = args.branch ?? repo.default_branch;
  const branch = repo.branches[name];
  if (!branch) return { value: false, evidence: { branch: name, found: false } };
  const match = branch.commits.find(
    (c) => containsFolded(c.message, args.message_contains) && (args.author === undefined || (c.author !== undefined && same(c.author, args.author))),
  );
  const brief = (c: { sha: string; message: string; author?: string }): unknown => ({ sha: c.sha.slice(0, 7), message: clip(c.message, 80), author: c.author });
  return match
    ? { value: true, evidence: { branch: name, commit: brief(match) } }
    : { value: false, evidence: { branch: name, latest: branch.commits.slice(-5).reverse().map(brief) } };
}
