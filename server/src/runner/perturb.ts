/**
 * Goal perturbations: ReliabilityBench's Action Metamorphic Relations as deterministic transforms of a task's
 * goal. The predicate never changes, so a perturbed goal must ask for the same end state (end-state
 * equivalence): every value the predicate checks, and every quoted value, file and id the goal names, is
 * protected from synonym replacement and survives every transform verbatim — dates survive as the same
 * calendar day in another format, or as a relative date anchored by a "Today is ..." sentence.
 *
 * Levels follow the paper's Definition 4 (light: synonym substitution; medium: + reordering, distractors;
 * heavy: + corrections, paraphrase), with its temporal relations placed as in its experiments (date formats
 * from light on) and relative dates at heavy:
 *
 * | level  | synonyms | date format | relative date | reorder | distractors | correction | paraphrase     |
 * | none   | 0        | -           | -             | 0       | 0           | 0          | -              |
 * | light  | <= 2     | yes         | -             | 0       | 0           | 0          | -              |
 * | medium | <= 3     | yes         | -             | 1       | 1           | 0          | -              |
 * | heavy  | <= 5     | yes         | 1             | 1       | 2           | 1          | when configured |
 *
 * "<= n" because a goal offers only so many replaceable words; a transform with nothing to act on is skipped
 * (the `applied` list of `perturbGoalDetailed` says what was done). Same task, level, seed and trial: same
 * text, byte for byte.
 *
 * Relative dates need a reference date stated in the goal ("Today is Thursday, 2026-01-01."). It is the
 * task's own when it has a tag `reference-date:YYYY-MM-DD` (on or before the date made relative), otherwise
 * the first day of that date's month, so the phrase is at most a month out and never in the past.
 */
import { type Task } from '../tasks/model.ts';
import { goalValues } from '../tasks/goal-values.ts';
import generalLexicon from './lexicons/general.json';
import namespaceLexicons from './lexicons/namespaces.json';
import type { GoalPerturbation } from '../record/schema.ts';
import { hashedRandom, seededShuffle } from '../seeded-random.ts';
import { taskNamespaces } from '../tasks/vocabulary.ts';

export const PERTURBATION_LEVELS = ['none', 'light', 'medium', 'heavy'] as const;
export type PerturbationLevel = (typeof PERTURBATION_LEVELS)[number];

export function isPerturbationLevel(value: string): value is PerturbationLevel {
  return (PERTURBATION_LEVELS as readonly string[]).includes(value);
}

export interface LevelPlan {
  /** The most synonym substitutions. */
  synonyms: number;
  dateFormat: boolean;
  relativeDate: boolean;
  reorder: number;
  distractors: number;
  corrections: number;
  /** Whether an LLM paraphrase is applied when an endpoint is configured (`perturbGoals`). */
  paraphrase: boolean;
}

export const LEVEL_PLANS: Record<PerturbationLevel, LevelPlan> = {
  none: { synonyms: 0, dateFormat: false, relativeDate: false, reorder: 0, distractors: 0, corrections: 0, paraphrase: false },
  light: { synonyms: 2, dateFormat: true, relativeDate: false, reorder: 0, distractors: 0, corrections: 0, paraphrase: false },
  medium: { synonyms: 3, dateFormat: true, relativeDate: false, reorder: 1, distractors: 1, corrections: 0, paraphrase: false },
  heavy: { synonyms: 5, dateFormat: true, relativeDate: true, reorder: 1, distractors: 2, corrections: 1, paraphrase: true },
};

export type TransformKind = 'synonym' | 'date-format' | 'relative-date' | 'reorder' | 'distractor' | 'correction';

export interface AppliedTransform {
  kind: TransformKind;
  /** What was done, for people reading a run: `book -> reserve`, `2026-01-05 -> 5 January 2026` ... */
  detail: string;
}

export interface PerturbedGoal {
  goal: string;
  applied: AppliedTransform[];
  /** Texts that must stay verbatim in any further rewrite of `goal` (a paraphrase): values as they now read. */
  keep: string[];
}

// ---- Seeded randomness ------------------------------------------------------------------------------------

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)]!;
}

// ---- Lexicons ---------------------------------------------------------------------------------------------

export interface Lexicon {
  synonyms: Record<string, string[]>;
  distractors: string[];
}

interface GeneralLexicon extends Lexicon {
  names: { first: string[]; last: string[] };
  imperatives: string[];
}

const GENERAL = generalLexicon as unknown as GeneralLexicon;
const DOMAINS = namespaceLexicons as unknown as Record<string, Lexicon>;

