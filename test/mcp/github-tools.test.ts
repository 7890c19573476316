import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { tools, blobSha } from '../../server/src/mcp/github/tools.ts';
import { normalizeGithubState, type GithubState } from '../../server/src/mcp/github/state.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { assertRefuses, callOnce, testFixtureTasks, type Json } from './harness.ts';

const NS = 'github';
type State = GithubState;

/** A call that must succeed, on the github server seeded with `state`: its reply and the state it leaves. */
const call = (name: string, args: Record<string, unknown>, state: State) => callOnce<State>(NS, state, name, args);
const refuses = (name: string, args: Record<string, unknown>, state: State, message: RegExp) => assertRefuses(NS, state, name, args, message);

const C1 = '1111111111111111111111111111111111111111';
const C2 = '2222222222222222222222222222222222222222';
const C3 = '3333333333333333333333333333333333333333';

const seed = (): State =>
  normalizeGithubState({
    current_user: 'alice',
    repositories: {
      'acme/web': {
        collaborators: ['alice', 'bob', 'carol'],
        labels: [{ name: 'bug', color: 'd73a4a' }, { name: 'enhancement' }],
        milestones: [{ number: 1, title: 'v1.0' }],
        branches: {
          main: {
            commits: [{ sha: C1, message: 'Initial commit', author: 'bob', date: '2026-01-10T09:00:00Z' }],
            files: { 'README.md': '# web\n', 'src/app.ts': 'export const a = 1;\n', 'old.txt': 'old\n' },
            protection: { required_approving_review_count: 1 },
          },
          'feature/x': {
            commits: [
              { sha: C1, message: 'Initial commit', author: 'bob', date: '2026-01-10T09:00:00Z' },
              { sha: C2, message: 'Add feature', author: 'alice', files: ['src/app.ts', 'src/new.ts', 'old.txt'] },
            ],
            files: { 'README.md': '# web\n', 'src/app.ts': 'export const a = 2;\n', 'src/new.ts': 'export const b = 1;\n' },
          },
          'feature/y': {
            commits: [
              { sha: C1, message: 'Initial commit', author: 'bob' },
              { sha: C3, message: 'Tweak readme', author: 'bob' },
            ],
            files: { 'README.md': '# web app\n', 'src/app.ts': 'export const a = 1;\n', 'old.txt': 'old\n' },
          },
          docs: {
            commits: [{ sha: C1, message: 'Initial commit', author: 'bob' }],
            files: { 'README.md': '# web\n', 'src/app.ts': 'export const a = 1;\n', 'old.txt': 'old\n' },
          },
        },
        issues: [
          { number: 1, title: 'Login bug', body: 'Login fails on Safari', labels: ['bug'], user: 'bob', assignees: ['carol'] },
          { number: 2, title: 'Add dark mode', labels: ['enhancement'], state: 'closed', state_reason: 'completed', user: 'carol' },
          {
            number: 4,
            title: 'Crash in parser',
            body: 'Segfault',
            labels: ['Bug'],
            user: 'carol',
            milestone: 1,
            comments: [{ id: 10, user: 'bob', body: 'I can reproduce this' }],
          },
        ],
        pull_requests: [
          { number: 3, title: 'Add feature', body: 'Fixes #1', user: 'alice', head: 'feature/x', base: 'main', reviews: [{ user: 'bob', state: 'APPROVED' }] },
          { number: 5, title: 'Tweak readme', user: 'bob', head: 'feature/y', base: 'main', draft: true },
          { number: 6, title: 'Old work', user: 'bob', head: 'gone', base: 'main', merged: true, merge_method: 'merge' },
        ],
      },
    },
  });

const repoIn = (s: State) => s.repositories['acme/web']!;
const pr = (s: State, n: number) => repoIn(s).pull_requests.find((p) => p.number === n)!;
const base = { owner: 'acme', repo: 'web' };

test('there is one handler per declared tool', async () => {
  assert.deepEqual(Object.keys(tools).sort(), [...(await loadRegistry()).get(NS)!.tools.keys()].sort());
});

test('blobSha is the git blob SHA-1', () => {
  for (const content of ['', 'hello\n', 'ünïcödé ✓\n']) {
    const git = execFileSync('git', ['hash-object', '--stdin'], { input: content }).toString().trim();
    assert.equal(blobSha(content), git);
  }
});

test('get_me returns the login the agent acts as', async () => {
  assert.equal((await call('get_me', {}, seed())).result.login, 'alice');
});

