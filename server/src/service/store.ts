/**
 * The submission service's accounts and API tokens, in the results database (migration 0002_service).
 *
 * A token's secret is `mcpb_<token id>_<43 characters of base64url>` (256 random bits). Only its SHA-256 is
 * stored; a presented secret is looked up by the id inside it and its hash compared in constant time. A token
 * carries scopes, may expire, and is revoked by setting `revoked_at` (it stays listed).
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ResultsDb } from '../results/db.ts';
import { McpbenchError } from '../errors.ts';

export const TOKEN_SCOPES = ['submissions', 'tokens'] as const;
export type TokenScope = (typeof TOKEN_SCOPES)[number];

/** What the service answers with, as RFC 9457 problem details (schemas/openapi.yaml `Problem`). */
export type ProblemCode =
  | 'invalid-request'
  | 'unauthorized'
  | 'insufficient-scope'
  | 'not-found'
  | 'idempotency-key-reused'
  | 'too-large'
  | 'unsupported-media-type'
  | 'image-unavailable'
  | 'set-unavailable'
  | 'endpoint-unreachable'
  | 'rate-limited'
  | 'quota-exceeded'
  | 'internal';

const STATUS: Record<ProblemCode, [number, string]> = {
  'invalid-request': [400, 'Invalid request'],
  unauthorized: [401, 'Unauthorized'],
  'insufficient-scope': [403, 'Insufficient scope'],
  'not-found': [404, 'Not found'],
  'idempotency-key-reused': [409, 'Idempotency key reused'],
  'too-large': [413, 'Body too large'],
  'unsupported-media-type': [415, 'Unsupported media type'],
  'image-unavailable': [422, 'Image unavailable'],
  'set-unavailable': [422, 'Set unavailable'],
  'endpoint-unreachable': [422, 'Endpoint unreachable'],
  'rate-limited': [429, 'Too many requests'],
  'quota-exceeded': [429, 'Quota exceeded'],
  internal: [500, 'Internal error'],
};

export interface Problem {
  type: string;
  title: string;
  status: number;
  code: ProblemCode;
  detail?: string;
  instance?: string;
  errors?: { pointer: string; detail: string }[];
}

/** An error the service answers with: its code decides the HTTP status. */
/** A request the service answers with a problem document: its code is the problem's, its status the HTTP one. */
export class ServiceError extends McpbenchError {
  static override readonly code: string = 'service';
  declare readonly code: ProblemCode;
  constructor(
    code: ProblemCode,
    detail?: string,
    readonly errors?: { pointer: string; detail: string }[],
  ) {
    super(detail ?? STATUS[code][1], { code });
  }

  get status(): number {
    return STATUS[this.code][0];
  }

  problem(instance?: string): Problem {
    return problemOf(this.code, this.message === STATUS[this.code][1] ? undefined : this.message, instance, this.errors);
  }
}

export function problemOf(code: ProblemCode, detail?: string, instance?: string, errors?: Problem['errors']): Problem {
  const [status, title] = STATUS[code];
  return {
    type: `https://mcpbench.dev/problems/${code}`,
    title,
    status,
    code,
    ...(detail !== undefined ? { detail } : {}),
    ...(instance !== undefined ? { instance } : {}),
    ...(errors?.length ? { errors } : {}),
  };
}

export const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');

/** A random id: the prefix and `length` characters of [0-9a-z]. */
export function randomId(prefix: string, length = 24): string {
  const alphabet = '0123456789abcdefghijklmnopqrstuvwxyz';
  const bytes = randomBytes(length);
  let out = '';
  for (const byte of bytes) out += alphabet[byte % 36];
  return `${prefix}_${out}`;
}

export interface Account {
  account_id: string;
  name: string;
  max_in_flight: number;
}

