/**
 * The Redis a queue runs on: its URL, the connections BullMQ and the registry use, and the check made before
 * anything starts (reachable, a version BullMQ supports, an eviction policy that never drops a job).
 */
import { Redis, type RedisOptions } from 'ioredis';
import { McpbenchError } from '../errors.ts';

/** What stops a queue from starting; the CLI reports it as an I/O error (exit 2). */
export class QueueError extends McpbenchError {
  static override readonly code: string = 'queue';
  declare readonly code: 'redis-url' | 'redis-unreachable' | 'redis-version' | 'redis-eviction' | 'redis-oom' | 'redis-error' | 'sealed-key' | 'run-id';
  constructor(message: string, code: QueueError['code']) {
    super(message, { code });
  }
}

/** BullMQ's own floor (it needs Redis 6.2 commands). Debian's redis-server is 7.0. */
export const MINIMUM_REDIS_VERSION = '6.2.0';

/** A `redis://` or `rediss://` URL, checked; `display` is the URL without its password (for messages and logs). */
export interface RedisTarget {
  url: string;
  display: string;
}

export function redisTarget(url: string): RedisTarget {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new QueueError(`--queue ${url}: not a URL (use redis://HOST:PORT, e.g. redis://127.0.0.1:6379)`, 'redis-url');
  }
  if (parsed.protocol !== 'redis:' && parsed.protocol !== 'rediss:') throw new QueueError(`--queue ${url}: use a redis:// or rediss:// URL`, 'redis-url');
  if (!parsed.hostname) throw new QueueError(`--queue ${url}: the URL names no host`, 'redis-url');
  const display = new URL(parsed.href);
  if (display.password) display.password = '***';
  return { url: parsed.href, display: display.href.replace(/\/$/, '') };
}

/**
 * A connection for BullMQ and the registry: commands wait while Redis is away (it reconnects every 0.2 to 2 s,
 * forever), so a Redis restart pauses a run instead of failing it. `onError` hears each connection error
 * (ioredis would otherwise print them).
 */
export function connect(target: RedisTarget, onError: (error: Error) => void = () => undefined, extra: RedisOptions = {}): Redis {
  const redis = new Redis(target.url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (times) => Math.min(200 * times, 2_000),
    ...extra,
  });
  redis.on('error', onError);
  return redis;
}

const versionAtLeast = (version: string, floor: string) => {
  const a = version.split('.').map(Number);
  const b = floor.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((a[i] ?? 0) !== (b[i] ?? 0)) return (a[i] ?? 0) > (b[i] ?? 0);
  return true;
};

/** One line of `INFO <section>`: `field:value`. */
export function infoField(info: string, field: string): string | undefined {
  return new RegExp(`^${field}:(.*)$`, 'm').exec(info)?.[1]?.trim();
}

/**
 * Connects once, with no retry, and checks what the queue needs: Redis answers within `timeoutMs`, is at
 * least MINIMUM_REDIS_VERSION, and does not evict keys (a job evicted under memory pressure would be lost).
 * Returns the server's version and run id (which changes when Redis restarts).
 */
export async function checkRedis(target: RedisTarget, timeoutMs = 5_000): Promise<{ version: string; runId: string }> {
  const redis = new Redis(target.url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, retryStrategy: () => null, enableOfflineQueue: false });
  let lastError: Error | undefined;
  redis.on('error', (error: Error) => (lastError = error));
  try {
    try {
      await redis.connect();
    } catch (error) {
      const reason = (lastError ?? (error as Error)).message || String(error);
      // ioredis says "Stream isn't writeable" when the connection never opened (a host that does not answer).
      const why = /stream isn't writeable|ETIMEDOUT|connect timeout/i.test(reason) ? `no answer within ${Math.round(timeoutMs / 1000)} s (is the host reachable, the port open?)` : reason;
      throw new QueueError(`cannot reach Redis at ${target.display}: ${why}`, 'redis-unreachable');
    }
    const server = await redis.info('server');
    const version = infoField(server, 'redis_version') ?? '0.0.0';
    if (!versionAtLeast(version, MINIMUM_REDIS_VERSION)) throw new QueueError(`Redis at ${target.display} is version ${version}; the queue needs ${MINIMUM_REDIS_VERSION} or newer`, 'redis-version');
    const policy = infoField(await redis.info('memory'), 'maxmemory_policy');
    if (policy && policy !== 'noeviction') {
      throw new QueueError(`Redis at ${target.display} evicts keys (maxmemory-policy ${policy}): a job could be dropped; set maxmemory-policy noeviction`, 'redis-eviction');
    }
    return { version, runId: infoField(server, 'run_id') ?? '' };
  } finally {
    redis.disconnect();
  }
}

/**
 * What Redis refused while a queue ran, as a QueueError with a message for people (no stack trace): out of
 * memory (maxmemory reached) or any other error reply. Anything else is returned as it was.
 */
export function redisFailure(error: unknown, target: RedisTarget): unknown {
  if (error instanceof QueueError || !(error instanceof Error) || error.name !== 'ReplyError') return error;
  if (/^OOM\b/.test(error.message)) {
    return new QueueError(`Redis at ${target.display} is out of memory (${error.message.split('\n')[0]}); finished episodes are saved in the run folder: free memory or raise maxmemory, then go on with --resume`, 'redis-oom');
  }
  return new QueueError(`Redis at ${target.display} refused a command: ${error.message.split('\n')[0]}`, 'redis-error');
}
