/**
 * Fault types and profiles: the ReliabilityBench taxonomy, the profiles of its Appendix B, ablations
 * (`<type>-only`), custom profile files and the default fault timings. Data only; the gateway decides and
 * delivers faults (runner/faults.ts, runner/gateway.ts).
 */
import { existsSync, readFileSync } from 'node:fs';
import { basename, resolve } from 'node:path';
import { McpbenchError } from '../errors.ts';

/** The ReliabilityBench fault taxonomy (section 3.5 and Appendix B), made concrete for MCP calls. */
export const FAULT_TYPES = [
  'TransientTimeout',
  'HighLatency',
  'ConnectionReset',
  'SoftRateLimit',
  'HardRateLimit',
  'PartialResponse',
  'SchemaDrift',
  'StaleData',
  'EmptyResponse',
  'CascadingFailure',
] as const;

export type FaultType = (typeof FAULT_TYPES)[number];

/** Whether a retry can succeed (the paper's table; HighLatency only slows, CascadingFailure ends). */
export const RECOVERABLE: Record<FaultType, boolean> = {
  TransientTimeout: true,
  HighLatency: true,
  ConnectionReset: true,
  SoftRateLimit: true,
  HardRateLimit: false,
  PartialResponse: true,
  SchemaDrift: false,
  StaleData: false,
  EmptyResponse: true,
  CascadingFailure: true,
};

export interface FaultProfile {
  name: string;
  /** Probability that a call gets a fault. */
  failure_rate: number;
  /** Relative weights of the fault types drawn when a call gets one (need not sum to 1). */
  fault_weights: Partial<Record<FaultType, number>>;
}

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
export const ABLATION_ALIASES: Record<string, FaultType[]> = {
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

export class FaultProfileError extends McpbenchError {
  static override readonly code: string = 'fault-profile';
}

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

