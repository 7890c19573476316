/**
 * The runner panel's "open episode page": the page names a run id and a work unit, never a path; only a
 * page of a run folder under the workspace's runs/ comes out, and anything else opens nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { episodeViewTarget } from '../../client/src/episode-view.ts';

const unit = 'a'.repeat(64);

test('a run id and a work unit name the page in runs/<id>/views/', () => {
  assert.equal(episodeViewTarget('/w/runs', 'run-20261126-101010-abcdef', unit), join('/w/runs', 'run-20261126-101010-abcdef', 'views', `${unit}.html`));
});

test('anything else names no page: paths, traversal, a work unit that is not one', () => {
  for (const [runId, workUnit] of [
    ['../etc', unit],
    ['a/../../b', unit],
    ['/abs', unit],
    ['run..x', unit],
    ['run', '../../x'],
    ['run', 'A'.repeat(64)],
    ['run', `${unit}/../x`],
    [42, unit],
    ['run', undefined],
  ] as const) {
    assert.equal(episodeViewTarget('/w/runs', runId, workUnit), undefined, `${String(runId)} ${String(workUnit)}`);
  }
});
