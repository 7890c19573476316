import { test } from 'node:test';
import assert from 'node:assert/strict';
import { tools } from '../../server/src/mcp/chat/tools.ts';
import { normalizeChatState, type ChatState } from '../../server/src/mcp/chat/state.ts';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { assertRefuses, callOnce, testFixtureTasks, type Json } from './harness.ts';

const NS = 'chat';
type State = ChatState;

/** A call that must succeed, on the chat server seeded with `state`: its reply and the state it leaves. */
const call = (name: string, args: Record<string, unknown>, state: State) => callOnce<State>(NS, state, name, args);
const refuses = (name: string, args: Record<string, unknown>, state: State, message: RegExp) => assertRefuses(NS, state, name, args, message);

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

test('there is one handler per declared tool', async () => {
  assert.deepEqual(Object.keys(tools).sort(), [...(await loadRegistry()).get(NS)!.tools.keys()].sort());
});

test('list_channels shows public channels and private ones the user is in, not archived ones, by name, with cursors', async () => {
  const out = await call('list_channels', {}, seed());
  assert.equal(out.changed, false);
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
  const first = (await call('list_channels', { limit: 2 }, seed())).result;
  assert.deepEqual(first.channels.map((c: Json) => c.name), ['general', 'mine']);
  const second = (await call('list_channels', { limit: 2, cursor: first.response_metadata.next_cursor }, seed())).result;
  assert.deepEqual(second.channels.map((c: Json) => c.name), ['random']);
  assert.equal(second.response_metadata.next_cursor, '');
  await refuses('list_channels', { cursor: 'bogus' }, seed(), /^invalid_cursor/);
});

test('post_message posts as the current user with the next ts of the workspace', async () => {
  const out = await call('post_message', { channel_id: 'C0GENERAL', text: 'Hello <@U03DEV>' }, seed());
  assert.deepEqual(out.result, {
    ok: true,
    channel: 'C0GENERAL',
    ts: LATEST_NEXT,
    message: { type: 'message', user: 'U01AGENT', text: 'Hello <@U03DEV>', ts: LATEST_NEXT },
  });
  assert.deepEqual(plain(channel(out.state!, 'C0GENERAL').messages.at(-1)), { ts: LATEST_NEXT, user: 'U01AGENT', text: 'Hello <@U03DEV>', reactions: [] });
  // The next one is one second later again; a public channel needs no membership; names work as in chat.postMessage.
  const again = await call('post_message', { channel_id: '#random', text: 'hi' }, out.state!);
  assert.equal(again.result.ts, '1767600312.000100');
  assert.equal(again.result.channel, 'C0RANDOM');
  await refuses('post_message', { channel_id: 'C0SECRET', text: 'hi' }, seed(), /^channel_not_found/);
  await refuses('post_message', { channel_id: 'C0NOPE', text: 'hi' }, seed(), /^channel_not_found/);
  await refuses('post_message', { channel_id: 'C0OLD', text: 'hi' }, seed(), /^is_archived/);
  await refuses('post_message', { channel_id: 'C0GENERAL', text: ' ' }, seed(), /^no_text/);
  // An empty workspace starts at a fixed ts.
  const empty = normalizeChatState({ current_user: 'U1', users: [{ id: 'U1', name: 'a' }], channels: [{ id: 'C1', name: 'a', members: ['U1'] }] });
  assert.equal((await call('post_message', { channel_id: 'C1', text: 'first' }, empty)).result.ts, '1767225600.000100');
});

