import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRegistry, splitQualified, type Registry } from '../../server/src/mcp/registry.ts';
import { createAjv } from '../../server/src/ajv.ts';
import { schemasDir } from '../../server/src/paths.ts';
import type { Predicate, Task } from '../../server/src/tasks/model.ts';
import plugin from '../../server/src/mcp/github/index.ts';
import { latestReviews } from '../../server/src/mcp/github/predicates.ts';

const seed = {
  current_user: 'alice',
  repositories: {
    'Acme/Web': {
      collaborators: ['alice', 'bob', 'carol'],
      labels: [{ name: 'bug' }, { name: 'docs' }],
      milestones: [{ number: 3, title: 'v2.5' }],
      branches: {
        main: {
          commits: [
            { sha: 'aaaaaaa', message: 'Initial commit', author: 'bob' },
            { sha: 'bbbbbbb', message: 'Bump version to 2.4.0', author: 'carol' },
          ],
          files: { 'README.md': '# Web\r\n', '/src/app.ts': 'export const Version = "2.4.0";\n' },
          protection: { required_approving_review_count: 1 },
        },
        'fix/login': { commits: [{ sha: 'ccccccc', message: 'Fix login redirect', author: 'alice' }], files: { 'src/login.ts': 'x' } },
      },
      issues: [
        { number: 1, title: 'Login redirects to 404', body: 'Steps: open /login', labels: ['Bug'], assignees: ['Bob'], milestone: 3, comments: [{ user: 'carol', body: 'Repro on Safari' }] },
        { number: 2, title: 'Typo in README', state: 'closed', state_reason: 'completed', labels: ['docs'] },
        { number: 3, title: 'Old dup', state: 'closed', state_reason: 'duplicate', duplicate_of: 1 },
      ],
      pull_requests: [
        {
          number: 4, title: 'Fix login redirect', body: 'Fixes #1', user: 'alice', head: 'alice:fix/login', base: 'main',
          labels: ['needs-review'], requested_reviewers: ['carol'],
          reviews: [
            { user: 'bob', state: 'CHANGES_REQUESTED', body: 'Please add a test' },
            { user: 'bob', state: 'APPROVED', body: 'LGTM' },
            { user: 'carol', state: 'APPROVED' },
            { user: 'carol', state: 'COMMENTED', body: 'nit' },
          ],
          comments: [{ user: 'bob', body: 'Thanks for the fix!' }],
        },
        { number: 5, title: 'WIP: new header', head: 'feature/header', base: 'main', draft: true },
        { number: 6, title: 'Old attempt', head: 'fix/login', base: 'main', state: 'closed' },
        { number: 7, title: 'Release 2.3', head: 'release/2.3', base: 'main', state: 'open', merged: true, merge_method: 'squash' },
      ],
    },
  },
};

const state = plugin.normalizeState(seed);
const run = (name: string, args: unknown, s = state): boolean => plugin.predicates[name]!(args, { state: s, answer: undefined }).value;
const R = 'acme/web';

test('normalizeState: defaults, default branch, head prefix, merged implies closed, paths', () => {
  assert.deepEqual(plugin.normalizeState(undefined), { current_user: 'mcpbench-agent', repositories: {} });
  const small = plugin.normalizeState({ repositories: { 'o/r': {} } });
  const repo = small.repositories['o/r']!;
  assert.equal(repo.default_branch, 'main');
  assert.deepEqual(Object.keys(repo.branches), ['main']);
  assert.deepEqual(repo.allowed_merge_methods, ['merge', 'squash', 'rebase']);
  const web = state.repositories['Acme/Web']!;
  assert.equal(web.pull_requests[0]!.head, 'fix/login');
  assert.equal(web.pull_requests[3]!.state, 'closed');
  assert.ok('src/app.ts' in web.branches.main!.files);
  assert.deepEqual(web.branches.main!.protection, { required_approving_review_count: 1, require_pull_request: true });
  assert.equal(web.issues[1]!.user, 'ghost');
});

test('unknown repository makes every predicate false (counts see zero)', () => {
  assert.equal(run('prMerged', { repo: 'acme/api', number: 1 }), false);
  assert.equal(run('issueExists', { repo: 'acme/api' }), false);
  assert.equal(run('fileExists', { repo: 'acme/api', path: 'README.md' }), false);
  assert.equal(run('issueCount', { repo: 'acme/api', equals: 0 }), true);
  assert.equal(run('prCount', { repo: 'acme/api', min: 1 }), false);
});

