/**
 * The github tools as pure functions of the state: the rules the tool descriptions in
 * schemas/servers/github.json promise an agent (merge checks in their stated order, review rules, file shas,
 * protected branches), with results shaped like GitHub's REST objects. Errors carry GitHub's HTTP status and
 * message, followed by what the agent can do about it.
 */
import { createHash } from 'node:crypto';
import { ToolError, type ToolHandler } from '../namespace.ts';
import { latestReviews } from './predicates.ts';
import {
  headBranch,
  normalizeGithubState,
  normalizePath,
  type GhBranch,
  type GhComment,
  type GhCommit,
  type GhIssue,
  type GhPull,
  type GhRepository,
  type GithubState,
  type MergeMethod,
  type ReviewState,
} from './state.ts';

type Handler = ToolHandler<GithubState>;
type Json = Record<string, unknown>;

// ---- lookups and small helpers

const same = (a: string, b: string): boolean => a.toLowerCase() === b.toLowerCase();
const fold = (s: string): string => s.toLowerCase();

/** The repository as stored (key spelled as in the state) or a 404 naming the repositories that exist. */
function repoOf(state: GithubState, owner: string, name: string): { key: string; repo: GhRepository } {
  const wanted = `${owner}/${name}`;
  const key = Object.keys(state.repositories).find((k) => same(k, wanted));
  if (key === undefined) {
    const known = Object.keys(state.repositories);
    throw new ToolError(`404 Not Found: repository ${wanted} does not exist or is not accessible${known.length ? ` (repositories: ${known.slice(0, 10).join(', ')})` : ''}.`);
  }
  return { key, repo: state.repositories[key]! };
}

/** A copy of the state and the same repository in it, for handlers that change something. */
function editRepo(state: GithubState, owner: string, name: string): { next: GithubState; key: string; repo: GhRepository } {
  const { key } = repoOf(state, owner, name);
  const next = structuredClone(state);
  return { next, key, repo: next.repositories[key]! };
}

/** Handlers hand back the state in its normalised form, so a snapshot reads exactly what they wrote. */
const done = (next: GithubState): GithubState => normalizeGithubState(next);

const ownerOf = (key: string): string => key.slice(0, key.indexOf('/'));

/** Logins with write access: the collaborators, the owner of a user-owned repository and the current user. */
function writers(state: GithubState, key: string, repo: GhRepository): string[] {
  const all = [...repo.collaborators, ownerOf(key), state.current_user];
  return all.filter((login, i) => all.findIndex((x) => same(x, login)) === i);
}

function canonicalLogins(state: GithubState, key: string, repo: GhRepository, logins: string[], field: string): string[] {
  const known = writers(state, key, repo);
  const out: string[] = [];
  for (const login of logins) {
    const match = known.find((k) => same(k, login));
    if (match === undefined) {
      throw new ToolError(`422 Validation Failed: ${field} "${login}" is not a collaborator of ${key} (collaborators: ${known.join(', ')}).`);
    }
    if (!out.some((x) => same(x, match))) out.push(match);
  }
  return out;
}

/** Label names as the repository spells them; labels it lacks are created (GitHub does this on issue writes). */
function applyLabels(repo: GhRepository, names: string[]): string[] {
  const out: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name === '') continue;
    let label = repo.labels.find((l) => same(l.name, name));
    if (!label) {
      label = { name, color: 'ededed' };
      repo.labels.push(label);
    }
    if (!out.some((x) => same(x, label.name))) out.push(label.name);
  }
  return out;
}

function checkMilestone(key: string, repo: GhRepository, number: number): void {
  if (!repo.milestones.some((m) => m.number === number)) {
    const known = repo.milestones.map((m) => `${m.number} (${m.title})`).join(', ') || 'none';
    throw new ToolError(`422 Validation Failed: milestone ${number} does not exist in ${key} (milestones: ${known}).`);
  }
}

/** Issues and pull requests share one number sequence per repository. */
function nextNumber(repo: GhRepository): number {
  return Math.max(0, ...repo.issues.map((i) => i.number), ...repo.pull_requests.map((p) => p.number)) + 1;
}

function nextCommentId(repo: GhRepository): number {
  const ids = [...repo.issues, ...repo.pull_requests].flatMap((x) => x.comments.map((c) => c.id ?? 0));
  return Math.max(0, ...ids) + 1;
}

function nextReviewId(repo: GhRepository): number {
  return Math.max(0, ...repo.pull_requests.flatMap((p) => p.reviews.map((r) => r.id ?? 0))) + 1;
}

const isoSeconds = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const DEFAULT_EPOCH = Date.parse('2026-01-01T00:00:00Z');

/** No wall clock: a new record is dated one minute after the latest date the repository holds. */
function nextTime(repo: GhRepository): string {
  const dates: string[] = [];
  for (const b of Object.values(repo.branches)) for (const c of b.commits) if (c.date) dates.push(c.date);
  for (const x of [...repo.issues, ...repo.pull_requests]) {
    if (x.created_at) dates.push(x.created_at);
    for (const c of x.comments) if (c.created_at) dates.push(c.created_at);
  }
  const times = dates.map((d) => Date.parse(d)).filter((t) => Number.isFinite(t));
  return isoSeconds(times.length ? Math.max(...times) + 60_000 : DEFAULT_EPOCH);
}

/** The git blob SHA-1 of a file's content, as GitHub reports it (and expects back to update the file). */
export function blobSha(content: string): string {
  const bytes = Buffer.from(content, 'utf8');
  return createHash('sha1').update(Buffer.concat([Buffer.from(`blob ${bytes.length}\0`, 'utf8'), bytes])).digest('hex');
}

/** A new commit's SHA derives from its parent, message, author and change, so a replay yields the same SHAs. */
function commitSha(parent: string | undefined, message: string, author: string, change: unknown): string {
  return createHash('sha1').update(JSON.stringify(['commit', parent ?? null, message, author, change])).digest('hex');
}

const headSha = (b: GhBranch | undefined): string | null => b?.commits.at(-1)?.sha ?? null;

function paginate<T>(items: T[], args: { page?: number; perPage?: number }, defaultPer = 30): T[] {
  const per = Math.min(100, Math.max(1, Math.floor(args.perPage ?? defaultPer)));
  const page = Math.max(1, Math.floor(args.page ?? 1));
  return items.slice((page - 1) * per, page * per);
}

