/**
 * The harness's own rules fail a call that breaks them: the tool tests lean on it to check every simulated
 * handler, so a rule that stopped firing would pass them all. Each test swaps one calendar handler of this
 * process's registry for a broken one (a test file runs in a process of its own) and puts it back.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { ToolHandler } from '../../server/src/mcp/namespace.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { callOnce, startNamespace } from './harness.ts';

const SEED = { meetings: { '2026-01-02': { '10:00': 'Standup' } } };

async function withHandler(name: string, broken: ToolHandler<{ meetings: Record<string, Record<string, string>> }>, work: () => Promise<void>): Promise<void> {
  const tools = (await loadRegistry()).get('calendar')!.plugin!.tools!;
  const original = tools[name]!;
  tools[name] = broken as ToolHandler<unknown>;
  try {
    await work();
  } finally {
    tools[name] = original;
  }
}

test('a call whose handler writes to its input state fails', async () => {
  await withHandler(
    'check_calendar',
    (args, state) => {
      // The harness hands a handler its state frozen, so the write throws where it happens.
      state.meetings['2026-01-02']!['11:00'] = 'sneaky';
      return { result: { date: args.date } };
    },
    async () => {
      await assert.rejects(callOnce('calendar', SEED, 'check_calendar', { date: '2026-01-02' }), /Cannot add property 11:00, object is not extensible/);
    },
  );
});

test('a call whose handler returns a state that is not normalised, or fails the schema, fails', async () => {
  await withHandler('book_meeting', (_args, state) => ({ state: { ...state, meetings: { ...state.meetings, '2026-01-09': {} } }, result: { status: 'booked' } }), async () => {
    await assert.rejects(callOnce('calendar', SEED, 'book_meeting', { date: '2026-01-09', time: '09:00', topic: 'x' }), /book_meeting: new state is not normalised/);
  });
  await withHandler('book_meeting', () => ({ state: { meetings: {}, extra: true } as never, result: { status: 'booked' } }), async () => {
    await assert.rejects(callOnce('calendar', SEED, 'book_meeting', { date: '2026-01-09', time: '09:00', topic: 'x' }), /book_meeting: new state fails the schema/);
  });
});

test('a call whose result is not plain JSON fails; a refusal is a reply, not a failure', async () => {
  await withHandler('check_calendar', () => ({ result: { when: new Date(0) } }), async () => {
    await assert.rejects(callOnce('calendar', SEED, 'check_calendar', { date: '2026-01-02' }), /check_calendar: result is not plain JSON/);
  });
  const session = await startNamespace('calendar', SEED);
  try {
    const refused = await session.call('book_meeting', { date: '2026-01-02', time: '10:00', topic: 'again' });
    assert.equal(refused.isError, true);
    assert.match(refused.text, /already taken by "Standup"/);
    // Arguments the schema refuses are the test's mistake, caught before the call.
    await assert.rejects(session.call('check_calendar', { date: 42 }), /check_calendar \{"date":42\}/);
    assert.deepEqual(await session.state(), SEED);
  } finally {
    await session.close();
  }
});
