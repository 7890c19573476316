import type { PredicateContext, Verdict } from '../namespace.ts';
import { canonicalReaction, type ChatChannel, type ChatMessage, type ChatState, type ChatUser } from './state.ts';

type Ctx = PredicateContext<ChatState>;
type Where = 'any' | 'top_level' | 'reply';

// ---- lookups

const fold = (s: string): string => s.normalize('NFKC').replace(/\s+/gu, ' ').trim().toLowerCase();

function findChannel(state: ChatState, ref: string): ChatChannel | undefined {
  const byId = state.channels.find((c) => c.id === ref);
  if (byId) return byId;
  const name = ref.replace(/^#/, '').toLowerCase();
  return state.channels.find((c) => c.name.toLowerCase() === name);
}

export function findUser(state: ChatState, ref: string): ChatUser | undefined {
  const byId = state.users.find((u) => u.id === ref);
  if (byId) return byId;
  const name = fold(ref.replace(/^@/, ''));
  return (
    state.users.find((u) => fold(u.name) === name) ??
    state.users.find((u) => u.display_name !== undefined && fold(u.display_name) === name) ??
    state.users.find((u) => u.real_name !== undefined && fold(u.real_name) === name)
  );
}

/** A user reference that matches no user still matches a message whose author id equals it literally. */
function userId(state: ChatState, ref: string): string {
  return findUser(state, ref)?.id ?? ref;
}

const isReply = (m: ChatMessage): boolean => m.thread_ts !== undefined && m.thread_ts !== m.ts;
const live = (m: ChatMessage): boolean => m.subtype !== 'tombstone';

function whereOk(m: ChatMessage, where: Where): boolean {
  return where === 'any' || (where === 'reply') === isReply(m);
}

/** The text as posted and as readers see it (mentions rendered as @name), so authors can match either. */
function renderings(state: ChatState, text: string): string[] {
  const rendered = text
    .replace(/<@([UW][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => {
      const user = state.users.find((u) => u.id === id);
      return `@${label ?? user?.display_name ?? user?.name ?? id}`;
    })
    .replace(/<#([CG][A-Z0-9]+)(?:\|([^>]*))?>/g, (_m, id: string, label?: string) => {
      const channel = state.channels.find((c) => c.id === id);
      return `#${label ?? channel?.name ?? id}`;
    });
  return rendered === text ? [fold(text)] : [fold(text), fold(rendered)];
}

function textContains(state: ChatState, text: string, needles: string[]): boolean {
  const hay = renderings(state, text);
  return needles.every((n) => hay.some((h) => h.includes(fold(n))));
}

function textEquals(state: ChatState, text: string, expected: string): boolean {
  return renderings(state, text).includes(fold(expected));
}

const asList = (v: string | string[] | undefined): string[] => (v === undefined ? [] : Array.isArray(v) ? v : [v]);

interface Located {
  channel: string;
  message: ChatMessage;
}

function scope(state: ChatState, channelRef: string | undefined): { channels: ChatChannel[]; missing: boolean } {
  if (channelRef === undefined) return { channels: state.channels, missing: false };
  const channel = findChannel(state, channelRef);
  return channel ? { channels: [channel], missing: false } : { channels: [], missing: true };
}

function allMessages(channels: ChatChannel[]): Located[] {
  return channels.flatMap((c) => c.messages.filter(live).map((message) => ({ channel: c.name, message })));
}

const brief = (l: Located): unknown => ({
  channel: l.channel,
  ts: l.message.ts,
  user: l.message.user,
  text: l.message.text.length > 200 ? `${l.message.text.slice(0, 200)}…` : l.message.text,
  ...(l.message.thread_ts ? { thread_ts: l.message.thread_ts } : {}),
});

function latest(candidates: Located[], n = 5): unknown[] {
  return candidates.slice(-n).map(brief);
}

// ---- predicates

export function channelExists(args: { name: string; is_private?: boolean; is_archived?: boolean }, { state }: Ctx): Verdict {
  const name = args.name.replace(/^#/, '').toLowerCase();
  const channel = state.channels.find((c) => c.name.toLowerCase() === name);
  if (!channel) return { value: false, evidence: { name, channels: state.channels.map((c) => c.name).slice(0, 30) } };
  const value =
    (args.is_private === undefined || channel.is_private === args.is_private) &&
    (args.is_archived === undefined || channel.is_archived === args.is_archived);
  return { value, evidence: { channel: { id: channel.id, name: channel.name, is_private: channel.is_private, is_archived: channel.is_archived } } };
}

export function channelTopic(args: { channel: string; equals?: string; contains?: string }, { state }: Ctx): Verdict {
  const channel = findChannel(state, args.channel);
  if (!channel) return { value: false, evidence: { channel: args.channel, found: false } };
  const topic = fold(channel.topic);
  let value = args.equals === undefined && args.contains === undefined ? topic.length > 0 : true;
  if (args.equals !== undefined) value &&= topic === fold(args.equals);
  if (args.contains !== undefined) value &&= topic.includes(fold(args.contains));
  return { value, evidence: { channel: channel.name, topic: channel.topic } };
}

export function userInChannel(args: { channel: string; user: string }, { state }: Ctx): Verdict {
  const channel = findChannel(state, args.channel);
  if (!channel) return { value: false, evidence: { channel: args.channel, found: false } };
  const id = userId(state, args.user);
  return { value: channel.members.includes(id), evidence: { channel: channel.name, user: id, members: channel.members.slice(0, 50) } };
}

interface MessageFilter {
  channel?: string;
  contains?: string | string[];
  equals?: string;
  user?: string;
  where?: Where;
}

function matchMessages(state: ChatState, f: MessageFilter): { matches: Located[]; pool: Located[]; missing: boolean } {
  const { channels, missing } = scope(state, f.channel);
  const pool = allMessages(channels);
  const author = f.user === undefined ? undefined : userId(state, f.user);
  const needles = asList(f.contains);
  const matches = pool.filter(
    ({ message: m }) =>
      whereOk(m, f.where ?? 'any') &&
      (author === undefined || m.user === author) &&
      textContains(state, m.text, needles) &&
      (f.equals === undefined || textEquals(state, m.text, f.equals)),
  );
  return { matches, pool, missing };
}

export function messagePosted(args: MessageFilter, { state }: Ctx): Verdict {
  const { matches, pool, missing } = matchMessages(state, args);
  if (missing) return { value: false, evidence: { channel: args.channel, found: false } };
  const first = matches[0];
  return first
    ? { value: true, evidence: { match: brief(first), matches: matches.length } }
    : { value: false, evidence: { latest: latest(pool) } };
}

export function messageCount(args: MessageFilter & { equals?: number; min?: number; max?: number }, { state }: Ctx): Verdict {
  const { equals: count, min, max, ...filter } = args;
  const { matches, missing } = matchMessages(state, { ...filter, equals: undefined });
  const n = missing ? 0 : matches.length;
  const bounded = count !== undefined || min !== undefined || max !== undefined;
  const value = bounded
    ? (count === undefined || n === count) && (min === undefined || n >= min) && (max === undefined || n <= max)
    : n > 0;
  return { value, evidence: { count: n, ...(missing ? { channel: args.channel, found: false } : {}), sample: matches.slice(0, 5).map(brief) } };
}

export function threadReply(
  args: { channel: string; parent_ts?: string; parent_contains?: string; contains?: string | string[]; user?: string },
  { state }: Ctx,
): Verdict {
  const channel = findChannel(state, args.channel);
  if (!channel) return { value: false, evidence: { channel: args.channel, found: false } };
  // A tombstoned parent still anchors its thread (its replies survive), but its text no longer matches.
  const parents = channel.messages.filter(
    (m) =>
      !isReply(m) &&
      (args.parent_ts === undefined || m.ts === args.parent_ts) &&
      (args.parent_contains === undefined || (live(m) && textContains(state, m.text, [args.parent_contains]))),
  );
  const parentTs = new Set(parents.map((p) => p.ts));
  const author = args.user === undefined ? undefined : userId(state, args.user);
  const replies = channel.messages.filter((m) => isReply(m) && live(m) && parentTs.has(m.thread_ts!));
  const match = replies.find((m) => (author === undefined || m.user === author) && textContains(state, m.text, asList(args.contains)));
  if (match) return { value: true, evidence: { reply: brief({ channel: channel.name, message: match }) } };
  return {
    value: false,
    evidence: {
      parents: parents.slice(0, 5).map((message) => brief({ channel: channel.name, message })),
      replies: latest(replies.map((message) => ({ channel: channel.name, message }))),
    },
  };
}

export function reactionAdded(
  args: { channel: string; reaction: string; ts?: string; message_contains?: string; user?: string },
  { state }: Ctx,
): Verdict {
  const channel = findChannel(state, args.channel);
  if (!channel) return { value: false, evidence: { channel: args.channel, found: false } };
  const name = canonicalReaction(args.reaction);
  const reactor = args.user === undefined ? undefined : userId(state, args.user);
  const targets = channel.messages.filter(
    (m) =>
      live(m) &&
      (args.ts === undefined || m.ts === args.ts) &&
      (args.message_contains === undefined || textContains(state, m.text, [args.message_contains])),
  );
  const hit = targets.find((m) =>
    m.reactions.some((r) => r.name === name && r.users.length > 0 && (reactor === undefined || r.users.includes(reactor))),
  );
  if (hit) return { value: true, evidence: { message: brief({ channel: channel.name, message: hit }), reactions: hit.reactions } };
  return {
    value: false,
    evidence: {
      reaction: name,
      messages: targets.slice(0, 5).map((m) => ({ ts: m.ts, text: m.text.slice(0, 80), reactions: m.reactions })),
    },
  };
}

export function messageExists(args: { channel: string; ts: string; contains?: string; equals?: string }, { state }: Ctx): Verdict {
  const channel = findChannel(state, args.channel);
  if (!channel) return { value: false, evidence: { channel: args.channel, found: false } };
  const message = channel.messages.find((m) => m.ts === args.ts && live(m));
  if (!message) return { value: false, evidence: { channel: channel.name, ts: args.ts, found: false } };
  const value =
    (args.contains === undefined || textContains(state, message.text, [args.contains])) &&
    (args.equals === undefined || textEquals(state, message.text, args.equals));
  return { value, evidence: { message: brief({ channel: channel.name, message }) } };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export function mentionPosted(args: { mentioned: string; channel?: string; contains?: string; user?: string }, { state }: Ctx): Verdict {
  const target = findUser(state, args.mentioned);
  const id = target?.id ?? args.mentioned.replace(/^@/, '');
  const handles = [target?.name, target?.display_name].filter((h): h is string => !!h && h.trim() !== '');
  const patterns = [
    new RegExp(`<@${escapeRegExp(id)}(?:\\|[^>]*)?>`),
    ...handles.map((h) => new RegExp(`(?<![\\p{L}\\p{N}_.@-])@${escapeRegExp(h)}(?![\\p{L}\\p{N}_-])`, 'iu')),
  ];
  const { channels, missing } = scope(state, args.channel);
  if (missing) return { value: false, evidence: { channel: args.channel, found: false } };
  const author = args.user === undefined ? undefined : userId(state, args.user);
  const pool = allMessages(channels);
  const match = pool.find(
    ({ message: m }) =>
      (author === undefined || m.user === author) &&
      patterns.some((p) => p.test(m.text)) &&
      (args.contains === undefined || textContains(state, m.text, [args.contains])),
  );
  return match
    ? { value: true, evidence: { mentioned: id, match: brief(match) } }
    : { value: false, evidence: { mentioned: id, handles, latest: latest(pool) } };
}