test('prMerged: by number or head, merge method', () => {
  assert.equal(run('prMerged', { repo: R, number: 7 }), true);
  assert.equal(run('prMerged', { repo: R, number: 7, merge_method: 'squash' }), true);
  assert.equal(run('prMerged', { repo: R, number: 7, merge_method: 'merge' }), false);
  assert.equal(run('prMerged', { repo: R, head: 'release/2.3' }), true);
  assert.equal(run('prMerged', { repo: R, number: 4 }), false);
  assert.equal(run('prMerged', { repo: R, head: 'fix/login' }), false);
  assert.equal(run('prMerged', { repo: R, number: 99 }), false);
});

test('prOpen and prClosed distinguish open, closed-unmerged and merged', () => {
  assert.equal(run('prOpen', { repo: R, number: 4 }), true);
  assert.equal(run('prOpen', { repo: R, number: 5, draft: true }), true);
  assert.equal(run('prOpen', { repo: R, number: 5, draft: false }), false);
  assert.equal(run('prOpen', { repo: R, number: 7 }), false);
  assert.equal(run('prOpen', { repo: R, head: 'owner:fix/login', base: 'main' }), true);
  assert.equal(run('prOpen', { repo: R, head: 'fix/login', base: 'develop' }), false);
  assert.equal(run('prClosed', { repo: R, number: 6 }), true);
  assert.equal(run('prClosed', { repo: R, number: 7 }), false);
  assert.equal(run('prClosed', { repo: R, number: 4 }), false);
});

test('prExists: filters and state', () => {
  assert.equal(run('prExists', { repo: R, head: 'fix/login', base: 'main', title_contains: 'LOGIN redirect', state: 'open' }), true);
  assert.equal(run('prExists', { repo: R, title_contains: ['login', 'header'] }), false);
  assert.equal(run('prExists', { repo: R, body_contains: 'fixes #1', author: 'ALICE' }), true);
  assert.equal(run('prExists', { repo: R, head: 'fix/login', state: 'closed' }), true);
  assert.equal(run('prExists', { repo: R, head: 'release/2.3', state: 'closed' }), false);
  assert.equal(run('prExists', { repo: R, head: 'release/2.3', state: 'merged' }), true);
  assert.equal(run('prExists', { repo: R, draft: true, title_contains: 'header' }), true);
  assert.equal(run('prExists', { repo: R, head: 'nope' }), false);
});

test('prHasReview: any review vs latest per reviewer', () => {
  assert.equal(run('prHasReview', { repo: R, number: 4, state: 'APPROVED', user: 'bob' }), true);
  assert.equal(run('prHasReview', { repo: R, number: 4, state: 'CHANGES_REQUESTED' }), true);
  assert.equal(run('prHasReview', { repo: R, number: 4, state: 'CHANGES_REQUESTED', latest: true }), false);
  // a later COMMENTED review does not replace carol's approval
  assert.equal(run('prHasReview', { repo: R, number: 4, state: 'APPROVED', user: 'carol', latest: true }), true);
  assert.equal(run('prHasReview', { repo: R, number: 4, state: 'APPROVED', body_contains: 'lgtm' }), true);
  assert.equal(run('prHasReview', { repo: R, number: 4, state: 'APPROVED', user: 'dave' }), false);
  assert.equal(run('prHasReview', { repo: R, number: 5, state: 'APPROVED' }), false);
  const latest = latestReviews(state.repositories['Acme/Web']!.pull_requests[0]!);
  assert.deepEqual([...latest.entries()], [['bob', 'APPROVED'], ['carol', 'APPROVED']]);
});

test('prHasLabel, prHasComment, prReviewRequested', () => {
  assert.equal(run('prHasLabel', { repo: R, number: 4, label: 'Needs-Review' }), true);
  assert.equal(run('prHasLabel', { repo: R, number: 4, label: 'bug' }), false);
  assert.equal(run('prHasComment', { repo: R, number: 4, contains: 'thanks' }), true);
  assert.equal(run('prHasComment', { repo: R, number: 4, contains: 'thanks', user: 'carol' }), false);
  assert.equal(run('prReviewRequested', { repo: R, number: 4, reviewer: 'carol' }), true);
  assert.equal(run('prReviewRequested', { repo: R, number: 4, reviewer: 'bob' }), true);
  assert.equal(run('prReviewRequested', { repo: R, number: 4, reviewer: 'dave' }), false);
});

