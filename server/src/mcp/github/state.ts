/** The GitHub model state (schemas/servers/github.json `state_schema`) with every default filled in. */

export type MergeMethod = 'merge' | 'squash' | 'rebase';
export type ReviewState = 'APPROVED' | 'CHANGES_REQUESTED' | 'COMMENTED' | 'DISMISSED';

export interface GhComment {
  id?: number;
  user: string;
  body: string;
  created_at?: string;
}

export interface GhCommit {
  sha: string;
  message: string;
  author?: string;
  date?: string;
  files?: string[];
}

export interface GhBranch {
  commits: GhCommit[];
  files: Record<string, string>;
  protection?: { required_approving_review_count: number; require_pull_request: boolean };
}

export interface GhIssue {
  number: number;
  title: string;
  body: string;
  user: string;
  state: 'open' | 'closed';
  state_reason: 'completed' | 'not_planned' | 'duplicate' | 'reopened' | null;
  duplicate_of?: number;
  labels: string[];
  assignees: string[];
  milestone?: number;
  type?: string;
  comments: GhComment[];
  created_at?: string;
}

interface GhReview {
  id?: number;
  user: string;
  state: ReviewState;
  body: string;
  commit_id?: string;
}

export interface GhPull {
  number: number;
  title: string;
  body: string;
  user: string;
  head: string;
  base: string;
  state: 'open' | 'closed';
  merged: boolean;
  merged_by?: string;
  merge_method?: MergeMethod;
  merge_commit_sha?: string;
  draft: boolean;
  mergeable: boolean;
  labels: string[];
  assignees: string[];
  milestone?: number;
  requested_reviewers: string[];
  reviews: GhReview[];
  comments: GhComment[];
  created_at?: string;
}

export interface GhRepository {
  description?: string;
  private: boolean;
  default_branch: string;
  allowed_merge_methods: MergeMethod[];
  collaborators: string[];
  labels: Array<{ name: string; color?: string; description?: string }>;
  milestones: Array<{ number: number; title: string; state: 'open' | 'closed'; due_on?: string }>;
  branches: Record<string, GhBranch>;
  issues: GhIssue[];
  pull_requests: GhPull[];
}

export interface GithubState {
  current_user: string;
  /** Keyed "owner/name" exactly as written in the state; look up with `findRepo` (case-insensitive). */
  repositories: Record<string, GhRepository>;
}

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const optInt = (v: unknown): number | undefined => (typeof v === 'number' && Number.isInteger(v) ? v : undefined);
const strings = (v: unknown): string[] => arr(v).filter((x): x is string => typeof x === 'string');
const MERGE_METHODS: MergeMethod[] = ['merge', 'squash', 'rebase'];
const REVIEW_STATES: ReviewState[] = ['APPROVED', 'CHANGES_REQUESTED', 'COMMENTED', 'DISMISSED'];

/** Deleted GitHub accounts show as "ghost"; seeded records without an author get that login. */
const GHOST = 'ghost';

export function normalizePath(path: string): string {
  return path.replace(/^(\.\/|\/)+/, '');
}

function comments(v: unknown): GhComment[] {
  return arr(v).map((c) => {
    const o = obj(c);
    return { id: optInt(o.id), user: str(o.user, GHOST), body: str(o.body), created_at: optStr(o.created_at) };
  });
}

function branch(v: unknown): GhBranch {
  const o = obj(v);
  const files: Record<string, string> = {};
  for (const [path, content] of Object.entries(obj(o.files))) {
    if (typeof content === 'string') files[normalizePath(path)] = content;
  }
  const p = o.protection === undefined ? undefined : obj(o.protection);
  return {
    commits: arr(o.commits).map((c) => {
      const co = obj(c);
      const files = co.files === undefined ? undefined : strings(co.files).map(normalizePath);
      return { sha: str(co.sha), message: str(co.message), author: optStr(co.author), date: optStr(co.date), files };
    }),
    files,
    protection: p && {
      required_approving_review_count: optInt(p.required_approving_review_count) ?? 0,
      require_pull_request: p.require_pull_request !== false,
    },
  };
}

