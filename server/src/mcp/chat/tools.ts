/**
 * The chat tools as pure functions of the state: the rules the tool descriptions in schemas/servers/chat.json
 * promise (visibility of private channels, membership, own-message edits, tombstones, canonical reactions),
 * with Slack Web API results (`{ok: true, ...}`). A refusal's message starts with Slack's error code.
 */
import { ToolError, type ToolHandler } from '../namespace.ts';
import { findUser } from './predicates.ts';
import { canonicalReaction, compareTs, normalizeChatState, type ChatChannel, type ChatMessage, type ChatState, type ChatUser } from './state.ts';

type Handler = ToolHandler<ChatState>;
type Json = Record<string, unknown>;

/** Handlers hand back the state in its normalised form, so a snapshot reads exactly what they wrote. */
const done = (next: ChatState): ChatState => normalizeChatState(next);

const fail = (code: string, hint: string): ToolError => new ToolError(`${code}: ${hint}`);

const TOMBSTONE_TEXT = 'This message was deleted.';
/** The ts of the first message of an empty workspace (2026-01-01T00:00:00Z). */
const FIRST_TS = '1767225600.000100';

const isReply = (m: ChatMessage): boolean => m.thread_ts !== undefined && m.thread_ts !== m.ts;
const live = (m: ChatMessage): boolean => m.subtype !== 'tombstone';

/** Slack ids are given without the period sometimes; the description tells agents how, this accepts both. */
function normalizeTs(ts: string): string {
  const t = ts.trim();
  return /^\d{7,}$/.test(t) ? `${t.slice(0, -6)}.${t.slice(-6)}` : t;
}

/** No wall clock: one second after the latest ts in the workspace, microseconds 000100. */
function nextTs(state: ChatState): string {
  let latest: string | undefined;
  for (const c of state.channels) {
    for (const m of c.messages) {
      for (const ts of [m.ts, m.edited?.ts]) {
        if (ts !== undefined && /^\d+\.\d+$/.test(ts) && (latest === undefined || compareTs(ts, latest) > 0)) latest = ts;
      }
    }
  }
  if (latest === undefined) return FIRST_TS;
  return `${BigInt(latest.split('.')[0]!) + 1n}.000100`;
}

const isMember = (state: ChatState, c: ChatChannel): boolean => c.members.includes(state.current_user);
const visible = (state: ChatState, c: ChatChannel): boolean => !c.is_private || isMember(state, c);

/**
 * The channel an id names, as the current user may see it: private channels it is not in do not exist for it.
 * A name (with or without #) is accepted too, as chat.postMessage does.
 */
