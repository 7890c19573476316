/**
 * Fault injection: the ReliabilityBench taxonomy (section 3.5) with the profiles of its Appendix B, custom
 * profiles from a file, per-type ablations, and one deterministic decision per call.
 *
 * Determinism: a call's fault is a pure function of (profile, run seed, task id, trial, call index); the
 * generator is SHA-256 of those four in counter mode, so the same seed gives the same decisions whatever the
 * timing, the concurrency of the run, or the platform. The gateway applies the decision (gateway.ts).
 *
 * What each fault does to an MCP `tools/call` through the gateway (timings from FaultOptions):
 *
 * | Fault             | Forwarded?                 | What the agent gets                                                      |
 * |-------------------|----------------------------|--------------------------------------------------------------------------|
 * | TransientTimeout  | no (`timeoutExecutes`: yes)| after `timeoutMs`, a JSON-RPC error -32001 "Request timed out", the error |
 * |                   |                            | its own MCP client raises on a timeout; with `timeoutExecutes` the server |
 * |                   |                            | did run the call (side effects happened, the answer was lost)            |
 * | HighLatency       | yes, after `latencyMs`     | the server's real result, late                                           |
 * | ConnectionReset   | no                         | a JSON-RPC error -32000 (ECONNRESET): transport level, not an isError    |
 * | SoftRateLimit     | no                         | isError "429 Too Many Requests" with `retry_after_ms`; every call to the |
 * |                   |                            | same namespace fails alike until `retryAfterMs` after the fault, then    |
 * |                   |                            | calls go through again                                                   |
 * | HardRateLimit     | no                         | isError "429 ... quota exhausted"; this and every later call to that     |
 * |                   |                            | namespace fail alike for the rest of the episode                         |
 * | PartialResponse   | yes                        | the first text item cut to `partialKeep` of its length, other items and  |
 * |                   |                            | structuredContent dropped (a truncated payload)                          |
 * | SchemaDrift       | yes                        | field names renamed (renameField) in structuredContent and in JSON text  |
 * | StaleData         | no (read tools only)       | an earlier result of the same tool (same arguments preferred); for a     |
 * |                   |                            | write tool, or a read with no earlier result, the call is not faulted    |
 * | EmptyResponse     | yes                        | `{ content: [] }`: the call ran (side effects happened), the body is lost|
 * | CascadingFailure  | no                         | isError "503 Service Unavailable"; the next `cascadeLength` calls of the |
 * |                   |                            | episode (any namespace) fail alike                                       |
 *
 * Data faults (PartialResponse, SchemaDrift, EmptyResponse) only alter successful results: a server's own
 * error passes through untouched and the call is recorded as not faulted. So does a drift that renamed
 * nothing.
 */
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { FAULT_TYPES, type FaultProfile, type FaultType } from './types.ts';

// ---- Profiles ---------------------------------------------------------------------------------------------

/** Appendix B of ReliabilityBench, verbatim: LAMBDA_0_0 .. LAMBDA_0_3. */
export const FAULT_PROFILES = {
  none: { name: 'none', failure_rate: 0.0, fault_weights: {} },
  light: {
    name: 'light',
    failure_rate: 0.075,
    fault_weights: { TransientTimeout: 0.4, HighLatency: 0.3, EmptyResponse: 0.3 },
  },
  medium: {
    name: 'medium',
    failure_rate: 0.175,
    fault_weights: { TransientTimeout: 0.25, SoftRateLimit: 0.25, PartialResponse: 0.2, SchemaDrift: 0.15, StaleData: 0.15 },
  },
  heavy: {
    name: 'heavy',
    failure_rate: 0.275,
    fault_weights: {
      TransientTimeout: 0.15,
      ConnectionReset: 0.15,
      HardRateLimit: 0.15,
      PartialResponse: 0.15,
      SchemaDrift: 0.2,
      CascadingFailure: 0.2,
    },
  },
} as const satisfies Record<string, FaultProfile>;

export type FaultProfileName = keyof typeof FAULT_PROFILES;

/**
 * The failure rate of an ablation profile (`timeout-only`) unless one is given: the heavy profile's, the
 * harshest the paper runs, so an ablation stresses one fault type as hard as the full mix stresses all.
 */
export const ABLATION_FAILURE_RATE = FAULT_PROFILES.heavy.failure_rate;