/** The namespaces a lexicon exists for (the `$comment` key is documentation). */
export function lexiconNamespaces(): string[] {
  return Object.keys(DOMAINS).filter((key) => !key.startsWith('$'));
}

/** The general lexicon merged with the domain lexicons of `namespaces`: alternatives are united. */
export function lexiconFor(namespaces: readonly string[]): Lexicon {
  const synonyms: Record<string, string[]> = {};
  const add = (from: Record<string, string[]>) => {
    for (const [word, alternatives] of Object.entries(from)) synonyms[word] = [...new Set([...(synonyms[word] ?? []), ...alternatives])];
  };
  add(GENERAL.synonyms);
  const distractors = [...GENERAL.distractors];
  for (const ns of namespaces) {
    const domain = ns.startsWith('$') ? undefined : DOMAINS[ns];
    if (!domain) continue;
    add(domain.synonyms);
    distractors.push(...domain.distractors);
  }
  return { synonyms, distractors };
}

export function generalLexiconData(): GeneralLexicon {
  return GENERAL;
}

// ---- Protected values -------------------------------------------------------------------------------------

interface Span {
  start: number;
  end: number;
}

const overlaps = (a: Span, b: Span) => a.start < b.end && b.start < a.end;
const inside = (spans: readonly Span[], at: Span) => spans.some((s) => overlaps(s, at));
const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

const ISO_DATE = /(?<![\w-])(\d{4})-(\d{2})-(\d{2})(?![\w-])/g;
const TIME = /(?<![\w:])(\d{1,2}):(\d{2})(?![\w:])/g;
const DIGIT_TOKEN = /(?<![\w])[\w./:-]*\d[\w./:-]*(?<![.:-])/g;
const CODE = /(?<![\w-])[A-Z][A-Z0-9]+(?![\w-])/g;
const RECORD_ID = /(?<![\w-])(?:[A-Z][A-Z0-9]*-\d+|#\d+)(?![\w-])/g;
const CHANNEL = /(?<![\w])#[a-z][\w-]*/g;
const EMOJI = /:[a-z_+-]+:/g;
const SLASHED = /(?<![\w./@-])[\w.@-]+\/[\w./@-]*(?<!\.)/g;
const SNAKE = /(?<![\w])\w+_\w+/g;

export interface ProtectedValue {
  text: string;
  /** Dates may change format (or become relative); every other value stays verbatim. */
  kind: 'date' | 'value';
}

function isCalendarDate(y: number, m: number, d: number): boolean {
  const t = new Date(Date.UTC(y, m - 1, d));
  return t.getUTCFullYear() === y && t.getUTCMonth() === m - 1 && t.getUTCDate() === d;
}

/** The strings and numbers of a predicate's leaf arguments (not the predicate names). */
export function predicateArgumentValues(node: unknown, out: string[] = []): string[] {
  if (!node || typeof node !== 'object' || Array.isArray(node)) return out;
  for (const [key, value] of Object.entries(node)) {
    if (key === 'all' || key === 'any') for (const child of Array.isArray(value) ? value : []) predicateArgumentValues(child, out);
    else if (key === 'not') predicateArgumentValues(value, out);
    else if (value && typeof value === 'object' && !Array.isArray(value)) for (const v of Object.values(value)) collectValues(v, out);
    else collectValues(value, out);
  }
  return out;
}

function collectValues(value: unknown, out: string[]): void {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number') out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) collectValues(v, out);
  else if (value && typeof value === 'object') {
    // Keys of nested arguments are column names and the like (`where: { id: 1002 }`): values too.
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      collectValues(v, out);
    }
  }
}

interface Protection {
  /** Spans no synonym may touch. */
  spans: Span[];
  /** Quoted values and file names: nothing inside them changes, not even a date. */
  frozen: Span[];
  values: ProtectedValue[];
}

function wordPattern(text: string, flags = 'giu'): RegExp {
  return new RegExp(`(?<![\\p{L}\\p{N}_])${escapeRegExp(text)}(?![\\p{L}\\p{N}_])`, flags);
}