function channelIndex(state: ChatState, ref: string): number {
  const trimmed = ref.trim();
  let i = state.channels.findIndex((c) => c.id === trimmed);
  if (i < 0) {
    const name = trimmed.replace(/^#/, '').toLowerCase();
    i = state.channels.findIndex((c) => c.name.toLowerCase() === name);
  }
  if (i < 0 || !visible(state, state.channels[i]!)) {
    throw fail('channel_not_found', `no channel "${ref}" that you can see; use list_channels for the ids of public channels and private channels you are in.`);
  }
  return i;
}

function readChannel(state: ChatState, ref: string): ChatChannel {
  return state.channels[channelIndex(state, ref)]!;
}

/** A copy of the state and the channel in it, for calls that write; archived channels are read-only. */
function writeChannel(state: ChatState, ref: string): { next: ChatState; channel: ChatChannel } {
  const i = channelIndex(state, ref);
  const next = structuredClone(state);
  const channel = next.channels[i]!;
  if (channel.is_archived) throw fail('is_archived', `#${channel.name} is archived and read-only.`);
  return { next, channel };
}

function requireMember(state: ChatState, channel: ChatChannel): void {
  if (!isMember(state, channel)) throw fail('not_in_channel', `you (${state.current_user}) are not a member of #${channel.name}.`);
}

function messageAt(channel: ChatChannel, ts: string, code = 'message_not_found'): ChatMessage {
  const m = channel.messages.find((x) => x.ts === ts && live(x));
  if (!m) throw fail(code, `no message with ts ${ts} in #${channel.name}; read the ts values with get_channel_history or search_messages.`);
  return m;
}

// ---- views

function messageView(channel: ChatChannel, m: ChatMessage): Json {
  const view: Json = { type: 'message' };
  if (m.subtype !== undefined) view.subtype = m.subtype;
  view.user = m.user;
  view.text = m.text;
  view.ts = m.ts;
  if (m.thread_ts !== undefined) view.thread_ts = m.thread_ts;
  if (!isReply(m)) {
    const replies = channel.messages.filter((r) => isReply(r) && r.thread_ts === m.ts);
    if (replies.length > 0) {
      view.reply_count = replies.length;
      view.latest_reply = replies.at(-1)!.ts;
    }
  }
  if (m.reactions.length > 0) view.reactions = m.reactions.map((r) => ({ name: r.name, users: r.users, count: r.users.length }));
  if (m.edited !== undefined) view.edited = m.edited;
  return view;
}

function channelView(state: ChatState, c: ChatChannel): Json {
  const view: Json = {
    id: c.id,
    name: c.name,
    is_channel: true,
    is_private: c.is_private,
    is_archived: c.is_archived,
    is_member: isMember(state, c),
    num_members: c.members.length,
    topic: { value: c.topic },
    purpose: { value: c.purpose },
  };
  if (c.creator !== undefined) view.creator = c.creator;
  return view;
}

function userView(u: ChatUser): Json {
  const profile: Json = {};
  if (u.real_name !== undefined) profile.real_name = u.real_name;
  if (u.display_name !== undefined) profile.display_name = u.display_name;
  if (u.title !== undefined) profile.title = u.title;
  if (u.email !== undefined) profile.email = u.email;
  const view: Json = { id: u.id, name: u.name, deleted: u.deleted, is_bot: u.is_bot };
  if (u.real_name !== undefined) view.real_name = u.real_name;
  if (u.tz !== undefined) view.tz = u.tz;
  view.profile = profile;
  return view;
}

const CURSOR_PREFIX = 'offset:';
const encodeCursor = (offset: number): string => Buffer.from(`${CURSOR_PREFIX}${offset}`).toString('base64');
function decodeCursor(cursor: string | undefined): number {
  if (cursor === undefined || cursor === '') return 0;
  const text = Buffer.from(cursor, 'base64').toString('utf8');
  const n = Number(text.slice(CURSOR_PREFIX.length));
  if (!text.startsWith(CURSOR_PREFIX) || !Number.isInteger(n) || n < 0) {
    throw fail('invalid_cursor', `pass the next_cursor of the previous response, or no cursor for the first page.`);
  }
  return n;
}

function page<T>(items: T[], cursor: string | undefined, limit: number | undefined, fallback: number, max: number): { items: T[]; next_cursor: string } {
  const start = decodeCursor(cursor);
  const n = Math.min(max, Math.max(1, Math.floor(limit ?? fallback)));
  const slice = items.slice(start, start + n);
  return { items: slice, next_cursor: start + n < items.length ? encodeCursor(start + n) : '' };
}

// ---- handlers

const list_channels: Handler = (args: { limit?: number; cursor?: string }, state) => {
  const channels = state.channels.filter((c) => !c.is_archived && visible(state, c)).sort((a, b) => a.name.localeCompare(b.name));
  const { items, next_cursor } = page(channels, args.cursor, args.limit, 100, 200);
  return { result: { ok: true, channels: items.map((c) => channelView(state, c)), response_metadata: { next_cursor } } };
};

function post(state: ChatState, channelRef: string, text: string, threadTs?: string): { state: ChatState; result: Json } {
  if (text.trim() === '') throw fail('no_text', 'the message text is empty.');
  const { next, channel } = writeChannel(state, channelRef);
  let parentTs: string | undefined;
  if (threadTs !== undefined) {
    const ts = normalizeTs(threadTs);
    // A tombstoned parent still anchors its thread, so replies to it are allowed.
    const target = channel.messages.find((m) => m.ts === ts);
    if (!target) throw fail('thread_not_found', `no message with ts ${ts} in #${channel.name}; read the ts values with get_channel_history.`);
    parentTs = isReply(target) ? target.thread_ts! : target.ts;
    const parent = channel.messages.find((m) => m.ts === parentTs);
    if (parent) parent.thread_ts = parent.ts;
  }
  const message: ChatMessage = { ts: nextTs(next), user: next.current_user, text, reactions: [] };
  if (parentTs !== undefined) message.thread_ts = parentTs;
  channel.messages.push(message);
  const after = done(next);
  const stored = after.channels.find((c) => c.id === channel.id)!;
  return { state: after, result: { ok: true, channel: channel.id, ts: message.ts, message: messageView(stored, message) } };
}

const post_message: Handler = (args: { channel_id: string; text: string }, state) => post(state, args.channel_id, args.text);

const reply_to_thread: Handler = (args: { channel_id: string; thread_ts: string; text: string }, state) =>
  post(state, args.channel_id, args.text, args.thread_ts);

const add_reaction: Handler = (args: { channel_id: string; timestamp: string; reaction: string }, state) => {
  const name = canonicalReaction(args.reaction);
  if (name === '' || /\s/.test(name)) throw fail('invalid_name', `"${args.reaction}" is not an emoji name; give it without colons, e.g. eyes or +1.`);
  const { next, channel } = writeChannel(state, args.channel_id);
  const message = messageAt(channel, normalizeTs(args.timestamp));
  const existing = message.reactions.find((r) => r.name === name);
  if (existing?.users.includes(next.current_user)) throw fail('already_reacted', `you already reacted with :${name}: to this message.`);
  if (existing) existing.users.push(next.current_user);
  else message.reactions.push({ name, users: [next.current_user] });
  return { state: done(next), result: { ok: true, channel: channel.id, ts: message.ts, reaction: name } };
};

const get_channel_history: Handler = (args: { channel_id: string; limit?: number }, state) => {
  const channel = readChannel(state, args.channel_id);
  const n = Math.min(1000, Math.max(1, Math.floor(args.limit ?? 10)));
  const top = channel.messages.filter((m) => !isReply(m)).reverse();
  return { result: { ok: true, channel: channel.id, messages: top.slice(0, n).map((m) => messageView(channel, m)), has_more: top.length > n } };
};

const get_thread_replies: Handler = (args: { channel_id: string; thread_ts: string }, state) => {
  const channel = readChannel(state, args.channel_id);
  const ts = normalizeTs(args.thread_ts);
  const target = channel.messages.find((m) => m.ts === ts);
  if (!target) throw fail('thread_not_found', `no message with ts ${ts} in #${channel.name}.`);
  const parentTs = isReply(target) ? target.thread_ts! : target.ts;
  const parent = channel.messages.find((m) => m.ts === parentTs);
  const replies = channel.messages.filter((m) => isReply(m) && m.thread_ts === parentTs);
  const messages = [...(parent ? [parent] : []), ...replies].map((m) => messageView(channel, m));
  return { result: { ok: true, channel: channel.id, messages, has_more: false } };
};

const get_users: Handler = (args: { cursor?: string; limit?: number }, state) => {
  const users = state.users.filter((u) => !u.is_bot && !u.deleted);
  const { items, next_cursor } = page(users, args.cursor, args.limit, 100, 200);
  return { result: { ok: true, members: items.map(userView), response_metadata: { next_cursor } } };
};

const get_user_profile: Handler = (args: { user_id: string }, state) => {
  const ref = args.user_id.trim().replace(/^<@([^>|]+)(?:\|[^>]*)?>$/, '$1');
  const user = state.users.find((u) => u.id === ref) ?? (ref.startsWith('@') ? findUser(state, ref) : undefined);
  if (!user) throw fail('user_not_found', `no user with id "${args.user_id}"; get_users lists the ids.`);
  const view = userView(user);
  return { result: { ok: true, user: view, profile: view.profile } };
};

const NAME = /^[a-z0-9_-]{1,80}$/;

const create_channel: Handler = (args: { name: string; is_private?: boolean }, state) => {
  const name = args.name;
  if (!NAME.test(name)) {
    throw fail('invalid_name_specials', `"${name}" is not a valid channel name: use 1-80 lower case letters, digits, hyphens and underscores, without #.`);
  }
  const taken = state.channels.find((c) => c.name === name);
  if (taken) throw fail('name_taken', `a channel named #${name} already exists${taken.is_archived ? ' (archived)' : ''} (${taken.id}); pick another name.`);
  const next = structuredClone(state);
  const used = new Set(next.channels.map((c) => c.id));
  let n = next.channels.length + 1;
  let id = `C${String(n).padStart(8, '0')}`;
  while (used.has(id)) id = `C${String(++n).padStart(8, '0')}`;
  const channel: ChatChannel = {
    id,
    name,
    is_private: args.is_private === true,
    is_archived: false,
    members: [next.current_user],
    topic: '',
    purpose: '',
    creator: next.current_user,
    messages: [],
  };
  next.channels.push(channel);
  return { state: done(next), result: { ok: true, channel: channelView(next, channel) } };
};

const set_channel_topic: Handler = (args: { channel_id: string; topic: string }, state) => {
  const { next, channel } = writeChannel(state, args.channel_id);
  requireMember(next, channel);
  if (args.topic.length > 250) throw fail('too_long', `the topic has ${args.topic.length} characters; at most 250 are allowed.`);
  channel.topic = args.topic;
  return { state: done(next), result: { ok: true, channel: channelView(next, channel) } };
};

const invite_to_channel: Handler = (args: { channel_id: string; user_ids: string[] }, state) => {
  const { next, channel } = writeChannel(state, args.channel_id);
  requireMember(next, channel);
  const ids = [...new Set(args.user_ids.map((u) => u.trim()))];
  for (const id of ids) {
    const user = next.users.find((u) => u.id === id);
    if (!user || user.deleted) throw fail('user_not_found', `no active user with id "${id}" (nobody was invited); get_users lists the ids.`);
  }
  const added = ids.filter((id) => !channel.members.includes(id));
  if (added.length === 0) throw fail('already_in_channel', `every given user is already a member of #${channel.name}.`);
  channel.members.push(...added);
  return { state: done(next), result: { ok: true, channel: channelView(next, channel), invited: added } };
};

const update_message: Handler = (args: { channel_id: string; ts: string; text: string }, state) => {
  if (args.text.trim() === '') throw fail('no_text', 'the new text is empty; use delete_message to remove a message.');
  const { next, channel } = writeChannel(state, args.channel_id);
  const message = messageAt(channel, normalizeTs(args.ts));
  if (message.user !== next.current_user) throw fail('cant_update_message', `message ${message.ts} was posted by ${message.user}; you can only edit your own messages.`);
  const editedTs = nextTs(next);
  message.text = args.text;
  message.edited = { user: next.current_user, ts: editedTs };
  return { state: done(next), result: { ok: true, channel: channel.id, ts: message.ts, text: message.text, message: messageView(channel, message) } };
};

const delete_message: Handler = (args: { channel_id: string; ts: string }, state) => {
  const { next, channel } = writeChannel(state, args.channel_id);
  const message = messageAt(channel, normalizeTs(args.ts));
  if (message.user !== next.current_user) throw fail('cant_delete_message', `message ${message.ts} was posted by ${message.user}; you can only delete your own messages.`);
  const hasReplies = !isReply(message) && channel.messages.some((m) => isReply(m) && m.thread_ts === message.ts);
  if (hasReplies) {
    // The replies stay readable under a tombstone, as in Slack.
    message.subtype = 'tombstone';
    message.text = TOMBSTONE_TEXT;
    message.reactions = [];
    delete message.edited;
  } else {
    channel.messages = channel.messages.filter((m) => m !== message);
    if (isReply(message)) {
      const parentTs = message.thread_ts!;
      const remaining = channel.messages.some((m) => isReply(m) && m.thread_ts === parentTs);
      const parent = channel.messages.find((m) => m.ts === parentTs);
      if (!remaining && parent) {
        // A thread without replies is no thread: a tombstone has nothing left to anchor, a live parent loses thread_ts.
        if (parent.subtype === 'tombstone') channel.messages = channel.messages.filter((m) => m !== parent);
        else delete parent.thread_ts;
      }
    }
  }
  return { state: done(next), result: { ok: true, channel: channel.id, ts: message.ts } };
};

function renderMentions(state: ChatState, text: string): string {
  return text.replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => {
    const user = state.users.find((u) => u.id === id);
    return `@${label ?? user?.display_name ?? user?.name ?? id}`;
  });
}