/** Short names for ablations; the kebab-case of every type (`transient-timeout`) and the type itself work too. */
const ABLATION_ALIASES: Record<string, FaultType[]> = {
  timeout: ['TransientTimeout'],
  latency: ['HighLatency'],
  reset: ['ConnectionReset'],
  'soft-rate-limit': ['SoftRateLimit'],
  'hard-rate-limit': ['HardRateLimit'],
  partial: ['PartialResponse'],
  drift: ['SchemaDrift'],
  stale: ['StaleData'],
  empty: ['EmptyResponse'],
  cascade: ['CascadingFailure'],
  // The paper's own ablation "rate-limit-only" does not say which kind: both, equally.
  'rate-limit': ['SoftRateLimit', 'HardRateLimit'],
};
for (const type of FAULT_TYPES) ABLATION_ALIASES[type.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()] = [type];

function ablationTypes(alias: string): FaultType[] | undefined {
  const exact = FAULT_TYPES.find((t) => t.toLowerCase() === alias.toLowerCase());
  return exact ? [exact] : ABLATION_ALIASES[alias.toLowerCase()];
}

/** The names `loadFaultProfile` accepts besides files and `<FaultType>-only`, for help texts and completion. */
export function faultProfileNames(): string[] {
  return [...Object.keys(FAULT_PROFILES), ...Object.keys(ABLATION_ALIASES).map((a) => `${a}-only`)];
}

/** What a fault does to a call, in a few words (the table above, with the default timings; for pickers and help). */
export function faultTypeSummary(type: FaultType, options: FaultOptions = DEFAULT_FAULT_OPTIONS): string {
  const s = (ms: number) => `${Number((ms / 1000).toFixed(1))} s`;
  switch (type) {
    case 'TransientTimeout': return `the call hangs ${s(options.timeoutMs)}, then times out`;
    case 'HighLatency': return `the real result, ${s(options.latencyMs)} late`;
    case 'ConnectionReset': return 'the connection drops (a transport error)';
    case 'SoftRateLimit': return `429 with retry-after ${s(options.retryAfterMs)} for that server`;
    case 'HardRateLimit': return '429 quota exhausted for that server, for the rest of the episode';
    case 'PartialResponse': return `the result cut to ${percent(options.partialKeep)}`;
    case 'SchemaDrift': return 'field names in the result renamed';
    case 'StaleData': return 'an earlier result of the same read tool';
    case 'EmptyResponse': return 'the call runs but its result is empty';
    case 'CascadingFailure': return `503 for this call and the next ${options.cascadeLength}`;
  }
}

const percent = (rate: number) => `${Number((rate * 100).toFixed(1))}%`;

/**
 * A built-in profile or `<FaultType>-only` ablation in one line: the share of calls faulted and the mix, e.g.
 * `7.5% of calls: TransientTimeout 40%, HighLatency 30%, EmptyResponse 30%`. Undefined for other names.
 */
export function describeFaultProfile(name: string): string | undefined {
  if (name === 'none') return 'no faults';
  if (name in FAULT_PROFILES) {
    const profile: FaultProfile = FAULT_PROFILES[name as FaultProfileName];
    const mix = Object.entries(profile.fault_weights).map(([type, weight]) => `${type} ${percent(weight as number)}`);
    return `${percent(profile.failure_rate)} of calls: ${mix.join(', ')}`;
  }
  const types = name.endsWith('-only') ? ablationTypes(name.slice(0, -'-only'.length)) : undefined;
  return types ? `${percent(ABLATION_FAILURE_RATE)} of calls: ${types.map((t) => `${t}: ${faultTypeSummary(t)}`).join(', ')}` : undefined;
}

export class FaultProfileError extends Error {}

export interface LoadFaultProfileOptions {
  /**
   * `--fault-rate`: overrides the failure rate of whatever profile the spec names (default for ablations:
   * ABLATION_FAILURE_RATE). A profile whose rate is overridden is named `<name>@<rate>` so journals and
   * reports never mistake it for the original.
   */
  rate?: number;
}

/**
 * A profile from `--faults`: `none` | `light` | `medium` | `heavy`, `<type>-only` (an ablation: `timeout-only`,
 * `latency-only`, `reset-only`, `soft-rate-limit-only`, `hard-rate-limit-only`, `rate-limit-only`,
 * `partial-only`, `drift-only`, `stale-only`, `empty-only`, `cascade-only`, or `TransientTimeout-only`), or
 * the path (relative to `cwd`) of a JSON file `{ "name"?, "failure_rate", "fault_weights" }`.
 */
