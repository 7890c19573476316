import { before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { tools } from '../../server/src/mcp/chat/tools.ts';
import { normalizeChatState, type ChatState } from '../../server/src/mcp/chat/state.ts';
import { ToolError, type ToolOutcome } from '../../server/src/mcp/namespace.ts';
import { loadRegistry, type Registry } from '../../server/src/mcp/registry.ts';
import { packageRoot } from '../../server/src/paths.ts';
import { evaluate, stateLeafEvaluator } from '../../server/src/predicates/evaluate.ts';
import { parsePredicate } from '../../server/src/predicates/tree.ts';
import { createAjv } from '../../server/src/tasks/ajv.ts';

const NS = 'chat';
type State = ChatState;
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const ajv = createAjv();
let registry: Registry;
before(async () => {
  registry = await loadRegistry();
});

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value)) deepFreeze(v);
  }
  return value;
}

/**
 * Calls a handler of any namespace as the harness would (schema-valid arguments) and checks what holds for
 * every call: the input state is untouched, the result is plain JSON, and a new state passes the state schema,
 * is already normalised and survives the JSON round trip through state.json unchanged.
 */
function callIn(ns: string, name: string, args: Record<string, unknown>, state: unknown): ToolOutcome<unknown> {
  const info = registry.get(ns)!;
  const handler = info.plugin?.tools?.[name];
  assert.ok(handler, `no handler for ${ns}.${name}`);
  const declared = info.tools.get(name);
  assert.ok(declared, `${ns}.${name} is not declared`);
  assert.ok(declared.validateInput(args), `${name} ${JSON.stringify(args)}: ${ajv.errorsText(declared.validateInput.errors)}`);
  const copy = structuredClone(state);
  deepFreeze(state);
  let outcome: ToolOutcome<unknown>;
  try {
    outcome = handler(args, state);
  } finally {
    assert.deepEqual(state, copy, `${name} changed its input state`);
  }
  assert.deepEqual(JSON.parse(JSON.stringify(outcome.result)), outcome.result, `${name}: result is not plain JSON`);
  if (outcome.state !== undefined) {
    const normalize = info.plugin!.normalizeState;
    assert.ok(info.validateState(outcome.state), `${name}: new state fails the schema: ${ajv.errorsText(info.validateState.errors)}`);
    assert.deepEqual(normalize(structuredClone(outcome.state)), outcome.state, `${name}: new state is not normalised`);
    const text = JSON.stringify(outcome.state);
    assert.equal(JSON.stringify(normalize(JSON.parse(text))), text, `${name}: new state changes through state.json`);
  }
  return outcome;
}

const call = (name: string, args: Record<string, unknown>, state: State): { state?: State; result: Json } =>
  callIn(NS, name, args, state) as { state?: State; result: Json };

function refuses(name: string, args: Record<string, unknown>, state: State, message: RegExp): void {
  assert.throws(
    () => call(name, args, state),
    (error: unknown) => {
      assert.ok(error instanceof ToolError, `expected a ToolError, got ${String(error)}`);
      assert.match(error.message, message);
      return true;
    },
  );
}

const M1 = '1767600000.000100';
const M2 = '1767600060.000100';
const M3 = '1767600120.000100';
const M4 = '1767600150.000100';
const M5 = '1767600160.000100';
const P1 = '1767600300.000100';
const R1 = '1767600310.000100';
const LATEST_NEXT = '1767600311.000100';

