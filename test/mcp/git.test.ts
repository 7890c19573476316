import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Repo } from '../../server/src/mcp/git/state.ts';
import type { GitState } from '../../server/src/mcp/git/state.ts';

let info: NamespaceInfo;
before(async () => {
  info = (await loadRegistry()).get('git')!;
});

function check(name: string, args: Record<string, unknown>, state: unknown): boolean {
  const predicate = info.predicates.get(name);
  assert.ok(predicate, `no predicate ${name}`);
  assert.ok(predicate.validateArguments(args), `${name} arguments ${JSON.stringify(args)}: ${JSON.stringify(predicate.validateArguments.errors)}`);
  if (state !== undefined) assert.ok(info.validateState(state), `state: ${JSON.stringify(info.validateState.errors)}`);
  const verdict = info.plugin!.predicates[name]!(args, { state: info.plugin!.normalizeState(state), answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
}

/**
 *   c1 ── c2 ── c4 (main, merge of feature) ── HEAD on main
 *     \── c3 ──/ (feature)
 *   c5 on topic from c2; tags v1.0 → c1 (lightweight), v2.0 → c4 (annotated)
 */
const repo = {
  commits: [
    { id: 'c1', message: 'Initial commit', files: { 'README.md': '# Demo\n', 'src/app.js': 'v1\n' } },
    { id: 'c2', message: 'Fix typo in README', files: { 'README.md': '# Demo app\n' } },
    { id: 'c3', message: 'Add login form', parents: ['c1'], author: 'Grace Hopper <grace@example.com>', files: { 'src/login.js': 'login\n', 'src/app.js': null } },
    { id: 'c4', message: "Merge branch 'feature'", parents: ['c2', 'c3'], files: { 'src/login.js': 'login\n', 'src/app.js': null } },
    { id: 'c5', message: 'WIP topic', parents: ['c2'], files: { 'topic.txt': 'wip\n' } },
  ],
  branches: { main: 'c4', feature: 'c3', topic: 'c5' },
  tags: { 'v1.0': 'c1', 'v2.0': { commit: 'c4', message: 'Release 2.0' } },
  head: 'main',
};

const dirty = {
  commits: [{ id: 'c1', message: 'Initial', files: { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n' } }],
  staged: { 'a.txt': 'a2\n', 'c.txt': null },
  working_tree: { 'a.txt': 'a3\n', 'b.txt': null, 'new.txt': 'untracked\n' },
};

describe('git state', () => {
  test('schema: example, defaults, invalid shapes', () => {
    assert.ok(info.validateState(repo));
    for (const example of info.server.state_schema.examples as unknown[]) assert.ok(info.validateState(example), 'state_schema example');
    assert.ok(info.validateState({}));
    assert.equal(info.validateState({ commits: [{ id: 'c1' }] }), false, 'a commit needs a message');
    assert.equal(info.validateState({ commits: [{ id: 'has space', message: 'm' }] }), false);
    assert.equal(info.validateState({ tags: { v1: { message: 'no commit' } } }), false);
  });

  test('normalizeState: linear parents, default branch, dates, tag forms', () => {
    const s = info.plugin!.normalizeState({ commits: [{ id: 'a', message: 'one' }, { id: 'b', message: 'two' }], tags: { t: 'a' } }) as GitState;
    assert.deepEqual(s.commits[1]!.parents, ['a']);
    assert.deepEqual(s.commits[0]!.parents, []);
    assert.deepEqual(s.branches, { main: 'b' });
    assert.equal(s.head, 'main');
    assert.equal(s.commits[1]!.date, '2024-01-01T01:00:00.000Z');
    assert.deepEqual(s.tags.t, { commit: 'a', message: null });
    assert.deepEqual(info.plugin!.normalizeState(undefined), { commits: [], branches: {}, tags: {}, head: 'main', staged: {}, working_tree: {} });
  });

  test('Repo: ref resolution and trees', () => {
    const r = new Repo(info.plugin!.normalizeState(repo) as GitState);
    assert.equal(r.resolve('HEAD'), 'c4');
    assert.equal(r.resolve('HEAD~1'), 'c2');
    assert.equal(r.resolve('main^'), 'c2');
    assert.equal(r.resolve('HEAD~2'), 'c1');
    assert.equal(r.resolve('HEAD~9'), undefined);
    assert.equal(r.resolve('v2.0'), 'c4');
    assert.equal(r.resolve('nope'), undefined);
    assert.deepEqual([...r.tree('c4').keys()].sort(), ['README.md', 'src/login.js']);
    assert.equal(r.tree('c3').get('README.md'), '# Demo\n');
  });
});

describe('git predicates', () => {
  test('branchExists, currentBranch', () => {
    assert.equal(check('branchExists', { name: 'feature' }, repo), true);
    assert.equal(check('branchExists', { name: 'Feature' }, repo), false);
    assert.equal(check('currentBranch', { name: 'main' }, repo), true);
    assert.equal(check('currentBranch', { name: 'feature' }, repo), false);
    assert.equal(check('currentBranch', { name: 'c2' }, { ...repo, head: 'c2' }), false, 'a detached HEAD is on no branch');
    assert.equal(check('currentBranch', { name: 'main' }, undefined), true, 'an empty repository is on its unborn default branch');
  });

  test('branchPointsTo', () => {
    assert.equal(check('branchPointsTo', { branch: 'main', ref: 'v2.0' }, repo), true);
    assert.equal(check('branchPointsTo', { branch: 'feature', ref: 'c3' }, repo), true);
    assert.equal(check('branchPointsTo', { branch: 'feature', ref: 'main' }, repo), false);
    assert.equal(check('branchPointsTo', { branch: 'release', ref: 'main' }, repo), false, 'missing branch');
    assert.equal(check('branchPointsTo', { branch: 'main', ref: 'nowhere' }, repo), false, 'unresolvable ref');
  });

  test('tagExists: at, annotated, message', () => {
    assert.equal(check('tagExists', { name: 'v1.0' }, repo), true);
    assert.equal(check('tagExists', { name: 'v1.0', at: 'c1' }, repo), true);
    assert.equal(check('tagExists', { name: 'v1.0', at: 'main' }, repo), false);
    assert.equal(check('tagExists', { name: 'v2.0', at: 'main', annotated: true }, repo), true);
    assert.equal(check('tagExists', { name: 'v1.0', annotated: true }, repo), false);
    assert.equal(check('tagExists', { name: 'v2.0', message_contains: 'Release 2' }, repo), true);
    assert.equal(check('tagExists', { name: 'v1.0', message_contains: 'Release' }, repo), false);
    assert.equal(check('tagExists', { name: 'v3.0' }, repo), false);
  });

  test('commitExists: filters and branch scope', () => {
    assert.equal(check('commitExists', { message_contains: 'login' }, repo), true);
    assert.equal(check('commitExists', { branch: 'main', message_contains: 'login form' }, repo), true, 'merged into main');
    assert.equal(check('commitExists', { branch: 'feature', message_contains: 'typo' }, repo), false, 'c2 is not on feature');
    assert.equal(check('commitExists', { message: 'fix typo in readme' }, repo), false);
    assert.equal(check('commitExists', { message: 'fix typo in readme', case_insensitive: true }, repo), true);
    assert.equal(check('commitExists', { author_contains: 'grace@' }, repo), true);
    assert.equal(check('commitExists', { branch: 'main', merge: true }, repo), true);
    assert.equal(check('commitExists', { branch: 'feature', merge: true }, repo), false);
    assert.equal(check('commitExists', { touches: 'src/app.js', message_contains: 'login' }, repo), true, 'deletions count as touching');
    assert.equal(check('commitExists', { touches: 'README.md', message_contains: 'login' }, repo), false);
    assert.equal(check('commitExists', { message_contains: 'WIP' }, repo), true);
    assert.equal(check('commitExists', { message_contains: 'WIP' }, { ...repo, branches: { main: 'c4', feature: 'c3' } }), false, 'unreachable commits do not count');
  });

  test('commitAt: latest commit checks', () => {
    assert.equal(check('commitAt', { ref: 'main', merge: true }, repo), true);
    assert.equal(check('commitAt', { ref: 'HEAD~1', message: 'Fix typo in README' }, repo), true);
    assert.equal(check('commitAt', { ref: 'main', message_contains: 'typo' }, repo), false);
    assert.equal(check('commitAt', { ref: 'main', touches: 'src/login.js' }, repo), true, 'a merge touches what it brings in against its first parent');
    assert.equal(check('commitAt', { ref: 'HEAD', message_contains: 'x' }, undefined), false, 'no commits');
  });

  test('commitCount', () => {
    assert.equal(check('commitCount', { equals: 4 }, repo), true, 'HEAD: c1 c2 c3 c4');
    assert.equal(check('commitCount', { branch: 'feature', equals: 2 }, repo), true);
    assert.equal(check('commitCount', { branch: 'main', message_contains: 'LOGIN', equals: 1 }, repo), true);
    assert.equal(check('commitCount', { branch: 'topic', max: 2 }, repo), false);
    assert.equal(check('commitCount', { branch: 'ghost', equals: 0 }, repo), true, 'a missing branch has no commits');
  });

  test('branchContainsCommit, branchMerged', () => {
    assert.equal(check('branchContainsCommit', { branch: 'main', ref: 'c3' }, repo), true);
    assert.equal(check('branchContainsCommit', { branch: 'feature', ref: 'c2' }, repo), false);
    assert.equal(check('branchContainsCommit', { branch: 'main', ref: 'main' }, repo), true, 'the tip itself');
    assert.equal(check('branchMerged', { source: 'feature', target: 'main' }, repo), true);
    assert.equal(check('branchMerged', { source: 'topic', target: 'main' }, repo), false);
    assert.equal(check('branchMerged', { source: 'main', target: 'feature' }, repo), false);
    assert.equal(check('branchMerged', { source: 'ghost', target: 'main' }, repo), false);
  });

  test('fileAtRef', () => {
    assert.equal(check('fileAtRef', { ref: 'main', path: 'README.md', contains: 'Demo app' }, repo), true);
    assert.equal(check('fileAtRef', { ref: 'v1.0', path: 'README.md', equals: '# Demo\n' }, repo), true);
    assert.equal(check('fileAtRef', { ref: 'v1.0', path: 'README.md', equals: '# Demo', trim: true }, repo), true);
    assert.equal(check('fileAtRef', { ref: 'v1.0', path: 'README.md', equals: '# Demo' }, repo), false);
    assert.equal(check('fileAtRef', { ref: 'main', path: 'src/app.js' }, repo), false, 'deleted by the merge');
    assert.equal(check('fileAtRef', { ref: 'feature', path: './src/login.js' }, repo), true);
  });

  test('fileInWorkingTree', () => {
    assert.equal(check('fileInWorkingTree', { path: 'a.txt', equals: 'a3\n' }, dirty), true, 'working tree over index over HEAD');
    assert.equal(check('fileInWorkingTree', { path: 'b.txt' }, dirty), false, 'deleted in the working tree');
    assert.equal(check('fileInWorkingTree', { path: 'c.txt' }, dirty), false, 'staged deletion');
    assert.equal(check('fileInWorkingTree', { path: 'new.txt', contains: 'untracked' }, dirty), true);
  });

  test('workingTreeClean', () => {
    assert.equal(check('workingTreeClean', {}, repo), true);
    assert.equal(check('workingTreeClean', {}, dirty), false);
    const untrackedOnly = { ...repo, working_tree: { 'scratch.txt': 'x' } };
    assert.equal(check('workingTreeClean', {}, untrackedOnly), false);
    assert.equal(check('workingTreeClean', { ignore_untracked: true }, untrackedOnly), true);
    assert.equal(check('workingTreeClean', {}, { ...repo, working_tree: { 'README.md': '# Demo app\n' } }), true, 'a change back to the same content is no change');
  });

  test('stagedFile', () => {
    assert.equal(check('stagedFile', { path: 'a.txt' }, dirty), true);
    assert.equal(check('stagedFile', { path: 'a.txt', contains: 'a2' }, dirty), true);
    assert.equal(check('stagedFile', { path: 'a.txt', contains: 'a3' }, dirty), false, 'the staged content, not the working tree');
    assert.equal(check('stagedFile', { path: 'c.txt', deleted: true }, dirty), true);
    assert.equal(check('stagedFile', { path: 'a.txt', deleted: true }, dirty), false);
    assert.equal(check('stagedFile', { path: 'b.txt' }, dirty), false, 'only deleted in the working tree');
  });

  test('unstagedChange', () => {
    assert.equal(check('unstagedChange', { path: 'a.txt' }, dirty), true);
    assert.equal(check('unstagedChange', { path: 'b.txt' }, dirty), true);
    assert.equal(check('unstagedChange', { path: 'new.txt' }, dirty), true);
    assert.equal(check('unstagedChange', { path: 'c.txt' }, dirty), false, 'the deletion is staged');
    assert.equal(check('unstagedChange', { path: 'README.md' }, repo), false);
  });
});

describe('git tasks against hand-made end states', () => {
  function judge(predicate: Record<string, unknown>, state: unknown): boolean {
    if ('all' in predicate) return (predicate.all as Record<string, unknown>[]).every((p) => judge(p, state));
    if ('any' in predicate) return (predicate.any as Record<string, unknown>[]).some((p) => judge(p, state));
    if ('not' in predicate) return !judge(predicate.not as Record<string, unknown>, state);
    const [qualified, args] = Object.entries(predicate)[0]!;
    return check(qualified.slice('git.'.length), args as Record<string, unknown>, state);
  }
  const load = (id: string) => JSON.parse(readFileSync(join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'git', `${id}.json`), 'utf8'));

  test('git-merge-and-tag-001: fast-forward or merge commit pass; tagging before merging fails', () => {
    const task = load('git-merge-and-tag-001');
    const initial = task.initial_state.git;
    assert.equal(judge(task.success_predicate, initial), false);
    const fastForward = { ...initial, branches: { main: 'c4', 'feature/login': 'c4' }, tags: { ...initial.tags, 'v1.1.0': 'c4' } };
    assert.equal(judge(task.success_predicate, fastForward), true);
    const mergeCommit = {
      ...initial,
      commits: [...initial.commits, { id: 'a1b2c3d4e5f6', message: "Merge branch 'feature/login'", parents: ['c2', 'c4'], files: { 'src/login.js': 'validate();\nlogin();\n' } }],
      branches: { main: 'a1b2c3d4e5f6', 'feature/login': 'c4' },
      tags: { ...initial.tags, 'v1.1.0': { commit: 'a1b2c3d4e5f6', message: 'Release 1.1.0' } },
    };
    assert.equal(judge(task.success_predicate, mergeCommit), true);
    const taggedFirst = { ...fastForward, tags: { ...initial.tags, 'v1.1.0': 'c2' } };
    assert.equal(judge(task.success_predicate, taggedFirst), false);
  });

  test('git-commit-readme-fix-001: committing debug.log too fails', () => {
    const task = load('git-commit-readme-fix-001');
    const initial = task.initial_state.git;
    assert.equal(judge(task.success_predicate, initial), false);
    const readme = initial.working_tree['README.md'];
    const good = { commits: [...initial.commits, { id: 'f00dfeedbeef', message: 'Fix install instructions\n', files: { 'README.md': readme } }], working_tree: { 'debug.log': 'trace: 42\n' } };
    assert.equal(judge(task.success_predicate, good), true);
    const all = { commits: [...initial.commits, { id: 'f00dfeedbeef', message: 'Fix install instructions', files: { 'README.md': readme, 'debug.log': 'trace: 42\n' } }] };
    assert.equal(judge(task.success_predicate, all), false);
  });

  test('git-hotfix-branch-001: branching from main fails', () => {
    const task = load('git-hotfix-branch-001');
    const initial = task.initial_state.git;
    assert.equal(judge(task.success_predicate, initial), false);
    assert.equal(judge(task.success_predicate, { ...initial, branches: { main: 'c2', 'hotfix/1.0.1': 'c1' }, head: 'hotfix/1.0.1' }), true);
    assert.equal(judge(task.success_predicate, { ...initial, branches: { main: 'c2', 'hotfix/1.0.1': 'c2' }, head: 'hotfix/1.0.1' }), false);
    assert.equal(judge(task.success_predicate, { ...initial, branches: { main: 'c2', 'hotfix/1.0.1': 'c1' }, head: 'main' }), false);
  });
});
