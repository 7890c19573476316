import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { goalValues } from '../../server/src/tasks/goal-values.ts';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import type { Task } from '../../server/src/tasks/model.ts';
import {
  formatDate,
  LEVEL_PLANS,
  lexiconFor,
  lexiconNamespaces,
  paraphraseGoal,
  PERTURBATION_LEVELS,
  perturbGoal,
  perturbGoalDetailed,
  perturbGoals,
  predicateArgumentValues,
  protectedValues,
  type PerturbationLevel,
} from '../../server/src/runner/perturb.ts';
import generalLexicon from '../../server/src/runner/lexicons/general.json';
import { startOpenAISimulation } from '../simulations/openai-simulation.ts';

const root = join(__dirname, '..', '..');
const tasks: Task[] = collectTaskFiles([join(root, 'test', 'fixtures', 'tasks')]).map((file) => JSON.parse(readFileSync(file, 'utf8')) as Task);
const escape = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
const containsWord = (haystack: string, needle: string) => new RegExp(`(?<![\\p{L}\\p{N}])${escape(needle)}(?![\\p{L}\\p{N}])`, 'u').test(haystack);

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

/** Written independently of perturb.ts: every way the goal may now state the ISO date `iso`. */
function dateIsStated(text: string, iso: string): boolean {
  const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
  const month = MONTHS[m - 1]!;
  const forms = [iso, `${d} ${month} ${y}`, `${month} ${d}, ${y}`, `${month.slice(0, 3)} ${d}, ${y}`, `${String(m).padStart(2, '0')}/${String(d).padStart(2, '0')}/${y}`];
  if (forms.some((form) => text.includes(form))) return true;
  const today = /^Today is (\w+), (\d{4}-\d{2}-\d{2})\./.exec(text);
  if (!today) return false;
  const base = Date.parse(`${today[2]}T00:00:00Z`);
  assert.equal(WEEKDAYS[new Date(base).getUTCDay()], today[1], 'the stated weekday of today is right');
  const days = (Date.parse(`${iso}T00:00:00Z`) - base) / 86_400_000;
  const phrases = [
    days === 0 ? 'today' : undefined,
    days === 1 ? 'tomorrow' : undefined,
    days === 2 ? 'the day after tomorrow' : undefined,
    `in ${days} days`,
    `${days} days from today`,
    days >= 1 && days <= 6 ? `this coming ${WEEKDAYS[new Date(Date.parse(`${iso}T00:00:00Z`)).getUTCDay()]}` : undefined,
  ].filter((p): p is string => p !== undefined);
  const rest = text.slice(today[0].length);
  return phrases.some((phrase) => containsWord(rest, phrase));
}

/** The values a perturbation must keep, found without perturb.ts: goal values, numbers, dates, checked values. */
function valuesToKeep(task: Task): { verbatim: string[]; dates: string[] } {
  const goal = task.goal;
  const dates = [...goal.matchAll(/(?<![\w-])\d{4}-\d{2}-\d{2}(?![\w-])/g)].map((m) => m[0]);
  const verbatim = new Set<string>(goalValues(goal).map((v) => v.text));
  for (const m of goal.matchAll(/\d+(?:[.:]\d+)*/g)) if (!dates.some((d) => d.includes(m[0]) && !containsWord(goal.replaceAll(d, ''), m[0]))) verbatim.add(m[0]);
  for (const value of predicateArgumentValues(task.success_predicate)) {
    const m = new RegExp(`(?<![\\p{L}\\p{N}])${escape(value)}(?![\\p{L}\\p{N}])`, 'iu').exec(goal);
    if (m && value.length >= 2) verbatim.add(m[0]);
  }
  return { verbatim: [...verbatim].filter((v) => !dates.includes(v)), dates };
}

test('the dev set has tasks to perturb, and every task names values to protect', () => {
  assert.ok(tasks.length >= 20);
  for (const task of tasks) assert.ok(protectedValues(task).length > 0, task.id);
});

