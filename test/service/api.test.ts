/**
 * `mcpbench api`, the submission service, driven over HTTP: the real service (Fastify, the contract of
 * schemas/openapi.yaml enforced on requests and responses, PGlite, the engine's run session in process) on a
 * free loopback port, with a small slice of the dev set. A submission by endpoint: a real HTTP endpoint that
 * checks the MCPBench-Signature of every task it gets and does the task through the gateway with the MCP SDK's
 * client (replaying the task's reference solution), then the result, the leaderboard and the published run.
 * Auth failures, scopes, revocation, idempotency, the quota, a private task never readable, an unpublished run
 * 404, and problem details for bad input.
 *
 * Every call goes through Stoplight Prism's validation proxy (`prism proxy schemas/openapi.yaml`, a contract
 * checker nobody here wrote) in front of the service: Prism validates each request and response against the
 * contract and reports what it finds in the `sl-violations` header. A call the test makes well-formed must
 * have no violation at all; a deliberately bad one may have request violations (Prism sees them too) but never
 * a response violation. The tally is printed at the end: operations covered, calls, violations.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHmac } from 'node:crypto';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build } from 'esbuild';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { startApiServer, type RunningApi } from '../../server/src/cli/commands/api.ts';
import { runCli } from '../../server/src/cli/main.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { createToken, ensureAccount } from '../../server/src/service/store.ts';
import { freePort } from '../free-port.ts';

const root = packageRoot();
const DEV_TASKS = ['calendar/calendar-book-meeting-11aa6f8e.json', 'filesystem/fs-move-file-9d1727eb.json', 'calendar/calendar-cancel-meeting-8c794356.json'];
const PRIVATE_TASK = 'calendar/calendar-find-meeting-dcbe0c3a.json';

/** The container engine for the image submission: podman, else docker, whichever answers. */
const engine = (['podman', 'docker'] as const).find((e) => spawnSync(e, ['info'], { stdio: 'ignore', timeout: 30_000 }).status === 0);
const IMAGE = `localhost/mcpbench-api-test-agent:${process.pid}`;

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-api-'));
let api: RunningApi;
let base: string;
let endpoint: Server;
let prism: ChildProcess | undefined;
/** What Prism reported: per call, the operation and its violations. */
const checked: { operation: string; bad: boolean; violations: { location: string[]; severity: string; message: string }[] }[] = [];
let endpointUrl: string;
/** What the endpoint saw: per request, whether its signature verified. */
const seen: { task: string; signed: boolean }[] = [];
let endpointSecret = '';
let owner: string;
let other: string;
let readOnly: string;

const taskById = new Map<string, { reference_solutions: { tool: string; arguments: Record<string, unknown> }[][] }>();

function verify(secret: string, header: string | undefined, body: string): boolean {
  const match = /^t=(\d+),v1=([0-9a-f]{64})$/.exec(header ?? '');
  if (!match) return false;
  const expected = createHmac('sha256', secret).update(`${match[1]}.${body}`).digest('hex');
  return expected === match[2] && Math.abs(Date.now() / 1000 - Number(match[1])) < 300;
}