test("reply_to_thread replies in the parent's thread, also when given a reply's ts, and marks a new parent", async () => {
  const out = await call('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: M1, text: 'Nice' }, seed());
  assert.equal(out.result.message.thread_ts, M1);
  assert.equal(message(out.state!, 'C0GENERAL', LATEST_NEXT)!.thread_ts, M1);
  const viaReply = (await call('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: M2, text: 'Nice' }, seed())).state!;
  assert.equal(message(viaReply, 'C0GENERAL', LATEST_NEXT)!.thread_ts, M1);
  const newThread = (await call('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: '1767600120000100', text: 'Where?' }, seed())).state!;
  assert.equal(message(newThread, 'C0GENERAL', LATEST_NEXT)!.thread_ts, M3);
  assert.equal(message(newThread, 'C0GENERAL', M3)!.thread_ts, M3);
  await refuses('reply_to_thread', { channel_id: 'C0GENERAL', thread_ts: '1767600001.000100', text: 'x' }, seed(), /^thread_not_found/);
  await refuses('reply_to_thread', { channel_id: 'C0SECRET', thread_ts: '1767600200.000100', text: 'x' }, seed(), /^channel_not_found/);
  await refuses('reply_to_thread', { channel_id: 'C0OLD', thread_ts: '1767500000.000100', text: 'x' }, seed(), /^is_archived/);
});

test('add_reaction stores canonical names, joins an existing reaction and refuses a repeat', async () => {
  const thumbs = await call('add_reaction', { channel_id: 'C0GENERAL', timestamp: M2, reaction: 'thumbsup' }, seed());
  assert.deepEqual(message(thumbs.state!, 'C0GENERAL', M2)!.reactions, [{ name: '+1', users: ['U02MARIA', 'U01AGENT'] }]);
  assert.equal(thumbs.result.ok, true);
  const eyes = (await call('add_reaction', { channel_id: 'C0GENERAL', timestamp: M1, reaction: ':eyes:' }, seed())).state!;
  assert.deepEqual(message(eyes, 'C0GENERAL', M1)!.reactions, [{ name: 'eyes', users: ['U01AGENT'] }]);
  await refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: M1, reaction: 'eyes' }, eyes, /^already_reacted/);
  await refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: M2, reaction: '+1' }, thumbs.state!, /^already_reacted/);
  await refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: '1.000100', reaction: 'eyes' }, seed(), /^message_not_found/);
  await refuses('add_reaction', { channel_id: 'C0GENERAL', timestamp: M1, reaction: '::' }, seed(), /^invalid_name/);
});

test('get_channel_history returns top-level messages newest first with reply counts', async () => {
  const out = (await call('get_channel_history', { channel_id: 'C0GENERAL' }, seed())).result;
  assert.deepEqual(out.messages.map((m: Json) => m.ts), [M4, M3, M1]);
  assert.equal(out.messages[2].reply_count, 1);
  assert.equal(out.messages[2].latest_reply, M2);
  assert.equal(out.has_more, false);
  const one = (await call('get_channel_history', { channel_id: 'C0GENERAL', limit: 1 }, seed())).result;
  assert.deepEqual([one.messages.length, one.has_more], [1, true]);
  assert.equal((await call('get_channel_history', { channel_id: 'C0OLD' }, seed())).result.messages.length, 1, 'archived channels stay readable');
  await refuses('get_channel_history', { channel_id: 'C0SECRET' }, seed(), /^channel_not_found/);
});

test('get_thread_replies returns the parent first, then the replies', async () => {
  const out = (await call('get_thread_replies', { channel_id: 'C0GENERAL', thread_ts: M1 }, seed())).result;
  assert.deepEqual(out.messages.map((m: Json) => m.ts), [M1, M2]);
  assert.deepEqual(out.messages[1].reactions, [{ name: '+1', users: ['U02MARIA'], count: 1 }]);
  assert.deepEqual((await call('get_thread_replies', { channel_id: 'C0GENERAL', thread_ts: M2 }, seed())).result.messages.map((m: Json) => m.ts), [M1, M2]);
  await refuses('get_thread_replies', { channel_id: 'C0GENERAL', thread_ts: '1.000100' }, seed(), /^thread_not_found/);
});

