/**
 * Every error class of server/src a user can see derives from McpbenchError with a code of its own; the few
 * that never leave the engine are listed here with the reason. A new `class X extends Error` fails this test
 * until it is one or the other.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import { test } from 'node:test';
import { pathToFileURL } from 'node:url';
import { EXIT_FINDINGS, EXIT_USAGE, isErrorCode, McpbenchError } from '../server/src/errors.ts';

const ROOT = resolve(import.meta.dirname, '..');
const SERVER = join(ROOT, 'server/src');

/** Errors that never reach a user as an error of the command, and why. */
const INTERNAL: Record<string, string> = {
  AgentError: 'an episode outcome: the run record keeps it with its own code (toRecord)',
  AgentSetupError: 'an episode outcome: the run record keeps it with its own code (toRecord)',
  ServerError: 'an episode outcome: the run record keeps it with its own code (toRecord)',
  ResponseProblem: "a model endpoint's bad answer inside the model loop, turned into an AgentError",
  SetupFailure: "the image agent's set-up step, turned into an AgentSetupError",
  GatewayClosed: 'the gateway closing under a running call',
  EpisodeInterrupted: 'the run was interrupted: the session ends without recording the episode',
  PgError: "the postgres namespace's database error, answered to the agent as a tool error",
  TimeoutError: "the postgres namespace's statement timeout, answered to the agent as a tool error",
  ToolError: 'a tool call the namespace refuses: the agent sees it as the tool result',
  GitError: 'a git tool call that failed: the agent sees it as the tool result',
  MissingComparisonState: 'a predicate evaluated without the state it compares to, caught by the judge',
};

interface ErrorClass {
  name: string;
  base: string;
  file: string;
}

function errorClasses(): ErrorClass[] {
  const found: ErrorClass[] = [];
  for (const entry of readdirSync(SERVER, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !entry.name.endsWith('.ts')) continue;
    const file = join(entry.parentPath, entry.name);
    for (const m of readFileSync(file, 'utf8').matchAll(/^(?:export\s+)?class\s+(\w+)\s+extends\s+(\w+)/gm)) found.push({ name: m[1]!, base: m[2]!, file });
  }
  return found;
}

/** The root a class derives from (`Error`, `McpbenchError`), following bases by name; undefined for non-errors. */
function rootOf(c: ErrorClass, all: ErrorClass[], seen = new Set<string>()): string | undefined {
  if (c.base === 'Error' || c.base === 'McpbenchError') return c.base;
  if (seen.has(c.name)) return undefined;
  seen.add(c.name);
  const base = all.find((b) => b.name === c.base && b.file === c.file) ?? all.find((b) => b.name === c.base);
  return base ? rootOf(base, all, seen) : undefined;
}

test('every error class of server/src derives from McpbenchError with a code, or is listed as internal', async () => {
  const all = errorClasses();
  const plain = all.filter((c) => c.name !== 'McpbenchError' && rootOf(c, all) === 'Error').map((c) => c.name);
  const unlisted = plain.filter((name) => !(name in INTERNAL));
  assert.deepEqual(unlisted, [], 'derive these from McpbenchError (server/src/errors.ts), or list them in INTERNAL with the reason');
  assert.deepEqual(Object.keys(INTERNAL).filter((name) => !plain.includes(name)), [], 'INTERNAL lists classes that are gone or derive from McpbenchError now');

  const userFacing = all.filter((c) => rootOf(c, all) === 'McpbenchError');
  assert.ok(userFacing.length >= 30, `${userFacing.length} user-facing error classes`);
  const codes = new Map<string, string>();
  for (const c of userFacing) {
    const module: Record<string, unknown> = await import(pathToFileURL(c.file).href);
    const kind = module[c.name];
    const where = `${relative(ROOT, c.file)}: ${c.name}`;
    assert.ok(typeof kind === 'function' && kind.prototype instanceof McpbenchError, `${where} is exported and derives from McpbenchError`);
    assert.ok(Object.hasOwn(kind, 'code'), `${where} declares its own code (static override readonly code)`);
    const code = (kind as typeof McpbenchError).code;
    assert.ok(isErrorCode(code), `${where}: code ${code} is kebab-case`);
    assert.equal(codes.get(code), undefined, `${where} and ${codes.get(code)} share the code ${code}`);
    codes.set(code, where);
    assert.ok([EXIT_FINDINGS, EXIT_USAGE].includes((kind as typeof McpbenchError).exitStatus), `${where}: exit status 1 or 2`);
  }
});

test('an error carries its code, exit status and place, and refines its code when it has finer ones', async () => {
  const { TaskLoadError } = await import('../server/src/tasks/load.ts');
  const { RunStoreError } = await import('../server/src/record/run-folder.ts');
  const { PathError } = await import('../server/src/tasks/files.ts');
  const start = { line: 2, character: 4 };
  const load = new TaskLoadError('1 task file(s) have lint errors', [{ uri: '/t.json', start, end: { line: 2, character: 9 }, severity: 'error', code: 'json-syntax', message: 'x', offset: 20, length: 5 }]);
  assert.deepEqual(load.toJson(), { code: 'task-load', message: '1 task file(s) have lint errors', exit_status: 1, file: '/t.json', line: 3, range: { start, end: { line: 2, character: 9 } } });
  const store = new RunStoreError('runs/x is not a run folder', 'runs/x/run.json', 'not-a-run');
  assert.deepEqual([store.code, store.exitStatus, store.file], ['not-a-run', 2, 'runs/x/run.json']);
  const path = new PathError('nope: no such file or folder');
  assert.deepEqual(path.toJson(), { code: 'path', message: 'nope: no such file or folder', exit_status: 2 });
  assert.throws(() => new McpbenchError('m', { code: 'Not Kebab' }), TypeError);
});
