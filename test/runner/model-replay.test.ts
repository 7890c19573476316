/**
 * Replaying model calls: a model run recorded with MCPBENCH_MODEL_CACHE, run again with
 * MCPBENCH_MODEL_REPLAY=strict, makes no request to the model and gives the same journal (every field but
 * times and the run id); a run whose requests were not recorded ends its episodes with the typed agent
 * error model-replay-miss, again without a request to the model.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openRun } from '../../server/src/record/run-folder.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';
import { modelRun } from '../traces/model-run.ts';

/** A record without what differs between two runs of the same episodes: times and the run id. */
function timeless(record: EpisodeRecord): unknown {
  const { started_at: _s, duration_ms: _d, run_id: _r, calls, model, ...rest } = record;
  return {
    ...rest,
    calls: calls.map(({ latency_ms: _l, ...call }) => call),
    ...(model ? { model: { ...model, turn_latency_ms: model.turn_latency_ms.length } } : {}),
  };
}

const journal = (directory: string) => new Map(openRun(directory).episodes.map((r) => [r.work_unit, timeless(r)]));

test('a replayed model run: the same journal as its recording, with 0 requests to the model; a miss is a typed error', { timeout: 120_000 }, async () => {
  const cache = mkdtempSync(join(tmpdir(), 'mcpbench-model-cache-'));
  const runs: string[] = [];
  try {
    const recorded = await modelRun({ faults: 'empty-only', faultRate: 0.6, seed: 11, env: { MCPBENCH_MODEL_CACHE: cache } });
    runs.push(recorded.work);
    assert.ok(recorded.requests > 0);
    assert.equal(readdirSync(cache).length, recorded.requests, 'one recorded response per request');

    const replayed = await modelRun({ faults: 'empty-only', faultRate: 0.6, seed: 11, env: { MCPBENCH_MODEL_CACHE: cache, MCPBENCH_MODEL_REPLAY: 'strict' } });
    runs.push(replayed.work);
    assert.equal(replayed.requests, 0, 'no request reached the model');
    assert.deepEqual(journal(replayed.directory), journal(recorded.directory));

    // Another seed sends another sampling seed: nothing of it was recorded.
    const missed = await modelRun({ seed: 12, env: { MCPBENCH_MODEL_CACHE: cache, MCPBENCH_MODEL_REPLAY: 'strict' } });
    runs.push(missed.work);
    assert.equal(missed.requests, 0);
    const episodes = openRun(missed.directory).episodes;
    assert.ok(episodes.length > 0);
    for (const e of episodes) {
      assert.deepEqual([e.status, e.error?.code], ['agent_error', 'model-replay-miss']);
      assert.match(e.error!.message, /no recorded response for this model request in .* \(key [0-9a-f]{64}\)/);
    }
  } finally {
    for (const dir of [cache, ...runs]) rmSync(dir, { recursive: true, force: true });
  }
});