export function loadFaultProfile(spec: string, cwd: string, options: LoadFaultProfileOptions = {}): FaultProfile {
  if (options.rate !== undefined && !(Number.isFinite(options.rate) && options.rate >= 0 && options.rate <= 1)) {
    throw new FaultProfileError(`the fault rate must be a number between 0 and 1 (got ${options.rate})`);
  }
  const named = (FAULT_PROFILES as Record<string, FaultProfile>)[spec];
  let profile: FaultProfile;
  if (named) {
    profile = clone(named);
  } else if (spec.endsWith('-only') && !looksLikePath(spec)) {
    const alias = spec.slice(0, -'-only'.length);
    const types = ablationTypes(alias);
    if (!types) {
      throw new FaultProfileError(`unknown fault type in "${spec}": use one of ${faultProfileNames().filter((n) => n.endsWith('-only')).join(', ')}`);
    }
    profile = { name: spec, failure_rate: ABLATION_FAILURE_RATE, fault_weights: Object.fromEntries(types.map((t) => [t, 1])) };
  } else {
    const file = resolve(cwd, spec);
    if (!existsSync(file)) {
      throw new FaultProfileError(
        `unknown fault profile "${spec}": not one of ${Object.keys(FAULT_PROFILES).join(', ')}, not <type>-only, and no file ${file}`,
      );
    }
    profile = readProfileFile(file);
  }
  if (options.rate !== undefined && options.rate !== profile.failure_rate) {
    return { ...profile, name: `${profile.name}@${options.rate}`, failure_rate: options.rate };
  }
  return profile;
}

function looksLikePath(spec: string): boolean {
  return spec.includes('/') || spec.includes('\\') || spec.endsWith('.json');
}

function clone(profile: FaultProfile): FaultProfile {
  return { name: profile.name, failure_rate: profile.failure_rate, fault_weights: { ...profile.fault_weights } };
}

/** Reads and validates a custom profile; every error names the file and the field. */
export function readProfileFile(file: string): FaultProfile {
  let data: unknown;
  try {
    data = JSON.parse(readFileSync(file, 'utf8'));
  } catch (error) {
    throw new FaultProfileError(`${file}: not a readable JSON file: ${(error as Error).message}`);
  }
  const fail = (message: string): never => {
    throw new FaultProfileError(`${file}: ${message}`);
  };
  if (typeof data !== 'object' || data === null || Array.isArray(data)) fail('a fault profile is a JSON object { "name"?, "failure_rate", "fault_weights" }');
  const object = data as Record<string, unknown>;
  for (const key of Object.keys(object)) {
    if (!['name', 'failure_rate', 'fault_weights', '$schema', 'description'].includes(key)) {
      fail(`unknown field "${key}" (a fault profile has name, failure_rate, fault_weights)`);
    }
  }
  const name = object.name ?? basename(file).replace(/\.json$/i, '');
  if (typeof name !== 'string' || name.trim() === '') fail(`name must be a non-empty string (got ${JSON.stringify(object.name)})`);
  const rate = object.failure_rate;
  if (typeof rate !== 'number' || !Number.isFinite(rate) || rate < 0 || rate > 1) {
    fail(`failure_rate must be a number between 0 and 1 (got ${JSON.stringify(rate)})`);
  }
  const weights = object.fault_weights;
  if (typeof weights !== 'object' || weights === null || Array.isArray(weights)) {
    fail(`fault_weights must be an object mapping fault types to weights (got ${JSON.stringify(weights)})`);
  }
  const faultWeights: Partial<Record<FaultType, number>> = {};
  for (const [type, weight] of Object.entries(weights as Record<string, unknown>)) {
    if (!(FAULT_TYPES as readonly string[]).includes(type)) fail(`fault_weights.${type}: not a fault type (use ${FAULT_TYPES.join(', ')})`);
    if (typeof weight !== 'number' || !Number.isFinite(weight) || weight < 0) {
      fail(`fault_weights.${type} must be a non-negative number (got ${JSON.stringify(weight)})`);
    }
    faultWeights[type as FaultType] = weight as number;
  }
  if ((rate as number) > 0 && !Object.values(faultWeights).some((w) => w > 0)) {
    fail('fault_weights must give some fault type a positive weight when failure_rate is above 0');
  }
  return { name: name as string, failure_rate: rate as number, fault_weights: faultWeights };
}

// ---- Decisions --------------------------------------------------------------------------------------------

export interface FaultDecisionKey {
  seed: number;
  taskId: string;
  trial: number;
  /** The call's 0-based position among the episode's calls (CallRecord.index). */
  callIndex: number;
}

/**
 * Uniform numbers in [0, 1) from SHA-256(JSON [seed, taskId, trial, callIndex, block]) in counter mode,
 * 48 bits per number (exact in a double). JSON of an array cannot confuse `("a-1", 2)` with `("a", 12)`.
 */
export function faultRandom(key: FaultDecisionKey): () => number {
  let block = 0;
  let bytes = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + 6 > bytes.length) {
      bytes = createHash('sha256').update(JSON.stringify([key.seed, key.taskId, key.trial, key.callIndex, block++])).digest();
      offset = 0;
    }
    const value = bytes.readUIntBE(offset, 6) / 2 ** 48;
    offset += 6;
    return value;
  };
}