function branchOf(key: string, repo: GhRepository, name: string, status = 404): GhBranch {
  const branch = repo.branches[name];
  if (!branch) {
    const reason = status === 404 ? '404 Not Found' : '422 Validation Failed';
    throw new ToolError(`${reason}: branch "${name}" does not exist in ${key} (branches: ${Object.keys(repo.branches).slice(0, 20).join(', ')}).`);
  }
  return branch;
}

function refuseDirectCommit(key: string, name: string, branch: GhBranch): void {
  if (branch.protection?.require_pull_request) {
    throw new ToolError(
      `422 Changes must be made through a pull request: branch "${name}" of ${key} is protected. Create a branch (create_branch), commit there and open a pull request into ${name}.`,
    );
  }
}

// ---- views (GitHub REST shapes)

const userView = (login: string): Json => ({ login, html_url: `https://github.com/${login}` });

function labelView(repo: GhRepository, name: string): Json {
  const label = repo.labels.find((l) => same(l.name, name));
  const view: Json = { name: label?.name ?? name };
  if (label?.color !== undefined) view.color = label.color;
  if (label?.description !== undefined) view.description = label.description;
  return view;
}

function milestoneView(repo: GhRepository, number: number | undefined): Json | null {
  if (number === undefined) return null;
  const m = repo.milestones.find((x) => x.number === number);
  if (!m) return { number };
  return { number: m.number, title: m.title, state: m.state, ...(m.due_on ? { due_on: m.due_on } : {}) };
}

function commentView(key: string, number: number, c: GhComment): Json {
  const view: Json = {};
  if (c.id !== undefined) view.id = c.id;
  view.user = userView(c.user);
  view.body = c.body;
  if (c.created_at !== undefined) view.created_at = c.created_at;
  view.html_url = `https://github.com/${key}/issues/${number}${c.id !== undefined ? `#issuecomment-${c.id}` : ''}`;
  return view;
}

function issueView(key: string, repo: GhRepository, i: GhIssue): Json {
  const view: Json = {
    number: i.number,
    title: i.title,
    body: i.body,
    state: i.state,
    state_reason: i.state_reason,
    user: userView(i.user),
    labels: i.labels.map((l) => labelView(repo, l)),
    assignees: i.assignees.map(userView),
    milestone: milestoneView(repo, i.milestone),
    comments: i.comments.length,
    html_url: `https://github.com/${key}/issues/${i.number}`,
    repository_url: `https://api.github.com/repos/${key}`,
  };
  if (i.duplicate_of !== undefined) view.duplicate_of = i.duplicate_of;
  if (i.type !== undefined) view.type = { name: i.type };
  if (i.created_at !== undefined) view.created_at = i.created_at;
  return view;
}

/** A pull request as the issues API shows it: an issue with a `pull_request` field. */
function pullAsIssueView(key: string, repo: GhRepository, p: GhPull): Json {
  const view: Json = {
    number: p.number,
    title: p.title,
    body: p.body,
    state: p.state,
    user: userView(p.user),
    labels: p.labels.map((l) => labelView(repo, l)),
    assignees: p.assignees.map(userView),
    milestone: milestoneView(repo, p.milestone),
    comments: p.comments.length,
    draft: p.draft,
    html_url: `https://github.com/${key}/pull/${p.number}`,
    repository_url: `https://api.github.com/repos/${key}`,
    pull_request: { html_url: `https://github.com/${key}/pull/${p.number}`, merged: p.merged },
  };
  if (p.created_at !== undefined) view.created_at = p.created_at;
  return view;
}

interface Approvals {
  required: number;
  approvedBy: string[];
  changesRequestedBy: string[];
}

/** What the merge box counts: each reviewer's latest review, the author's own left out. */
function approvals(repo: GhRepository, p: GhPull): Approvals {
  const required = repo.branches[p.base]?.protection?.required_approving_review_count ?? 0;
  const approvedBy: string[] = [];
  const changesRequestedBy: string[] = [];
  const names = new Map(p.reviews.map((r) => [r.user.toLowerCase(), r.user]));
  for (const [login, state] of latestReviews(p)) {
    if (same(login, p.user)) continue;
    const name = names.get(login) ?? login;
    if (state === 'APPROVED') approvedBy.push(name);
    if (state === 'CHANGES_REQUESTED') changesRequestedBy.push(name);
  }
  return { required, approvedBy, changesRequestedBy };
}

function approvalsMissing(a: Approvals): boolean {
  return a.required > 0 && (a.approvedBy.length < a.required || a.changesRequestedBy.length > 0);
}

function pullView(key: string, repo: GhRepository, p: GhPull): Json {
  const head = repo.branches[p.head];
  const base = repo.branches[p.base];
  const a = approvals(repo, p);
  const mergeableState = p.merged || p.state === 'closed' ? 'unknown' : p.draft ? 'draft' : !p.mergeable ? 'dirty' : approvalsMissing(a) ? 'blocked' : 'clean';
  const view: Json = {
    number: p.number,
    title: p.title,
    body: p.body,
    state: p.state,
    merged: p.merged,
    draft: p.draft,
    mergeable: p.state === 'open' ? p.mergeable : null,
    mergeable_state: mergeableState,
    user: userView(p.user),
    head: { label: `${ownerOf(key)}:${p.head}`, ref: p.head, sha: headSha(head) },
    base: { label: `${ownerOf(key)}:${p.base}`, ref: p.base, sha: headSha(base) },
    labels: p.labels.map((l) => labelView(repo, l)),
    assignees: p.assignees.map(userView),
    milestone: milestoneView(repo, p.milestone),
    requested_reviewers: p.requested_reviewers.map(userView),
    comments: p.comments.length,
    html_url: `https://github.com/${key}/pull/${p.number}`,
  };
  if (p.merged) {
    view.merged_by = p.merged_by === undefined ? null : userView(p.merged_by);
    view.merge_method = p.merge_method ?? null;
    view.merge_commit_sha = p.merge_commit_sha ?? null;
  }
  if (p.created_at !== undefined) view.created_at = p.created_at;
  view.merge_requirements = {
    base_protected: base?.protection !== undefined,
    required_approving_review_count: a.required,
    approved_by: a.approvedBy,
    changes_requested_by: a.changesRequestedBy,
    allowed_merge_methods: repo.allowed_merge_methods,
  };
  return view;
}

