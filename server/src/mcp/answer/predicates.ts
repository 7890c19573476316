/**
 * Checks on the agent's final text answer. Every predicate is false when there is no answer (undefined), so
 * `not` of a check is true for an agent that never answered: authors who want "answered, but without X"
 * write `{ "all": [ { "answer.nonEmpty": {} }, { "not": ... } ] }`.
 */
import type { Verdict } from '../namespace.ts';

const EXCERPT = 200;

function excerpt(text: string): string {
  return text.length <= EXCERPT ? text : `${text.slice(0, EXCERPT)}…`;
}

/**
 * NFKC folds look-alike forms (full-width digits, ligatures, non-breaking spaces) so that an answer is not
 * failed for typography; whitespace runs collapse so line breaks inside a phrase do not matter.
 */
function normalizeText(text: string, caseSensitive: boolean): string {
  const folded = text.normalize('NFKC').replace(/\s+/gu, ' ').trim();
  return caseSensitive ? folded : folded.toLowerCase();
}

const noAnswer: Verdict = { value: false, evidence: { answer: null, reason: 'no final answer' } };

export function includes(args: { text: string; case_sensitive?: boolean }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  const cs = args.case_sensitive ?? false;
  const value = normalizeText(answer, cs).includes(normalizeText(args.text, cs));
  return { value, evidence: { text: args.text, answer: excerpt(answer) } };
}

export function includesAll(args: { texts: string[]; case_sensitive?: boolean }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  const cs = args.case_sensitive ?? false;
  const haystack = normalizeText(answer, cs);
  const missing = args.texts.filter((t) => !haystack.includes(normalizeText(t, cs)));
  return { value: missing.length === 0, evidence: { missing, answer: excerpt(answer) } };
}

export function includesAny(args: { texts: string[]; case_sensitive?: boolean }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  const cs = args.case_sensitive ?? false;
  const haystack = normalizeText(answer, cs);
  const found = args.texts.filter((t) => haystack.includes(normalizeText(t, cs)));
  return { value: found.length > 0, evidence: { found, answer: excerpt(answer) } };
}

export function equals(args: { text: string; case_sensitive?: boolean }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  const cs = args.case_sensitive ?? false;
  // A final full stop is how models end sentences, not part of the value ("Paris." answers "Paris").
  const strip = (s: string): string => normalizeText(s, cs).replace(/\.$/u, '').trim();
  const value = strip(answer) === strip(args.text);
  return { value, evidence: { expected: args.text, answer: excerpt(answer) } };
}

export function matches(args: { pattern: string; flags?: string }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  let regex: RegExp;
  try {
    // `g` and `y` make `test` stateful across calls; a fresh RegExp per call keeps the predicate pure.
    regex = new RegExp(args.pattern, args.flags ?? '');
  } catch (error) {
    return { value: false, evidence: { error: `invalid regular expression: ${(error as Error).message}` } };
  }
  const match = regex.exec(answer);
  return { value: match !== null, evidence: { pattern: args.pattern, match: match ? excerpt(match[0]) : null } };
}

// ---- numbers

const SCALES: Record<string, number> = { thousand: 1e3, k: 1e3, million: 1e6, billion: 1e9, trillion: 1e12 };

/**
 * A number: an optional sign that is not a hyphen inside a word or range ("10-20" is 10 and 20, "x-1" is 1),
 * digits with comma thousands separators ("1,200.50") or plain digits with an optional decimal part, an
 * optional exponent, and an optional scale word ("1.2 million", "5k"). A number glued to a preceding digit or
 * dot is skipped, so "1.2.3" yields 1.2 and not 0.3.
 */
const NUMBER =
  /(?<sign>(?<![\p{L}\p{N}_])[-\u2212+])?(?<![\d.])(?<num>\d{1,3}(?:,\d{3})+(?!\d|,\d)(?:\.\d+)?|\d+(?:\.\d+)?|\.\d+)(?<exp>[eE][-+]?\d+)?(?:(?<k>k)(?![\p{L}\p{N}])|\s*(?<scale>thousand|million|billion|trillion)(?![\p{L}]))?/giu;

export function extractNumbers(text: string): number[] {
  const out: number[] = [];
  for (const m of text.normalize('NFKC').matchAll(NUMBER)) {
    const g = m.groups ?? {};
    const raw = (g.num ?? '').replace(/,/g, '') + (g.exp ?? '');
    let n = Number(raw);
    if (!Number.isFinite(n)) continue;
    const scale = g.k ? SCALES.k : g.scale ? SCALES[g.scale.toLowerCase()] : undefined;
    if (scale !== undefined) n *= scale;
    if (g.sign === '-' || g.sign === '\u2212') n = -n;
    out.push(n);
  }
  return out;
}