/**
 * The fault injected into one call, or undefined. The first draw decides whether the call fails at all
 * (probability failure_rate), the second which type, proportionally to the weights taken in FAULT_TYPES
 * order, so that a profile file's key order cannot change a decision.
 */
export function decideFault(profile: FaultProfile, key: FaultDecisionKey): FaultType | undefined {
  if (!(profile.failure_rate > 0)) return undefined;
  const random = faultRandom(key);
  if (random() >= profile.failure_rate) return undefined;
  const weighted = FAULT_TYPES.map((type) => [type, profile.fault_weights[type] ?? 0] as const).filter(([, w]) => w > 0);
  const total = weighted.reduce((sum, [, w]) => sum + w, 0);
  if (total <= 0) return undefined;
  let target = random() * total;
  for (const [type, weight] of weighted) {
    if (target < weight) return type;
    target -= weight;
  }
  return weighted[weighted.length - 1]![0];
}

/** The probability that one call gets `type` under `profile` (for tests and reports). */
export function faultProbability(profile: FaultProfile, type: FaultType): number {
  const total = FAULT_TYPES.reduce((sum, t) => sum + Math.max(0, profile.fault_weights[t] ?? 0), 0);
  return total > 0 ? (profile.failure_rate * Math.max(0, profile.fault_weights[type] ?? 0)) / total : 0;
}

// ---- Behaviour --------------------------------------------------------------------------------------------

/** How faults behave; the defaults are meant to be realistic, tests shrink the timings. */
export interface FaultOptions {
  /** TransientTimeout: how long the call hangs before the timeout error. */
  timeoutMs: number;
  /** TransientTimeout: whether the server ran the call anyway (its side effects happen, its answer is lost). */
  timeoutExecutes: boolean;
  /** HighLatency: the added delay before the call is forwarded. */
  latencyMs: number;
  /** SoftRateLimit: the advertised `retry_after_ms`, and how long the namespace stays limited. */
  retryAfterMs: number;
  /** CascadingFailure: how many calls after the faulted one fail too. */
  cascadeLength: number;
  /** PartialResponse: the share of the first text item that is kept. */
  partialKeep: number;
  /** The clock of the SoftRateLimit window (milliseconds; tests inject one). */
  now: () => number;
}

export const DEFAULT_FAULT_OPTIONS: FaultOptions = {
  timeoutMs: 5_000,
  timeoutExecutes: false,
  latencyMs: 2_000,
  retryAfterMs: 2_000,
  cascadeLength: 2,
  partialKeep: 0.5,
  now: () => performance.now(),
};

/**
 * API-version-style renames for SchemaDrift: a few common fields get a synonym (as a v2 API would), every
 * other snake_case field becomes camelCase, other names are kept. Deterministic, and never the identity for
 * a name with an underscore.
 */
const DRIFT_SYNONYMS: Record<string, string> = {
  seats_left: 'seats_remaining',
  id: 'identifier',
  price: 'cost',
  status: 'state',
  date: 'day',
  time: 'at',
  name: 'title',
  dest: 'destination',
  origin: 'from',
  passenger: 'traveler',
  topic: 'subject',
  results: 'items',
  count: 'total',
};

export function renameField(name: string): string {
  const synonym = DRIFT_SYNONYMS[name];
  if (synonym !== undefined) return synonym;
  return name.replace(/_+([a-zA-Z0-9])/g, (_, c: string) => c.toUpperCase());
}

/** Renames every object key of a JSON value (recursively); `renamed` collects `old→new` pairs. */
export function driftValue(value: unknown, renamed: Set<string> = new Set()): unknown {
  if (Array.isArray(value)) return value.map((v) => driftValue(v, renamed));
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(value)) {
    let next = renameField(key);
    // Never let a rename collide with a field that is already there.
    if (next !== key && (Object.prototype.hasOwnProperty.call(value, next) || Object.prototype.hasOwnProperty.call(out, next))) next = key;
    if (next !== key) renamed.add(`${key}→${next}`);
    out[next] = driftValue(v, renamed);
  }
  return out;
}

/** Drifts a JSON text, keeping its layout style; non-JSON text is left alone. */
export function driftText(text: string, renamed: Set<string>): string {
  const trimmed = text.trim();
  if (!trimmed.startsWith('{') && !trimmed.startsWith('[')) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(trimmed);
  } catch {
    return text;
  }
  return JSON.stringify(driftValue(parsed, renamed), null, text.includes('\n') ? 2 : undefined);
}
