/**
 * The git namespace's real server: seeding builds a repository with the git CLI that the snapshot reads back
 * as the same state; served by the built CLI (`mcpbench serve git`) to a real MCP client, its tools/list is
 * the namespace file's, every task's reference solutions leave a snapshot on which the predicate holds and
 * its counterexamples one on which it does not, and refusals are error results that leave the server up.
 */
import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { loadRegistry, type NamespaceInfo, type Registry } from '../../server/src/mcp/registry.ts';
import { META_FILE, REPO_DIR, runtime } from '../../server/src/mcp/git/runtime.ts';
import { normalizeState, type GitState } from '../../server/src/mcp/git/state.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import type { SolutionStep, Task } from '../../server/src/tasks/model.ts';

const cli = join(__dirname, '..', '..', 'dist', 'cli.js');
const tasksDir = join(__dirname, '..', '..', 'test', 'fixtures', 'tasks', 'git');

let registry: Registry;
let info: NamespaceInfo;
before(async () => {
  registry = await loadRegistry();
  info = registry.get('git')!;
});

function tasks(): Task[] {
  return collectTaskFiles([tasksDir]).map((f) => JSON.parse(readFileSync(f, 'utf8')) as Task);
}

function sandbox(): string {
  return mkdtempSync(join(tmpdir(), 'mcpbench-git-'));
}

/** c1 ── c2 ── c4 (main, merge) ; c1 ── c3 (feature) ; c2 ── c5 (topic); a lightweight and an annotated tag. */
const history = {
  commits: [
    { id: 'c1', message: 'Initial commit', files: { 'README.md': '# Demo\n', 'src/app.js': 'v1\n' } },
    { id: 'c2', message: 'Fix typo in README', files: { 'README.md': '# Demo app\n' } },
    { id: 'c3', message: 'Add login form', parents: ['c1'], author: 'Grace Hopper <grace@example.com>', files: { 'src/login.js': 'login\n', 'src/app.js': null } },
    { id: 'c4', message: "Merge branch 'feature'", parents: ['c2', 'c3'], date: '2024-02-03T04:05:06Z', files: { 'src/login.js': 'login\n', 'src/app.js': null } },
    { id: 'c5', message: 'WIP topic', parents: ['c2'], files: { 'topic.txt': 'wip\n' } },
  ],
  branches: { main: 'c4', feature: 'c3', topic: 'c5' },
  tags: { 'v1.0': 'c1', 'v2.0': { commit: 'c4', message: 'Release 2.0\n\nNotes.' } },
  head: 'main',
};

const handMade: Record<string, unknown> = {
  'merges and tags': history,
  'staged, unstaged, deletions and untracked files': {
    commits: [{ id: 'c1', message: 'Initial', files: { 'a.txt': 'a\n', 'b.txt': 'b\n', 'c.txt': 'c\n', 'd/e.txt': 'e\n' } }],
    staged: { 'a.txt': 'a2\n', 'c.txt': null, 'staged-new.txt': 'n\n' },
    working_tree: { 'a.txt': 'a3\n', 'b.txt': null, 'new.txt': 'untracked\n', 'c.txt': 'back, untracked\n', 'dir with space/ü "q".txt': 'x' },
  },
  'detached HEAD, empty and multi-line messages': {
    commits: [
      { id: 'r1', message: 'Root with no files' },
      { id: 'r2', message: 'Subject\n\nBody line one.\nBody line two.\n', files: { 'x.txt': '' } },
      { id: 'r3', message: 'Empty change', files: {} },
    ],
    branches: { main: 'r3' },
    head: 'r2',
    working_tree: { 'x.txt': 'edited' },
  },
  'empty repository with staged and untracked files': {
    staged: { 'first.txt': 'hello\n' },
    working_tree: { 'scratch.txt': 'tmp\n' },
  },
  'unborn current branch beside an existing one': {
    commits: [{ id: 'c1', message: 'On other', files: { 'o.txt': 'o\n' } }],
    branches: { other: 'c1' },
    head: 'orphan',
  },
  'two roots and a merge of unrelated histories': {
    commits: [
      { id: 'a1', message: 'A', files: { 'a.txt': 'a\n' } },
      { id: 'b1', message: 'B', parents: [], files: { 'b.txt': 'b\n' } },
      { id: 'm', message: 'Merge', parents: ['a1', 'b1'], files: { 'b.txt': 'b\n' } },
    ],
    branches: { main: 'm', b: 'b1' },
  },
};