test('prCount: states and bounds', () => {
  assert.equal(run('prCount', { repo: R, state: 'open', equals: 2 }), true);
  assert.equal(run('prCount', { repo: R, state: 'merged', equals: 1 }), true);
  assert.equal(run('prCount', { repo: R, state: 'closed', equals: 1 }), true);
  assert.equal(run('prCount', { repo: R, head: 'fix/login', min: 3 }), false);
  assert.equal(run('prCount', { repo: R, head: 'fix/login', max: 2, min: 2 }), true);
  assert.equal(run('prCount', { repo: R, label: 'needs-review' }), true);
  assert.equal(run('prCount', { repo: R, author: 'zed' }), false);
});

test('issueExists: text, labels, assignees, state, milestone, excludes pull requests', () => {
  assert.equal(run('issueExists', { repo: R, title_contains: 'redirects to 404', labels: ['bug'], assignees: ['bob'] }), true);
  assert.equal(run('issueExists', { repo: R, title_contains: 'redirects to 404', labels: ['bug', 'docs'] }), false);
  assert.equal(run('issueExists', { repo: R, title_contains: 'typo', state: 'open' }), false);
  assert.equal(run('issueExists', { repo: R, title_contains: 'typo', state: 'closed' }), true);
  assert.equal(run('issueExists', { repo: R, milestone: 'V2.5' }), true);
  assert.equal(run('issueExists', { repo: R, milestone: 3, title_contains: 'typo' }), false);
  assert.equal(run('issueExists', { repo: R, title_contains: 'Fix login redirect' }), false);
  assert.equal(run('issueExists', { repo: R, body_contains: ['steps', '/login'] }), true);
});

test('issueOpen, issueClosed with reason and duplicate', () => {
  assert.equal(run('issueOpen', { repo: R, number: 1 }), true);
  assert.equal(run('issueOpen', { repo: R, number: 2 }), false);
  assert.equal(run('issueOpen', { repo: R, number: 4 }), false);
  assert.equal(run('issueClosed', { repo: R, number: 2 }), true);
  assert.equal(run('issueClosed', { repo: R, number: 2, state_reason: 'completed' }), true);
  assert.equal(run('issueClosed', { repo: R, number: 2, state_reason: 'not_planned' }), false);
  assert.equal(run('issueClosed', { repo: R, number: 3, state_reason: 'duplicate', duplicate_of: 1 }), true);
  assert.equal(run('issueClosed', { repo: R, number: 3, duplicate_of: 2 }), false);
  assert.equal(run('issueClosed', { repo: R, number: 1 }), false);
  assert.equal(run('issueClosed', { repo: R, number: 42 }), false);
});

test('issueHasLabel, issueHasComment, issueAssigned, issueText, issueMilestone (issues and PRs)', () => {
  assert.equal(run('issueHasLabel', { repo: R, number: 1, label: 'bug' }), true);
  assert.equal(run('issueHasLabel', { repo: R, number: 4, label: 'needs-review' }), true);
  assert.equal(run('issueHasLabel', { repo: R, number: 1, label: 'docs' }), false);
  assert.equal(run('issueHasComment', { repo: R, number: 1, contains: 'safari' }), true);
  assert.equal(run('issueHasComment', { repo: R, number: 1, contains: 'safari', user: 'bob' }), false);
  assert.equal(run('issueHasComment', { repo: R, number: 4, contains: 'thanks for' }), true);
  assert.equal(run('issueAssigned', { repo: R, number: 1, assignee: 'bob' }), true);
  assert.equal(run('issueAssigned', { repo: R, number: 1, assignee: 'alice' }), false);
  assert.equal(run('issueText', { repo: R, number: 1, title_equals: 'login redirects  to 404' }), true);
  assert.equal(run('issueText', { repo: R, number: 1, title_equals: 'Login redirects' }), false);
  assert.equal(run('issueText', { repo: R, number: 1, title_contains: '404', body_contains: 'steps' }), true);
  assert.equal(run('issueText', { repo: R, number: 1, body_contains: 'chrome' }), false);
  assert.equal(run('issueText', { repo: R, number: 99 }), false);
  assert.equal(run('issueMilestone', { repo: R, number: 1, milestone: 3 }), true);
  assert.equal(run('issueMilestone', { repo: R, number: 1, milestone: 'v2.5' }), true);
  assert.equal(run('issueMilestone', { repo: R, number: 1, milestone: 'v2.6' }), false);
  assert.equal(run('issueMilestone', { repo: R, number: 2, milestone: 3 }), false);
});

