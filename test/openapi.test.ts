/**
 * schemas/openapi.yaml, the submission service's contract: linted by Redocly's CLI (recommended-strict rules,
 * redocly.yaml) to zero errors and warnings, and held to what the engine really produces: a leaderboard.json
 * that `mcpbench leaderboard` writes from a real run validates as `GET /leaderboard`'s answer, every dev-set
 * task file as `GET /tasks/{id}`'s, and a run's scores as a submission's result.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCli } from '../server/src/cli/main.ts';
import { packageRoot } from '../server/src/paths.ts';
import { createAjv } from '../server/src/ajv.ts';
import { resultOf } from '../server/src/service/submissions.ts';

const root = packageRoot();
const redocly = (...args: string[]) => spawnSync(process.execPath, [join(root, 'node_modules', '@redocly', 'cli', 'bin', 'cli.js'), ...args], { cwd: root, encoding: 'utf8', timeout: 120_000, env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true' } });
const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-openapi-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

/** The contract bundled into one JSON document by Redocly (the task schema pulled in), for Ajv. */
let validate: (component: string, data: unknown) => string[];

before(() => {
  const bundled = join(scratch, 'openapi.json');
  const result = redocly('bundle', 'schemas/openapi.yaml', '--ext', 'json', '-o', bundled);
  assert.equal(result.status, 0, result.stderr);
  const document = JSON.parse(readFileSync(bundled, 'utf8'));
  // The engine's configuration: not strict, so OpenAPI's own keywords (discriminator ...) pass.
  const ajv = createAjv();
  ajv.addSchema(document, 'openapi.json');
  validate = (component, data) => {
    const check = ajv.compile({ $ref: `openapi.json#/components/schemas/${component}` });
    return check(data) ? [] : (check.errors ?? []).map((e) => `${e.instancePath} ${e.message}`);
  };
});

test('redocly lint: the contract has no errors and no warnings under the recommended-strict rules', () => {
  const result = redocly('lint', 'schemas/openapi.yaml', '--format', 'json');
  const report = JSON.parse(result.stdout) as { totals: { errors: number; warnings: number }; problems: { message: string }[] };
  assert.deepEqual(report.totals.errors + report.totals.warnings, 0, report.problems.map((p) => p.message).join('\n'));
  assert.equal(result.status, 0);
});

test("the contract serves the spec's endpoints, and says who may call each", () => {
  const document = JSON.parse(readFileSync(join(scratch, 'openapi.json'), 'utf8')) as { paths: Record<string, Record<string, { security?: unknown[] }>>; security: unknown[] };
  const operations = Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).filter(([m]) => m !== 'parameters').map(([method, op]) => [`${method.toUpperCase()} ${path}`, JSON.stringify(op.security ?? document.security)]));
  const byOperation = Object.fromEntries(operations);
  for (const op of ['POST /submissions', 'GET /submissions/{id}', 'GET /tokens', 'POST /tokens', 'DELETE /tokens/{id}']) assert.match(byOperation[op] ?? '', /bearerAuth/, `${op} needs a token`);
  for (const op of ['GET /leaderboard', 'GET /tasks', 'GET /tasks/{id}']) assert.equal(byOperation[op], '[]', `${op} is public`);
  assert.equal(byOperation['GET /runs/{id}'], '[{},{"bearerAuth":["submissions"]}]', 'a published run is public, an unpublished one its owner\'s');
});

test("GET /leaderboard's answer is leaderboard.json as `mcpbench leaderboard` writes it from a real run", { timeout: 180_000 }, async () => {
  const io = { stdout: () => undefined, stderr: () => undefined, cwd: scratch };
  const tasks = readdirSync(join(root, 'tasks', 'travel')).slice(0, 4).map((f) => join(root, 'tasks', 'travel', f));
  assert.equal(await runCli(['run', ...tasks, '--trials', '2', '--reporter', 'none', '--out', join(scratch, 'runs')], io), 0);
  assert.equal(await runCli(['results', 'import', join(scratch, 'runs'), '--db', join(scratch, 'results.pglite')], io), 0);
  assert.equal(await runCli(['leaderboard', '--db', join(scratch, 'results.pglite'), '--out', join(scratch, 'board')], io), 0);
  const board = JSON.parse(readFileSync(join(scratch, 'board', 'leaderboard.json'), 'utf8'));
  assert.ok(board.sections[0].entries.length > 0, 'a row to check');
  assert.deepEqual(validate('Leaderboard', board), []);
  // The contract is not a rubber stamp: a row without its interval's bounds is refused.
  const broken = structuredClone(board);
  broken.sections[0].entries[0].summary.ci = { low: 0.2 };
  assert.ok(validate('Leaderboard', broken).some((e) => /high/.test(e)));

  // A run's scores (report.json) carry what a submission's result shows.
  const runDir = join(scratch, 'runs', readdirSync(join(scratch, 'runs'))[0]!);
  const scores = JSON.parse(readFileSync(join(runDir, 'report.json'), 'utf8')).scores;
  // The service's own mapping (service/submissions.ts resultOf), on a real run's scores.
  const result = resultOf(JSON.parse(readFileSync(join(runDir, 'run.json'), 'utf8')).run_id, scores);
  assert.deepEqual(validate('SubmissionResult', result), []);
});

test("every dev-set task validates as GET /tasks/{id}'s answer; a broken one does not", () => {
  let checked = 0;
  for (const namespace of readdirSync(join(root, 'tasks'), { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const file of readdirSync(join(root, 'tasks', namespace.name)).filter((f) => f.endsWith('.json'))) {
      const task = JSON.parse(readFileSync(join(root, 'tasks', namespace.name, file), 'utf8'));
      assert.deepEqual(validate('Task', task), [], file);
      checked++;
    }
  }
  assert.ok(checked > 100, `${checked} tasks`);
  assert.notDeepEqual(validate('Task', { id: 'x' }), []);
});

test('a problem has its code; a submission request is one of the two formats, nothing else', () => {
  assert.deepEqual(validate('Problem', { type: 'https://mcpbench.dev/problems/not-found', title: 'Not found', status: 404, code: 'not-found' }), []);
  assert.notDeepEqual(validate('Problem', { type: 'about:blank', title: 'Not found', status: 404 }), []);
  assert.deepEqual(validate('SubmissionRequest', { agent: { kind: 'endpoint', url: 'https://agent.example.org/run' }, set: 'dev' }), []);
  assert.deepEqual(validate('SubmissionRequest', { agent: { kind: 'image', image: 'ghcr.io/example/agent:3' }, set: 'private', trials: 4 }), []);
  assert.notDeepEqual(validate('SubmissionRequest', { agent: { kind: 'image', image: 'x', url: 'https://a.example' }, set: 'dev' }), []);
  assert.notDeepEqual(validate('SubmissionRequest', { agent: { kind: 'endpoint', url: 'file:///etc/passwd' }, set: 'dev' }), []);
  assert.notDeepEqual(validate('SubmissionRequest', { agent: { kind: 'endpoint', url: 'https://a.example' }, set: 'dev', trials: 100 }), []);
});