test('get_users leaves out bots and deactivated users; get_user_profile reads one', async () => {
  const out = (await call('get_users', {}, seed())).result;
  assert.deepEqual(out.members.map((u: Json) => u.id), ['U02MARIA', 'U03DEV']);
  assert.equal(out.members[0].profile.title, 'SRE');
  const paged = (await call('get_users', { limit: 1 }, seed())).result;
  assert.deepEqual(paged.members.map((u: Json) => u.id), ['U02MARIA']);
  assert.deepEqual((await call('get_users', { limit: 1, cursor: paged.response_metadata.next_cursor }, seed())).result.members.map((u: Json) => u.id), ['U03DEV']);
  const profile = (await call('get_user_profile', { user_id: 'U02MARIA' }, seed())).result;
  assert.deepEqual(profile.profile, { real_name: 'Maria Garcia', display_name: 'Maria', title: 'SRE', email: 'maria@example.com' });
  assert.equal(profile.user.tz, 'Europe/Madrid');
  await refuses('get_user_profile', { user_id: 'U99' }, seed(), /^user_not_found/);
});

test('create_channel creates a channel with the next id, the current user as first member; refuses taken and invalid names', async () => {
  const out = await call('create_channel', { name: 'incident-7' }, seed());
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
  const priv = (await call('create_channel', { name: 'private-room', is_private: true }, seed())).state!;
  assert.equal(channel(priv, 'C00000006').is_private, true);
  // Ids in use are skipped.
  const taken = structuredClone(seed());
  taken.channels[0]!.id = 'C00000006';
  assert.ok((await call('create_channel', { name: 'x' }, taken)).state!.channels.some((c) => c.id === 'C00000007'));
  await refuses('create_channel', { name: 'old' }, seed(), /^name_taken.*archived/);
  await refuses('create_channel', { name: 'general' }, seed(), /^name_taken/);
  await refuses('create_channel', { name: 'Bad Name' }, seed(), /^invalid_name_specials/);
  await refuses('create_channel', { name: 'x'.repeat(81) }, seed(), /^invalid_name_specials/);
});

test('set_channel_topic needs membership and at most 250 characters', async () => {
  const out = await call('set_channel_topic', { channel_id: 'C0GENERAL', topic: 'All hands' }, seed());
  assert.equal(channel(out.state!, 'C0GENERAL').topic, 'All hands');
  assert.deepEqual(out.result.channel.topic, { value: 'All hands' });
  assert.equal(channel((await call('set_channel_topic', { channel_id: 'C0GENERAL', topic: '' }, seed())).state!, 'C0GENERAL').topic, '');
  await refuses('set_channel_topic', { channel_id: 'C0RANDOM', topic: 'x' }, seed(), /^not_in_channel/);
  await refuses('set_channel_topic', { channel_id: 'C0GENERAL', topic: 'x'.repeat(251) }, seed(), /^too_long/);
  await refuses('set_channel_topic', { channel_id: 'C0OLD', topic: 'x' }, seed(), /^is_archived/);
  await refuses('set_channel_topic', { channel_id: 'C0SECRET', topic: 'x' }, seed(), /^channel_not_found/);
});

test('invite_to_channel adds new members, skips existing ones, and adds nobody when one user is unknown', async () => {
  const out = await call('invite_to_channel', { channel_id: 'C0MINE', user_ids: ['U02MARIA', 'U01AGENT', 'U05BOT'] }, seed());
  assert.deepEqual(channel(out.state!, 'C0MINE').members, ['U01AGENT', 'U02MARIA', 'U05BOT']);
  assert.deepEqual(out.result.invited, ['U02MARIA', 'U05BOT']);
  await refuses('invite_to_channel', { channel_id: 'C0GENERAL', user_ids: ['U02MARIA', 'U03DEV'] }, seed(), /^already_in_channel/);
  await refuses('invite_to_channel', { channel_id: 'C0MINE', user_ids: ['U02MARIA', 'U99'] }, seed(), /^user_not_found.*U99.*nobody/);
  await refuses('invite_to_channel', { channel_id: 'C0MINE', user_ids: ['U04GONE'] }, seed(), /^user_not_found/);
  await refuses('invite_to_channel', { channel_id: 'C0RANDOM', user_ids: ['U03DEV'] }, seed(), /^not_in_channel/);
  await refuses('invite_to_channel', { channel_id: 'C0OLD', user_ids: ['U03DEV'] }, seed(), /^is_archived/);
});