function protect(task: Pick<Task, 'goal' | 'success_predicate'>): Protection {
  const goal = task.goal;
  const spans: Span[] = [];
  const frozen: Span[] = [];
  const values = new Map<string, ProtectedValue>();
  const addValue = (text: string, kind: ProtectedValue['kind']) => {
    if (text && !values.has(text)) values.set(text, { text, kind });
  };
  const addMatches = (pattern: RegExp, kind: ProtectedValue['kind'] = 'value') => {
    for (const m of goal.matchAll(pattern)) {
      spans.push({ start: m.index!, end: m.index! + m[0].length });
      addValue(m[0], kind);
    }
  };

  for (const value of goalValues(goal)) {
    const start = value.kind === 'quoted' ? value.index - 1 : value.index;
    const end = value.index + value.text.length + (value.kind === 'quoted' ? 1 : 0);
    spans.push({ start, end });
    if (value.kind !== 'id') frozen.push({ start, end });
    addValue(value.text, 'value');
  }
  for (const m of goal.matchAll(ISO_DATE)) {
    const span = { start: m.index!, end: m.index! + m[0].length };
    spans.push(span);
    if (!inside(frozen, span) && isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3]))) addValue(m[0], 'date');
  }
  const dateSpans = [...goal.matchAll(ISO_DATE)].map((m) => ({ start: m.index!, end: m.index! + m[0].length }));
  for (const m of goal.matchAll(DIGIT_TOKEN)) {
    const span = { start: m.index!, end: m.index! + m[0].length };
    spans.push(span);
    if (!inside(dateSpans, span)) addValue(m[0], 'value');
  }
  addMatches(TIME);
  addMatches(CODE);
  addMatches(RECORD_ID);
  addMatches(CHANNEL);
  addMatches(EMOJI);
  addMatches(SLASHED);
  addMatches(SNAKE);

  // Values the predicate checks, wherever the goal names them, and their words (with a plural -s or
  // without) so that "store credit" stays when the predicate says store_credit.
  const predicateValues = [...new Set(predicateArgumentValues(task.success_predicate).map((v) => v.trim()).filter((v) => v.length >= 2))];
  const words = new Set<string>();
  for (const value of predicateValues) {
    for (const variant of new Set([value, value.replace(/_/g, ' ')])) {
      for (const m of goal.matchAll(wordPattern(variant))) {
        spans.push({ start: m.index!, end: m.index! + m[0].length });
        addValue(m[0], 'value');
      }
    }
    for (const word of value.split(/[^\p{L}\p{N}]+/u)) if (word.length >= 3) words.add(word.toLowerCase());
  }
  for (const m of goal.matchAll(/[\p{L}\p{N}]+/gu)) {
    const w = m[0].toLowerCase();
    if (words.has(w) || words.has(`${w}s`) || (w.endsWith('s') && words.has(w.slice(0, -1)))) {
      spans.push({ start: m.index!, end: m.index! + m[0].length });
    }
  }
  return { spans, frozen, values: [...values.values()] };
}

/**
 * The values of a task's goal that every perturbation keeps: quoted values, files, ids, numbers, codes,
 * channel names, dates (kind `date`: same day, any format) and every predicate argument the goal names.
 */
export function protectedValues(task: Pick<Task, 'goal' | 'success_predicate'>): ProtectedValue[] {
  return protect(task).values;
}

// ---- Dates ------------------------------------------------------------------------------------------------

const MONTHS = ['January', 'February', 'March', 'April', 'May', 'June', 'July', 'August', 'September', 'October', 'November', 'December'];
const WEEKDAYS = ['Sunday', 'Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday'];

export const DATE_STYLES = ['day-month-year', 'month-day-year', 'short-month', 'us-numeric'] as const;
export type DateStyle = (typeof DATE_STYLES)[number];

/** 2026-01-05 as `5 January 2026`, `January 5, 2026`, `Jan 5, 2026` or `01/05/2026`. */
export function formatDate(iso: string, style: DateStyle): string {
  const [y, m, d] = iso.split('-').map(Number) as [number, number, number];
  const month = MONTHS[m - 1]!;
  switch (style) {
    case 'day-month-year':
      return `${d} ${month} ${y}`;
    case 'month-day-year':
      return `${month} ${d}, ${y}`;
    case 'short-month':
      return `${month.slice(0, 3)} ${d}, ${y}`;
    case 'us-numeric':
      return `${String(m).padStart(2, '0')}/${String(d).padStart(2, '0')}/${y}`;
  }
}

/** MM/DD/YYYY reads as DD/MM/YYYY in much of the world: only used where both readings are the same day. */
function numericIsUnambiguous(iso: string): boolean {
  const [, m, d] = iso.split('-').map(Number) as [number, number, number];
  return d > 12 || d === m;
}

const dayNumber = (iso: string) => Date.parse(`${iso}T00:00:00Z`) / 86_400_000;
const weekday = (iso: string) => WEEKDAYS[new Date(`${iso}T00:00:00Z`).getUTCDay()]!;