const seed = (): State =>
  normalizeChatState({
    current_user: 'U01AGENT',
    users: [
      { id: 'U01AGENT', name: 'ops-bot', real_name: 'Ops Bot', is_bot: true },
      { id: 'U02MARIA', name: 'maria', real_name: 'Maria Garcia', display_name: 'Maria', title: 'SRE', email: 'maria@example.com', tz: 'Europe/Madrid' },
      { id: 'U03DEV', name: 'dev', real_name: 'Dev Patel' },
      { id: 'U04GONE', name: 'gone', real_name: 'Former Employee', deleted: true },
      { id: 'U05BOT', name: 'ci-bot', is_bot: true },
    ],
    channels: [
      {
        id: 'C0GENERAL',
        name: 'general',
        members: ['U01AGENT', 'U02MARIA', 'U03DEV'],
        topic: 'Company-wide',
        messages: [
          { ts: M1, user: 'U02MARIA', text: 'Deploy of v2.4.0 is done', thread_ts: M1 },
          { ts: M2, user: 'U01AGENT', text: 'Thanks!', thread_ts: M1, reactions: [{ name: '+1', users: ['U02MARIA'] }] },
          { ts: M3, user: 'U01AGENT', text: 'Lunch at noon <@U02MARIA>' },
          { ts: M4, user: 'U01AGENT', text: 'Standup moved to 10:30', thread_ts: M4 },
          { ts: M5, user: 'U03DEV', text: 'ok, noted', thread_ts: M4 },
        ],
      },
      { id: 'C0SECRET', name: 'secret', is_private: true, members: ['U02MARIA'], messages: [{ ts: '1767600200.000100', user: 'U02MARIA', text: 'secret deploy plan' }] },
      {
        id: 'C0MINE',
        name: 'mine',
        is_private: true,
        members: ['U01AGENT'],
        messages: [
          { ts: P1, user: 'U01AGENT', text: 'parent note', thread_ts: P1 },
          { ts: R1, user: 'U01AGENT', text: 'reply note', thread_ts: P1 },
        ],
      },
      { id: 'C0OLD', name: 'old', is_archived: true, members: ['U01AGENT'], messages: [{ ts: '1767500000.000100', user: 'U01AGENT', text: 'old deploy news' }] },
      { id: 'C0RANDOM', name: 'random', members: ['U02MARIA'], messages: [{ ts: '1767600180.000100', user: 'U02MARIA', text: 'random thought about deploy' }] },
    ],
  });

/** Normalised records carry optional fields as undefined; compare them as state.json holds them. */
const plain = (v: unknown): unknown => (v === undefined ? v : JSON.parse(JSON.stringify(v)));
const channel = (s: State, id: string) => s.channels.find((c) => c.id === id)!;
const message = (s: State, id: string, ts: string) => channel(s, id).messages.find((m) => m.ts === ts);

test('there is one handler per declared tool', () => {
  assert.deepEqual(Object.keys(tools).sort(), [...registry.get(NS)!.tools.keys()].sort());
});

test('list_channels shows public channels and private ones the user is in, not archived ones, by name, with cursors', () => {
  const out = call('list_channels', {}, seed());
  assert.equal(out.state, undefined);
  assert.deepEqual(out.result.channels.map((c: Json) => c.name), ['general', 'mine', 'random']);
  assert.deepEqual(out.result.channels[0], {
    id: 'C0GENERAL',
    name: 'general',
    is_channel: true,
    is_private: false,
    is_archived: false,
    is_member: true,
    num_members: 3,
    topic: { value: 'Company-wide' },
    purpose: { value: '' },
  });
  const first = call('list_channels', { limit: 2 }, seed()).result;
  assert.deepEqual(first.channels.map((c: Json) => c.name), ['general', 'mine']);
  const second = call('list_channels', { limit: 2, cursor: first.response_metadata.next_cursor }, seed()).result;
  assert.deepEqual(second.channels.map((c: Json) => c.name), ['random']);
  assert.equal(second.response_metadata.next_cursor, '');
  refuses('list_channels', { cursor: 'bogus' }, seed(), /^invalid_cursor/);
});