const search_messages: Handler = (args: { query: string; count?: number }, state) => {
  const tokens = args.query.match(/"[^"]*"|\S+/g) ?? [];
  const words: string[] = [];
  let inChannel: string | undefined;
  let from: string | undefined;
  for (const token of tokens) {
    const lower = token.toLowerCase();
    if (lower.startsWith('in:')) inChannel = token.slice(3);
    else if (lower.startsWith('from:')) from = token.slice(5);
    else words.push(token.replace(/^"|"$/g, '').toLowerCase());
  }
  let channels = state.channels.filter((c) => visible(state, c));
  if (inChannel !== undefined) {
    const ref = inChannel.replace(/^<#([CG][A-Z0-9]+)(?:\|[^>]*)?>$/, '$1').replace(/^#/, '').toLowerCase();
    channels = channels.filter((c) => c.id.toLowerCase() === ref || c.name.toLowerCase() === ref);
  }
  let author: string | undefined;
  if (from !== undefined) {
    const ref = from.replace(/^<@([UW][A-Z0-9]+)(?:\|[^>]*)?>$/, '$1');
    // An unknown author matches nothing rather than everything.
    author = findUser(state, ref)?.id ?? `unknown:${ref}`;
  }
  const matches: Array<{ channel: ChatChannel; message: ChatMessage }> = [];
  for (const channel of channels) {
    for (const message of channel.messages) {
      if (!live(message) || (author !== undefined && message.user !== author)) continue;
      const hay = `${message.text}\n${renderMentions(state, message.text)}`.toLowerCase();
      if (words.every((w) => hay.includes(w))) matches.push({ channel, message });
    }
  }
  matches.sort((a, b) => compareTs(b.message.ts, a.message.ts) || a.channel.name.localeCompare(b.channel.name));
  const n = Math.min(100, Math.max(1, Math.floor(args.count ?? 20)));
  return {
    result: {
      ok: true,
      query: args.query,
      messages: {
        total: matches.length,
        matches: matches.slice(0, n).map(({ channel, message }) => {
          const user = state.users.find((u) => u.id === message.user);
          return {
            type: 'message',
            channel: { id: channel.id, name: channel.name },
            user: message.user,
            ...(user ? { username: user.name } : {}),
            text: message.text,
            ts: message.ts,
            ...(message.thread_ts !== undefined ? { thread_ts: message.thread_ts } : {}),
          };
        }),
      },
    },
  };
};

export const tools: Record<string, Handler> = {
  list_channels,
  post_message,
  reply_to_thread,
  add_reaction,
  get_channel_history,
  get_thread_replies,
  get_users,
  get_user_profile,
  create_channel,
  set_channel_topic,
  invite_to_channel,
  update_message,
  delete_message,
  search_messages,
};