export interface TokenView {
  id: string;
  name: string;
  scopes: TokenScope[];
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

export interface Caller {
  account: Account;
  token: TokenView;
}

const iso = (value: Date | string | null): string | null => (value === null ? null : new Date(value).toISOString());
const scopesOf = (values: readonly string[]): TokenScope[] => TOKEN_SCOPES.filter((s) => values.includes(s));

function tokenView(row: { token_id: string; name: string; scopes: string[]; created_at: Date | string; last_used_at: Date | string | null; expires_at: Date | string | null; revoked_at: Date | string | null }): TokenView {
  return {
    id: row.token_id,
    name: row.name,
    scopes: scopesOf(row.scopes),
    created_at: iso(row.created_at)!,
    last_used_at: iso(row.last_used_at),
    expires_at: iso(row.expires_at),
    revoked_at: iso(row.revoked_at),
  };
}

/** The account of that name, made (with the given quota) if it does not exist. */
export async function ensureAccount(db: ResultsDb, name: string, maxInFlight?: number): Promise<Account> {
  const existing = await db.selectFrom('accounts').selectAll().where('name', '=', name).executeTakeFirst();
  if (existing) {
    if (maxInFlight !== undefined && maxInFlight !== existing.max_in_flight) {
      await db.updateTable('accounts').set({ max_in_flight: maxInFlight }).where('account_id', '=', existing.account_id).execute();
      return { account_id: existing.account_id, name, max_in_flight: maxInFlight };
    }
    return { account_id: existing.account_id, name, max_in_flight: existing.max_in_flight };
  }
  const account = { account_id: randomId('acc', 20), name, max_in_flight: maxInFlight ?? 2 };
  await db.insertInto('accounts').values(account).execute();
  return account;
}

/** A new token of the account; its secret is in the answer only. */
export async function createToken(db: ResultsDb, accountId: string, name: string, scopes: readonly TokenScope[], expiresAt?: string): Promise<TokenView & { secret: string }> {
  const id = randomId('tok', 20);
  const secret = `mcpb_${id.slice(4)}_${randomBytes(32).toString('base64url')}`;
  const row = await db
    .insertInto('api_tokens')
    .values({ token_id: id, account_id: accountId, name, secret_sha256: sha256Hex(secret), scopes: [...new Set(scopes)], expires_at: expiresAt ?? null })
    .returningAll()
    .executeTakeFirstOrThrow();
  return { ...tokenView(row), secret };
}

const SECRET = /^mcpb_([0-9a-z]+)_[A-Za-z0-9_-]{32,}$/;

/**
 * The caller a bearer secret stands for. Throws ServiceError `unauthorized` (missing, malformed, unknown,
 * revoked or expired; the detail says which, never whether another account's id exists).
 */
export async function authenticate(db: ResultsDb, authorization: string | undefined, now = new Date()): Promise<Caller> {
  if (!authorization) throw new ServiceError('unauthorized', 'this operation needs a bearer token (Authorization: Bearer mcpb_...)');
  const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
  if (!match) throw new ServiceError('unauthorized', 'the Authorization header is not "Bearer <token>"');
  const secret = match[1]!;
  const parts = SECRET.exec(secret);
  if (!parts) throw new ServiceError('unauthorized', 'the token is malformed');
  const row = await db
    .selectFrom('api_tokens')
    .innerJoin('accounts', 'accounts.account_id', 'api_tokens.account_id')
    .select(['api_tokens.token_id', 'api_tokens.name', 'api_tokens.scopes', 'api_tokens.secret_sha256', 'api_tokens.created_at', 'api_tokens.last_used_at', 'api_tokens.expires_at', 'api_tokens.revoked_at', 'accounts.account_id', 'accounts.name as account_name', 'accounts.max_in_flight'])
    .where('api_tokens.token_id', '=', `tok_${parts[1]}`)
    .executeTakeFirst();
  const presented = Buffer.from(sha256Hex(secret), 'hex');
  // Compare even when the id is unknown, so an unknown id costs what a wrong secret does.
  const stored = Buffer.from(row?.secret_sha256 ?? '0'.repeat(64), 'hex');
  if (!timingSafeEqual(presented, stored) || !row) throw new ServiceError('unauthorized', 'the token is unknown');
  if (row.revoked_at !== null) throw new ServiceError('unauthorized', 'the token is revoked');
  if (row.expires_at !== null && new Date(row.expires_at) <= now) throw new ServiceError('unauthorized', 'the token has expired');
  if (row.last_used_at === null || now.getTime() - new Date(row.last_used_at).getTime() > 60_000) {
    await db.updateTable('api_tokens').set({ last_used_at: now }).where('token_id', '=', row.token_id).execute();
  }
  return {
    account: { account_id: row.account_id, name: row.account_name, max_in_flight: row.max_in_flight },
    token: tokenView(row),
  };
}

/** Throws ServiceError `insufficient-scope` unless the caller's token has the scope. */
export function requireScope(caller: Caller, scope: TokenScope): void {
  if (!caller.token.scopes.includes(scope)) throw new ServiceError('insufficient-scope', `this operation needs the scope ${scope}`);
}

export async function listTokens(db: ResultsDb, accountId: string): Promise<TokenView[]> {
  const rows = await db.selectFrom('api_tokens').selectAll().where('account_id', '=', accountId).orderBy('created_at').orderBy('token_id').execute();
  return rows.map(tokenView);
}

/** Revokes one of the account's tokens (again is a no-op); false when the account has no such token. */
export async function revokeToken(db: ResultsDb, accountId: string, tokenId: string, now = new Date()): Promise<boolean> {
  const row = await db.selectFrom('api_tokens').select(['token_id', 'revoked_at']).where('account_id', '=', accountId).where('token_id', '=', tokenId).executeTakeFirst();
  if (!row) return false;
  if (row.revoked_at === null) await db.updateTable('api_tokens').set({ revoked_at: now }).where('token_id', '=', tokenId).execute();
  return true;
}