test('level none is the goal itself', () => {
  for (const task of tasks) assert.equal(perturbGoal(task, 'none', 7, 3), task.goal);
});

test('same task, level, seed and trial give the same text; other trials and seeds give other texts', () => {
  for (const level of PERTURBATION_LEVELS) {
    for (const task of tasks) assert.equal(perturbGoal(task, level, 1, 0), perturbGoal(structuredClone(task), level, 1, 0));
  }
  const differs = (a: (t: Task) => string, b: (t: Task) => string) => tasks.filter((t) => a(t) !== b(t)).length;
  assert.ok(differs((t) => perturbGoal(t, 'heavy', 1, 0), (t) => perturbGoal(t, 'heavy', 1, 1)) > tasks.length / 2);
  assert.ok(differs((t) => perturbGoal(t, 'heavy', 1, 0), (t) => perturbGoal(t, 'heavy', 2, 0)) > tasks.length / 2);
  assert.ok(differs((t) => perturbGoal(t, 'light', 1, 0), (t) => t.goal) > tasks.length * 0.8, 'light changes most goals');
});

test('end-state equivalence: for every task, level, seed and trial the checked values survive and the task is untouched', () => {
  let checkedValues = 0;
  for (const task of tasks) {
    const before = structuredClone(task);
    const hash = canonicalHash(task);
    const keep = valuesToKeep(task);
    for (const level of PERTURBATION_LEVELS) {
      for (const seed of [1, 2]) {
        for (let trial = 0; trial < 4; trial++) {
          const text = perturbGoal(task, level, seed, trial);
          for (const value of keep.verbatim) {
            checkedValues++;
            assert.ok(text.includes(value), `${task.id} ${level}/${seed}/${trial}: lost ${JSON.stringify(value)} in ${JSON.stringify(text)}`);
          }
          for (const date of keep.dates) {
            assert.ok(dateIsStated(text, date), `${task.id} ${level}/${seed}/${trial}: date ${date} not stated in ${JSON.stringify(text)}`);
          }
        }
      }
    }
    assert.deepEqual(task, before, `${task.id}: the task object is not modified`);
    assert.equal(canonicalHash(task), hash, `${task.id}: the predicate and everything else are unchanged`);
  }
  assert.ok(checkedValues > 1000);
});

test('the values a predicate checks are never replaced by a synonym, even when the lexicon has the word', () => {
  const task = {
    ...tasks.find((t) => t.id === 'travel-cheapest-flight-001')!,
    goal: 'Book the cheapest flight for the passenger named booking.',
    success_predicate: { 'travel.reservationConfirmed': { flight_id: 'AA-500', passenger: 'booking' } },
  } as Task;
  for (let trial = 0; trial < 20; trial++) {
    const { goal, applied } = perturbGoalDetailed(task, 'heavy', 3, trial);
    assert.ok(goal.includes('named booking'), goal);
    assert.ok(!applied.some((a) => a.detail.startsWith('booking ->')));
  }
});

