/**
 * Clean errors from Redis (issue 28, case 3): a Redis that is out of memory stops `run --queue` with a message
 * and exit 2, not a stack trace; an address that never answers says so, not "Stream isn't writeable".
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { runCli } from '../../server/src/cli/main.ts';
import { checkRedis, QueueError, redisTarget } from '../../server/src/queue/redis.ts';
import { startRedis } from '../redis-server.ts';
import { MOVE_FILE } from '../results/fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-redis-errors-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

test('Redis out of memory: run --queue exits 2 with a message, no stack trace', { timeout: 60_000 }, async () => {
  const redis = await startRedis();
  try {
    const admin = new Redis(redis.url);
    await admin.config('SET', 'maxmemory', '1');
    admin.disconnect();
    let stderr = '';
    const code = await runCli(['run', MOVE_FILE, '--queue', redis.url, '--out', 'runs', '--sandbox', 'process', '--reporter', 'none'], { stdout: () => undefined, stderr: (t) => (stderr += t), cwd: scratch });
    assert.equal(code, 2, stderr);
    assert.match(stderr, /Redis at redis:\/\/127\.0\.0\.1:\d+ is out of memory .*go on with --resume/);
    assert.doesNotMatch(stderr, /internal error|\n\s+at /);
  } finally {
    await redis.stop();
  }
});

test('a Redis address that never answers: a sentence, not "Stream isn\'t writeable"', { timeout: 20_000 }, async () => {
  await assert.rejects(checkRedis(redisTarget('redis://10.255.255.1:6379'), 1_000), (error: unknown) => {
    assert.ok(error instanceof QueueError);
    assert.equal(error.code, 'redis-unreachable');
    assert.match(error.message, /^cannot reach Redis at redis:\/\/10\.255\.255\.1:6379: /);
    assert.doesNotMatch(error.message, /Stream isn't writeable/);
    return true;
  });
});