function reviewView(key: string, p: GhPull, r: GhPull['reviews'][number]): Json {
  const view: Json = {};
  if (r.id !== undefined) view.id = r.id;
  view.user = userView(r.user);
  view.state = r.state;
  view.body = r.body;
  if (r.commit_id !== undefined) view.commit_id = r.commit_id;
  view.html_url = `https://github.com/${key}/pull/${p.number}${r.id !== undefined ? `#pullrequestreview-${r.id}` : ''}`;
  return view;
}

function commitView(key: string, c: GhCommit): Json {
  const view: Json = {
    sha: c.sha,
    commit: { message: c.message, author: { name: c.author ?? null, ...(c.date ? { date: c.date } : {}) } },
    author: c.author === undefined ? null : userView(c.author),
    html_url: `https://github.com/${key}/commit/${c.sha}`,
  };
  if (c.files !== undefined) view.files = c.files.map((filename) => ({ filename }));
  return view;
}

function fileView(key: string, branch: string, path: string, content: string): Json {
  return {
    type: 'file',
    name: path.split('/').pop() ?? path,
    path,
    sha: blobSha(content),
    size: Buffer.byteLength(content, 'utf8'),
    html_url: `https://github.com/${key}/blob/${branch}/${path}`,
  };
}

// ---- pull request changes

interface Change {
  path: string;
  status: 'added' | 'modified' | 'removed';
}

/**
 * The files a pull request changes. When the head's own commits (those the base lacks) all record their files,
 * those paths; otherwise (seeds need not record them) every path where the two trees differ.
 */
function prChanges(repo: GhRepository, p: GhPull): Change[] {
  const head = repo.branches[p.head];
  const base = repo.branches[p.base];
  if (!head || !base) return [];
  let paths: Set<string>;
  const merged = p.merged && p.merge_method !== 'rebase' ? base.commits.find((c) => c.sha === p.merge_commit_sha) : undefined;
  const own = ownCommits(head, base);
  if (merged?.files) paths = new Set(merged.files);
  else if (own.length > 0 && own.every((c) => c.files !== undefined)) paths = new Set(own.flatMap((c) => c.files ?? []));
  else {
    paths = new Set([...Object.keys(head.files), ...Object.keys(base.files)].filter((f) => head.files[f] !== base.files[f]));
  }
  const changes: Change[] = [];
  for (const path of [...paths].sort()) {
    const inHead = path in head.files;
    const inBase = path in base.files;
    // After a merge a removed file is gone from both trees, yet it is still one the pull request changed.
    if (!inHead && !inBase && !p.merged) continue;
    changes.push({ path, status: !inBase ? 'added' : !inHead ? 'removed' : 'modified' });
  }
  return changes;
}

/** Commits of head that base lacks, oldest first. */
function ownCommits(head: GhBranch, base: GhBranch): GhCommit[] {
  const inBase = new Set(base.commits.map((c) => c.sha));
  return head.commits.filter((c) => !inBase.has(c.sha));
}

function pullOf(key: string, repo: GhRepository, number: number): GhPull {
  const p = repo.pull_requests.find((x) => x.number === number);
  if (!p) {
    const isIssue = repo.issues.some((i) => i.number === number);
    throw new ToolError(
      isIssue
        ? `404 Not Found: #${number} in ${key} is an issue, not a pull request (use get_issue).`
        : `404 Not Found: pull request #${number} does not exist in ${key} (use list_pull_requests or search_pull_requests).`,
    );
  }
  return p;
}

function issueLikeOf(key: string, repo: GhRepository, number: number): { issue?: GhIssue; pull?: GhPull } {
  const issue = repo.issues.find((i) => i.number === number);
  if (issue) return { issue };
  const pull = repo.pull_requests.find((p) => p.number === number);
  if (pull) return { pull };
  throw new ToolError(`404 Not Found: issue #${number} does not exist in ${key} (use list_issues or search_issues).`);
}

// ---- search

interface Query {
  repos: string[];
  words: string[];
  state?: 'open' | 'closed';
  labels: string[];
  assignee?: string;
  author?: string;
  noAssignee: boolean;
  noLabel: boolean;
  milestone?: string;
  merged?: boolean;
  draft?: boolean;
  base?: string;
  head?: string;
  kind?: 'issue' | 'pr';
}

function parseQuery(text: string): Query {
  const q: Query = { repos: [], words: [], labels: [], noAssignee: false, noLabel: false };
  const tokens = text.match(/[A-Za-z-]+:"[^"]*"|"[^"]*"|\S+/g) ?? [];
  for (const token of tokens) {
    const m = /^([A-Za-z-]+):(.*)$/.exec(token);
    const value = (m?.[2] ?? '').replace(/^"|"$/g, '');
    const qualifier = m?.[1]?.toLowerCase();
    if (qualifier === 'repo') q.repos.push(value);
    else if ((qualifier === 'is' || qualifier === 'state') && (value === 'open' || value === 'closed')) q.state = value;
    else if (qualifier === 'is' && value === 'issue') q.kind = 'issue';
    else if (qualifier === 'is' && (value === 'pr' || value === 'pull-request')) q.kind = 'pr';
    else if (qualifier === 'is' && value === 'merged') q.merged = true;
    else if (qualifier === 'is' && value === 'unmerged') q.merged = false;
    else if (qualifier === 'is' && value === 'draft') q.draft = true;
    else if (qualifier === 'label') q.labels.push(value);
    else if (qualifier === 'assignee') q.assignee = value.replace(/^@/, '');
    else if (qualifier === 'author') q.author = value.replace(/^@/, '');
    else if (qualifier === 'no' && value === 'assignee') q.noAssignee = true;
    else if (qualifier === 'no' && value === 'label') q.noLabel = true;
    else if (qualifier === 'milestone') q.milestone = value;
    else if (qualifier === 'base') q.base = value;
    else if (qualifier === 'head') q.head = value;
    else q.words.push(token.replace(/^"|"$/g, ''));
  }
  return q;
}