/** The participant's endpoint: verifies the signature, then does the task through the gateway. */
function startEndpoint(): Promise<void> {
  endpoint = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
    req.on('end', () => {
      void (async () => {
        const request = JSON.parse(body) as { task_id: string; gateway: { url: string } };
        const signed = verify(endpointSecret, req.headers['mcpbench-signature'] as string | undefined, body);
        seen.push({ task: request.task_id, signed });
        if (!signed) {
          res.writeHead(401).end();
          return;
        }
        const client = new Client({ name: 'api-test-endpoint', version: '1.0.0' });
        await client.connect(new StreamableHTTPClientTransport(new URL(request.gateway.url)));
        for (const step of taskById.get(request.task_id)!.reference_solutions[0]!) {
          await client.callTool({ name: step.tool.replace('.', '_'), arguments: step.arguments });
        }
        await client.close();
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ answer: 'done' }));
      })().catch((error: Error) => res.writeHead(500).end(error.message));
    });
  });
  return new Promise((resolve) => endpoint.listen(0, '127.0.0.1', () => {
    const address = endpoint.address();
    endpointUrl = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}/agent`;
    resolve();
  }));
}

before(async () => {
  const dev = join(scratch, 'dev');
  for (const file of DEV_TASKS) {
    mkdirSync(join(dev, file.split('/')[0]!), { recursive: true });
    copyFileSync(join(root, 'tasks', file), join(dev, file));
    const task = JSON.parse(readFileSync(join(root, 'tasks', file), 'utf8'));
    taskById.set(task.id, task);
  }
  await startEndpoint();
  api = await startApiServer({
    db: 'memory://',
    port: await freePort(),
    host: '127.0.0.1',
    devSet: dev,
    runsDir: join(scratch, 'runs'),
    concurrency: 1,
    episodeConcurrency: 2,
    allowPrivateEndpoints: true,
    version: '0.0.0-test',
    cwd: scratch,
  });
  base = await startPrism(api.url);
  const acme = await ensureAccount(api.opened.db, 'acme', 1);
  owner = (await createToken(api.opened.db, acme.account_id, 'ci', ['submissions', 'tokens'])).secret;
  readOnly = (await createToken(api.opened.db, acme.account_id, 'tokens only', ['tokens'])).secret;
  const rival = await ensureAccount(api.opened.db, 'rival');
  other = (await createToken(api.opened.db, rival.account_id, 'ci', ['submissions', 'tokens'])).secret;
});

after(async () => {
  prism?.kill('SIGTERM');
  await api?.close();
  endpoint?.close();
  const operations = new Set(checked.filter((c) => !c.bad).map((c) => c.operation));
  const violations = checked.flatMap((c) => c.violations.map((v) => ({ ...v, bad: c.bad })));
  console.log(`prism proxy: ${operations.size} operations covered (${[...operations].sort().join(', ')}), ${checked.length} calls, ${violations.filter((v) => v.location[0] === 'response').length} response violations, ${violations.filter((v) => v.location[0] === 'request').length} request violations (all on calls made bad on purpose)`);
  if (engine) spawnSync(engine, ['rmi', '--force', IMAGE], { stdio: 'ignore', timeout: 60_000 });
  rmSync(scratch, { recursive: true, force: true });
});

/** Prism's validation proxy in front of the service, on a free port; its URL once it answers. */
async function startPrism(upstream: string): Promise<string> {
  const port = await freePort();
  prism = spawn(process.execPath, [join(root, 'node_modules', '@stoplight', 'prism-cli', 'dist', 'index.js'), 'proxy', join(root, 'schemas', 'openapi.yaml'), upstream, '--port', String(port), '--host', '127.0.0.1', '--cors', 'false'], { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  prism.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  prism.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      await fetch(`${url}/leaderboard`);
      return url;
    } catch {
      assert.ok(Date.now() < deadline && prism.exitCode === null, `prism did not start: ${output}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function call(method: string, path: string, options: { token?: string; body?: unknown; headers?: Record<string, string>; bad?: boolean; direct?: boolean } = {}) {
  const response = await fetch(`${options.direct ? api.url : base}${path}`, {
    method,
    headers: {
      ...(options.token ? { authorization: `Bearer ${options.token}` } : {}),
      ...(options.body !== undefined ? { 'content-type': 'application/json' } : {}),
      ...options.headers,
    },
    ...(options.body !== undefined ? { body: typeof options.body === 'string' ? options.body : JSON.stringify(options.body) } : {}),
  });
  const text = await response.text();
  if (options.direct) return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
  const violations = JSON.parse(response.headers.get('sl-violations') ?? '[]') as { location: string[]; severity: string; message: string }[];
  const operation = `${method} ${path.split('?')[0]!.replace(/\/(sub|tok)_[0-9a-z]+$/, '/{id}').replace(/^\/(tasks|runs)\/.+$/, '/$1/{id}')}`;
  checked.push({ operation, bad: options.bad ?? false, violations });
  const wrong = violations.filter((v) => v.severity === 'Error' && (!options.bad || v.location[0] === 'response'));
  assert.deepEqual(wrong, [], `${method} ${path}: prism found ${JSON.stringify(wrong)}`);
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined };
}

async function waitFor(id: string, token: string) {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const { status, body } = await call('GET', `/submissions/${id}`, { token });
    assert.equal(status, 200);
    if (body.status === 'succeeded' || body.status === 'failed') return body;
    assert.ok(Date.now() < deadline, `submission ${id} still ${body.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

test('a submission by endpoint runs the dev set: signed requests, progress, the result with intervals per namespace', async () => {
  const created = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev', label: 'replayer v1', publish: true }, headers: { 'idempotency-key': 'first-try' } });
  assert.equal(created.status, 202, JSON.stringify(created.body));
  assert.equal(created.headers.get('location'), `/submissions/${created.body.id}`);
  assert.match(created.body.endpoint_secret, /^[A-Za-z0-9_-]{43}$/);
  assert.ok(created.headers.get('ratelimit-limit'));
  endpointSecret = created.body.endpoint_secret;

  // The same key and body: the same submission, without the secret; another body: 409.
  const again = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev', label: 'replayer v1', publish: true }, headers: { 'idempotency-key': 'first-try' } });
  assert.equal(again.status, 200);
  assert.equal(again.body.id, created.body.id);
  assert.equal(again.body.endpoint_secret, undefined);
  const reused = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev' }, headers: { 'idempotency-key': 'first-try' } });
  assert.equal(reused.status, 409);
  assert.equal(reused.body.code, 'idempotency-key-reused');
  // The account's quota is one in flight.
  const over = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev' } });
  assert.equal(over.status, 429);
  assert.equal(over.body.code, 'quota-exceeded');
  assert.equal(over.headers.get('content-type'), 'application/problem+json; charset=utf-8');
  // Another account cannot see it.
  assert.equal((await call('GET', `/submissions/${created.body.id}`, { token: other })).status, 404);

  const done = await waitFor(created.body.id, owner);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(done.progress, { episodes: 3, done: 3, passed: 3, failed: 0, agent_errors: 0, infra_errors: 0 });
  assert.equal(seen.length, 3);
  assert.ok(seen.every((s) => s.signed), 'every task request carried a valid signature');
  assert.equal(done.result.tasks, 3);
  assert.equal(done.result.success_rate.value, 1);
  assert.deepEqual(done.result.by_namespace.map((b: { key: string }) => b.key).sort(), ['calendar', 'filesystem']);
  assert.ok(done.result.success_rate.ci === null || done.result.success_rate.ci.low <= 1);

  // The leaderboard has it under its label, linked to the published run.
  const board = await call('GET', '/leaderboard?set=dev');
  assert.equal(board.status, 200);
  const entry = board.body.sections[0].entries.find((e: { agent: string }) => e.agent === 'replayer v1');
  assert.ok(entry, JSON.stringify(board.body));
  assert.equal(entry.summary.passed, 3);
  assert.deepEqual(entry.runs, [{ run_id: done.result.run_id, report: `/runs/${done.result.run_id}`, completeness: 'complete' }]);
  assert.deepEqual((await call('GET', '/leaderboard?month=1999-01')).body.sections, []);

  // The published run: public, with its traces.
  const run = await call('GET', `/runs/${done.result.run_id}`);
  assert.equal(run.status, 200);
  assert.equal(run.body.published, true);
  assert.equal(run.body.episodes.length, 3);
  assert.ok(run.body.episodes.every((e: { passed: boolean; calls: unknown[] }) => e.passed && e.calls.length > 0));
});

test('an unpublished run is 404 to everyone but its owner', async () => {
  const created = await call('POST', '/submissions', { token: other, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev' } });
  assert.equal(created.status, 202, JSON.stringify(created.body));
  endpointSecret = created.body.endpoint_secret;
  const done = await waitFor(created.body.id, other);
  assert.equal(done.status, 'succeeded');
  assert.equal(done.label, 'rival');
  const runId = done.result.run_id;
  assert.equal((await call('GET', `/runs/${runId}`)).status, 404);
  assert.equal((await call('GET', `/runs/${runId}`, { token: owner })).status, 404);
  const own = await call('GET', `/runs/${runId}`, { token: other });
  assert.equal(own.status, 200);
  assert.equal(own.body.published, false);
  // An unknown run is the same 404.
  const unknown = await call('GET', '/runs/run-nope');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.body.code, 'not-found');
  // On the leaderboard, with no link.
  const board = await call('GET', '/leaderboard');
  const entry = board.body.sections.flatMap((s: { entries: unknown[] }) => s.entries).find((e: { agent: string }) => e.agent === 'rival');
  assert.deepEqual(entry.runs, [{ run_id: runId, report: null, completeness: 'complete' }]);
});

test('auth: no token, a malformed, unknown or revoked one is 401; a token without the scope is 403', async () => {
  const body = { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev' };
  const none = await call('POST', '/submissions', { body, bad: true });
  assert.equal(none.status, 401);
  assert.equal(none.body.code, 'unauthorized');
  assert.match(none.headers.get('www-authenticate') ?? '', /^Bearer/);
  assert.equal((await call('POST', '/submissions', { body, token: 'not-a-token', bad: true })).status, 401);
  assert.equal((await call('POST', '/submissions', { body, token: `mcpb_${'0'.repeat(20)}_${'A'.repeat(43)}`, bad: true })).status, 401);
  assert.equal((await call('GET', '/submissions/sub_00000000000000000000000000', { token: owner.slice(0, -1) + (owner.endsWith('A') ? 'B' : 'A'), bad: true })).status, 401);
  const scoped = await call('POST', '/submissions', { body, token: readOnly });
  assert.equal(scoped.status, 403);
  assert.equal(scoped.body.code, 'insufficient-scope');

  // A token made over the API, then revoked: 401 from then on.
  const made = await call('POST', '/tokens', { token: owner, body: { name: 'temp', scopes: ['submissions'] } });
  assert.equal(made.status, 201, JSON.stringify(made.body));
  assert.equal((await call('GET', '/submissions/sub_00000000000000000000000000', { token: made.body.secret })).status, 404);
  assert.equal((await call('DELETE', `/tokens/${made.body.id}`, { token: owner })).status, 204);
  const revoked = await call('GET', '/submissions/sub_00000000000000000000000000', { token: made.body.secret, bad: true });
  assert.equal(revoked.status, 401);
  assert.equal(revoked.body.detail, 'the token is revoked');
  const listed = await call('GET', '/tokens', { token: owner });
  assert.ok(listed.body.tokens.some((t: { id: string; revoked_at: string | null }) => t.id === made.body.id && t.revoked_at !== null));
  assert.ok(listed.body.tokens.every((t: Record<string, unknown>) => !('secret' in t)));
  // Another account's token id is 404.
  assert.equal((await call('DELETE', `/tokens/${made.body.id}`, { token: other })).status, 404);
  // A token cannot make a wider one.
  assert.equal((await call('POST', '/tokens', { token: readOnly, body: { name: 'x', scopes: ['submissions'] } })).status, 403);
});

test('the public dev set: listed and read by id; a private task is 404, as an unknown id', async () => {
  const page = await call('GET', '/tasks?limit=2');
  assert.equal(page.status, 200);
  assert.equal(page.body.tasks.length, 2);
  const rest = await call('GET', `/tasks?limit=2&cursor=${page.body.next}`);
  assert.equal(rest.body.tasks.length, 1);
  assert.equal(rest.body.next, null);
  const ids = [...page.body.tasks, ...rest.body.tasks].map((t: { id: string }) => t.id);
  assert.deepEqual(ids, [...taskById.keys()].sort());
  const calendar = await call('GET', '/tasks?namespace=calendar&difficulty=easy');
  assert.ok(calendar.body.tasks.every((t: { server: string }) => t.server === 'calendar'));

  const one = await call('GET', `/tasks/${ids[0]}`);
  assert.equal(one.status, 200);
  assert.equal(one.body.id, ids[0]);
  assert.match(one.headers.get('etag') ?? '', /^"[0-9a-f]{64}"$/);

  const privateId = JSON.parse(readFileSync(join(root, 'tasks', PRIVATE_TASK), 'utf8')).id as string;
  const hidden = await call('GET', `/tasks/${privateId}`);
  const unknown = await call('GET', '/tasks/no-such-task');
  assert.equal(hidden.status, 404);
  assert.deepEqual({ ...hidden.body, instance: undefined }, { ...unknown.body, instance: undefined });
  assert.ok(!JSON.stringify((await call('GET', '/tasks?limit=200')).body).includes(privateId));
});

test('bad input is a problem with each bad field; never a stack trace', async () => {
  const bad = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: 'ftp://x' }, set: 'dev', trials: 99, extra: 1 }, bad: true });
  assert.equal(bad.status, 400);
  assert.equal(bad.body.code, 'invalid-request');
  assert.ok(bad.body.errors.length > 0);
  const notJson = await call('POST', '/submissions', { token: owner, body: '{"agent":', headers: { 'content-type': 'application/json' }, bad: true, direct: true });
  // (Straight to the service: Prism's proxy drops the connection when a JSON body does not parse.)
  assert.equal(notJson.status, 400);
  const text = await call('POST', '/submissions', { token: owner, body: 'hello', headers: { 'content-type': 'text/plain' }, bad: true });
  assert.equal(text.status, 415);
  const huge = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev', label: 'x'.repeat(70_000) }, bad: true, direct: true });
  // (Straight to the service: Prism's proxy drops the connection of a body it has to relay past the limit.)
  assert.equal(huge.status, 413);
  const set = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'endpoint', url: endpointUrl }, set: 'private' } });
  assert.equal(set.status, 422);
  assert.equal(set.body.code, 'set-unavailable');
  const image = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'image', image: 'localhost/mcpbench-no-such-image:1' }, set: 'dev' } });
  assert.equal(image.status, 422);
  assert.equal(image.body.code, 'image-unavailable');
  const query = await call('GET', '/tasks?limit=0', { bad: true });
  assert.equal(query.status, 400);
  assert.equal(query.body.errors[0].pointer, 'query/limit');
  const nowhere = await call('GET', '/nowhere', { bad: true });
  assert.equal(nowhere.status, 404);
  for (const r of [bad, notJson, text, huge, set, query, nowhere]) assert.doesNotMatch(JSON.stringify(r.body), /\bat .*\.(ts|js):\d+/);
});

test('mcpbench api token create: a token for a new account, the secret printed once, only its hash stored', async () => {
  const out: string[] = [];
  const err: string[] = [];
  const db = join(scratch, 'tokens.pglite');
  const code = await runCli(['api', 'token', 'create', '--account', 'newco', '--scope', 'submissions', '--db', db], { stdout: (t) => out.push(t), stderr: (t) => err.push(t), cwd: scratch });
  assert.equal(code, 0, err.join(''));
  const secret = out.join('').trim();
  assert.match(secret, /^mcpb_[0-9a-z]+_[A-Za-z0-9_-]{43}$/);
  assert.match(err.join(''), /account newco \(scopes submissions\)/);
  const { openResultsDb } = await import('../../server/src/results/db.ts');
  const opened = await openResultsDb(db);
  try {
    const rows = await opened.db.selectFrom('api_tokens').selectAll().execute();
    assert.equal(rows.length, 1);
    assert.ok(!JSON.stringify(rows).includes(secret.split('_')[2]!));
  } finally {
    await opened.close();
  }
});

test('a submission by container image: pinned to its id, run with no network but the gateway', { skip: engine ? false : 'no container engine answers here (scripts/container-engine.sh sets up podman)' }, async () => {
  // The image: the test agent of test/fixtures/image-agent (a real MCP client) with its plan, the tasks' reference solutions, baked in.
  const context = join(scratch, 'image');
  mkdirSync(context);
  await build({ entryPoints: [join(root, 'test', 'fixtures', 'image-agent', 'agent.ts')], bundle: true, platform: 'node', format: 'cjs', target: 'node20', outfile: join(context, 'agent.js'), logLevel: 'error' });
  writeFileSync(join(context, 'plan.json'), JSON.stringify(Object.fromEntries([...taskById].map(([id, task]) => [id, task.reference_solutions[0]]))));
  writeFileSync(join(context, 'Dockerfile'), 'FROM node:20-bookworm-slim\nWORKDIR /agent\nCOPY agent.js plan.json /agent/\nENTRYPOINT ["sh", "-c", "MCPBENCH_TEST_PLAN=\\"$(cat /agent/plan.json)\\" exec node /agent/agent.js"]\n');
  const built = spawnSync(engine!, ['build', '--quiet', '-t', IMAGE, context], { encoding: 'utf8', timeout: 300_000 });
  assert.equal(built.status, 0, `${engine} build: ${built.stderr}`);
  const id = spawnSync(engine!, ['image', 'inspect', '--format', '{{.Id}}', IMAGE], { encoding: 'utf8' }).stdout.trim().replace(/^sha256:/, '');

  const created = await call('POST', '/submissions', { token: owner, body: { agent: { kind: 'image', image: IMAGE }, set: 'dev', label: 'image agent' } });
  assert.equal(created.status, 202, JSON.stringify(created.body));
  assert.equal(created.body.endpoint_secret, undefined);
  assert.deepEqual(created.body.agent, { kind: 'image', image: IMAGE, image_id: `sha256:${id}` });
  const done = await waitFor(created.body.id, owner);
  assert.equal(done.status, 'succeeded', JSON.stringify(done.error));
  assert.deepEqual(done.progress, { episodes: 3, done: 3, passed: 3, failed: 0, agent_errors: 0, infra_errors: 0 });
  assert.equal(done.result.success_rate.value, 1);
});