test('each level applies the transforms of its row, as many as the goal allows', () => {
  const travel = tasks.find((t) => t.id === 'travel-cheapest-flight-001')!;
  const rich = {
    ...travel,
    goal: 'Book the cheapest flight from LON to PAR on 2026-01-13 for Bob. Do not touch any other booking. Leave no other flight on hold. Keep the passenger list as it is.',
  } as Task;
  const counts = (level: PerturbationLevel, trial: number) => {
    const c: Record<string, number> = {};
    for (const a of perturbGoalDetailed(rich, level, 1, trial).applied) c[a.kind] = (c[a.kind] ?? 0) + 1;
    return c;
  };
  for (let trial = 0; trial < 5; trial++) {
    assert.deepEqual(counts('none', trial), {});
    assert.deepEqual(counts('light', trial), { synonym: 2, 'date-format': 1 });
    assert.deepEqual(counts('medium', trial), { synonym: 3, 'date-format': 1, reorder: 1, distractor: 1 });
    assert.deepEqual(counts('heavy', trial), { synonym: 5, 'relative-date': 1, reorder: 1, distractor: 2, correction: 1 });
  }
  // Over the dev set: never more than the plan; distractors always fit.
  for (const level of PERTURBATION_LEVELS) {
    const plan = LEVEL_PLANS[level];
    for (const task of tasks) {
      const { applied, goal } = perturbGoalDetailed(task, level, 1, 0);
      const n = (kind: string) => applied.filter((a) => a.kind === kind).length;
      assert.ok(n('synonym') <= plan.synonyms);
      assert.ok(n('reorder') <= plan.reorder);
      assert.ok(n('correction') <= plan.corrections);
      assert.ok(n('relative-date') <= (plan.relativeDate ? 1 : 0));
      assert.equal(n('distractor'), plan.distractors, `${task.id} ${level}`);
      for (const a of applied.filter((x) => x.kind === 'distractor')) assert.ok(goal.includes(a.detail));
    }
  }
});

test('a mid-task correction names a wrong value first and ends on the original one', () => {
  let corrections = 0;
  for (const task of tasks) {
    for (let trial = 0; trial < 3; trial++) {
      const { goal, applied } = perturbGoalDetailed(task, 'heavy', 5, trial);
      for (const a of applied.filter((x) => x.kind === 'correction')) {
        corrections++;
        const [wrong, right] = a.detail.split(' -> ') as [string, string];
        assert.notEqual(wrong, right);
        assert.ok(goal.includes(`${wrong} — sorry, I mean ${right}`), goal);
        assert.ok(!containsWord(task.goal, wrong), `${task.id}: the wrong value ${wrong} is not one the goal uses`);
      }
    }
  }
  assert.ok(corrections >= tasks.length, `corrections applied: ${corrections}`);
});

test('date formats: the four spellings, and month/day order only where it cannot be misread', () => {
  assert.equal(formatDate('2026-01-05', 'day-month-year'), '5 January 2026');
  assert.equal(formatDate('2026-01-05', 'month-day-year'), 'January 5, 2026');
  assert.equal(formatDate('2026-01-05', 'short-month'), 'Jan 5, 2026');
  assert.equal(formatDate('2026-01-05', 'us-numeric'), '01/05/2026');
  const task = tasks.find((t) => t.id === 'travel-cheapest-flight-001')!;
  const spellings = new Set<string>();
  for (let trial = 0; trial < 40; trial++) {
    const goal = perturbGoal(task, 'light', 1, trial);
    assert.ok(!goal.includes('01/05/2026'), 'Jan 5 would read as 1 May in much of the world');
    spellings.add(goal.match(/5 January 2026|January 5, 2026|Jan 5, 2026/)?.[0] ?? '');
  }
  assert.deepEqual([...spellings].sort(), ['5 January 2026', 'Jan 5, 2026', 'January 5, 2026']);
  const unambiguous = { ...task, goal: 'Book the cheapest flight from LON to PAR on 2026-01-13 for Bob.' } as Task;
  assert.ok([...Array(40).keys()].some((trial) => perturbGoal(unambiguous, 'light', 1, trial).includes('01/13/2026')));
});

test('relative dates are anchored by a stated today: the task tag reference-date, else the first of the month', () => {
  const task = tasks.find((t) => t.id === 'travel-sold-out-cheapest-001')!;
  const goal = perturbGoal(task, 'heavy', 1, 0);
  assert.match(goal, /^Today is Sunday, 2026-02-01\. /);
  assert.ok(dateIsStated(goal, '2026-02-10'));
  const tagged = { ...task, tags: ['reference-date:2026-02-08'] } as Task;
  const relative = perturbGoal(tagged, 'heavy', 1, 0);
  assert.match(relative, /^Today is Sunday, 2026-02-08\. /);
  assert.ok(/the day after tomorrow|in 2 days/.test(relative), relative);
});