interface Found {
  key: string;
  repo: GhRepository;
  item: GhIssue | GhPull;
}

function search(state: GithubState, args: { query: string; owner?: string; repo?: string; sort?: string; order?: string }, kind: 'issue' | 'pr'): Found[] {
  const q = parseQuery(args.query);
  if (q.kind !== undefined && q.kind !== kind) return [];
  let keys = Object.keys(state.repositories);
  if (args.owner !== undefined && args.repo !== undefined) keys = keys.filter((k) => same(k, `${args.owner}/${args.repo}`));
  else if (args.owner !== undefined) keys = keys.filter((k) => same(ownerOf(k), args.owner!));
  if (q.repos.length > 0) keys = keys.filter((k) => q.repos.some((r) => same(r, k)));
  const found: Found[] = [];
  for (const key of keys.sort()) {
    const repo = state.repositories[key]!;
    const items: Array<GhIssue | GhPull> = kind === 'issue' ? repo.issues : repo.pull_requests;
    for (const item of items) {
      const text = fold(`${item.title}\n${item.body}`);
      const pull = kind === 'pr' ? (item as GhPull) : undefined;
      const milestone = item.milestone === undefined ? undefined : repo.milestones.find((m) => m.number === item.milestone);
      const ok =
        q.words.every((w) => text.includes(fold(w))) &&
        (q.state === undefined || item.state === q.state) &&
        q.labels.every((l) => item.labels.some((x) => same(x, l))) &&
        (q.assignee === undefined || item.assignees.some((a) => same(a, q.assignee!))) &&
        (q.author === undefined || same(item.user, q.author)) &&
        (!q.noAssignee || item.assignees.length === 0) &&
        (!q.noLabel || item.labels.length === 0) &&
        (q.milestone === undefined || (milestone !== undefined && same(milestone.title, q.milestone))) &&
        (q.merged === undefined || (pull !== undefined && pull.merged === q.merged)) &&
        (q.draft === undefined || (pull !== undefined && pull.draft === q.draft)) &&
        (q.base === undefined || (pull !== undefined && pull.base === q.base)) &&
        (q.head === undefined || (pull !== undefined && pull.head === headBranch(q.head)));
      if (ok) found.push({ key, repo, item });
    }
  }
  const desc = args.order !== 'asc';
  const metric = (f: Found): number => (args.sort === 'comments' ? f.item.comments.length : f.item.number);
  // Best match has no meaning here: newest first, by repository then number, is the stable stand-in.
  found.sort((a, b) => (desc ? metric(b) - metric(a) : metric(a) - metric(b)) || a.key.localeCompare(b.key) || b.item.number - a.item.number);
  return found;
}

// ---- handlers: user, issues

const get_me: Handler = (_args: Record<string, never>, state) => ({
  result: { login: state.current_user, html_url: `https://github.com/${state.current_user}`, type: 'User' },
});

const get_issue: Handler = (args: { owner: string; repo: string; issue_number: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const { issue, pull } = issueLikeOf(key, repo, args.issue_number);
  return { result: issue ? issueView(key, repo, issue) : pullAsIssueView(key, repo, pull!) };
};

const CURSOR_PREFIX = 'offset:';
const encodeCursor = (offset: number): string => Buffer.from(`${CURSOR_PREFIX}${offset}`).toString('base64');
function decodeCursor(cursor: string): number {
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  const n = Number(text.slice(CURSOR_PREFIX.length));
  if (!text.startsWith(CURSOR_PREFIX) || !Number.isInteger(n) || n < 0) {
    throw new ToolError(`422 invalid cursor "${cursor}": pass the endCursor of the previous page's pageInfo, or omit after for the first page.`);
  }
  return n;
}

const list_issues: Handler = (
  args: { owner: string; repo: string; state?: 'OPEN' | 'CLOSED'; labels?: string[]; orderBy?: string; direction?: 'ASC' | 'DESC'; since?: string; after?: string; perPage?: number },
  state,
) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  let since: number | undefined;
  if (args.since !== undefined) {
    since = Date.parse(args.since);
    if (!Number.isFinite(since)) throw new ToolError(`422 since must be an ISO 8601 timestamp such as 2026-01-31T00:00:00Z, got "${args.since}".`);
  }
  const wanted = args.state?.toLowerCase();
  const matches = repo.issues.filter(
    (i) =>
      (wanted === undefined || i.state === wanted) &&
      (args.labels ?? []).every((l) => i.labels.some((x) => same(x, l))) &&
      // Undated (seeded) issues have no date to compare, so a since filter cannot rule them out.
      (since === undefined || i.created_at === undefined || Date.parse(i.created_at) >= since),
  );
  const desc = (args.direction ?? 'DESC') === 'DESC';
  const metric = (i: GhIssue): number => (args.orderBy === 'COMMENTS' ? i.comments.length : i.number);
  matches.sort((a, b) => (desc ? metric(b) - metric(a) : metric(a) - metric(b)) || (desc ? b.number - a.number : a.number - b.number));
  const start = args.after === undefined ? 0 : decodeCursor(args.after);
  const per = Math.min(100, Math.max(1, Math.floor(args.perPage ?? 30)));
  const page = matches.slice(start, start + per);
  const end = start + page.length;
  return {
    result: {
      issues: page.map((i) => issueView(key, repo, i)),
      pageInfo: {
        hasNextPage: end < matches.length,
        hasPreviousPage: start > 0,
        startCursor: page.length ? encodeCursor(start) : null,
        endCursor: page.length ? encodeCursor(end) : null,
      },
      totalCount: matches.length,
    },
  };
};

const search_issues: Handler = (args: { query: string; owner?: string; repo?: string; sort?: string; order?: string; page?: number; perPage?: number }, state) => {
  const found = search(state, args, 'issue');
  return {
    result: {
      total_count: found.length,
      incomplete_results: false,
      items: paginate(found, args).map((f) => issueView(f.key, f.repo, f.item as GhIssue)),
    },
  };
};

const search_pull_requests: Handler = (args: { query: string; owner?: string; repo?: string; sort?: string; order?: string; page?: number; perPage?: number }, state) => {
  const found = search(state, args, 'pr');
  return {
    result: {
      total_count: found.length,
      incomplete_results: false,
      items: paginate(found, args).map((f) => pullAsIssueView(f.key, f.repo, f.item as GhPull)),
    },
  };
};