export function numberNear(
  args: { value: number; tolerance?: number; absolute_tolerance?: number },
  answer: string | undefined,
): Verdict {
  if (answer === undefined) return noAnswer;
  const relative = args.tolerance ?? 0.05;
  const absolute = args.absolute_tolerance ?? 0;
  const numbers = extractNumbers(answer);
  const within = (n: number): boolean => {
    const diff = Math.abs(n - args.value);
    // A small epsilon so that 0.1 + 0.2 style representation error never fails an exact match.
    return diff <= relative * Math.abs(args.value) + 1e-9 || diff <= absolute;
  };
  const match = numbers.find(within);
  return {
    value: match !== undefined,
    evidence: { expected: args.value, tolerance: relative, absolute_tolerance: absolute, numbers: numbers.slice(0, 50), match: match ?? null },
  };
}

// ---- dates

const MONTHS: Record<string, number> = {
  jan: 1, feb: 2, mar: 3, apr: 4, may: 5, jun: 6, jul: 7, aug: 8, sep: 9, sept: 9, oct: 10, nov: 11, dec: 12,
};
const MONTH_NAME =
  '(january|february|march|april|may|june|july|august|september|october|november|december|jan|feb|mar|apr|jun|jul|aug|sept|sep|oct|nov|dec)\\.?';
const DAY = '(\\d{1,2})(?:st|nd|rd|th)?';

function iso(year: number, month: number, day: number): string | undefined {
  if (month < 1 || month > 12 || day < 1) return undefined;
  const days = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (day > days) return undefined;
  return `${String(year).padStart(4, '0')}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`;
}

function monthNumber(name: string): number {
  return MONTHS[name.toLowerCase().slice(0, 3)] ?? 0;
}

type NumericOrder = 'MDY' | 'DMY' | 'either';

/** Every calendar date written in the text, as ISO `YYYY-MM-DD`, in order of appearance, without repeats. */
export function extractDates(text: string, numericOrder: NumericOrder = 'either'): string[] {
  const found: Array<{ at: number; date: string }> = [];
  const add = (at: number, date: string | undefined): void => {
    if (date) found.push({ at, date });
  };
  const t = text.normalize('NFKC');
  for (const m of t.matchAll(/(?<!\d)(\d{4})[-/.](\d{1,2})[-/.](\d{1,2})(?!\d)/g)) {
    add(m.index, iso(Number(m[1]), Number(m[2]), Number(m[3])));
  }
  for (const m of t.matchAll(new RegExp(`(?<![\\p{L}\\d])${DAY}(?:\\s+of)?\\s+${MONTH_NAME},?\\s+(\\d{4})(?!\\d)`, 'giu'))) {
    add(m.index, iso(Number(m[3]), monthNumber(m[2]!), Number(m[1])));
  }
  for (const m of t.matchAll(new RegExp(`(?<![\\p{L}])${MONTH_NAME}\\s+${DAY},?\\s+(\\d{4})(?!\\d)`, 'giu'))) {
    add(m.index, iso(Number(m[3]), monthNumber(m[1]!), Number(m[2])));
  }
  for (const m of t.matchAll(/(?<![\d/.-])(\d{1,2})[/.-](\d{1,2})[/.-](\d{4})(?![\d/.-])/g)) {
    const a = Number(m[1]);
    const b = Number(m[2]);
    const y = Number(m[3]);
    if (numericOrder !== 'DMY') add(m.index, iso(y, a, b));
    if (numericOrder !== 'MDY') add(m.index, iso(y, b, a));
  }
  found.sort((x, y) => x.at - y.at);
  return [...new Set(found.map((f) => f.date))];
}

export function dateEquals(args: { date: string; numeric_order?: NumericOrder }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  const dates = extractDates(answer, args.numeric_order ?? 'either');
  return { value: dates.includes(args.date), evidence: { expected: args.date, dates: dates.slice(0, 20) } };
}

export function nonEmpty(_args: Record<string, never>, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  return { value: answer.trim().length > 0, evidence: { length: answer.trim().length } };
}

export function maxLength(args: { max: number; unit?: 'characters' | 'words' }, answer: string | undefined): Verdict {
  if (answer === undefined) return noAnswer;
  const unit = args.unit ?? 'characters';
  const trimmed = answer.trim();
  const length = unit === 'words' ? (trimmed === '' ? 0 : trimmed.split(/\s+/u).length) : [...trimmed].length;
  return { value: length <= args.max, evidence: { length, max: args.max, unit } };
}
