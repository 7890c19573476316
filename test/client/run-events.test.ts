import assert from 'node:assert/strict';
import { test } from 'node:test';
import { JsonlEventReader, parseRunEvent } from '../../client/src/run-events.ts';
import type { RunEvent } from '../../server/src/engine/protocol.ts';

const started: RunEvent = { type: 'run-started', kind: 'run', run_id: 'r1', directory: '/runs/r1', tasks: ['a'], episodes: 1, recorded: 0, agent: 'reference', fault_profile: 'none', seed: 1 };

test('a RunEvent line parses; other JSON, non-JSON and unknown types do not', () => {
  assert.deepEqual(parseRunEvent(JSON.stringify(started)), started);
  const inFlight: RunEvent = {
    type: 'call-started', run_id: 'r1', work_unit: 'w', key: { task_id: 'a', trial: 0, variant: 'reference:0', fault_profile: 'none', perturbation: 'none' },
    call: { index: 0, tool: 'filesystem_read_text_file', qualified: 'filesystem.read_text_file', arguments: { path: 'a' }, started_at: '2026-01-01T00:00:00.000Z' },
  };
  assert.deepEqual(parseRunEvent(JSON.stringify(inFlight)), inFlight, 'a call in flight is an event of the stream');
  assert.equal(parseRunEvent('{"type":"progress"}'), undefined);
  assert.equal(parseRunEvent('[1,2]'), undefined);
  assert.equal(parseRunEvent('warning: plain process sandbox'), undefined);
  assert.equal(parseRunEvent('{"type":"run-started"'), undefined);
});

test('lines split across chunks are reassembled, and a last line without newline counts at end()', () => {
  const events: RunEvent[] = [];
  const others: string[] = [];
  const reader = new JsonlEventReader((e) => events.push(e), (l) => others.push(l));
  const text = JSON.stringify(started) + '\nnot an event\r\n' + JSON.stringify({ ...started, run_id: 'r2' });
  for (let i = 0; i < text.length; i += 7) reader.push(text.slice(i, i + 7));
  assert.deepEqual(events.map((e) => e.run_id), ['r1']);
  assert.deepEqual(others, ['not an event\r']);
  reader.end();
  assert.deepEqual(events.map((e) => e.run_id), ['r1', 'r2']);
});