test('update_message edits only own messages, keeping the ts and marking the edit', async () => {
  const out = await call('update_message', { channel_id: 'C0GENERAL', ts: M3, text: 'Lunch at 12:30' }, seed());
  const edited = message(out.state!, 'C0GENERAL', M3)!;
  assert.equal(edited.text, 'Lunch at 12:30');
  assert.deepEqual(edited.edited, { user: 'U01AGENT', ts: LATEST_NEXT });
  assert.equal(out.result.ts, M3);
  await refuses('update_message', { channel_id: 'C0GENERAL', ts: M1, text: 'hijack' }, seed(), /^cant_update_message/);
  await refuses('update_message', { channel_id: 'C0GENERAL', ts: '1.000100', text: 'x' }, seed(), /^message_not_found/);
  await refuses('update_message', { channel_id: 'C0OLD', ts: '1767500000.000100', text: 'x' }, seed(), /^is_archived/);
});

test('delete_message removes own messages; a thread parent with replies becomes a tombstone', async () => {
  const removed = await call('delete_message', { channel_id: 'C0GENERAL', ts: M3 }, seed());
  assert.equal(message(removed.state!, 'C0GENERAL', M3), undefined);
  assert.deepEqual(removed.result, { ok: true, channel: 'C0GENERAL', ts: M3 });
  const tomb = (await call('delete_message', { channel_id: 'C0GENERAL', ts: M4 }, seed())).state!;
  assert.deepEqual(plain(message(tomb, 'C0GENERAL', M4)), { ts: M4, user: 'U01AGENT', text: 'This message was deleted.', thread_ts: M4, reactions: [], subtype: 'tombstone' });
  assert.ok(message(tomb, 'C0GENERAL', M5), 'the reply stays');
  assert.equal((await call('get_channel_history', { channel_id: 'C0GENERAL' }, tomb)).result.messages[0].subtype, 'tombstone');
  await refuses('delete_message', { channel_id: 'C0GENERAL', ts: M4 }, tomb, /^message_not_found/);
  // Deleting the last reply under a tombstone removes the thread; under a live parent the parent stays, unthreaded.
  const both = (await call('delete_message', { channel_id: 'C0MINE', ts: R1 }, (await call('delete_message', { channel_id: 'C0MINE', ts: P1 }, seed())).state!)).state!;
  assert.deepEqual(channel(both, 'C0MINE').messages, []);
  const replyOnly = (await call('delete_message', { channel_id: 'C0MINE', ts: R1 }, seed())).state!;
  assert.deepEqual(plain(channel(replyOnly, 'C0MINE').messages), [{ ts: P1, user: 'U01AGENT', text: 'parent note', reactions: [] }]);
  await refuses('delete_message', { channel_id: 'C0GENERAL', ts: M1 }, seed(), /^cant_delete_message/);
  await refuses('delete_message', { channel_id: 'C0GENERAL', ts: '1.000100' }, seed(), /^message_not_found/);
});

test('search_messages finds words in visible channels, replies included, newest first, with in: and from:', async () => {
  const find = async (query: string) => (await call('search_messages', { query }, seed())).result.messages.matches.map((m: Json) => `${m.channel.name}/${m.ts}`);
  assert.deepEqual(await find('deploy'), ['random/1767600180.000100', `general/${M1}`, 'old/1767500000.000100']);
  assert.deepEqual(await find('deploy in:#general'), [`general/${M1}`]);
  assert.deepEqual(await find('deploy from:@maria'), ['random/1767600180.000100', `general/${M1}`]);
  assert.deepEqual(await find('from:<@U02MARIA> in:general'), [`general/${M1}`]);
  assert.deepEqual(await find('noted'), [`general/${M5}`]);
  assert.deepEqual(await find('@maria lunch'), [`general/${M3}`]);
  assert.deepEqual(await find('deploy from:@nobody'), []);
  const counted = (await call('search_messages', { query: 'deploy', count: 1 }, seed())).result.messages;
  assert.deepEqual([counted.total, counted.matches.length], [3, 1]);
});

// Every task of the namespace: its reference solutions, replayed through its servers, pass with no refused
// call; its counterexamples fail. Cross-server tasks route each call to its namespace's server.
testFixtureTasks(NS, { noRefusals: true });