function repository(v: unknown): GhRepository {
  const o = obj(v);
  const defaultBranch = str(o.default_branch, 'main');
  const branches: Record<string, GhBranch> = {};
  for (const [name, b] of Object.entries(obj(o.branches))) branches[name] = branch(b);
  // A repository always has its default branch, so small seeds need not spell out an empty one.
  branches[defaultBranch] ??= { commits: [], files: {} };
  const methods = strings(o.allowed_merge_methods).filter((m): m is MergeMethod => (MERGE_METHODS as string[]).includes(m));
  return {
    description: optStr(o.description),
    private: o.private === true,
    default_branch: defaultBranch,
    allowed_merge_methods: methods.length > 0 ? methods : [...MERGE_METHODS],
    collaborators: strings(o.collaborators),
    labels: arr(o.labels).map((l) => {
      const lo = obj(l);
      return { name: str(lo.name), color: optStr(lo.color), description: optStr(lo.description) };
    }),
    milestones: arr(o.milestones).map((m) => {
      const mo = obj(m);
      return { number: optInt(mo.number) ?? 0, title: str(mo.title), state: mo.state === 'closed' ? 'closed' : 'open', due_on: optStr(mo.due_on) };
    }),
    branches,
    issues: arr(o.issues).map((i) => {
      const io = obj(i);
      const reason = io.state_reason;
      return {
        number: optInt(io.number) ?? 0,
        title: str(io.title),
        body: str(io.body),
        user: str(io.user, GHOST),
        state: io.state === 'closed' ? 'closed' : 'open',
        state_reason:
          reason === 'completed' || reason === 'not_planned' || reason === 'duplicate' || reason === 'reopened' ? reason : null,
        duplicate_of: optInt(io.duplicate_of),
        labels: strings(io.labels),
        assignees: strings(io.assignees),
        milestone: optInt(io.milestone),
        type: optStr(io.type),
        comments: comments(io.comments),
        created_at: optStr(io.created_at),
      };
    }),
    pull_requests: arr(o.pull_requests).map((p) => {
      const po = obj(p);
      const merged = po.merged === true;
      const method = po.merge_method;
      return {
        number: optInt(po.number) ?? 0,
        title: str(po.title),
        body: str(po.body),
        user: str(po.user, GHOST),
        head: headBranch(str(po.head)),
        base: str(po.base),
        // GitHub never reports a merged pull request as open; a seed saying so is read the way GitHub shows it.
        state: merged || po.state === 'closed' ? 'closed' : 'open',
        merged,
        merged_by: optStr(po.merged_by),
        merge_method: typeof method === 'string' && (MERGE_METHODS as string[]).includes(method) ? (method as MergeMethod) : undefined,
        merge_commit_sha: optStr(po.merge_commit_sha),
        draft: po.draft === true,
        mergeable: po.mergeable !== false,
        labels: strings(po.labels),
        assignees: strings(po.assignees),
        milestone: optInt(po.milestone),
        requested_reviewers: strings(po.requested_reviewers),
        reviews: arr(po.reviews).map((r) => {
          const ro = obj(r);
          const state = str(ro.state);
          return {
            id: optInt(ro.id),
            user: str(ro.user, GHOST),
            state: (REVIEW_STATES as string[]).includes(state) ? (state as ReviewState) : 'COMMENTED',
            body: str(ro.body),
            commit_id: optStr(ro.commit_id),
          };
        }),
        comments: comments(po.comments),
        created_at: optStr(po.created_at),
      };
    }),
  };
}

/** GitHub accepts "owner:branch" wherever a head branch is named; only the branch part identifies it here. */
export function headBranch(head: string): string {
  const colon = head.indexOf(':');
  return colon < 0 ? head : head.slice(colon + 1);
}

export function normalizeGithubState(input: unknown): GithubState {
  const raw = obj(input);
  const repositories: Record<string, GhRepository> = {};
  for (const [key, value] of Object.entries(obj(raw.repositories))) {
    if (key.includes('/')) repositories[key] = repository(value);
  }
  return { current_user: str(raw.current_user, 'mcpbench-agent'), repositories };
}
