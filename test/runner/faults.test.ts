/**
 * Fault profiles and decisions: the profiles are ReliabilityBench's Appendix B verbatim, ablations and
 * custom files load (and bad files say which file and which field), decisions are a pure function of
 * (seed, task, trial, call index), and their frequencies match the profile within a binomial bound.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  decideFault,
  driftText,
  driftValue,
  faultProbability,
  renameField,
} from '../../server/src/runner/faults.ts';
import { FAULT_TYPES, type FaultProfile, type FaultType, ABLATION_FAILURE_RATE, FAULT_PROFILES, FaultProfileError, loadFaultProfile } from '../../server/src/record/faults.ts';

test('the four profiles are exactly LAMBDA_0_0 .. LAMBDA_0_3 of Appendix B', () => {
  assert.deepEqual(FAULT_PROFILES, {
    none: { name: 'none', failure_rate: 0.0, fault_weights: {} },
    light: { name: 'light', failure_rate: 0.075, fault_weights: { TransientTimeout: 0.4, HighLatency: 0.3, EmptyResponse: 0.3 } },
    medium: {
      name: 'medium',
      failure_rate: 0.175,
      fault_weights: { TransientTimeout: 0.25, SoftRateLimit: 0.25, PartialResponse: 0.2, SchemaDrift: 0.15, StaleData: 0.15 },
    },
    heavy: {
      name: 'heavy',
      failure_rate: 0.275,
      fault_weights: { TransientTimeout: 0.15, ConnectionReset: 0.15, HardRateLimit: 0.15, PartialResponse: 0.15, SchemaDrift: 0.2, CascadingFailure: 0.2 },
    },
  });
  for (const name of ['none', 'light', 'medium', 'heavy'] as const) {
    assert.deepEqual(loadFaultProfile(name, tmpdir()), FAULT_PROFILES[name]);
  }
});

test('a loaded profile is a copy: changing it does not change the built-in one', () => {
  const heavy = loadFaultProfile('heavy', tmpdir());
  heavy.fault_weights.TransientTimeout = 99;
  assert.equal(FAULT_PROFILES.heavy.fault_weights.TransientTimeout, 0.15);
});

test('ablations: one fault type at the heavy rate, by short name, kebab name or type name', () => {
  const cases: [string, FaultType][] = [
    ['timeout-only', 'TransientTimeout'],
    ['latency-only', 'HighLatency'],
    ['reset-only', 'ConnectionReset'],
    ['soft-rate-limit-only', 'SoftRateLimit'],
    ['hard-rate-limit-only', 'HardRateLimit'],
    ['partial-only', 'PartialResponse'],
    ['drift-only', 'SchemaDrift'],
    ['stale-only', 'StaleData'],
    ['empty-only', 'EmptyResponse'],
    ['cascade-only', 'CascadingFailure'],
    ['partial-response-only', 'PartialResponse'],
    ['TransientTimeout-only', 'TransientTimeout'],
    ['CascadingFailure-only', 'CascadingFailure'],
  ];
  assert.equal(ABLATION_FAILURE_RATE, 0.275);
  for (const [spec, type] of cases) {
    assert.deepEqual(loadFaultProfile(spec, tmpdir()), { name: spec, failure_rate: 0.275, fault_weights: { [type]: 1 } }, spec);
  }
  assert.deepEqual(loadFaultProfile('rate-limit-only', tmpdir()).fault_weights, { SoftRateLimit: 1, HardRateLimit: 1 });
  assert.throws(() => loadFaultProfile('meteor-only', tmpdir()), (e: Error) => e instanceof FaultProfileError && /meteor-only/.test(e.message) && /timeout-only/.test(e.message));
});

test('--fault-rate overrides the rate and renames the profile so journals cannot confuse it', () => {
  assert.deepEqual(loadFaultProfile('timeout-only', tmpdir(), { rate: 0.5 }), { name: 'timeout-only@0.5', failure_rate: 0.5, fault_weights: { TransientTimeout: 1 } });
  assert.deepEqual(loadFaultProfile('heavy', tmpdir(), { rate: 0.275 }), FAULT_PROFILES.heavy);
  assert.equal(loadFaultProfile('light', tmpdir(), { rate: 1 }).name, 'light@1');
  assert.throws(() => loadFaultProfile('light', tmpdir(), { rate: 1.5 }), /between 0 and 1/);
});

test('custom profile files load, and every bad field is named with its file', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-faults-'));
  try {
    const write = (name: string, body: string) => {
      writeFileSync(join(dir, name), body);
      return name;
    };
    assert.deepEqual(loadFaultProfile(write('flaky.json', JSON.stringify({ failure_rate: 0.3, fault_weights: { StaleData: 2, EmptyResponse: 1 } })), dir), {
      name: 'flaky',
      failure_rate: 0.3,
      fault_weights: { StaleData: 2, EmptyResponse: 1 },
    });
    assert.equal(loadFaultProfile(join(dir, write('named.json', JSON.stringify({ name: 'my-mix', failure_rate: 0, fault_weights: {} }))), '/').name, 'my-mix');

    const bad: [string, unknown, RegExp][] = [
      ['rate-high.json', { failure_rate: 1.2, fault_weights: { StaleData: 1 } }, /failure_rate must be a number between 0 and 1 \(got 1\.2\)/],
      ['rate-string.json', { failure_rate: '0.1', fault_weights: { StaleData: 1 } }, /failure_rate must be a number/],
      ['rate-missing.json', { fault_weights: { StaleData: 1 } }, /failure_rate must be a number/],
      ['type.json', { failure_rate: 0.1, fault_weights: { Timeout: 1 } }, /fault_weights\.Timeout: not a fault type/],
      ['weight.json', { failure_rate: 0.1, fault_weights: { StaleData: -1 } }, /fault_weights\.StaleData must be a non-negative number/],
      ['weights-array.json', { failure_rate: 0.1, fault_weights: [] }, /fault_weights must be an object/],
      ['no-positive.json', { failure_rate: 0.1, fault_weights: { StaleData: 0 } }, /positive weight/],
      ['typo.json', { failure_rate: 0.1, fault_weigths: { StaleData: 1 } }, /unknown field "fault_weigths"/],
      ['name.json', { name: '', failure_rate: 0.1, fault_weights: { StaleData: 1 } }, /name must be a non-empty string/],
      ['array.json', [], /a fault profile is a JSON object/],
    ];
    for (const [file, body, message] of bad) {
      write(file, JSON.stringify(body));
      assert.throws(
        () => loadFaultProfile(file, dir),
        (e: Error) => e instanceof FaultProfileError && e.message.startsWith(join(dir, file) + ':') && message.test(e.message),
        file,
      );
    }
    write('broken.json', '{ "failure_rate": ');
    assert.throws(() => loadFaultProfile('broken.json', dir), (e: Error) => e.message.startsWith(join(dir, 'broken.json')) && /not a readable JSON file/.test(e.message));
    assert.throws(() => loadFaultProfile('nowhere.json', dir), /unknown fault profile "nowhere.json".*none, light, medium, heavy/);
    assert.throws(() => loadFaultProfile('extreme', dir), /unknown fault profile "extreme"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

const trace = (profile: FaultProfile, seed: number, taskId: string, trial: number, n: number) =>
  Array.from({ length: n }, (_, callIndex) => decideFault(profile, { seed, taskId, trial, callIndex }) ?? '-');

test('decisions are a pure function of (seed, task, trial, call index)', () => {
  const heavy = FAULT_PROFILES.heavy;
  const a = trace(heavy, 42, 'travel-book-001', 0, 400);
  assert.deepEqual(trace(heavy, 42, 'travel-book-001', 0, 400), a);
  // Out of order and interleaved with other keys: still the same answer for each key.
  for (const callIndex of [399, 7, 0, 123]) {
    decideFault(heavy, { seed: 1, taskId: 'other', trial: 3, callIndex });
    assert.equal(decideFault(heavy, { seed: 42, taskId: 'travel-book-001', trial: 0, callIndex }) ?? '-', a[callIndex]);
  }
  assert.notDeepEqual(trace(heavy, 43, 'travel-book-001', 0, 400), a, 'another seed');
  assert.notDeepEqual(trace(heavy, 42, 'travel-book-002', 0, 400), a, 'another task');
  assert.notDeepEqual(trace(heavy, 42, 'travel-book-001', 1, 400), a, 'another trial');
  assert.ok(a.some((d) => d !== '-') && a.some((d) => d === '-'));
  assert.deepEqual(trace(FAULT_PROFILES.none, 42, 'travel-book-001', 0, 400), Array(400).fill('-'));
});

test('the order of a profile file\'s weights does not change any decision', () => {
  const forward: FaultProfile = { name: 'f', failure_rate: 0.5, fault_weights: { TransientTimeout: 1, StaleData: 2, EmptyResponse: 3 } };
  const backward: FaultProfile = { name: 'b', failure_rate: 0.5, fault_weights: { EmptyResponse: 3, StaleData: 2, TransientTimeout: 1 } };
  assert.deepEqual(trace(backward, 9, 't', 0, 300), trace(forward, 9, 't', 0, 300));
});

test('over 20,000 decisions each fault type occurs at its profile frequency (6-sigma binomial bound)', () => {
  const n = 20_000;
  for (const profile of [FAULT_PROFILES.light, FAULT_PROFILES.medium, FAULT_PROFILES.heavy, loadFaultProfile('rate-limit-only', tmpdir())]) {
    const counts = new Map<string, number>();
    for (let i = 0; i < n; i++) {
      // Spread over tasks and trials as a run would.
      const d = decideFault(profile, { seed: 20260105, taskId: `task-${i % 50}`, trial: i % 3, callIndex: Math.floor(i / 150) }) ?? 'none';
      counts.set(d, (counts.get(d) ?? 0) + 1);
    }
    // P(|X - np| > 6 sd) < 2e-9 for any one count: the test fails only if the generator is biased.
    const within = (observed: number, p: number, what: string) => {
      const bound = 6 * Math.sqrt(n * p * (1 - p));
      assert.ok(Math.abs(observed - n * p) <= bound, `${profile.name} ${what}: ${observed} vs expected ${n * p} ± ${bound.toFixed(1)}`);
    };
    within(n - (counts.get('none') ?? 0), profile.failure_rate, 'faulted calls');
    for (const type of FAULT_TYPES) {
      const p = faultProbability(profile, type);
      if (p === 0) assert.equal(counts.get(type) ?? 0, 0, `${profile.name}: ${type} has no weight`);
      else within(counts.get(type) ?? 0, p, type);
    }
  }
});

test('schema drift renames fields deterministically, in structured values and JSON text alike', () => {
  assert.equal(renameField('seats_left'), 'seats_remaining');
  assert.equal(renameField('departure_time'), 'departureTime');
  assert.equal(renameField('flight_id'), 'flightId');
  assert.equal(renameField('airline'), 'airline');
  const renamed = new Set<string>();
  const value = { flights: [{ id: 'AA-500', seats_left: 3, departure_time: '09:00' }], seatsLeft: 1 };
  assert.deepEqual(driftValue(value, renamed), {
    flights: [{ identifier: 'AA-500', seats_remaining: 3, departureTime: '09:00' }],
    seatsLeft: 1,
  });
  assert.deepEqual([...renamed].sort(), ['departure_time→departureTime', 'id→identifier', 'seats_left→seats_remaining']);
  // A rename never overwrites a field that already exists.
  assert.deepEqual(driftValue({ seats_left: 1, seats_remaining: 2 }), { seats_left: 1, seatsRemaining: 2 });
  assert.deepEqual(driftValue({ a_b: 1, a__b: 2 }), { aB: 1, a__b: 2 });
  const text = JSON.stringify(value, null, 2);
  assert.deepEqual(JSON.parse(driftText(text, new Set())), driftValue(value));
  assert.ok(driftText(text, new Set()).includes('\n'), 'keeps the indented layout');
  assert.equal(driftText('seats_left: 3', new Set()), 'seats_left: 3', 'prose is left alone');
});

test('each built-in profile and ablation is described by its rate and mix, as the editor shows them', async () => {
  const { describeFaultProfile } = await import('../../server/src/record/faults.ts');
  assert.equal(describeFaultProfile('none'), 'no faults');
  assert.equal(describeFaultProfile('light'), '7.5% of calls: TransientTimeout 40%, HighLatency 30%, EmptyResponse 30%');
  assert.match(describeFaultProfile('heavy')!, /^27\.5% of calls: TransientTimeout 15%, ConnectionReset 15%/);
  assert.equal(describeFaultProfile('TransientTimeout-only'), '27.5% of calls: TransientTimeout: the call hangs 5 s, then times out');
  assert.equal(describeFaultProfile('profile.json'), undefined);
});