const get_issue_comments: Handler = (args: { owner: string; repo: string; issue_number: number; page?: number; perPage?: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const { issue, pull } = issueLikeOf(key, repo, args.issue_number);
  const comments = (issue ?? pull!).comments;
  return { result: paginate(comments, args).map((c) => commentView(key, args.issue_number, c)) };
};

const create_issue: Handler = (
  args: { owner: string; repo: string; title: string; body?: string; assignees?: string[]; labels?: string[]; milestone?: number; type?: string },
  state,
) => {
  if (args.title.trim() === '') throw new ToolError('422 Validation Failed: title cannot be blank.');
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const assignees = canonicalLogins(next, key, repo, args.assignees ?? [], 'assignee');
  if (args.milestone !== undefined) checkMilestone(key, repo, args.milestone);
  const issue: GhIssue = {
    number: nextNumber(repo),
    title: args.title,
    body: args.body ?? '',
    user: next.current_user,
    state: 'open',
    state_reason: null,
    labels: applyLabels(repo, args.labels ?? []),
    assignees,
    milestone: args.milestone,
    type: args.type,
    comments: [],
    created_at: nextTime(repo),
  };
  repo.issues.push(issue);
  return { state: done(next), result: issueView(key, repo, issue) };
};

const update_issue: Handler = (
  args: {
    owner: string;
    repo: string;
    issue_number: number;
    title?: string;
    body?: string;
    state?: 'open' | 'closed';
    state_reason?: 'completed' | 'not_planned' | 'duplicate';
    duplicate_of?: number;
    labels?: string[];
    assignees?: string[];
    milestone?: number;
    type?: string;
  },
  state,
) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const { issue, pull } = issueLikeOf(key, repo, args.issue_number);
  const target = (issue ?? pull)!;
  if (args.title !== undefined && args.title.trim() === '') throw new ToolError('422 Validation Failed: title cannot be blank.');
  const assignees = args.assignees === undefined ? undefined : canonicalLogins(next, key, repo, args.assignees, 'assignee');
  // 0 clears the milestone (GitHub takes null; the tool's parameter is a number).
  if (args.milestone !== undefined && args.milestone !== 0) checkMilestone(key, repo, args.milestone);
  if (pull && args.state !== undefined && args.state !== pull.state) {
    if (pull.merged) throw new ToolError(`422 Validation Failed: pull request #${pull.number} is merged; its state cannot be changed.`);
    if (args.state === 'open' && !repo.branches[pull.head]) {
      throw new ToolError(`422 Validation Failed: cannot reopen pull request #${pull.number}: its head branch "${pull.head}" no longer exists.`);
    }
  }
  if (issue && args.state === 'closed' && args.state_reason === 'duplicate') {
    const of = args.duplicate_of;
    if (of === undefined) throw new ToolError('422 Validation Failed: state_reason "duplicate" needs duplicate_of, the number of the issue this one duplicates.');
    if (of === issue.number || !repo.issues.some((i) => i.number === of)) {
      throw new ToolError(`422 Validation Failed: duplicate_of ${of} is not another issue of ${key}.`);
    }
  }
  if (args.title !== undefined) target.title = args.title;
  if (args.body !== undefined) target.body = args.body;
  if (args.labels !== undefined) target.labels = applyLabels(repo, args.labels);
  if (assignees !== undefined) target.assignees = assignees;
  if (args.milestone !== undefined) target.milestone = args.milestone === 0 ? undefined : args.milestone;
  if (issue) {
    if (args.type !== undefined) issue.type = args.type;
    if (args.state === 'closed') {
      issue.state = 'closed';
      issue.state_reason = args.state_reason ?? 'completed';
      issue.duplicate_of = issue.state_reason === 'duplicate' ? args.duplicate_of : undefined;
    } else if (args.state === 'open' && issue.state === 'closed') {
      issue.state = 'open';
      issue.state_reason = 'reopened';
      issue.duplicate_of = undefined;
    }
    return { state: done(next), result: issueView(key, repo, issue) };
  }
  if (args.state !== undefined) pull!.state = args.state;
  return { state: done(next), result: pullAsIssueView(key, repo, pull!) };
};

const add_issue_comment: Handler = (args: { owner: string; repo: string; issue_number: number; body: string }, state) => {
  if (args.body.trim() === '') throw new ToolError('422 Validation Failed: body cannot be blank.');
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const { issue, pull } = issueLikeOf(key, repo, args.issue_number);
  const comment: GhComment = { id: nextCommentId(repo), user: next.current_user, body: args.body, created_at: nextTime(repo) };
  (issue ?? pull)!.comments.push(comment);
  return { state: done(next), result: commentView(key, args.issue_number, comment) };
};

// ---- handlers: pull requests

const get_pull_request: Handler = (args: { owner: string; repo: string; pullNumber: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  return { result: pullView(key, repo, pullOf(key, repo, args.pullNumber)) };
};

const list_pull_requests: Handler = (
  args: { owner: string; repo: string; state?: 'open' | 'closed' | 'all'; head?: string; base?: string; sort?: string; direction?: 'asc' | 'desc'; page?: number; perPage?: number },
  state,
) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const wanted = args.state ?? 'open';
  const matches = repo.pull_requests.filter(
    (p) =>
      (wanted === 'all' || p.state === wanted) &&
      (args.head === undefined || p.head === headBranch(args.head)) &&
      (args.base === undefined || p.base === args.base),
  );
  const sort = args.sort ?? 'created';
  const desc = (args.direction ?? (sort === 'long-running' ? 'asc' : 'desc')) === 'desc';
  const metric = (p: GhPull): number => (sort === 'popularity' ? p.comments.length : p.number);
  matches.sort((a, b) => (desc ? metric(b) - metric(a) : metric(a) - metric(b)) || (desc ? b.number - a.number : a.number - b.number));
  return { result: paginate(matches, args).map((p) => pullView(key, repo, p)) };
};