function referenceDateFor(task: Pick<Task, 'tags'>, target: string): string {
  for (const tag of task.tags ?? []) {
    const m = /^reference-date:(\d{4}-\d{2}-\d{2})$/.exec(tag);
    if (m && dayNumber(m[1]!) <= dayNumber(target)) return m[1]!;
  }
  return `${target.slice(0, 8)}01`;
}

function relativePhrase(random: () => number, reference: string, target: string): string {
  const days = Math.round(dayNumber(target) - dayNumber(reference));
  if (days === 0) return 'today';
  if (days === 1) return 'tomorrow';
  if (days === 2) return pick(random, ['the day after tomorrow', 'in 2 days']);
  if (days <= 6) return pick(random, [`in ${days} days`, `this coming ${weekday(target)}`]);
  return pick(random, [`in ${days} days`, `${days} days from today`]);
}

// ---- Span edits: corrections, dates, synonyms --------------------------------------------------------------

interface Edit extends Span {
  text: string;
}

function applyEdits(text: string, edits: readonly Edit[]): string {
  let out = text;
  for (const edit of [...edits].sort((a, b) => b.start - a.start)) out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

interface CorrectionCandidate extends Span {
  value: string;
  wrong: (random: () => number) => string | undefined;
}

function correctionCandidates(task: Task, protection: Protection): CorrectionCandidate[] {
  const goal = task.goal;
  const everything = JSON.stringify(task);
  const candidates: CorrectionCandidate[] = [];
  const seen = new Set<string>();
  const absent = (value: string) => !wordPattern(value, 'u').test(goal);
  const add = (m: RegExpMatchArray, wrong: CorrectionCandidate['wrong']) => {
    const span = { start: m.index!, end: m.index! + m[0].length };
    if (seen.has(m[0]) || inside(protection.frozen, span)) return;
    seen.add(m[0]);
    candidates.push({ ...span, value: m[0], wrong });
  };
  for (const m of goal.matchAll(TIME)) {
    const hour = Number(m[1]);
    add(m, (random) =>
      seededShuffle(random, [1, 2, 3, -1, -2])
        .map((delta) => hour + delta)
        .filter((h) => h >= 7 && h <= 20)
        .map((h) => `${String(h).padStart(m[1]!.length, '0')}:${m[2]}`)
        .find(absent),
    );
  }
  for (const m of goal.matchAll(RECORD_ID)) {
    const digits = /(\d+)$/.exec(m[0])!;
    const n = Number(digits[1]);
    add(m, (random) =>
      seededShuffle(random, [1, 2, 3, 7])
        .map((delta) => m[0].slice(0, digits.index) + String(n + delta).padStart(digits[1]!.length, '0'))
        .find(absent),
    );
  }
  // A person's name: after "for", "by", "passenger" ..., or two capitalised words that are not a company.
  const names = new Set(predicateArgumentValues(task.success_predicate).filter((v) => /^\p{Lu}\p{Ll}+(?: \p{Lu}\p{Ll}+){0,2}$/u.test(v)));
  for (const name of names) {
    const m = wordPattern(name, 'u').exec(goal);
    if (!m) continue;
    const person = /\b(for|by|passenger|customer|colleague|to|with)\s$/i.test(goal.slice(0, m.index)) || (name.includes(' ') && !/\b(Corp|Inc|Ltd|Group|Company|Bank)$/.test(name));
    if (!person) continue;
    const parts = name.split(' ').length;
    add(m, (random) => {
      const free = (word: string) => !everything.includes(word);
      const first = seededShuffle(random, GENERAL.names.first).find(free);
      const last = seededShuffle(random, GENERAL.names.last).find(free);
      if (!first || !last) return undefined;
      return parts === 1 ? first : `${first} ${last}`;
    });
  }
  for (const m of goal.matchAll(/(?<![\w.:/#-])\d{1,4}(?![\w.:/-])/g)) {
    const n = Number(m[0]);
    add(m, (random) =>
      seededShuffle(random, n > 1 ? [1, 2, -1] : [1, 2])
        .map((delta) => String(n + delta))
        .find(absent),
    );
  }
  return candidates.sort((a, b) => a.start - b.start);
}

interface SynonymCandidate extends Span {
  word: string;
  alternatives: string[];
}

function synonymCandidates(goal: string, lexicon: Lexicon, blocked: readonly Span[]): SynonymCandidate[] {
  const found: SynonymCandidate[] = [];
  const sentenceStart = (at: number) => /(^|[.!?:]\s+)$/.test(goal.slice(0, at));
  // Longer phrases first, so "on hold" wins over a word inside it.
  for (const word of Object.keys(lexicon.synonyms).sort((a, b) => b.length - a.length || a.localeCompare(b))) {
    for (const m of goal.matchAll(wordPattern(word, 'giu'))) {
      const span = { start: m.index!, end: m.index! + m[0].length };
      const text = m[0];
      // Lower case, or capitalised only because it starts a sentence: never a name that looks like a word.
      const plain = text === text.toLowerCase() || (text === text[0]!.toUpperCase() + text.slice(1).toLowerCase() && sentenceStart(span.start));
      if (!plain || inside(blocked, span) || inside(found, span)) continue;
      found.push({ ...span, word: text, alternatives: lexicon.synonyms[word]! });
    }
  }
  return found.sort((a, b) => a.start - b.start);
}

function matchCase(original: string, replacement: string): string {
  return original[0] === original[0]!.toUpperCase() && original[0] !== original[0]!.toLowerCase()
    ? replacement[0]!.toUpperCase() + replacement.slice(1)
    : replacement;
}

// ---- Sentences: reordering and distractors ----------------------------------------------------------------

function frozenSpansOf(text: string): Span[] {
  return goalValues(text)
    .filter((v) => v.kind !== 'id')
    .map((v) => (v.kind === 'quoted' ? { start: v.index - 1, end: v.index + v.text.length + 1 } : { start: v.index, end: v.index + v.text.length }));
}

function splitSentences(text: string): string[] {
  const frozen = frozenSpansOf(text);
  const out: string[] = [];
  let last = 0;
  for (const m of text.matchAll(/(?<=[.!?])\s+(?=[A-Z#"'“‘])/g)) {
    if (inside(frozen, { start: m.index! - 1, end: m.index! + m[0].length })) continue;
    out.push(text.slice(last, m.index!));
    last = m.index! + m[0].length;
  }
  out.push(text.slice(last));
  return out.filter((s) => s.length > 0);
}

const CONNECTIVE = /^(If|Then|Otherwise|Instead|Also|And|But|So|Or|After that|Afterwards)\b/;
const PRONOUN = /\b(it|its|it's|they|them|their|theirs|he|she|him|her|his|this|these|those)\b/i;
const FRONTABLE = /^(Do not|Don't|Never|Leave|Keep|Retain|Preserve|Change nothing|No other|Make sure|Ensure)\b/;

/** A sentence that reads the same anywhere after the first: no connective, no pronoun to lose its antecedent. */
const isMovable = (sentence: string) => !CONNECTIVE.test(sentence) && !PRONOUN.test(sentence);

interface ReorderOperation {
  name: string;
  apply: (random: () => number) => string;
}

function reorderOperations(text: string): ReorderOperation[] {
  const sentences = splitSentences(text);
  const ops: ReorderOperation[] = [];
  const tail = sentences.map((s, i) => ({ s, i })).filter(({ s, i }) => i > 0 && isMovable(s));
  if (tail.length >= 2) {
    ops.push({
      name: 'permute constraints',
      apply: (random) => {
        const order = tail.map(({ i }) => i);
        let permuted = seededShuffle(random, order);
        if (permuted.every((v, k) => v === order[k])) permuted = [...order.slice(1), order[0]!];
        const out = [...sentences];
        order.forEach((slot, k) => (out[slot] = sentences[permuted[k]!]!));
        return out.join(' ');
      },
    });
  }
  const frontable = tail.filter(({ s }) => FRONTABLE.test(s));
  if (frontable.length > 0) {
    ops.push({
      name: 'constraint first',
      apply: (random) => {
        const { i } = pick(random, frontable);
        return [sentences[i]!, ...sentences.filter((_, k) => k !== i)].join(' ');
      },
    });
  }
  const imperatives = new Set(GENERAL.imperatives);
  const phrased = sentences
    .map((s, i) => ({ i, m: /^(\p{L}+)(.*\S)\s(for \p{Lu}[\p{L}'-]*(?: \p{Lu}[\p{L}'-]*)*|at \d{1,2}:\d{2})([.!])$/u.exec(s) }))
    .filter(({ m }) => m && imperatives.has(m[1]!.toLowerCase()) && !m[2]!.includes('—'));
  if (phrased.length > 0) {
    ops.push({
      name: 'phrase first',
      apply: (random) => {
        const { i, m } = pick(random, phrased);
        const [, verb, rest, phrase, end] = m!;
        const out = [...sentences];
        out[i] = `${phrase![0]!.toUpperCase()}${phrase!.slice(1)}, ${verb!.toLowerCase()}${rest}${end}`;
        return out.join(' ');
      },
    });
  }
  const frozen = frozenSpansOf(text);
  const TOKEN = String.raw`(?:[A-Z]{2,}|\d{1,2}:\d{2}|\d+(?:\.\d+)+)`;
  // Not where a correction follows ("to 18:00 — sorry, I mean 16:00"): the swap would move the wrong value last.
  const fromTo = [...text.matchAll(new RegExp(String.raw`\bfrom (${TOKEN}) to (${TOKEN})(?![\w.:]| —)`, 'g'))].filter(
    (m) => !inside(frozen, { start: m.index!, end: m.index! + m[0].length }),
  );
  if (fromTo.length > 0) {
    ops.push({
      name: 'swap from/to',
      apply: (random) => {
        const m = pick(random, fromTo);
        return text.slice(0, m.index!) + `to ${m[2]} from ${m[1]}` + text.slice(m.index! + m[0].length);
      },
    });
  }
  return ops;
}

function insertDistractors(text: string, distractors: readonly string[], random: () => number): string {
  const sentences = splitSentences(text);
  for (const distractor of distractors) {
    // Before the first sentence, at the end, or before a sentence that does not lean on the one before it.
    const positions = [0, sentences.length, ...sentences.map((s, i) => (i > 0 && isMovable(s) ? i : -1)).filter((i) => i > 0)];
    sentences.splice(pick(random, [...new Set(positions)]), 0, distractor);
  }
  return sentences.join(' ');
}

// ---- The transform --------------------------------------------------------------------------------------

const namespacesOf = taskNamespaces;

/** The perturbed goal with what was done to it. */
export function perturbGoalDetailed(task: Task, level: PerturbationLevel, seed: number, trial: number): PerturbedGoal {
  const plan = LEVEL_PLANS[level];
  const protection = protect(task);
  const keepValues = protection.values.filter((v) => v.kind === 'value').map((v) => v.text);
  if (level === 'none') return { goal: task.goal, applied: [], keep: [...keepValues, ...protection.values.filter((v) => v.kind === 'date').map((v) => v.text)] };

  // One stream per transform, so that a level adding a transform leaves the others' choices as they were.
  const stream = (name: string) => hashedRandom(['perturb', seed, task.id, level, trial, name]);
  const goal = task.goal;
  const applied: AppliedTransform[] = [];
  const edits: Edit[] = [];
  const keep = [...keepValues];
  const taken = () => edits as Span[];

  if (plan.corrections > 0) {
    const random = stream('correction');
    for (const candidate of seededShuffle(random, correctionCandidates(task, protection))) {
      if (applied.filter((a) => a.kind === 'correction').length >= plan.corrections) break;
      if (inside(taken(), candidate)) continue;
      const wrong = candidate.wrong(random);
      if (!wrong) continue;
      edits.push({ start: candidate.start, end: candidate.end, text: `${wrong} — sorry, I mean ${candidate.value}` });
      applied.push({ kind: 'correction', detail: `${wrong} -> ${candidate.value}` });
    }
  }

  let today: string | undefined;
  const dates = [...goal.matchAll(ISO_DATE)]
    .filter((m) => isCalendarDate(Number(m[1]), Number(m[2]), Number(m[3])))
    .map((m) => ({ start: m.index!, end: m.index! + m[0].length, iso: m[0] }))
    .filter((d) => !inside(protection.frozen, d) && !inside(taken(), d));
  if (plan.relativeDate) {
    const random = stream('relative-date');
    const onDates = dates.filter((d) => /(?<![\w])on $/.test(goal.slice(0, d.start)));
    if (onDates.length > 0) {
      const chosen = pick(random, onDates);
      today = referenceDateFor(task, chosen.iso);
      const phrase = relativePhrase(random, today, chosen.iso);
      edits.push({ start: chosen.start - 3, end: chosen.end, text: phrase });
      applied.push({ kind: 'relative-date', detail: `on ${chosen.iso} -> ${phrase} (today is ${today})` });
      keep.push(phrase, today);
    }
  }
  if (plan.dateFormat) {
    const random = stream('date-format');
    const remaining = dates.filter((d) => !inside(taken(), d));
    if (remaining.length > 0) {
      const styles = DATE_STYLES.filter((style) => style !== 'us-numeric' || remaining.every((d) => numericIsUnambiguous(d.iso)));
      const style = pick(random, styles);
      for (const d of remaining) {
        const text = formatDate(d.iso, style);
        edits.push({ start: d.start, end: d.end, text });
        keep.push(text);
      }
      applied.push({ kind: 'date-format', detail: `${[...new Set(remaining.map((d) => d.iso))].join(', ')} as ${style}` });
    }
  } else {
    keep.push(...dates.map((d) => d.iso));
  }

  if (plan.synonyms > 0) {
    const random = stream('synonym');
    const lexicon = lexiconFor(namespacesOf(task));
    const candidates = synonymCandidates(goal, lexicon, [...protection.spans, ...taken()]);
    let done = 0;
    for (const candidate of seededShuffle(random, candidates)) {
      if (done >= plan.synonyms) break;
      const replacement = matchCase(candidate.word, pick(random, candidate.alternatives));
      // "return them" must not become "send back them": a phrasal verb before a pronoun is skipped.
      if (/ (up|off|back|out|through|down|over)$/.test(replacement) && /^\s+(it|them|him|her|me|us|you)\b/i.test(goal.slice(candidate.end))) continue;
      done++;
      edits.push({ start: candidate.start, end: candidate.end, text: replacement });
      applied.push({ kind: 'synonym', detail: `${candidate.word} -> ${replacement}` });
      // "a meeting" -> "an appointment"
      const article = /(?<![\p{L}])(a|an|A|An)\s+$/u.exec(goal.slice(0, candidate.start));
      if (article) {
        const wanted = /^[aeiou]/i.test(replacement) ? 'an' : 'a';
        const articleSpan = { start: article.index, end: article.index + article[1]!.length };
        if (article[1]!.toLowerCase() !== wanted && !inside(taken(), articleSpan)) {
          edits.push({ ...articleSpan, text: matchCase(article[1]!, wanted) });
        }
      }
    }
  }

  let text = applyEdits(goal, edits);

  if (plan.reorder > 0) {
    const random = stream('reorder');
    for (const op of seededShuffle(random, reorderOperations(text)).slice(0, plan.reorder)) {
      const next = op.apply(random);
      if (next === text) continue;
      text = next;
      applied.push({ kind: 'reorder', detail: op.name });
    }
  }

  if (plan.distractors > 0) {
    const random = stream('distractor');
    const chosen = seededShuffle(random, lexiconFor(namespacesOf(task)).distractors).slice(0, plan.distractors);
    text = insertDistractors(text, chosen, random);
    for (const d of chosen) applied.push({ kind: 'distractor', detail: d });
  }

  if (today) text = `Today is ${weekday(today)}, ${today}. ${text}`;
  return { goal: text, applied, keep: [...new Set(keep)] };
}

/** The goal shown for `task` at `level` in trial `trial` of a run with `seed`; deterministic. */
export function perturbGoal(task: Task, level: PerturbationLevel, seed: number, trial: number): string {
  return perturbGoalDetailed(task, level, seed, trial).goal;
}

// ---- Optional LLM paraphrase --------------------------------------------------------------------------------

export interface ParaphraseEndpoint {
  /** An OpenAI-compatible base URL, e.g. http://127.0.0.1:11434/v1 */
  baseUrl: string;
  model: string;
  apiKey?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}

export interface ParaphraseOptions extends ParaphraseEndpoint {
  /** Texts the paraphrase must contain verbatim (default: the goal's own values). */
  keep?: readonly string[];
  /** What to return when the paraphrase is refused (default: `goal` unchanged). */
  fallback?: string;
}

export interface ParaphraseResult {
  goal: string;
  paraphrased: boolean;
  /** Kept values the model dropped (the paraphrase was refused). */
  missing: string[];
  error?: string;
}

/** The values a bare goal names (no predicate at hand): quoted values, files, ids, numbers, codes, dates. */
export function valuesInGoal(goal: string): string[] {
  return protect({ goal, success_predicate: { all: [] } } as unknown as Task).values.map((v) => v.text);
}

/**
 * Asks an OpenAI-compatible chat endpoint to paraphrase `goal`, keeping every `keep` value verbatim. A reply
 * that drops one, is empty or balloons is refused and the fallback returned: a paraphrase must never change
 * what the predicate checks.
 */
export async function paraphraseGoal(goal: string, options: ParaphraseOptions): Promise<ParaphraseResult> {
  const keep = [...new Set(options.keep ?? valuesInGoal(goal))];
  const fallback = options.fallback ?? goal;
  const refuse = (error: string, missing: string[] = []): ParaphraseResult => ({ goal: fallback, paraphrased: false, missing, error });
  const doFetch = options.fetch ?? fetch;
  const system = [
    'You rewrite task instructions given to an AI agent.',
    'Paraphrase the text so it asks for exactly the same outcome in different words: do not add, drop or change any requirement.',
    keep.length > 0 ? `Copy each of these values exactly, character for character: ${keep.map((v) => JSON.stringify(v)).join(', ')}.` : '',
    'Reply with the paraphrased text only.',
  ]
    .filter(Boolean)
    .join(' ');
  let content: unknown;
  try {
    const response = await doFetch(`${options.baseUrl.replace(/\/+$/, '')}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {}) },
      body: JSON.stringify({ model: options.model, temperature: 0, messages: [{ role: 'system', content: system }, { role: 'user', content: goal }] }),
      signal: AbortSignal.timeout(options.timeoutMs ?? 60_000),
    });
    const body = (await response.json().catch(() => undefined)) as any;
    if (!response.ok) return refuse(`paraphrase endpoint answered HTTP ${response.status}${body?.error?.message ? `: ${body.error.message}` : ''}`);
    content = body?.choices?.[0]?.message?.content;
  } catch (error) {
    return refuse(`paraphrase endpoint failed: ${(error as Error).message}`);
  }
  if (typeof content !== 'string') return refuse('paraphrase endpoint returned no text');
  const text = content.trim().replace(/^(["“])([\s\S]*)(["”])$/, '$2').trim();
  if (!text) return refuse('paraphrase is empty');
  if (text.length > goal.length * 4 + 200) return refuse('paraphrase is far longer than the goal');
  const missing = keep.filter((value) => !text.includes(value));
  if (missing.length > 0) return refuse(`paraphrase dropped ${missing.map((v) => JSON.stringify(v)).join(', ')}`, missing);
  return { goal: text, paraphrased: true, missing: [] };
}

/**
 * Every goal of a run, computed up front so that a paraphrase endpoint is asked once per (task, trial) and
 * the result plugs into `planRun`'s synchronous `goal` hook. Without an endpoint (or below heavy) it is the
 * deterministic perturbation.
 */
export async function perturbGoals(
  tasks: readonly Task[],
  level: PerturbationLevel,
  seed: number,
  trials: number,
  paraphrase?: ParaphraseEndpoint,
): Promise<(task: Task, trial: number) => string> {
  const goals = new Map<string, string>();
  const key = (task: Task, trial: number) => JSON.stringify([task.id, trial]);
  for (const task of tasks) {
    for (let trial = 0; trial < trials; trial++) {
      const perturbed = perturbGoalDetailed(task, level, seed, trial);
      let goal = perturbed.goal;
      if (paraphrase && LEVEL_PLANS[level].paraphrase) {
        goal = (await paraphraseGoal(perturbed.goal, { ...paraphrase, keep: perturbed.keep, fallback: perturbed.goal })).goal;
      }
      goals.set(key(task, trial), goal);
    }
  }
  return (task, trial) => goals.get(key(task, trial)) ?? perturbGoal(task, level, seed, trial);
}

// ---- Goals of a run -----------------------------------------------------------------------------------------

/** The goal an episode shows its agent at a level, and what was done to it (what the run journal records). */
export interface ShownGoal {
  goal: string;
  perturbed?: GoalPerturbation;
}

/** The deterministic goal of (task, level, seed, trial); level none is the task's own goal, unrecorded. */
export function shownGoal(task: Task, level: PerturbationLevel, seed: number, trial: number): ShownGoal {
  if (level === 'none') return { goal: task.goal };
  const perturbed = perturbGoalDetailed(task, level, seed, trial);
  return { goal: perturbed.goal, perturbed: { applied: perturbed.applied } };
}

/**
 * `shownGoal`, then, at a level whose plan paraphrases (heavy), the LLM paraphrase of it. A paraphrase the
 * endpoint fails or that drops a kept value is not used: the deterministic goal stays, and the record says why.
 */
export async function paraphrasedGoal(task: Task, level: PerturbationLevel, seed: number, trial: number, endpoint: ParaphraseEndpoint): Promise<ShownGoal> {
  if (level === 'none' || !LEVEL_PLANS[level].paraphrase) return shownGoal(task, level, seed, trial);
  const perturbed = perturbGoalDetailed(task, level, seed, trial);
  const result = await paraphraseGoal(perturbed.goal, { ...endpoint, keep: perturbed.keep, fallback: perturbed.goal });
  return {
    goal: result.goal,
    perturbed: {
      applied: perturbed.applied,
      paraphrase: { paraphrased: result.paraphrased, model: endpoint.model, ...(result.error ? { error: result.error } : {}) },
    },
  };
}
