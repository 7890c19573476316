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
import { FAULT_TYPES, type FaultProfile, type FaultType, ABLATION_ALIASES } from '../record/faults.ts';

// ---- Profiles ---------------------------------------------------------------------------------------------
for (const type of FAULT_TYPES) ABLATION_ALIASES[type.replace(/([a-z])([A-Z])/g, '$1-$2').toLowerCase()] = [type];
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