const get_pull_request_files: Handler = (args: { owner: string; repo: string; pullNumber: number; page?: number; perPage?: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const p = pullOf(key, repo, args.pullNumber);
  const head = repo.branches[p.head];
  const files = prChanges(repo, p).map((c) => {
    const content = head?.files[c.path];
    return { filename: c.path, status: c.status, ...(content === undefined ? {} : { sha: blobSha(content) }) };
  });
  return { result: paginate(files, args) };
};

const get_pull_request_reviews: Handler = (args: { owner: string; repo: string; pullNumber: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const p = pullOf(key, repo, args.pullNumber);
  return { result: p.reviews.map((r) => reviewView(key, p, r)) };
};

const create_pull_request: Handler = (
  args: { owner: string; repo: string; title: string; body?: string; head: string; base: string; draft?: boolean; maintainer_can_modify?: boolean },
  state,
) => {
  if (args.title.trim() === '') throw new ToolError('422 Validation Failed: title cannot be blank.');
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const headName = headBranch(args.head);
  const head = branchOf(key, repo, headName, 422);
  const base = branchOf(key, repo, args.base, 422);
  if (headName === args.base) throw new ToolError(`422 Validation Failed: head and base are the same branch ("${headName}"); push your change to another branch first.`);
  if (ownCommits(head, base).length === 0) {
    throw new ToolError(`422 Validation Failed: No commits between ${args.base} and ${headName}. Commit your change to ${headName} first.`);
  }
  const existing = repo.pull_requests.find((p) => p.state === 'open' && p.head === headName && p.base === args.base);
  if (existing) {
    throw new ToolError(`422 Validation Failed: A pull request already exists for ${ownerOf(key)}:${headName} (#${existing.number}); update that one instead.`);
  }
  const pull: GhPull = {
    number: nextNumber(repo),
    title: args.title,
    body: args.body ?? '',
    user: next.current_user,
    head: headName,
    base: args.base,
    state: 'open',
    merged: false,
    draft: args.draft === true,
    mergeable: true,
    labels: [],
    assignees: [],
    requested_reviewers: [],
    reviews: [],
    comments: [],
    created_at: nextTime(repo),
  };
  repo.pull_requests.push(pull);
  return { state: done(next), result: pullView(key, repo, pull) };
};

const update_pull_request: Handler = (
  args: { owner: string; repo: string; pullNumber: number; title?: string; body?: string; state?: 'open' | 'closed'; draft?: boolean; base?: string; maintainer_can_modify?: boolean; reviewers?: string[] },
  state,
) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const p = pullOf(key, repo, args.pullNumber);
  if (p.merged) throw new ToolError(`422 Validation Failed: pull request #${p.number} is already merged and cannot be changed.`);
  if (args.title !== undefined && args.title.trim() === '') throw new ToolError('422 Validation Failed: title cannot be blank.');
  if (args.state === 'open' && p.state === 'closed' && !repo.branches[p.head]) {
    throw new ToolError(`422 Validation Failed: cannot reopen pull request #${p.number}: its head branch "${p.head}" no longer exists.`);
  }
  if (args.base !== undefined) {
    branchOf(key, repo, args.base, 422);
    if (args.base === p.head) throw new ToolError(`422 Validation Failed: base cannot be the head branch "${p.head}".`);
  }
  let reviewers: string[] = [];
  if (args.reviewers !== undefined) {
    const author = args.reviewers.find((r) => same(r, p.user));
    if (author !== undefined) throw new ToolError(`422 Review cannot be requested from pull request author (${p.user}).`);
    reviewers = canonicalLogins(next, key, repo, args.reviewers, 'reviewer');
  }
  if (args.title !== undefined) p.title = args.title;
  if (args.body !== undefined) p.body = args.body;
  if (args.state !== undefined) p.state = args.state;
  if (args.draft !== undefined) p.draft = args.draft;
  if (args.base !== undefined) p.base = args.base;
  for (const r of reviewers) if (!p.requested_reviewers.some((x) => same(x, r))) p.requested_reviewers.push(r);
  return { state: done(next), result: pullView(key, repo, p) };
};

const METHOD_REFUSAL: Record<MergeMethod, string> = {
  merge: 'Merge commits are not allowed on this repository.',
  squash: 'Squash merges are not allowed on this repository.',
  rebase: 'Rebase merges are not allowed on this repository.',
};

const merge_pull_request: Handler = (
  args: { owner: string; repo: string; pullNumber: number; commit_title?: string; commit_message?: string; merge_method?: MergeMethod },
  state,
) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const p = pullOf(key, repo, args.pullNumber);
  if (p.state !== 'open') {
    throw new ToolError(`405 Pull Request is not mergeable: #${p.number} is ${p.merged ? 'already merged' : 'closed'}.`);
  }
  if (p.draft) {
    throw new ToolError(`405 Pull Request is still a draft: mark it ready for review with update_pull_request draft=false, then merge.`);
  }
  if (!p.mergeable) {
    throw new ToolError(`405 Pull Request is not mergeable: #${p.number} has conflicts with ${p.base} that must be resolved on ${p.head} first.`);
  }
  const a = approvals(repo, p);
  if (approvalsMissing(a)) {
    const detail = a.changesRequestedBy.length
      ? `changes requested by ${a.changesRequestedBy.join(', ')}`
      : `approved by ${a.approvedBy.length ? a.approvedBy.join(', ') : 'nobody'}`;
    throw new ToolError(
      `405 At least ${a.required} approving review${a.required === 1 ? ' is' : 's are'} required by reviewers with write access (branch ${p.base} is protected; ${detail}). The author's own review does not count.`,
    );
  }
  const method = args.merge_method ?? 'merge';
  if (!repo.allowed_merge_methods.includes(method)) {
    throw new ToolError(`405 ${METHOD_REFUSAL[method]} Allowed merge methods: ${repo.allowed_merge_methods.join(', ')}.`);
  }
  const head = branchOf(key, repo, p.head, 405);
  const base = branchOf(key, repo, p.base, 405);
  const changes = prChanges(repo, p);
  const paths = changes.map((c) => c.path);
  const own = ownCommits(head, base);
  const date = nextTime(repo);
  const user = next.current_user;
  const withBody = (title: string): string => (args.commit_message ? `${title}\n\n${args.commit_message}` : title);
  const push = (message: string, author: string, files: string[] | undefined, commitDate: string | undefined, origin?: string): string => {
    const sha = commitSha(base.commits.at(-1)?.sha, message, author, origin ?? paths);
    base.commits.push({ sha, message, author, date: commitDate, files });
    return sha;
  };
  let sha: string;
  if (method === 'merge') {
    for (const c of own) base.commits.push(structuredClone(c));
    sha = push(withBody(args.commit_title ?? `Merge pull request #${p.number} from ${ownerOf(key)}/${p.head}`), user, paths, date);
  } else if (method === 'squash') {
    // GitHub credits a squash commit to the pull request's author.
    sha = push(withBody(`${args.commit_title ?? p.title} (#${p.number})`), p.user, paths, date);
  } else {
    sha = '';
    for (const c of own) sha = push(c.message, c.author ?? p.user, c.files, c.date, c.sha);
    if (own.length === 0) sha = push(`${p.title} (#${p.number})`, p.user, paths, date);
  }
  for (const c of changes) {
    const content = head.files[c.path];
    if (content === undefined) delete base.files[c.path];
    else base.files[c.path] = content;
  }
  p.state = 'closed';
  p.merged = true;
  p.merged_by = user;
  p.merge_method = method;
  p.merge_commit_sha = sha;
  return { state: done(next), result: { sha, merged: true, message: 'Pull Request successfully merged' } };
};