test('post_message posts as the current user with the next ts of the workspace', () => {
  const out = call('post_message', { channel_id: 'C0GENERAL', text: 'Hello <@U03DEV>' }, seed());
  assert.deepEqual(out.result, {
    ok: true,
    channel: 'C0GENERAL',
    ts: LATEST_NEXT,
    message: { type: 'message', user: 'U01AGENT', text: 'Hello <@U03DEV>', ts: LATEST_NEXT },
  });
  assert.deepEqual(plain(channel(out.state!, 'C0GENERAL').messages.at(-1)), { ts: LATEST_NEXT, user: 'U01AGENT', text: 'Hello <@U03DEV>', reactions: [] });
  // The next one is one second later again; a public channel needs no membership; names work as in chat.postMessage.
  const again = call('post_message', { channel_id: '#random', text: 'hi' }, out.state!);
  assert.equal(again.result.ts, '1767600312.000100');
  assert.equal(again.result.channel, 'C0RANDOM');
  refuses('post_message', { channel_id: 'C0SECRET', text: 'hi' }, seed(), /^channel_not_found/);
  refuses('post_message', { channel_id: 'C0NOPE', text: 'hi' }, seed(), /^channel_not_found/);
  refuses('post_message', { channel_id: 'C0OLD', text: 'hi' }, seed(), /^is_archived/);
  refuses('post_message', { channel_id: 'C0GENERAL', text: ' ' }, seed(), /^no_text/);
  // An empty workspace starts at a fixed ts.
  const empty = normalizeChatState({ current_user: 'U1', users: [{ id: 'U1', name: 'a' }], channels: [{ id: 'C1', name: 'a', members: ['U1'] }] });
  assert.equal(call('post_message', { channel_id: 'C1', text: 'first' }, empty).result.ts, '1767225600.000100');
});

test("reply_to_thread replies in the parent's thread, also when given a reply's ts, and marks a new parent", () => {
  const out = call('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: M1, text: 'Nice' }, seed());
  assert.equal(out.result.message.thread_ts, M1);
  assert.equal(message(out.state!, 'C0GENERAL', LATEST_NEXT)!.thread_ts, M1);
  const viaReply = call('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: M2, text: 'Nice' }, seed()).state!;
  assert.equal(message(viaReply, 'C0GENERAL', LATEST_NEXT)!.thread_ts, M1);
  const newThread = call('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: '1767600120000100', text: 'Where?' }, seed()).state!;
  assert.equal(message(newThread, 'C0GENERAL', LATEST_NEXT)!.thread_ts, M3);
  assert.equal(message(newThread, 'C0GENERAL', M3)!.thread_ts, M3);
  refuses('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: '1767600001.000100', text: 'x' }, seed(), /^thread_not_found/);
  refuses('reply_to_thread', { channel_id: 'C0SECRET', thread_ts: '1767600200.000100', text: 'x' }, seed(), /^channel_not_found/);
  refuses('reply_to_thread', { channel_id: 'C0OLD', thread_ts: '1767500000.000100', text: 'x' }, seed(), /^is_archived/);
});

test('add_reaction stores canonical names, joins an existing reaction and refuses a repeat', () => {
  const thumbs = call('add_reaction', { channel_id: 'C0GENERAL', timestamp: M2, reaction: 'thumbsup' }, seed());
  assert.deepEqual(message(thumbs.state!, 'C0GENERAL', M2)!.reactions, [{ name: '+1', users: ['U02MARIA', 'U01AGENT'] }]);
  assert.equal(thumbs.result.ok, true);
  const eyes = call('add_reaction', { channel_id: 'C0GENERAL', timestamp: M1, reaction: ':eyes:' }, seed()).state!;
  assert.deepEqual(message(eyes, 'C0GENERAL', M1)!.reactions, [{ name: 'eyes', users: ['U01AGENT'] }]);
  refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: M1, reaction: 'eyes' }, eyes, /^already_reacted/);
  refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: M2, reaction: '+1' }, thumbs.state!, /^already_reacted/);
  refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: '1.000100', reaction: 'eyes' }, seed(), /^message_not_found/);
  refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: M1, reaction: '::' }, seed(), /^invalid_name/);
});

test('get_channel_history returns top-level messages newest first with reply counts', () => {
  const out = call('get_channel_history', { channel_id: 'C0GENERAL' }, seed()).result;
  assert.deepEqual(out.messages.map((m: Json) => m.ts), [M4, M3, M1]);
  assert.equal(out.messages[2].reply_count, 1);
  assert.equal(out.messages[2].latest_reply, M2);
  assert.equal(out.has_more, false);
  const one = call('get_channel_history', { channel_id: 'C0GENERAL', limit: 1 }, seed()).result;
  assert.deepEqual([one.messages.length, one.has_more], [1, true]);
  assert.equal(call('get_channel_history', { channel_id: 'C0OLD' }, seed()).result.messages.length, 1, 'archived channels stay readable');
  refuses('get_channel_history', { channel_id: 'C0SECRET' }, seed(), /^channel_not_found/);
});