describe('seed and snapshot', () => {
  const cases = (): [string, unknown][] => [...Object.entries(handMade), ...tasks().map((t): [string, unknown] => [t.id, t.initial_state.git])];

  test('snapshot(seed(state)) gives back the state, valid against the schema', async () => {
    for (const [name, raw] of cases()) {
      assert.ok(info.validateState(raw), `${name}: the input is schema-valid`);
      const state = normalizeState(raw);
      const dir = sandbox();
      try {
        await runtime.seed(state, dir);
        const snap = await runtime.snapshot(dir);
        assert.ok(info.validateState(snap), `${name}: snapshot valid: ${JSON.stringify(info.validateState.errors)}`);
        assert.deepEqual(normalizeState(snap), state, name);
        assert.ok(existsSync(join(dir, META_FILE)) && existsSync(join(dir, REPO_DIR, '.git')), `${name}: layout`);
        // Seeding a snapshot again is a fixed point.
        await runtime.seed(normalizeState(snap), dir);
        assert.deepEqual(await runtime.snapshot(dir), snap, `${name}: reseeded`);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });

  test('seeding is reproducible: the same state gives the same commit hashes', async () => {
    const hashes: string[][] = [];
    for (let i = 0; i < 2; i++) {
      const dir = sandbox();
      try {
        await runtime.seed(normalizeState(history), dir);
        hashes.push((JSON.parse(readFileSync(join(dir, META_FILE), 'utf8')) as { seeded: { sha: string }[] }).seeded.map((s) => s.sha));
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
    assert.equal(hashes[0]!.length, 5);
    assert.deepEqual(hashes[0], hashes[1]);
  });

  test('seed refuses paths that leave the repository, unknown parents and line breaks in names', async () => {
    for (const bad of [
      { commits: [{ id: 'c1', message: 'm', files: { '../escape.txt': 'x' } }] },
      { commits: [{ id: 'c1', message: 'm', files: { '.git/config': 'x' } }] },
      { commits: [{ id: 'c1', message: 'm', parents: ['nope'] }] },
      { commits: [{ id: 'c1', message: 'm' }], working_tree: { 'a/../../x': 'x' } },
      { commits: [{ id: 'c1', message: 'm' }], branches: { 'x\nfeature export-marks=../escape.txt': 'c1' } },
      { commits: [{ id: 'c1', message: 'm', author: 'Eve\ncommitter x <y> 0 +0000 <e@x>' }] },
    ]) {
      const dir = sandbox();
      try {
        await assert.rejects(runtime.seed(normalizeState(bad), dir), /git state/);
        assert.equal(existsSync(join(dir, '..', 'escape.txt')), false);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    }
  });
});

async function serve(initialState: unknown) {
  const dir = sandbox();
  const stateFile = join(dir, 'initial.json');
  writeFileSync(stateFile, JSON.stringify(initialState ?? {}));
  const transport = new StdioClientTransport({ command: process.execPath, args: [cli, 'serve', 'git', '--state', stateFile, '--dir', dir], stderr: 'pipe' });
  const client = new Client({ name: 'mcpbench-test', version: '0' });
  await client.connect(transport);
  let closed = false;
  const close = async (): Promise<void> => {
    if (!closed) await client.close();
    closed = true;
  };
  return {
    client,
    dir,
    close,
    /** The end state, read out of band after the server has stopped. */
    /** The end state, normalised (the snapshot itself is checked against the schema first). */
    snapshot: async (): Promise<GitState> => {
      await close();
      const raw = await runtime.snapshot(dir);
      assert.ok(info.validateState(raw), `snapshot valid: ${JSON.stringify(info.validateState.errors)}`);
      return normalizeState(raw);
    },
    dispose: async (): Promise<void> => {
      await close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

type Served = Awaited<ReturnType<typeof serve>>;

async function call(server: Served, name: string, args: Record<string, unknown> = {}): Promise<{ text: string; isError: boolean }> {
  const result = await server.client.callTool({ name, arguments: args });
  const content = result.content as { type: string; text: string }[];
  return { text: content.map((c) => c.text).join('\n'), isError: result.isError === true };
}

async function replay(server: Served, steps: SolutionStep[]): Promise<{ answer: string | undefined; errors: string[] }> {
  let answer: string | undefined;
  const errors: string[] = [];
  for (const step of steps) {
    if ('answer' in step) {
      answer = step.answer;
      continue;
    }
    const { text, isError } = await call(server, step.tool.slice(step.tool.indexOf('.') + 1), step.arguments ?? {});
    if (isError) errors.push(`${step.tool}: ${text}`);
  }
  return { answer, errors };
}

function verdict(task: Task, state: unknown, answer: string | undefined): boolean | undefined {
  return evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, { git: state }, answer)).value;
}

describe('git server over MCP', () => {
  test('tools/list equals the namespace file', async () => {
    const server = await serve({});
    try {
      const { tools } = await server.client.listTools();
      assert.deepEqual(tools, JSON.parse(readFileSync(info.file, 'utf8')).tools);
    } finally {
      await server.dispose();
    }
  });

  test('reference solutions pass and counterexamples fail when replayed', async () => {
    const all = tasks();
    assert.ok(all.length > 0);
    for (const task of all) {
      assert.equal(verdict(task, task.initial_state.git, undefined), false, `${task.id}: fails before the agent acts`);
      const runs = [...task.reference_solutions.map((steps) => ({ steps, expected: true })), ...(task.counterexamples ?? []).map((steps) => ({ steps, expected: false }))];
      for (const [i, run] of runs.entries()) {
        const server = await serve(task.initial_state.git);
        try {
          const { answer, errors } = await replay(server, run.steps);
          if (run.expected) assert.deepEqual(errors, [], `${task.id}: reference solution ${i + 1} had refused calls`);
          await server.close();
          const state = await runtime.snapshot(server.dir);
          assert.ok(info.validateState(state), `${task.id}: snapshot valid: ${JSON.stringify(info.validateState.errors)}`);
          assert.equal(verdict(task, state, answer), run.expected, `${task.id}: run ${i + 1}`);
        } finally {
          await server.dispose();
        }
      }
    }
  });

  test('refusals are error results and the server keeps serving', async () => {
    const server = await serve(history);
    try {
      const missing = await call(server, 'git_checkout', { branch_name: 'no-such-branch' });
      assert.ok(missing.isError);
      assert.match(missing.text, /no-such-branch/);
      const nothing = await call(server, 'git_commit', { message: 'empty' });
      assert.ok(nothing.isError);
      assert.match(nothing.text, /nothing to commit/);
      const injected = await call(server, 'git_diff', { target: `--output=${join(server.dir, 'pwned')}` });
      assert.ok(injected.isError);
      assert.equal(existsSync(join(server.dir, 'pwned')), false);
      const elsewhere = await call(server, 'git_status', { repo_path: '/somewhere/else' });
      assert.ok(elsewhere.isError);
      assert.match(elsewhere.text, /repo_path/);
      const badArgs = await call(server, 'git_add', { files: [] });
      assert.ok(badArgs.isError);
      const exists = await call(server, 'git_create_branch', { branch_name: 'feature' });
      assert.ok(exists.isError);
      assert.match(exists.text, /already exists/);
      const unmerged = await call(server, 'git_delete_branch', { branch_name: 'topic' });
      assert.ok(unmerged.isError);
      assert.match(unmerged.text, /not fully merged/);
      const current = await call(server, 'git_delete_branch', { branch_name: 'main', force: true });
      assert.ok(current.isError);
      const status = await call(server, 'git_status', { repo_path: '.' });
      assert.equal(status.isError, false);
      assert.match(status.text, /^Repository status:\nOn branch main/);
      const absolute = await call(server, 'git_status', { repo_path: join(server.dir, REPO_DIR) });
      assert.equal(absolute.isError, false);
      assert.deepEqual(await server.snapshot(), normalizeState(history), 'nothing changed');
    } finally {
      await server.dispose();
    }
  });

  test('a conflicting merge is aborted, lists the files and leaves the repository unchanged', async () => {
    const initial = {
      commits: [
        { id: 'c1', message: 'Base', files: { 'f.txt': 'base\n', 'g.txt': 'g\n' } },
        { id: 'c2', message: 'Ours', files: { 'f.txt': 'ours\n' } },
        { id: 'c3', message: 'Theirs', parents: ['c1'], files: { 'f.txt': 'theirs\n' } },
      ],
      branches: { main: 'c2', other: 'c3' },
      working_tree: { 'g.txt': 'local edit\n' },
    };
    const server = await serve(initial);
    try {
      const merge = await call(server, 'git_merge', { branch_name: 'other' });
      assert.ok(merge.isError);
      assert.match(merge.text, /conflicts in f\.txt/);
      assert.deepEqual(await server.snapshot(), normalizeState(initial));
    } finally {
      await server.dispose();
    }
  });

  test('staging, committing, restoring, tagging: the snapshot records what git did, reproducibly', async () => {
    const initial = {
      commits: [{ id: 'c1', message: 'Initial', files: { 'keep.txt': 'k\n', 'gone.txt': 'g\n', 'edit.txt': 'e\n' } }],
      working_tree: { 'gone.txt': null, 'edit.txt': 'e2\n', 'new.txt': 'n\n', 'scratch.txt': 's\n' },
    };
    const steps: [string, Record<string, unknown>][] = [
      ['git_add', { files: ['gone.txt', 'new.txt', 'edit.txt'] }],
      ['git_reset', {}],
      ['git_add', { files: ['gone.txt', 'new.txt'] }],
      ['git_restore', { files: ['edit.txt'] }],
      ['git_commit', { message: 'Remove gone, add new' }],
      ['git_tag', { tag_name: 'v1', message: 'First release' }],
      ['git_create_branch', { branch_name: 'side', base_branch: 'main~1' }],
    ];
    const snapshots: GitState[] = [];
    for (let run = 0; run < 2; run++) {
      const server = await serve(initial);
      try {
        for (const [name, args] of steps) {
          const result = await call(server, name, args);
          assert.equal(result.isError, false, `${name}: ${result.text}`);
          if (name === 'git_commit') assert.match(result.text, /^Changes committed successfully with hash [0-9a-f]{40}$/);
        }
        const log = await call(server, 'git_log', { max_count: 1 });
        assert.match(log.text, /Author: MCPBench Agent <agent@mcpbench\.local>/);
        const show = await call(server, 'git_show', { revision: 'v1:new.txt' });
        assert.equal(show.text, 'n\n');
        snapshots.push(await server.snapshot());
      } finally {
        await server.dispose();
      }
    }
    const [first, second] = snapshots as [GitState, GitState];
    assert.deepEqual(first, second, 'the same calls give the same hashes and dates');
    const made = first.commits[1]!;
    assert.match(made.id, /^[0-9a-f]{12}$/);
    assert.deepEqual(made, {
      id: made.id,
      message: 'Remove gone, add new',
      author: 'MCPBench Agent <agent@mcpbench.local>',
      date: '2024-01-01T01:00:00.000Z',
      parents: ['c1'],
      files: { 'new.txt': 'n\n', 'gone.txt': null },
    });
    assert.deepEqual(first.branches, { main: made.id, side: 'c1' });
    assert.deepEqual(first.tags, { v1: { commit: made.id, message: 'First release' } });
    assert.deepEqual(first.staged, {});
    assert.deepEqual(first.working_tree, { 'scratch.txt': 's\n' }, 'restored edit.txt, untracked scratch.txt left alone');
  });

  test('merges: fast-forward by default, a merge commit with no_ff, an annotated tag merged by its commit', async () => {
    const initial = {
      commits: [
        { id: 'c1', message: 'Base', files: { 'a.txt': 'a\n' } },
        { id: 'c2', message: 'Feature', files: { 'b.txt': 'b\n' } },
      ],
      branches: { main: 'c1', feature: 'c2', other: 'c1' },
      tags: { rel: { commit: 'c2', message: 'Release' } },
    };
    const server = await serve(initial);
    try {
      assert.equal((await call(server, 'git_merge', { branch_name: 'rel' })).isError, false);
      assert.equal((await call(server, 'git_checkout', { branch_name: 'other' })).isError, false);
      const merge = await call(server, 'git_merge', { branch_name: 'feature', no_ff: true });
      assert.equal(merge.isError, false, merge.text);
      const state = await server.snapshot();
      assert.equal(state.branches.main, 'c2', 'fast-forward');
      const mergeCommit = state.commits.find((c) => c.id === state.branches.other)!;
      assert.deepEqual(mergeCommit.parents, ['c1', 'c2']);
      assert.equal(mergeCommit.message, "Merge branch 'feature'");
      assert.deepEqual(mergeCommit.files, { 'b.txt': 'b\n' });
      assert.equal(state.head, 'other');
    } finally {
      await server.dispose();
    }
  });
});
