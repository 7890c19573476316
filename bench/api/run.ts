/**
 * bench/api: the submission service (`mcpbench api`) on this machine, in one run:
 *
 * - public reads under load: CLIENTS concurrent clients (default 50) each doing back-to-back GETs for SECONDS
 *   (default 5) of `/leaderboard`, then of `/tasks?limit=50`; p50/p99 latency and requests a second, against a
 *   static file server (node:http, the same bytes of the leaderboard JSON from memory) under the same load;
 *   the ratio service/static of p50 and p99;
 * - submissions per minute: SUBMISSIONS endpoint submissions (default 4) of a slice of the dev set (TASKS
 *   tasks, default 3) to an endpoint that answers at once with no answer, from POST to `succeeded`, with the
 *   service running CONCURRENCY (default 2) submissions at a time.
 *
 * Needs `node esbuild.mjs` first (the MCP servers run from dist/).
 *
 *   npx tsx bench/api/run.ts        (CLIENTS, SECONDS, SUBMISSIONS, TASKS, CONCURRENCY optional)
 */
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startApiServer } from '../../server/src/cli/commands/api.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { createToken, ensureAccount } from '../../server/src/service/store.ts';

const CLIENTS = Number(process.env.CLIENTS ?? 50);
const SECONDS = Number(process.env.SECONDS ?? 5);
const SUBMISSIONS = Number(process.env.SUBMISSIONS ?? 4);
const TASKS = Number(process.env.TASKS ?? 3);
const CONCURRENCY = Number(process.env.CONCURRENCY ?? 2);

const listen = (server: Server) =>
  new Promise<string>((resolve) =>
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      resolve(`http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`);
    }),
  );

const quantile = (sorted: number[], q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;

/** CLIENTS clients, each GETting `url` back to back for SECONDS: latencies (ms) and requests a second. */
async function load(url: string): Promise<{ p50: number; p99: number; rps: number; errors: number }> {
  const latencies: number[] = [];
  let errors = 0;
  const end = performance.now() + SECONDS * 1000;
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (performance.now() < end) {
        const start = performance.now();
        try {
          const response = await fetch(url);
          await response.arrayBuffer();
          if (response.status !== 200) errors++;
        } catch {
          errors++;
        }
        latencies.push(performance.now() - start);
      }
    }),
  );
  latencies.sort((a, b) => a - b);
  return { p50: quantile(latencies, 0.5), p99: quantile(latencies, 0.99), rps: latencies.length / SECONDS, errors };
}

async function main(): Promise<void> {
  const root = packageRoot();
  const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-bench-api-'));
  const dev = join(scratch, 'dev');
  mkdirSync(dev);
  for (const file of readdirSync(join(root, 'tasks', 'calendar')).sort().slice(0, TASKS)) copyFileSync(join(root, 'tasks', 'calendar', file), join(dev, file));
  const endpoint = createServer((req, res) => req.resume().on('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
  const endpointUrl = await listen(endpoint);
  const api = await startApiServer({ db: 'memory://', port: 0, host: '127.0.0.1', devSet: dev, runsDir: join(scratch, 'runs'), concurrency: CONCURRENCY, episodeConcurrency: 2, allowPrivateEndpoints: true, rateLimit: 1_000_000_000, version: 'bench', cwd: scratch });
  try {
    const account = await ensureAccount(api.opened.db, 'bench', SUBMISSIONS);
    const { secret } = await createToken(api.opened.db, account.account_id, 'bench', ['submissions']);
    const headers = { authorization: `Bearer ${secret}`, 'content-type': 'application/json' };

    // Submissions per minute (they also fill the leaderboard the reads then serve).
    const started = performance.now();
    const ids: string[] = [];
    for (let i = 0; i < SUBMISSIONS; i++) {
      const response = await fetch(`${api.url}/submissions`, { method: 'POST', headers, body: JSON.stringify({ agent: { kind: 'endpoint', url: endpointUrl }, set: 'dev', label: `bench ${i % 2}` }) });
      if (response.status !== 202) throw new Error(`POST /submissions: ${response.status} ${await response.text()}`);
      ids.push(((await response.json()) as { id: string }).id);
    }
    for (const id of ids) {
      for (;;) {
        const body = (await (await fetch(`${api.url}/submissions/${id}`, { headers })).json()) as { status: string; error: unknown };
        if (body.status === 'succeeded') break;
        if (body.status === 'failed') throw new Error(`submission ${id} failed: ${JSON.stringify(body.error)}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
    const minutes = (performance.now() - started) / 60_000;
    console.log(`submissions: ${SUBMISSIONS} of ${TASKS} tasks each, ${CONCURRENCY} at a time: ${(SUBMISSIONS / minutes).toFixed(1)} per minute (${(minutes * 60).toFixed(1)} s)`);

    // Public reads vs a static file server of the same leaderboard JSON.
    const boardBytes = Buffer.from(await (await fetch(`${api.url}/leaderboard`)).arrayBuffer());
    const staticServer = createServer((_req, res) => res.writeHead(200, { 'content-type': 'application/json', 'content-length': boardBytes.length }).end(boardBytes));
    const staticUrl = await listen(staticServer);
    await load(`${api.url}/leaderboard`); // warm up (the leaderboard is built once, then cached until a submission finishes)
    const board = await load(`${api.url}/leaderboard`);
    const tasks = await load(`${api.url}/tasks?limit=50`);
    const plain = await load(`${staticUrl}/leaderboard.json`);
    staticServer.close();
    const row = (name: string, r: Awaited<ReturnType<typeof load>>) => `${name.padEnd(26)} p50 ${r.p50.toFixed(2).padStart(8)} ms  p99 ${r.p99.toFixed(2).padStart(8)} ms  ${r.rps.toFixed(0).padStart(6)} req/s  errors ${r.errors}`;
    console.log(`public reads, ${CLIENTS} concurrent clients, ${SECONDS} s each (leaderboard JSON ${boardBytes.length} bytes):`);
    console.log(row('GET /leaderboard', board));
    console.log(row('GET /tasks?limit=50', tasks));
    console.log(row('static file server', plain));
    console.log(`ratio GET /leaderboard / static: p50 ${(board.p50 / plain.p50).toFixed(2)}x, p99 ${(board.p99 / plain.p99).toFixed(2)}x, throughput ${(board.rps / plain.rps).toFixed(2)}x`);
  } finally {
    await api.close();
    endpoint.close();
    rmSync(scratch, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