const REVIEW_EVENTS: Record<'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT', ReviewState> = {
  APPROVE: 'APPROVED',
  REQUEST_CHANGES: 'CHANGES_REQUESTED',
  COMMENT: 'COMMENTED',
};

const create_and_submit_pull_request_review: Handler = (
  args: { owner: string; repo: string; pullNumber: number; body: string; event: 'APPROVE' | 'REQUEST_CHANGES' | 'COMMENT'; commitID?: string },
  state,
) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const p = pullOf(key, repo, args.pullNumber);
  const user = next.current_user;
  if (p.state !== 'open') {
    throw new ToolError(`422 Unprocessable Entity: pull request #${p.number} is ${p.merged ? 'merged' : 'closed'}; only open pull requests can be reviewed.`);
  }
  if (same(p.user, user) && args.event === 'APPROVE') {
    throw new ToolError(`422 Can not approve your own pull request: #${p.number} was opened by ${user}; another collaborator must approve it.`);
  }
  if (same(p.user, user) && args.event === 'REQUEST_CHANGES') {
    throw new ToolError(`422 Can not request changes on your own pull request: leave a COMMENT review or push the change to ${p.head} instead.`);
  }
  if (args.event !== 'APPROVE' && args.body.trim() === '') {
    throw new ToolError(`422 Unprocessable Entity: a ${args.event} review needs a non-empty body.`);
  }
  const head = repo.branches[p.head];
  if (args.commitID !== undefined && !(head?.commits ?? []).some((c) => c.sha === args.commitID || (args.commitID!.length >= 7 && c.sha.startsWith(args.commitID!)))) {
    throw new ToolError(`422 Unprocessable Entity: commit ${args.commitID} is not part of pull request #${p.number} (its head is ${headSha(head) ?? 'missing'}).`);
  }
  const review = {
    id: nextReviewId(repo),
    user,
    state: REVIEW_EVENTS[args.event],
    body: args.body,
    commit_id: args.commitID ?? headSha(head) ?? undefined,
  };
  p.reviews.push(review);
  p.requested_reviewers = p.requested_reviewers.filter((r) => !same(r, user));
  return { state: done(next), result: reviewView(key, p, review) };
};

// ---- handlers: files, branches, commits

/** Which branch a get_file_contents call reads: by head sha, by ref (branch or pull request head) or the default. */
function resolveRef(key: string, repo: GhRepository, ref: string | undefined, sha: string | undefined): string {
  if (sha !== undefined) {
    const name = Object.keys(repo.branches).find((n) => {
      const h = headSha(repo.branches[n]);
      return h !== null && (h === sha || (sha.length >= 7 && h.startsWith(sha)));
    });
    if (name === undefined) {
      throw new ToolError(`404 Not Found: no branch of ${key} has its head at ${sha} (only branch heads are kept; use list_branches or pass ref).`);
    }
    return name;
  }
  if (ref === undefined || ref === '') return repo.default_branch;
  const pullRef = /^refs\/pull\/(\d+)\/(?:head|merge)$/.exec(ref);
  if (pullRef) {
    const head = pullOf(key, repo, Number(pullRef[1])).head;
    branchOf(key, repo, head);
    return head;
  }
  if (ref.startsWith('refs/tags/')) throw new ToolError(`404 Not Found: tag ${ref.slice(10)} does not exist in ${key}.`);
  const name = ref.startsWith('refs/heads/') ? ref.slice(11) : ref;
  branchOf(key, repo, name);
  return name;
}

const get_file_contents: Handler = (args: { owner: string; repo: string; path?: string; ref?: string; sha?: string }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const branchName = resolveRef(key, repo, args.ref, args.sha);
  const branch = repo.branches[branchName]!;
  const raw = args.path ?? '/';
  const path = normalizePath(raw).replace(/\/+$/, '');
  const content = raw.endsWith('/') ? undefined : branch.files[path];
  if (content !== undefined) return { result: { ...fileView(key, branchName, path, content), encoding: 'utf-8', content } };
  // A directory: the entries directly below it (directories are implied by file paths).
  const prefix = path === '' ? '' : `${path}/`;
  const entries = new Map<string, Json>();
  for (const [file, text] of Object.entries(branch.files)) {
    if (!file.startsWith(prefix)) continue;
    const rest = file.slice(prefix.length);
    const slash = rest.indexOf('/');
    if (slash < 0) entries.set(rest, fileView(key, branchName, file, text));
    else {
      const dir = rest.slice(0, slash);
      if (!entries.has(dir)) entries.set(dir, { type: 'dir', name: dir, path: `${prefix}${dir}`, html_url: `https://github.com/${key}/tree/${branchName}/${prefix}${dir}` });
    }
  }
  if (entries.size === 0 && path !== '') {
    throw new ToolError(`404 Not Found: ${path} does not exist on branch ${branchName} of ${key} (list a directory with a path ending in "/", "/" for the root).`);
  }
  return { result: [...entries.keys()].sort().map((k) => entries.get(k)!) };
};

