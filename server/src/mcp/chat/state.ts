/** The chat workspace state (schemas/servers/chat.json `state_schema`) with every default filled in. */

export interface ChatUser {
  id: string;
  name: string;
  real_name?: string;
  display_name?: string;
  title?: string;
  email?: string;
  tz?: string;
  is_bot: boolean;
  deleted: boolean;
}

interface ChatReaction {
  name: string;
  users: string[];
}

export interface ChatMessage {
  ts: string;
  user: string;
  text: string;
  thread_ts?: string;
  reactions: ChatReaction[];
  edited?: { user: string; ts: string };
  subtype?: 'tombstone';
}

export interface ChatChannel {
  id: string;
  name: string;
  is_private: boolean;
  is_archived: boolean;
  members: string[];
  topic: string;
  purpose: string;
  creator?: string;
  messages: ChatMessage[];
}

export interface ChatState {
  current_user: string;
  users: ChatUser[];
  channels: ChatChannel[];
}

type Raw = Record<string, unknown>;
const obj = (v: unknown): Raw => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Raw) : {});
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v : []);
const str = (v: unknown, fallback = ''): string => (typeof v === 'string' ? v : fallback);
const optStr = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

export function normalizeChatState(input: unknown): ChatState {
  const raw = obj(input);
  const users: ChatUser[] = arr(raw.users).map((u) => {
    const o = obj(u);
    return {
      id: str(o.id),
      name: str(o.name),
      real_name: optStr(o.real_name),
      display_name: optStr(o.display_name),
      title: optStr(o.title),
      email: optStr(o.email),
      tz: optStr(o.tz),
      is_bot: o.is_bot === true,
      deleted: o.deleted === true,
    };
  });
  const channels: ChatChannel[] = arr(raw.channels).map((c) => {
    const o = obj(c);
    const messages: ChatMessage[] = arr(o.messages).map((m) => {
      const mo = obj(m);
      const edited = obj(mo.edited);
      return {
        ts: str(mo.ts),
        user: str(mo.user),
        text: str(mo.text),
        thread_ts: optStr(mo.thread_ts),
        reactions: arr(mo.reactions).map((r) => ({
          name: canonicalReaction(str(obj(r).name)),
          users: arr(obj(r).users).filter((x): x is string => typeof x === 'string'),
        })),
        edited: typeof edited.user === 'string' ? { user: edited.user, ts: str(edited.ts) } : undefined,
        subtype: mo.subtype === 'tombstone' ? 'tombstone' : undefined,
      };
    });
    // Seeded messages may come in any order; the snapshot and the predicates' "latest" logic rely on ts order.
    messages.sort((a, b) => compareTs(a.ts, b.ts));
    return {
      id: str(o.id),
      name: str(o.name),
      is_private: o.is_private === true,
      is_archived: o.is_archived === true,
      members: arr(o.members).filter((x): x is string => typeof x === 'string'),
      topic: str(o.topic),
      purpose: str(o.purpose),
      creator: optStr(o.creator),
      messages,
    };
  });
  const current = optStr(raw.current_user) ?? users[0]?.id ?? 'U00000000';
  return { current_user: current, users, channels };
}

/** Slack ts strings compare as numbers of seconds with microseconds; compare them without float rounding. */
export function compareTs(a: string, b: string): number {
  const [as = '0', af = ''] = a.split('.');
  const [bs = '0', bf = ''] = b.split('.');
  const ai = BigInt(/^\d+$/.test(as) ? as : '0');
  const bi = BigInt(/^\d+$/.test(bs) ? bs : '0');
  if (ai !== bi) return ai < bi ? -1 : 1;
  const fa = af.padEnd(6, '0');
  const fb = bf.padEnd(6, '0');
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

const REACTION_ALIASES: Record<string, string> = { thumbsup: '+1', thumbsdown: '-1', thumbs_up: '+1', thumbs_down: '-1' };

/** Slack stores one canonical name per emoji; `:thumbsup:` and `+1` are the same reaction. */
export function canonicalReaction(name: string): string {
  const bare = name.trim().replace(/^:|:$/g, '').toLowerCase();
  return REACTION_ALIASES[bare] ?? bare;
}