test('get_thread_replies returns the parent first, then the replies', () => {
  const out = call('get_thread_replies', { channel_id: 'C0GENERAL', thread_ts: M1 }, seed()).result;
  assert.deepEqual(out.messages.map((m: Json) => m.ts), [M1, M2]);
  assert.deepEqual(out.messages[1].reactions, [{ name: '+1', users: ['U02MARIA'], count: 1 }]);
  assert.deepEqual(call('get_thread_replies', { channel_id: 'C0GENERAL', thread_ts: M2 }, seed()).result.messages.map((m: Json) => m.ts), [M1, M2]);
  refuses('get_thread_replies', { channel_id: 'C0GENERAL', thread_ts: '1.000100' }, seed(), /^thread_not_found/);
});

test('get_users leaves out bots and deactivated users; get_user_profile reads one', () => {
  const out = call('get_users', {}, seed()).result;
  assert.deepEqual(out.members.map((u: Json) => u.id), ['U02MARIA', 'U03DEV']);
  assert.equal(out.members[0].profile.title, 'SRE');
  const paged = call('get_users', { limit: 1 }, seed()).result;
  assert.deepEqual(paged.members.map((u: Json) => u.id), ['U02MARIA']);
  assert.deepEqual(call('get_users', { limit: 1, cursor: paged.response_metadata.next_cursor }, seed()).result.members.map((u: Json) => u.id), ['U03DEV']);
  const profile = call('get_user_profile', { user_id: 'U02MARIA' }, seed()).result;
  assert.deepEqual(profile.profile, { real_name: 'Maria Garcia', display_name: 'Maria', title: 'SRE', email: 'maria@example.com' });
  assert.equal(profile.user.tz, 'Europe/Madrid');
  refuses('get_user_profile', { user_id: 'U99' }, seed(), /^user_not_found/);
});

test('create_channel creates a channel with the next id, the current user as first member; refuses taken and invalid names', () => {
  const out = call('create_channel', { name: 'incident-7' }, seed());
  const created = channel(out.state!, 'C00000006');
  assert.deepEqual(created, {
    id: 'C00000006',
    name: 'incident-7',
    is_private: false,
    is_archived: false,
    members: ['U01AGENT'],
    topic: '',
    purpose: '',
    creator: 'U01AGENT',
    messages: [],
  });
  assert.equal(out.result.channel.id, 'C00000006');
  const priv = call('create_channel', { name: 'private-room', is_private: true }, seed()).state!;
  assert.equal(channel(priv, 'C00000006').is_private, true);
  // Ids in use are skipped.
  const taken = structuredClone(seed());
  taken.channels[0]!.id = 'C00000006';
  assert.ok(call('create_channel', { name: 'x' }, taken).state!.channels.some((c) => c.id === 'C00000007'));
  refuses('create_channel', { name: 'old' }, seed(), /^name_taken.*archived/);
  refuses('create_channel', { name: 'general' }, seed(), /^name_taken/);
  refuses('create_channel', { name: 'Bad Name' }, seed(), /^invalid_name_specials/);
  refuses('create_channel', { name: 'x'.repeat(81) }, seed(), /^invalid_name_specials/);
});

test('set_channel_topic needs membership and at most 250 characters', () => {
  const out = call('set_channel_topic', { channel_id: 'C0GENERAL', topic: 'All hands' }, seed());
  assert.equal(channel(out.state!, 'C0GENERAL').topic, 'All hands');
  assert.deepEqual(out.result.channel.topic, { value: 'All hands' });
  assert.equal(channel(call('set_channel_topic', { channel_id: 'C0GENERAL', topic: '' }, seed()).state!, 'C0GENERAL').topic, '');
  refuses('set_channel_topic', { channel_id: 'C0RANDOM', topic: 'x' }, seed(), /^not_in_channel/);
  refuses('set_channel_topic', { channel_id: 'C0GENERAL', topic: 'x'.repeat(251) }, seed(), /^too_long/);
  refuses('set_channel_topic', { channel_id: 'C0OLD', topic: 'x' }, seed(), /^is_archived/);
  refuses('set_channel_topic', { channel_id: 'C0SECRET', topic: 'x' }, seed(), /^channel_not_found/);
});