test('issueCount: filters and bounds, pull requests excluded', () => {
  assert.equal(run('issueCount', { repo: R, equals: 3 }), true);
  assert.equal(run('issueCount', { repo: R, state: 'open', equals: 1 }), true);
  assert.equal(run('issueCount', { repo: R, state: 'closed', min: 2, max: 2 }), true);
  assert.equal(run('issueCount', { repo: R, labels: ['bug'], assignee: 'bob', equals: 1 }), true);
  assert.equal(run('issueCount', { repo: R, labels: ['enhancement'] }), false);
  assert.equal(run('issueCount', { repo: R, title_contains: 'typo', max: 0 }), false);
});

test('branchExists is exact', () => {
  assert.equal(run('branchExists', { repo: R, branch: 'fix/login' }), true);
  assert.equal(run('branchExists', { repo: R, branch: 'Fix/Login' }), false);
  assert.equal(run('branchExists', { repo: R, branch: 'feature/header' }), false);
});

test('fileExists, fileContains, fileEquals: default branch, paths, case, newlines', () => {
  assert.equal(run('fileExists', { repo: R, path: 'src/app.ts' }), true);
  assert.equal(run('fileExists', { repo: R, path: '/src/app.ts', branch: 'main' }), true);
  assert.equal(run('fileExists', { repo: R, path: 'src/login.ts' }), false);
  assert.equal(run('fileExists', { repo: R, path: 'src/login.ts', branch: 'fix/login' }), true);
  assert.equal(run('fileExists', { repo: R, path: 'src/login.ts', branch: 'nope' }), false);
  assert.equal(run('fileContains', { repo: R, path: 'src/app.ts', contains: '"2.4.0"' }), true);
  assert.equal(run('fileContains', { repo: R, path: 'src/app.ts', contains: ['Version', '2.5.0'] }), false);
  assert.equal(run('fileContains', { repo: R, path: 'src/app.ts', contains: 'version' }), false);
  assert.equal(run('fileContains', { repo: R, path: 'src/app.ts', contains: 'version', case_sensitive: false }), true);
  assert.equal(run('fileContains', { repo: R, path: 'missing.ts', contains: 'x' }), false);
  assert.equal(run('fileEquals', { repo: R, path: 'README.md', content: '# Web' }), true);
  assert.equal(run('fileEquals', { repo: R, path: 'README.md', content: '# Web\n' }), true);
  assert.equal(run('fileEquals', { repo: R, path: 'README.md', content: '# Web\n\n' }), false);
  assert.equal(run('fileEquals', { repo: R, path: 'README.md', content: '# web' }), false);
});

test('commitExists: per branch, message and author', () => {
  assert.equal(run('commitExists', { repo: R, message_contains: 'bump version' }), true);
  assert.equal(run('commitExists', { repo: R, message_contains: 'bump version', author: 'Carol' }), true);
  assert.equal(run('commitExists', { repo: R, message_contains: 'bump version', author: 'bob' }), false);
  assert.equal(run('commitExists', { repo: R, message_contains: 'login redirect' }), false);
  assert.equal(run('commitExists', { repo: R, message_contains: 'login redirect', branch: 'fix/login' }), true);
});

// ---- task files and state examples of this namespace

function evaluate(registry: Registry, predicate: Predicate, states: Record<string, unknown>, answer: string | undefined): boolean {
  if ('all' in predicate && Array.isArray(predicate.all)) return (predicate.all as Predicate[]).every((p) => evaluate(registry, p, states, answer));
  if ('any' in predicate && Array.isArray(predicate.any)) return (predicate.any as Predicate[]).some((p) => evaluate(registry, p, states, answer));
  if ('not' in predicate && !Array.isArray(predicate.not)) return !evaluate(registry, predicate.not as Predicate, states, answer);
  const [key, args] = Object.entries(predicate)[0]!;
  const [ns, name] = splitQualified(key);
  const plugin = registry.get(ns)!.plugin!;
  return plugin.predicates[name!]!(args, { state: plugin.normalizeState(states[ns]), answer }).value;
}

function leaves(predicate: Predicate): Array<[string, unknown]> {
  if ('all' in predicate && Array.isArray(predicate.all)) return (predicate.all as Predicate[]).flatMap(leaves);
  if ('any' in predicate && Array.isArray(predicate.any)) return (predicate.any as Predicate[]).flatMap(leaves);
  if ('not' in predicate && !Array.isArray(predicate.not)) return leaves(predicate.not as Predicate);
  return Object.entries(predicate);
}