test('get_issue returns an issue, resolves a pull request number with a pull_request field, 404 otherwise', async () => {
  const issue = await call('get_issue', { ...base, issue_number: 1 }, seed());
  assert.equal(issue.changed, false);
  assert.equal(issue.result.title, 'Login bug');
  assert.equal(issue.result.html_url, 'https://github.com/acme/web/issues/1');
  assert.deepEqual(issue.result.labels, [{ name: 'bug', color: 'd73a4a' }]);
  assert.deepEqual(issue.result.assignees.map((a: Json) => a.login), ['carol']);
  assert.equal(issue.result.pull_request, undefined);
  const pull = (await call('get_issue', { ...base, issue_number: 3 }, seed())).result;
  assert.equal(pull.pull_request.html_url, 'https://github.com/acme/web/pull/3');
  await refuses('get_issue', { ...base, issue_number: 99 }, seed(), /^404 .*#99/);
  await refuses('get_issue', { owner: 'acme', repo: 'nope', issue_number: 1 }, seed(), /^404 .*acme\/nope.*acme\/web/);
  // Repository names are case-insensitive.
  assert.equal((await call('get_issue', { owner: 'ACME', repo: 'Web', issue_number: 1 }, seed())).result.number, 1);
});

test('list_issues leaves pull requests out, filters by state and all labels (case-insensitive), newest first, with cursors', async () => {
  const all = (await call('list_issues', base, seed())).result;
  assert.deepEqual(all.issues.map((i: Json) => i.number), [4, 2, 1]);
  assert.equal(all.totalCount, 3);
  const openBugs = (await call('list_issues', { ...base, state: 'OPEN', labels: ['bug'] }, seed())).result;
  assert.deepEqual(openBugs.issues.map((i: Json) => i.number), [4, 1]);
  assert.deepEqual((await call('list_issues', { ...base, state: 'CLOSED' }, seed())).result.issues.map((i: Json) => i.number), [2]);
  assert.deepEqual((await call('list_issues', { ...base, orderBy: 'CREATED_AT', direction: 'ASC' }, seed())).result.issues.map((i: Json) => i.number), [1, 2, 4]);
  const first = (await call('list_issues', { ...base, perPage: 2 }, seed())).result;
  assert.deepEqual(first.issues.map((i: Json) => i.number), [4, 2]);
  assert.equal(first.pageInfo.hasNextPage, true);
  const second = (await call('list_issues', { ...base, perPage: 2, after: first.pageInfo.endCursor }, seed())).result;
  assert.deepEqual(second.issues.map((i: Json) => i.number), [1]);
  assert.equal(second.pageInfo.hasNextPage, false);
  await refuses('list_issues', { ...base, after: 'garbage' }, seed(), /invalid cursor/);
  await refuses('list_issues', { ...base, since: 'yesterday' }, seed(), /ISO 8601/);
});

test('search_issues understands the documented qualifiers and free words', async () => {
  const numbers = async (query: string) => (await call('search_issues', { query }, seed())).result.items.map((i: Json) => i.number);
  assert.deepEqual(await numbers('repo:acme/web is:open label:bug'), [4, 1]);
  assert.deepEqual(await numbers('repo:acme/web is:closed'), [2]);
  assert.deepEqual(await numbers('safari'), [1]);
  assert.deepEqual(await numbers('assignee:carol'), [1]);
  assert.deepEqual(await numbers('author:carol is:open'), [4]);
  assert.deepEqual(await numbers('no:assignee is:open'), [4]);
  assert.deepEqual(await numbers('milestone:"v1.0"'), [4]);
  assert.deepEqual(await numbers('is:pr'), []);
  assert.deepEqual(await numbers('repo:other/repo'), []);
  const scoped = (await call('search_issues', { query: 'bug', owner: 'acme', repo: 'web', perPage: 1, page: 1 }, seed())).result;
  assert.equal(scoped.total_count, 1);
  assert.equal(scoped.items[0].number, 1);
});

test('search_pull_requests adds is:merged, is:unmerged, is:draft, base: and head:', async () => {
  const numbers = async (query: string) => (await call('search_pull_requests', { query }, seed())).result.items.map((i: Json) => i.number);
  assert.deepEqual(await numbers('repo:acme/web'), [6, 5, 3]);
  assert.deepEqual(await numbers('is:merged'), [6]);
  assert.deepEqual(await numbers('is:open is:unmerged'), [5, 3]);
  assert.deepEqual(await numbers('is:draft'), [5]);
  assert.deepEqual(await numbers('head:feature/x base:main'), [3]);
  assert.deepEqual(await numbers('author:alice'), [3]);
});

test("get_issue_comments lists an issue's comments", async () => {
  const out = (await call('get_issue_comments', { ...base, issue_number: 4 }, seed())).result as unknown as Json[];
  assert.deepEqual(out.map((c) => [c.id, c.user.login, c.body]), [[10, 'bob', 'I can reproduce this']]);
  await refuses('get_issue_comments', { ...base, issue_number: 42 }, seed(), /^404/);
});

test('create_issue takes the next shared number, creates missing labels and checks assignees and milestone', async () => {
  const out = await call('create_issue', { ...base, title: 'New thing', body: 'Details', labels: ['BUG', 'needs-triage'], assignees: ['Bob'], milestone: 1 }, seed());
  const issue = repoIn(out.state!).issues.at(-1)!;
  assert.equal(issue.number, 7);
  assert.equal(issue.user, 'alice');
  assert.deepEqual(issue.labels, ['bug', 'needs-triage']);
  assert.deepEqual(issue.assignees, ['bob']);
  assert.ok(repoIn(out.state!).labels.some((l) => l.name === 'needs-triage'));
  assert.equal(out.result.number, 7);
  assert.equal(out.result.html_url, 'https://github.com/acme/web/issues/7');
  assert.equal(out.result.state, 'open');
  await refuses('create_issue', { ...base, title: 'x', assignees: ['mallory'] }, seed(), /^422 .*mallory.*collaborator/);
  await refuses('create_issue', { ...base, title: 'x', milestone: 9 }, seed(), /^422 .*milestone 9/);
  await refuses('create_issue', { ...base, title: '  ' }, seed(), /^422 .*title/);
});

test('update_issue: closing sets a reason, duplicate needs an existing issue, reopening sets reopened, lists are replaced', async () => {
  const closed = (await call('update_issue', { ...base, issue_number: 1, state: 'closed' }, seed())).state!;
  assert.deepEqual([repoIn(closed).issues[0]!.state, repoIn(closed).issues[0]!.state_reason], ['closed', 'completed']);
  const dup = (await call('update_issue', { ...base, issue_number: 4, state: 'closed', state_reason: 'duplicate', duplicate_of: 1 }, seed())).state!;
  assert.equal(repoIn(dup).issues[2]!.duplicate_of, 1);
  assert.equal(repoIn(dup).issues[2]!.state_reason, 'duplicate');
  await refuses('update_issue', { ...base, issue_number: 4, state: 'closed', state_reason: 'duplicate' }, seed(), /duplicate_of/);
  await refuses('update_issue', { ...base, issue_number: 4, state: 'closed', state_reason: 'duplicate', duplicate_of: 3 }, seed(), /not another issue/);
  const reopened = (await call('update_issue', { ...base, issue_number: 2, state: 'open' }, seed())).state!;
  assert.deepEqual([repoIn(reopened).issues[1]!.state, repoIn(reopened).issues[1]!.state_reason], ['open', 'reopened']);
  const relabelled = (await call('update_issue', { ...base, issue_number: 1, labels: ['enhancement'], assignees: [], title: 'Renamed' }, seed())).state!;
  assert.deepEqual(repoIn(relabelled).issues[0]!.labels, ['enhancement']);
  assert.deepEqual(repoIn(relabelled).issues[0]!.assignees, []);
  assert.equal(repoIn(relabelled).issues[0]!.title, 'Renamed');
  // A pull request number resolves too.
  const prLabel = await call('update_issue', { ...base, issue_number: 3, labels: ['bug'] }, seed());
  assert.deepEqual(pr(prLabel.state!, 3).labels, ['bug']);
  assert.ok(prLabel.result.pull_request);
  await refuses('update_issue', { ...base, issue_number: 6, state: 'open' }, seed(), /^422 .*merged/);
  await refuses('update_issue', { ...base, issue_number: 1, assignees: ['mallory'] }, seed(), /^422/);
  await refuses('update_issue', { ...base, issue_number: 1, milestone: 5 }, seed(), /^422/);
});

test('add_issue_comment posts as the current user, on issues and pull requests', async () => {
  const out = await call('add_issue_comment', { ...base, issue_number: 4, body: 'Fixed in #3' }, seed());
  const comment = repoIn(out.state!).issues[2]!.comments.at(-1)!;
  assert.deepEqual([comment.id, comment.user, comment.body], [11, 'alice', 'Fixed in #3']);
  assert.equal(out.result.html_url, 'https://github.com/acme/web/issues/4#issuecomment-11');
  const onPr = (await call('add_issue_comment', { ...base, issue_number: 3, body: 'LGTM' }, seed())).state!;
  assert.equal(pr(onPr, 3).comments.at(-1)!.body, 'LGTM');
  await refuses('add_issue_comment', { ...base, issue_number: 4, body: ' ' }, seed(), /^422/);
});

test('get_pull_request shows state, branches and the merge requirements', async () => {
  const out = (await call('get_pull_request', { ...base, pullNumber: 3 }, seed())).result;
  assert.equal(out.html_url, 'https://github.com/acme/web/pull/3');
  assert.deepEqual([out.state, out.merged, out.draft, out.mergeable, out.mergeable_state], ['open', false, false, true, 'clean']);
  assert.deepEqual([out.head.ref, out.head.sha, out.base.ref, out.base.sha], ['feature/x', C2, 'main', C1]);
  assert.deepEqual(out.merge_requirements.required_approving_review_count, 1);
  assert.deepEqual(out.merge_requirements.approved_by, ['bob']);
  assert.equal((await call('get_pull_request', { ...base, pullNumber: 5 }, seed())).result.mergeable_state, 'draft');
  await refuses('get_pull_request', { ...base, pullNumber: 1 }, seed(), /^404 .*is an issue/);
});

test('list_pull_requests defaults to open ones, newest first, and filters by head (owner:branch too) and base', async () => {
  const numbers = async (args: Json) => ((await call('list_pull_requests', { ...base, ...args }, seed())).result as unknown as Json[]).map((p) => p.number);
  assert.deepEqual(await numbers({}), [5, 3]);
  assert.deepEqual(await numbers({ state: 'closed' }), [6]);
  assert.deepEqual(await numbers({ state: 'all', direction: 'asc' }), [3, 5, 6]);
  assert.deepEqual(await numbers({ head: 'acme:feature/x' }), [3]);
  assert.deepEqual(await numbers({ base: 'docs' }), []);
});

test('get_pull_request_files reports added, modified and removed files against the base', async () => {
  const files = (await call('get_pull_request_files', { ...base, pullNumber: 3 }, seed())).result as unknown as Json[];
  assert.deepEqual(
    files.map((f) => [f.filename, f.status]),
    [
      ['old.txt', 'removed'],
      ['src/app.ts', 'modified'],
      ['src/new.ts', 'added'],
    ],
  );
  assert.equal(files[1]!.sha, blobSha('export const a = 2;\n'));
  // Commits without recorded files: the tree difference.
  const y = (await call('get_pull_request_files', { ...base, pullNumber: 5 }, seed())).result as unknown as Json[];
  assert.deepEqual(y.map((f) => [f.filename, f.status]), [['README.md', 'modified']]);
});

test('get_pull_request_reviews lists reviews oldest first', async () => {
  const reviews = (await call('get_pull_request_reviews', { ...base, pullNumber: 3 }, seed())).result as unknown as Json[];
  assert.deepEqual(reviews.map((r) => [r.user.login, r.state]), [['bob', 'APPROVED']]);
});

async function withBranch(s: State): Promise<State> {
  return (await call('push_files', { ...base, branch: 'docs', files: [{ path: 'docs/a.md', content: 'A\n' }], message: 'Add docs' }, s)).state!;
}

test('create_pull_request opens a pull request with the next number; refuses missing branches, no commits and duplicates', async () => {
  const s = await withBranch(seed());
  const out = await call('create_pull_request', { ...base, title: 'Docs', head: 'acme:docs', base: 'main', draft: true }, s);
  const created = repoIn(out.state!).pull_requests.at(-1)!;
  assert.deepEqual([created.number, created.user, created.head, created.base, created.draft, created.state], [7, 'alice', 'docs', 'main', true, 'open']);
  assert.equal(out.result.html_url, 'https://github.com/acme/web/pull/7');
  await refuses('create_pull_request', { ...base, title: 'Docs', head: 'docs', base: 'main' }, out.state!, /^422 .*A pull request already exists for acme:docs \(#7\)/);
  await refuses('create_pull_request', { ...base, title: 'Nothing', head: 'docs', base: 'main' }, seed(), /^422 .*No commits between main and docs/);
  await refuses('create_pull_request', { ...base, title: 'x', head: 'nope', base: 'main' }, seed(), /^422 .*"nope"/);
  await refuses('create_pull_request', { ...base, title: 'x', head: 'main', base: 'main' }, seed(), /^422 .*same branch/);
});

test('update_pull_request edits, closes, reopens, requests reviews; refuses merged pull requests and the author as reviewer', async () => {
  const ready = (await call('update_pull_request', { ...base, pullNumber: 5, draft: false, title: 'Tweak README' }, seed())).state!;
  assert.deepEqual([pr(ready, 5).draft, pr(ready, 5).title], [false, 'Tweak README']);
  const requested = (await call('update_pull_request', { ...base, pullNumber: 5, reviewers: ['Carol', 'alice'] }, seed())).state!;
  assert.deepEqual(pr(requested, 5).requested_reviewers, ['carol', 'alice']);
  await refuses('update_pull_request', { ...base, pullNumber: 5, reviewers: ['bob'] }, seed(), /^422 Review cannot be requested from pull request author/);
  await refuses('update_pull_request', { ...base, pullNumber: 5, reviewers: ['mallory'] }, seed(), /^422 .*mallory/);
  await refuses('update_pull_request', { ...base, pullNumber: 6, title: 'x' }, seed(), /^422 .*merged/);
  await refuses('update_pull_request', { ...base, pullNumber: 5, base: 'nope' }, seed(), /^422 .*"nope"/);
  const closed = (await call('update_pull_request', { ...base, pullNumber: 3, state: 'closed' }, seed())).state!;
  assert.deepEqual([pr(closed, 3).state, pr(closed, 3).merged], ['closed', false]);
  const reopened = (await call('update_pull_request', { ...base, pullNumber: 3, state: 'open' }, closed)).state!;
  assert.equal(pr(reopened, 3).state, 'open');
});

test('merge_pull_request checks its rules in order', async () => {
  await refuses('merge_pull_request', { ...base, pullNumber: 6 }, seed(), /^405 Pull Request is not mergeable: #6 is already merged/);
  const closed = (await call('update_pull_request', { ...base, pullNumber: 3, state: 'closed' }, seed())).state!;
  await refuses('merge_pull_request', { ...base, pullNumber: 3 }, closed, /^405 Pull Request is not mergeable: #3 is closed/);
  await refuses('merge_pull_request', { ...base, pullNumber: 5 }, seed(), /^405 Pull Request is still a draft.*draft=false/);
  const conflict = structuredClone(seed());
  pr(conflict, 3).mergeable = false;
  await refuses('merge_pull_request', { ...base, pullNumber: 3 }, conflict, /^405 Pull Request is not mergeable: .*conflicts/);
  // The approval rule: bob's approval is his latest review only until he requests changes.
  const changes = structuredClone(seed());
  pr(changes, 3).reviews.push({ user: 'bob', state: 'CHANGES_REQUESTED', body: 'no' });
  await refuses('merge_pull_request', { ...base, pullNumber: 3 }, changes, /^405 At least 1 approving review is required by reviewers with write access.*changes requested by bob/);
  // A later COMMENTED review does not undo an approval.
  const commented = structuredClone(seed());
  pr(commented, 3).reviews.push({ user: 'bob', state: 'COMMENTED', body: 'nit' });
  assert.ok((await call('merge_pull_request', { ...base, pullNumber: 3 }, commented)).changed);
  // The author's own approval does not count.
  const self = structuredClone(seed());
  pr(self, 3).reviews = [{ user: 'alice', state: 'APPROVED', body: '' }];
  await refuses('merge_pull_request', { ...base, pullNumber: 3 }, self, /^405 At least 1 approving review/);
  const two = structuredClone(seed());
  repoIn(two).branches.main!.protection!.required_approving_review_count = 2;
  const twoApproved = structuredClone(two);
  await refuses('merge_pull_request', { ...base, pullNumber: 3 }, two, /^405 At least 2 approving reviews are required/);
  pr(twoApproved, 3).reviews.push({ user: 'carol', state: 'APPROVED', body: '' });
  assert.ok((await call('merge_pull_request', { ...base, pullNumber: 3 }, twoApproved)).changed);
  const squashOnly = structuredClone(seed());
  repoIn(squashOnly).allowed_merge_methods = ['squash'];
  await refuses('merge_pull_request', { ...base, pullNumber: 3 }, squashOnly, /^405 Merge commits are not allowed on this repository.*squash/);
  await refuses('merge_pull_request', { ...base, pullNumber: 3, merge_method: 'rebase' }, squashOnly, /^405 Rebase merges are not allowed/);
  // An unprotected base needs no approval.
  const open = structuredClone(seed());
  delete repoIn(open).branches.main!.protection;
  pr(open, 3).reviews = [];
  assert.ok((await call('merge_pull_request', { ...base, pullNumber: 3 }, open)).changed);
});

const mergedFiles = { 'README.md': '# web\n', 'src/app.ts': 'export const a = 2;\n', 'src/new.ts': 'export const b = 1;\n' };

test('merge adds the commits and a merge commit; base takes the head version of every changed file', async () => {
  const out = await call('merge_pull_request', { ...base, pullNumber: 3 }, seed());
  const main = repoIn(out.state!).branches.main!;
  assert.deepEqual(main.files, mergedFiles);
  assert.deepEqual(main.commits.map((c) => c.message), ['Initial commit', 'Add feature', 'Merge pull request #3 from acme/feature/x']);
  assert.equal(main.commits[1]!.sha, C2);
  const p = pr(out.state!, 3);
  assert.deepEqual([p.state, p.merged, p.merged_by, p.merge_method, p.merge_commit_sha], ['closed', true, 'alice', 'merge', main.commits.at(-1)!.sha]);
  assert.deepEqual(out.result, { sha: main.commits.at(-1)!.sha, merged: true, message: 'Pull Request successfully merged' });
  assert.ok(repoIn(out.state!).branches['feature/x'], 'the head branch is kept');
  // The merged pull request still lists its files.
  const files = (await call('get_pull_request_files', { ...base, pullNumber: 3 }, out.state!)).result as unknown as Json[];
  assert.deepEqual(files.map((f) => f.filename), ['old.txt', 'src/app.ts', 'src/new.ts']);
  // Deterministic: the same call on the same state gives the same state.
  assert.deepEqual((await call('merge_pull_request', { ...base, pullNumber: 3 }, seed())).state, out.state);
});

test('squash adds one commit "<title> (#N)"; rebase replays the commits with new shas', async () => {
  const squash = (await call('merge_pull_request', { ...base, pullNumber: 3, merge_method: 'squash' }, seed())).state!;
  const sMain = repoIn(squash).branches.main!;
  assert.deepEqual(sMain.commits.map((c) => c.message), ['Initial commit', 'Add feature (#3)']);
  assert.deepEqual(sMain.files, mergedFiles);
  const titled = (await call('merge_pull_request', { ...base, pullNumber: 3, merge_method: 'squash', commit_title: 'Feature X' }, seed())).state!;
  assert.equal(repoIn(titled).branches.main!.commits.at(-1)!.message, 'Feature X (#3)');
  const rebase = (await call('merge_pull_request', { ...base, pullNumber: 3, merge_method: 'rebase' }, seed())).state!;
  const rMain = repoIn(rebase).branches.main!;
  assert.deepEqual(rMain.commits.map((c) => c.message), ['Initial commit', 'Add feature']);
  assert.notEqual(rMain.commits[1]!.sha, C2);
  assert.deepEqual(rMain.files, mergedFiles);
  assert.equal(pr(rebase, 3).merge_commit_sha, rMain.commits[1]!.sha);
});

test("create_and_submit_pull_request_review: not on one's own pull request, bodies for changes and comments, open pull requests only", async () => {
  const out = await call('create_and_submit_pull_request_review', { ...base, pullNumber: 5, body: '', event: 'APPROVE' }, (await call('update_pull_request', { ...base, pullNumber: 5, reviewers: ['alice'] }, seed())).state!);
  const p = pr(out.state!, 5);
  assert.deepEqual(p.reviews.map((r) => [r.user, r.state, r.commit_id]), [['alice', 'APPROVED', C3]]);
  assert.deepEqual(p.requested_reviewers, [], 'the review satisfies the request');
  assert.equal(out.result.state, 'APPROVED');
  const changes = (await call('create_and_submit_pull_request_review', { ...base, pullNumber: 5, body: 'Please fix', event: 'REQUEST_CHANGES' }, seed())).state!;
  assert.equal(pr(changes, 5).reviews.at(-1)!.state, 'CHANGES_REQUESTED');
  const comment = (await call('create_and_submit_pull_request_review', { ...base, pullNumber: 3, body: 'Note to self', event: 'COMMENT' }, seed())).state!;
  assert.equal(pr(comment, 3).reviews.at(-1)!.state, 'COMMENTED');
  await refuses('create_and_submit_pull_request_review', { ...base, pullNumber: 3, body: 'ok', event: 'APPROVE' }, seed(), /^422 Can not approve your own pull request/);
  await refuses('create_and_submit_pull_request_review', { ...base, pullNumber: 3, body: 'x', event: 'REQUEST_CHANGES' }, seed(), /^422 Can not request changes on your own pull request/);
  await refuses('create_and_submit_pull_request_review', { ...base, pullNumber: 5, body: ' ', event: 'COMMENT' }, seed(), /^422 .*non-empty body/);
  await refuses('create_and_submit_pull_request_review', { ...base, pullNumber: 5, body: '', event: 'REQUEST_CHANGES' }, seed(), /^422 .*non-empty body/);
  await refuses('create_and_submit_pull_request_review', { ...base, pullNumber: 6, body: 'ok', event: 'APPROVE' }, seed(), /^422 .*only open/);
  await refuses('create_and_submit_pull_request_review', { ...base, pullNumber: 5, body: 'ok', event: 'APPROVE', commitID: 'deadbeef' }, seed(), /^422 .*not part/);
});

test('get_file_contents reads files with their blob sha and lists directories, at any ref', async () => {
  const file = (await call('get_file_contents', { ...base, path: 'src/app.ts' }, seed())).result;
  assert.deepEqual([file.type, file.path, file.content, file.sha], ['file', 'src/app.ts', 'export const a = 1;\n', blobSha('export const a = 1;\n')]);
  assert.equal((await call('get_file_contents', { ...base, path: '/src/app.ts', ref: 'refs/heads/feature/x' }, seed())).result.content, 'export const a = 2;\n');
  assert.equal((await call('get_file_contents', { ...base, path: 'src/app.ts', ref: 'feature/x' }, seed())).result.content, 'export const a = 2;\n');
  assert.equal((await call('get_file_contents', { ...base, path: 'src/new.ts', ref: 'refs/pull/3/head' }, seed())).result.type, 'file');
  assert.equal((await call('get_file_contents', { ...base, path: 'src/app.ts', sha: C3 }, seed())).result.content, 'export const a = 1;\n');
  const root = (await call('get_file_contents', { ...base }, seed())).result as unknown as Json[];
  assert.deepEqual(root.map((e) => [e.type, e.name]), [['file', 'README.md'], ['file', 'old.txt'], ['dir', 'src']]);
  const src = (await call('get_file_contents', { ...base, path: 'src/' }, seed())).result as unknown as Json[];
  assert.deepEqual(src.map((e) => e.path), ['src/app.ts']);
  await refuses('get_file_contents', { ...base, path: 'missing.md' }, seed(), /^404 .*missing\.md/);
  await refuses('get_file_contents', { ...base, path: 'README.md', ref: 'nope' }, seed(), /^404 .*"nope"/);
  await refuses('get_file_contents', { ...base, path: 'README.md', sha: 'abcdef1' }, seed(), /^404 .*abcdef1/);
  await refuses('get_file_contents', { ...base, path: 'README.md', ref: 'refs/pull/6/head' }, seed(), /^404 .*"gone"/);
  await refuses('get_file_contents', { ...base, path: 'README.md', ref: 'refs/tags/v1' }, seed(), /^404 .*tag v1/);
});

test('create_or_update_file creates, and updates only with the current sha; protected branches refuse direct commits', async () => {
  const created = await call('create_or_update_file', { ...base, branch: 'docs', path: 'docs/new.md', content: 'New\n', message: 'Add new doc' }, seed());
  const docs = repoIn(created.state!).branches.docs!;
  assert.equal(docs.files['docs/new.md'], 'New\n');
  const commit = docs.commits.at(-1)!;
  assert.deepEqual([commit.message, commit.author, commit.files], ['Add new doc', 'alice', ['docs/new.md']]);
  assert.match(commit.sha, /^[0-9a-f]{40}$/);
  assert.equal(created.result.content.sha, blobSha('New\n'));
  assert.equal(created.result.commit.sha, commit.sha);
  const updated = (await call('create_or_update_file', { ...base, branch: 'docs', path: 'README.md', content: '# Web\n', message: 'Capitalise', sha: blobSha('# web\n') }, seed())).state!;
  assert.equal(repoIn(updated).branches.docs!.files['README.md'], '# Web\n');
  await refuses('create_or_update_file', { ...base, branch: 'docs', path: 'README.md', content: 'x', message: 'm' }, seed(), /^422 .*"sha" wasn't supplied/);
  await refuses('create_or_update_file', { ...base, branch: 'docs', path: 'README.md', content: 'x', message: 'm', sha: blobSha('stale') }, seed(), /^409 .*current sha/);
  await refuses('create_or_update_file', { ...base, branch: 'main', path: 'x.md', content: 'x', message: 'm' }, seed(), /^422 Changes must be made through a pull request/);
  await refuses('create_or_update_file', { ...base, branch: 'nope', path: 'x.md', content: 'x', message: 'm' }, seed(), /^404 .*"nope"/);
});

test('push_files commits several files at once; delete_file removes one', async () => {
  const pushed = await call(
    'push_files',
    { ...base, branch: 'docs', message: 'Two files', files: [{ path: 'a.md', content: 'A' }, { path: 'README.md', content: 'R' }] },
    seed(),
  );
  const docs = repoIn(pushed.state!).branches.docs!;
  assert.deepEqual([docs.files['a.md'], docs.files['README.md']], ['A', 'R']);
  assert.deepEqual(docs.commits.at(-1)!.files, ['README.md', 'a.md']);
  assert.equal(pushed.result.object.sha, docs.commits.at(-1)!.sha);
  await refuses('push_files', { ...base, branch: 'main', message: 'm', files: [{ path: 'a', content: 'A' }] }, seed(), /^422 Changes must be made through a pull request/);
  await refuses('push_files', { ...base, branch: 'nope', message: 'm', files: [{ path: 'a', content: 'A' }] }, seed(), /^404/);
  await refuses('push_files', { ...base, branch: 'docs', message: 'm', files: [] }, seed(), /^422 .*empty/);
  const deleted = (await call('delete_file', { ...base, branch: 'docs', path: 'old.txt', message: 'Remove old' }, seed())).state!;
  assert.equal(repoIn(deleted).branches.docs!.files['old.txt'], undefined);
  assert.equal(repoIn(deleted).branches.docs!.commits.at(-1)!.message, 'Remove old');
  await refuses('delete_file', { ...base, branch: 'docs', path: 'ghost.txt', message: 'm' }, seed(), /^404 .*ghost\.txt/);
  await refuses('delete_file', { ...base, branch: 'main', path: 'old.txt', message: 'm' }, seed(), /^422 Changes must be made through a pull request/);
});

test('create_branch copies commits and files (not protection); list_branches and list_commits read them', async () => {
  const out = await call('create_branch', { ...base, branch: 'fix/thing' }, seed());
  const branch = repoIn(out.state!).branches['fix/thing']!;
  assert.deepEqual(branch.files, repoIn(seed()).branches.main!.files);
  assert.deepEqual(branch.commits.map((c) => c.sha), [C1]);
  assert.equal(branch.protection, undefined);
  assert.deepEqual(out.result, { ref: 'refs/heads/fix/thing', object: { sha: C1, type: 'commit' } });
  const fromX = (await call('create_branch', { ...base, branch: 'x2', from_branch: 'feature/x' }, seed())).state!;
  assert.equal(repoIn(fromX).branches.x2!.files['src/new.ts'], 'export const b = 1;\n');
  await refuses('create_branch', { ...base, branch: 'docs' }, seed(), /^422 Reference already exists/);
  await refuses('create_branch', { ...base, branch: 'y2', from_branch: 'nope' }, seed(), /^404/);
  const branches = (await call('list_branches', base, seed())).result as unknown as Json[];
  assert.deepEqual(branches.map((b) => [b.name, b.commit.sha, b.protected]), [
    ['docs', C1, false],
    ['feature/x', C2, false],
    ['feature/y', C3, false],
    ['main', C1, true],
  ]);
  const commits = (await call('list_commits', { ...base, sha: 'feature/x' }, seed())).result as unknown as Json[];
  assert.deepEqual(commits.map((c) => [c.sha, c.commit.message, c.author.login]), [[C2, 'Add feature', 'alice'], [C1, 'Initial commit', 'bob']]);
  assert.deepEqual(((await call('list_commits', { ...base, sha: 'feature/x', author: 'BOB' }, seed())).result as unknown as Json[]).map((c) => c.sha), [C1]);
  assert.deepEqual(((await call('list_commits', { ...base, sha: C1 }, seed())).result as unknown as Json[]).map((c) => c.sha), [C1]);
  assert.deepEqual(((await call('list_commits', base, seed())).result as unknown as Json[]).map((c) => c.sha), [C1]);
  await refuses('list_commits', { ...base, sha: 'nope' }, seed(), /^404/);
});

test('new records are dated one minute after the latest date in the repository', async () => {
  const out = (await call('create_issue', { ...base, title: 'Dated' }, seed())).state!;
  assert.equal(repoIn(out).issues.at(-1)!.created_at, '2026-01-10T09:01:00Z');
});

// Every task of the namespace: its reference solutions, replayed through its servers, pass with no refused
// call; its counterexamples fail. Cross-server tasks route each call to its namespace's server.
testFixtureTasks(NS, { noRefusals: true });