test('invite_to_channel adds new members, skips existing ones, and adds nobody when one user is unknown', () => {
  const out = call('invite_to_channel', { channel_id: 'C0MINE', user_ids: ['U02MARIA', 'U01AGENT', 'U05BOT'] }, seed());
  assert.deepEqual(channel(out.state!, 'C0MINE').members, ['U01AGENT', 'U02MARIA', 'U05BOT']);
  assert.deepEqual(out.result.invited, ['U02MARIA', 'U05BOT']);
  refuses('invite_to_channel', { channel_id: 'C0GENERAL', user_ids: ['U02MARIA', 'U03DEV'] }, seed(), /^already_in_channel/);
  refuses('invite_to_channel', { channel_id: 'C0MINE', user_ids: ['U02MARIA', 'U99'] }, seed(), /^user_not_found.*U99.*nobody/);
  refuses('invite_to_channel', { channel_id: 'C0MINE', user_ids: ['U04GONE'] }, seed(), /^user_not_found/);
  refuses('invite_to_channel', { channel_id: 'C0RANDOM', user_ids: ['U03DEV'] }, seed(), /^not_in_channel/);
  refuses('invite_to_channel', { channel_id: 'C0OLD', user_ids: ['U03DEV'] }, seed(), /^is_archived/);
});

test('update_message edits only own messages, keeping the ts and marking the edit', () => {
  const out = call('update_message', { channel_id: 'C0GENERAL', ts: M3, text: 'Lunch at 12:30' }, seed());
  const edited = message(out.state!, 'C0GENERAL', M3)!;
  assert.equal(edited.text, 'Lunch at 12:30');
  assert.deepEqual(edited.edited, { user: 'U01AGENT', ts: LATEST_NEXT });
  assert.equal(out.result.ts, M3);
  refuses('update_message', { channel_id: 'C0GENERAL', ts: M1, text: 'hijack' }, seed(), /^cant_update_message/);
  refuses('update_message', { channel_id: 'C0GENERAL', ts: '1.000100', text: 'x' }, seed(), /^message_not_found/);
  refuses('update_message', { channel_id: 'C0OLD', ts: '1767500000.000100', text: 'x' }, seed(), /^is_archived/);
});

test('delete_message removes own messages; a thread parent with replies becomes a tombstone', () => {
  const removed = call('delete_message', { channel_id: 'C0GENERAL', ts: M3 }, seed());
  assert.equal(message(removed.state!, 'C0GENERAL', M3), undefined);
  assert.deepEqual(removed.result, { ok: true, channel: 'C0GENERAL', ts: M3 });
  const tomb = call('delete_message', { channel_id: 'C0GENERAL', ts: M4 }, seed()).state!;
  assert.deepEqual(plain(message(tomb, 'C0GENERAL', M4)), { ts: M4, user: 'U01AGENT', text: 'This message was deleted.', thread_ts: M4, reactions: [], subtype: 'tombstone' });
  assert.ok(message(tomb, 'C0GENERAL', M5), 'the reply stays');
  assert.equal(call('get_channel_history', { channel_id: 'C0GENERAL' }, tomb).result.messages[0].subtype, 'tombstone');
  refuses('delete_message', { channel_id: 'C0GENERAL', ts: M4 }, tomb, /^message_not_found/);
  // Deleting the last reply under a tombstone removes the thread; under a live parent the parent stays, unthreaded.
  const both = call('delete_message', { channel_id: 'C0MINE', ts: R1 }, call('delete_message', { channel_id: 'C0MINE', ts: P1 }, seed()).state!).state!;
  assert.deepEqual(channel(both, 'C0MINE').messages, []);
  const replyOnly = call('delete_message', { channel_id: 'C0MINE', ts: R1 }, seed()).state!;
  assert.deepEqual(plain(channel(replyOnly, 'C0MINE').messages), [{ ts: P1, user: 'U01AGENT', text: 'parent note', reactions: [] }]);
  refuses('delete_message', { channel_id: 'C0GENERAL', ts: M1 }, seed(), /^cant_delete_message/);
  refuses('delete_message', { channel_id: 'C0GENERAL', ts: '1.000100' }, seed(), /^message_not_found/);
});