function commitTo(next: GithubState, repo: GhRepository, branch: GhBranch, message: string, change: Record<string, string | null>): GhCommit {
  const files = Object.keys(change).sort();
  const commit: GhCommit = {
    sha: commitSha(headSha(branch) ?? undefined, message, next.current_user, change),
    message,
    author: next.current_user,
    date: nextTime(repo),
    files,
  };
  for (const [path, content] of Object.entries(change)) {
    if (content === null) delete branch.files[path];
    else branch.files[path] = content;
  }
  branch.commits.push(commit);
  return commit;
}

const create_or_update_file: Handler = (
  args: { owner: string; repo: string; path: string; content: string; message: string; branch: string; sha?: string },
  state,
) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const branch = branchOf(key, repo, args.branch);
  refuseDirectCommit(key, args.branch, branch);
  const path = normalizePath(args.path);
  if (path === '' || path.endsWith('/')) throw new ToolError(`422 Validation Failed: path "${args.path}" is not a file path.`);
  const current = branch.files[path];
  if (current !== undefined) {
    if (args.sha === undefined) {
      throw new ToolError(`422 Invalid request: "sha" wasn't supplied. ${path} exists on ${args.branch}; pass its current blob sha (get_file_contents returns it).`);
    }
    if (args.sha !== blobSha(current)) {
      throw new ToolError(`409 Conflict: ${path} does not match ${args.sha}; its current sha on ${args.branch} is ${blobSha(current)}. Read the file again and base your change on it.`);
    }
  }
  const commit = commitTo(next, repo, branch, args.message, { [path]: args.content });
  return {
    state: done(next),
    result: { content: fileView(key, args.branch, path, args.content), commit: commitView(key, commit) },
  };
};

const push_files: Handler = (
  args: { owner: string; repo: string; branch: string; files: Array<{ path: string; content: string }>; message: string },
  state,
) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const branch = branchOf(key, repo, args.branch);
  refuseDirectCommit(key, args.branch, branch);
  if (args.files.length === 0) throw new ToolError('422 Validation Failed: files is empty; give at least one {path, content}.');
  const change: Record<string, string> = {};
  for (const f of args.files) {
    const path = normalizePath(f.path);
    if (path === '' || path.endsWith('/')) throw new ToolError(`422 Validation Failed: path "${f.path}" is not a file path.`);
    change[path] = f.content;
  }
  const commit = commitTo(next, repo, branch, args.message, change);
  return {
    state: done(next),
    result: { ref: `refs/heads/${args.branch}`, object: { sha: commit.sha, type: 'commit' }, commit: commitView(key, commit) },
  };
};

const delete_file: Handler = (args: { owner: string; repo: string; path: string; message: string; branch: string }, state) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const branch = branchOf(key, repo, args.branch);
  refuseDirectCommit(key, args.branch, branch);
  const path = normalizePath(args.path);
  if (branch.files[path] === undefined) throw new ToolError(`404 Not Found: ${path} does not exist on branch ${args.branch} of ${key}.`);
  const commit = commitTo(next, repo, branch, args.message, { [path]: null });
  return { state: done(next), result: { content: null, commit: commitView(key, commit) } };
};

const create_branch: Handler = (args: { owner: string; repo: string; branch: string; from_branch?: string }, state) => {
  const { next, key, repo } = editRepo(state, args.owner, args.repo);
  const name = args.branch.replace(/^refs\/heads\//, '');
  if (name.trim() === '') throw new ToolError('422 Validation Failed: branch name cannot be blank.');
  if (repo.branches[name]) throw new ToolError(`422 Reference already exists: branch "${name}" exists in ${key}; pick another name or use it.`);
  const fromName = args.from_branch ?? repo.default_branch;
  const from = branchOf(key, repo, fromName);
  // Protection belongs to a branch, not to its commits: the new branch starts unprotected.
  repo.branches[name] = { commits: structuredClone(from.commits), files: { ...from.files } };
  return { state: done(next), result: { ref: `refs/heads/${name}`, object: { sha: headSha(from), type: 'commit' } } };
};

const list_branches: Handler = (args: { owner: string; repo: string; page?: number; perPage?: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  const branches = Object.keys(repo.branches)
    .sort()
    .map((name) => {
      const b = repo.branches[name]!;
      const sha = headSha(b);
      return { name, commit: { sha, ...(sha ? { url: `https://api.github.com/repos/${key}/commits/${sha}` } : {}) }, protected: b.protection !== undefined };
    });
  return { result: paginate(branches, args) };
};

const list_commits: Handler = (args: { owner: string; repo: string; sha?: string; author?: string; page?: number; perPage?: number }, state) => {
  const { key, repo } = repoOf(state, args.owner, args.repo);
  let commits: GhCommit[];
  const ref = args.sha?.replace(/^refs\/heads\//, '');
  if (ref === undefined || ref === '') commits = repo.branches[repo.default_branch]?.commits ?? [];
  else if (repo.branches[ref]) commits = repo.branches[ref]!.commits;
  else {
    // A commit SHA: the history up to it, from whichever branch holds it.
    const holder = Object.values(repo.branches).find((b) => b.commits.some((c) => c.sha === ref || (ref.length >= 7 && c.sha.startsWith(ref))));
    if (!holder) throw new ToolError(`404 Not Found: no branch or commit "${ref}" in ${key} (use list_branches).`);
    const at = holder.commits.findIndex((c) => c.sha === ref || c.sha.startsWith(ref));
    commits = holder.commits.slice(0, at + 1);
  }
  const filtered = [...commits].reverse().filter((c) => args.author === undefined || (c.author !== undefined && same(c.author, args.author)));
  return { result: paginate(filtered, args).map((c) => commitView(key, c)) };
};

export const tools: Record<string, Handler> = {
  get_me,
  get_issue,
  list_issues,
  search_issues,
  search_pull_requests,
  get_issue_comments,
  create_issue,
  update_issue,
  add_issue_comment,
  get_pull_request,
  list_pull_requests,
  get_pull_request_files,
  get_pull_request_reviews,
  create_pull_request,
  update_pull_request,
  merge_pull_request,
  create_and_submit_pull_request_review,
  get_file_contents,
  create_or_update_file,
  push_files,
  delete_file,
  create_branch,
  list_branches,
  list_commits,
};