test('lexicons: lower-case keys, real alternatives, distractors without values or requests', () => {
  const known = new Set(readdirSync(join(root, 'schemas', 'servers')).map((f) => basename(f, '.json')));
  for (const ns of lexiconNamespaces()) assert.ok(known.has(ns), `lexicon for unknown namespace ${ns}`);
  for (const ns of ['', ...lexiconNamespaces()]) {
    const lexicon = lexiconFor(ns ? [ns] : []);
    for (const [word, alternatives] of Object.entries(lexicon.synonyms)) {
      assert.equal(word, word.toLowerCase());
      assert.ok(alternatives.length > 0 && !alternatives.includes(word), word);
    }
    for (const d of lexicon.distractors) {
      assert.match(d, /^[A-Z][^"'`#\d]*\.$/, d);
      assert.ok(!/\b(please|make sure|do not|must)\b/i.test(d), d);
    }
  }
  assert.ok((generalLexicon as { names: { first: string[] } }).names.first.length >= 10);
});

test('paraphrase: a faithful paraphrase is used; one that drops a checked value is refused for the deterministic goal', async () => {
  const task = tasks.find((t) => t.id === 'travel-confirm-held-001')!;
  const perturbed = perturbGoalDetailed(task, 'heavy', 1, 0);
  const faithful = "Please finalize the held reservation on flight IB-310 for 'Alice Martin' and pay with 'VISA-4242'.";
  const server = await startOpenAISimulation([
    { message: { content: faithful } },
    { message: { content: 'Please confirm the held flight for Alice, paying by card.' } },
    { status: 503, error: 'overloaded' },
  ]);
  try {
    const endpoint = { baseUrl: server.baseUrl, model: 'local-model', apiKey: 'k-test' };
    const ok = await paraphraseGoal(task.goal, { ...endpoint, keep: ['IB-310', 'Alice Martin', 'VISA-4242'] });
    assert.deepEqual(ok, { goal: faithful, paraphrased: true, missing: [] });
    const request = server.requests[0]!;
    assert.equal(request.headers.authorization, 'Bearer k-test');
    assert.equal(request.body.model, 'local-model');
    assert.equal(request.body.messages.at(-1).content, task.goal);
    assert.ok(request.body.messages[0].content.includes('"VISA-4242"'));

    const dropped = await paraphraseGoal(perturbed.goal, { ...endpoint, keep: perturbed.keep, fallback: perturbed.goal });
    assert.equal(dropped.paraphrased, false);
    assert.equal(dropped.goal, perturbed.goal);
    assert.ok(dropped.missing.includes('IB-310') && dropped.missing.includes('VISA-4242'), String(dropped.missing));

    const failed = await paraphraseGoal(task.goal, endpoint);
    assert.equal(failed.goal, task.goal);
    assert.match(failed.error ?? '', /HTTP 503: overloaded/);
  } finally {
    await server.close();
  }
});

test('perturbGoals asks the endpoint only at heavy, once per task and trial, and feeds planRun a synchronous hook', async () => {
  const picked = tasks.slice(0, 3);
  const server = await startOpenAISimulation((index, body) => ({ message: { content: `${body.messages.at(-1).content} (paraphrase ${index})` } }));
  try {
    const endpoint = { baseUrl: server.baseUrl, model: 'm' };
    const medium = await perturbGoals(picked, 'medium', 1, 2, endpoint);
    assert.equal(server.requests.length, 0);
    assert.equal(medium(picked[0]!, 1), perturbGoal(picked[0]!, 'medium', 1, 1));
    const heavy = await perturbGoals(picked, 'heavy', 1, 2, endpoint);
    assert.equal(server.requests.length, picked.length * 2);
    for (const task of picked) {
      for (const trial of [0, 1]) assert.match(heavy(task, trial), new RegExp(`^${escape(perturbGoal(task, 'heavy', 1, trial))} \\(paraphrase \\d+\\)$`));
    }
  } finally {
    await server.close();
  }
});