test('search_messages finds words in visible channels, replies included, newest first, with in: and from:', () => {
  const find = (query: string) => call('search_messages', { query }, seed()).result.messages.matches.map((m: Json) => `${m.channel.name}/${m.ts}`);
  assert.deepEqual(find('deploy'), ['random/1767600180.000100', `general/${M1}`, 'old/1767500000.000100']);
  assert.deepEqual(find('deploy in:#general'), [`general/${M1}`]);
  assert.deepEqual(find('deploy from:@maria'), ['random/1767600180.000100', `general/${M1}`]);
  assert.deepEqual(find('from:<@U02MARIA> in:general'), [`general/${M1}`]);
  assert.deepEqual(find('noted'), [`general/${M5}`]);
  assert.deepEqual(find('@maria lunch'), [`general/${M3}`]);
  assert.deepEqual(find('deploy from:@nobody'), []);
  const counted = call('search_messages', { query: 'deploy', count: 1 }, seed()).result.messages;
  assert.deepEqual([counted.total, counted.matches.length], [3, 1]);
});

// Every task of the namespace: its reference solutions, replayed through the handlers, pass with no refused
// call; its counterexamples fail. Cross-server tasks route each call to its namespace's handlers.

interface Step {
  tool?: string;
  arguments?: Record<string, unknown>;
  answer?: string;
}
interface Task {
  id: string;
  server: string | string[];
  initial_state: Record<string, unknown>;
  success_predicate: unknown;
  reference_solutions: Step[][];
  counterexamples?: Step[][];
}

function replay(task: Task, steps: Step[]): { value: boolean | undefined; refusals: string[] } {
  const namespaces = Array.isArray(task.server) ? task.server : [task.server];
  const states: Record<string, unknown> = {};
  for (const ns of namespaces) states[ns] = registry.get(ns)!.plugin!.normalizeState(structuredClone(task.initial_state[ns]));
  let answer: string | undefined;
  const refusals: string[] = [];
  for (const step of steps) {
    if (step.tool === undefined) {
      answer = step.answer;
      continue;
    }
    const [ns, name] = step.tool.split('.') as [string, string];
    assert.ok(namespaces.includes(ns), `${task.id}: ${step.tool} is not a tool of ${namespaces.join(', ')}`);
    try {
      const out = callIn(ns, name, step.arguments ?? {}, states[ns]);
      if (out.state !== undefined) states[ns] = out.state;
    } catch (error) {
      if (!(error instanceof ToolError)) throw error;
      refusals.push(`${step.tool}: ${error.message}`);
    }
  }
  const verdict = evaluate(parsePredicate(task.success_predicate, ['success_predicate']), stateLeafEvaluator(registry, states, answer));
  return { value: verdict.value, refusals };
}

const tasksDir = join(packageRoot(), 'test', 'fixtures', 'tasks', NS);
const taskFiles = readdirSync(tasksDir).filter((f) => f.endsWith('.json')).sort();

test('the namespace has tasks to replay', () => {
  assert.ok(taskFiles.length > 0);
});

for (const file of taskFiles) {
  const task = JSON.parse(readFileSync(join(tasksDir, file), 'utf8')) as Task;
  test(`${task.id}: reference solutions pass with no refused call and counterexamples fail`, () => {
    task.reference_solutions.forEach((steps, i) => {
      const run = replay(task, steps);
      assert.deepEqual(run.refusals, [], `reference solution ${i} had refused calls`);
      assert.equal(run.value, true, `reference solution ${i} fails`);
    });
    (task.counterexamples ?? []).forEach((steps, i) => {
      assert.equal(replay(task, steps).value, false, `counterexample ${i} passes`);
    });
  });
}
