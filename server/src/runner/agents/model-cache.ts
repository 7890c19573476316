/**
 * Model calls recorded and served back. A model agent given a cache folder (`MCPBENCH_MODEL_CACHE=DIR`)
 * keeps every successful response under the hash of what decides it: the request body (model, messages,
 * tools and every sampling setting) and the endpoint's path; never a header (so never a key), nor the host. A request whose
 * response is in the folder is answered from it without reaching the model; with `MCPBENCH_MODEL_REPLAY=strict`
 * a request that is not is an agent error (`model-replay-miss`) instead of a request to the model, so a
 * replayed run costs nothing and either reproduces its recording or says where it departs from it.
 *
 *   <DIR>/<sha256>.json   { version: 1, key, url, request, status, body }   written atomically, once
 */
import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { writeJsonAtomicSync } from '../../atomic-file.ts';
import { canonicalHash } from '../../canonical-json.ts';
import { AgentError } from './agent.ts';

export const MODEL_CACHE_ENV = 'MCPBENCH_MODEL_CACHE';
export const MODEL_REPLAY_ENV = 'MCPBENCH_MODEL_REPLAY';

const CachedResponseSchema = z.object({ version: z.literal(1), key: z.string(), url: z.string(), request: z.unknown(), status: z.number().int(), body: z.string() });

export interface ModelCacheOptions {
  directory: string;
  /** A miss is an error, never a request to the model. */
  strict: boolean;
}

/** The cache options an environment asks for, if any. */
export function modelCacheFromEnv(env: Record<string, string | undefined>): ModelCacheOptions | undefined {
  const directory = env[MODEL_CACHE_ENV]?.trim();
  if (!directory) return undefined;
  return { directory, strict: env[MODEL_REPLAY_ENV]?.trim() === 'strict' };
}

/**
 * The key of a request: its body as canonical JSON (a body that is not JSON, as its text) and the path of its
 * URL (the protocol's endpoint), not its host: the same request to the same model served elsewhere is the same.
 */
export function requestKey(url: string, body: string): string {
  let request: unknown;
  try {
    request = JSON.parse(body);
  } catch {
    request = body;
  }
  let path = url;
  try {
    path = new URL(url).pathname;
  } catch {
    // not a URL: the whole text
  }
  return canonicalHash({ path, request });
}

/** `fetch` with the cache in front: hits served from the folder, misses fetched and kept (or refused when strict). */
export function cachingFetch(options: ModelCacheOptions, inner: typeof fetch = fetch): typeof fetch {
  return async (input, init) => {
    const url = typeof input === 'string' ? input : input instanceof URL ? input.href : input.url;
    const body = typeof init?.body === 'string' ? init.body : '';
    const key = requestKey(url, body);
    const file = join(options.directory, `${key}.json`);
    if (existsSync(file)) {
      const parsed = CachedResponseSchema.safeParse(JSON.parse(readFileSync(file, 'utf8')));
      if (parsed.success && parsed.data.key === key) return new Response(parsed.data.body, { status: parsed.data.status, headers: { 'content-type': 'application/json' } });
    }
    if (options.strict) throw new AgentError('model-replay-miss', `no recorded response for this model request in ${options.directory} (key ${key}): the episode departs from its recording here`);
    const response = await inner(input, init);
    const text = await response.text();
    if (response.ok) {
      mkdirSync(options.directory, { recursive: true });
      let request: unknown = body;
      try {
        request = JSON.parse(body);
      } catch {
        // kept as text
      }
      writeJsonAtomicSync(file, { version: 1, key, url, request, status: response.status, body: text });
    }
    return new Response(text, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