function checkTasks(dir: string): void {
  test(`tasks in ${dir} are well-formed and fail on their initial state`, async () => {
    const registry = await loadRegistry();
    const ajv = createAjv();
    const validateTask = ajv.compile(JSON.parse(readFileSync(join(schemasDir(), 'task.schema.json'), 'utf8')));
    const files = readdirSync(join(schemasDir(), '..', 'test', 'fixtures', 'tasks', dir)).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 2, 'at least two tasks');
    for (const file of files) {
      const where = `${dir}/${file}`;
      const task = JSON.parse(readFileSync(join(schemasDir(), '..', 'test', 'fixtures', 'tasks', dir, file), 'utf8')) as Task;
      assert.ok(validateTask(task), `${where}: ${ajv.errorsText(validateTask.errors)}`);
      assert.equal(`${task.id}.json`, file, `${where}: id matches the file name`);
      for (const [ns, state] of Object.entries(task.initial_state)) {
        const info = registry.get(ns)!;
        assert.ok(info.validateState(state), `${where}: initial_state.${ns}: ${ajv.errorsText(info.validateState.errors)}`);
      }
      for (const [key, args] of leaves(task.success_predicate)) {
        const predicate = registry.predicate(key);
        assert.ok(predicate, `${where}: unknown predicate ${key}`);
        assert.ok(predicate.validateArguments(args), `${where}: ${key} ${ajv.errorsText(predicate.validateArguments.errors)}`);
      }
      for (const sequence of [...task.reference_solutions, ...(task.counterexamples ?? [])]) {
        sequence.forEach((step, i) => {
          if ('answer' in step) {
            assert.equal(i, sequence.length - 1, `${where}: the answer is the last step`);
            return;
          }
          assert.ok(task.available_tools.includes(step.tool), `${where}: ${step.tool} is not available`);
          const tool = registry.tool(step.tool);
          assert.ok(tool, `${where}: unknown tool ${step.tool}`);
          assert.ok(tool.validateInput(step.arguments ?? {}), `${where}: ${step.tool} ${ajv.errorsText(tool.validateInput.errors)}`);
        });
      }
      const states = task.initial_state as Record<string, unknown>;
      assert.equal(evaluate(registry, task.success_predicate, states, undefined), false, `${where}: passes on the initial state`);
      // Information tasks: the reference answers pass the answer checks, the counterexample answers do not.
      const final = (seq: unknown[]): string | undefined => {
        const last = seq[seq.length - 1] as { answer?: string } | undefined;
        return last?.answer;
      };
      if (leaves(task.success_predicate).every(([k]) => k.startsWith('answer.'))) {
        for (const seq of task.reference_solutions) assert.equal(evaluate(registry, task.success_predicate, states, final(seq)), true, `${where}: reference answer fails`);
        for (const seq of task.counterexamples ?? []) assert.equal(evaluate(registry, task.success_predicate, states, final(seq)), false, `${where}: counterexample answer passes`);
      }
    }
  });
}

function checkStateExamples(namespace: string): void {
  test(`${namespace} state_schema examples are valid states`, async () => {
    const info = (await loadRegistry()).get(namespace)!;
    const examples = (info.server.state_schema.examples ?? []) as unknown[];
    assert.ok(examples.length > 0);
    for (const example of examples) assert.ok(info.validateState(example), JSON.stringify(info.validateState.errors));
    assert.ok(info.validateState({}), 'the empty object is a valid state');
  });

  // The simulation harness stores normalizeState's output as the sandbox state and snapshots it back through
  // normalizeState, so a normalised state must itself be schema-valid and normalising must be idempotent.
  test(`${namespace} normalised states are schema-valid and normalising is idempotent`, async () => {
    const registry = await loadRegistry();
    const info = registry.get(namespace)!;
    const taskDir = join(schemasDir(), '..', 'test', 'fixtures', 'tasks', namespace);
    const seeds: unknown[] = [undefined, {}, ...((info.server.state_schema.examples ?? []) as unknown[])];
    for (const file of readdirSync(taskDir).filter((f) => f.endsWith('.json'))) {
      seeds.push((JSON.parse(readFileSync(join(taskDir, file), 'utf8')) as Task).initial_state[namespace]);
    }
    for (const seed of seeds) {
      const once = JSON.parse(JSON.stringify(info.plugin!.normalizeState(seed)));
      assert.ok(info.validateState(once), `${JSON.stringify(info.validateState.errors)}`);
      assert.deepEqual(JSON.parse(JSON.stringify(info.plugin!.normalizeState(once))), once);
    }
  });
}

checkTasks('github');
checkStateExamples('github');
