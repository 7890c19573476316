/**
 * The concrete values a goal names — quoted values, file names and paths, record ids — with their offsets in
 * the goal text. The linter warns when no predicate checks one: a goal that says "archive report.txt" with a
 * predicate that never mentions report.txt passes agents that ignore half the ask.
 */
export interface GoalValue {
  kind: 'quoted' | 'file' | 'id';
  text: string;
  /** Offset of `text` within the goal string. */
  index: number;
}

// Opening quote at a word boundary, closing quote not followed by a letter, so "don't" and "it's" are not quotes.
const QUOTED = /(?<![\p{L}\p{N}])(?:"([^"\n]{1,80})"|'([^'\n]{1,80})'(?![\p{L}\p{N}])|‘([^’\n]{1,80})’|“([^”\n]{1,80})”|`([^`\n]{1,80})`)/gu;
// A file name or path: at least one letter or digit before a dot, an extension starting with a letter.
const FILE = /(?<![\w./-])(?:[\w-]+\/)*[\w-]*[A-Za-z0-9_][\w-]*\.[A-Za-z][A-Za-z0-9]{0,7}(?![\w])/g;
// Record ids: AA-500, TCK-1042, ORD-2024-17, #42.
const ID = /(?<![\w-])(?:[A-Z][A-Z0-9]{1,9}-\d[\w-]*|#\d+)(?![\w])/g;

export function goalValues(goal: string): GoalValue[] {
  const found: GoalValue[] = [];
  const seen = new Set<string>();
  const add = (kind: GoalValue['kind'], text: string, index: number) => {
    const trimmed = text.trim();
    if (!trimmed || seen.has(trimmed.toLowerCase())) return;
    seen.add(trimmed.toLowerCase());
    found.push({ kind, text: trimmed, index: index + text.indexOf(trimmed) });
  };
  for (const m of goal.matchAll(QUOTED)) {
    const inner = m.slice(1).find((g) => g !== undefined)!;
    add('quoted', inner, m.index! + 1);
  }
  for (const m of goal.matchAll(FILE)) {
    if (/^\d+(\.\d+)+$/.test(m[0]) || /^(e\.g|i\.e|etc)\b/i.test(m[0])) continue;
    add('file', m[0], m.index!);
  }
  for (const m of goal.matchAll(ID)) add('id', m[0], m.index!);
  return found.sort((a, b) => a.index - b.index);
}

/** Whether a goal value is checked: some string or number in the predicate arguments contains it. */
export function isValueChecked(value: GoalValue, predicateStrings: readonly string[]): boolean {
  const needle = value.text.toLowerCase();
  const bare = value.kind === 'id' && needle.startsWith('#') ? needle.slice(1) : needle;
  return predicateStrings.some((s) => {
    const hay = s.toLowerCase();
    return hay.includes(needle) || (bare !== needle && hay === bare);
  });
}

/** Every string and number inside a JSON value, as strings (predicate arguments are searched for goal values). */
export function scalarStrings(value: unknown, out: string[] = []): string[] {
  if (typeof value === 'string') out.push(value);
  else if (typeof value === 'number') out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) scalarStrings(v, out);
  else if (value && typeof value === 'object') {
    for (const [k, v] of Object.entries(value)) {
      out.push(k);
      scalarStrings(v, out);
    }
  }
  return out;
}
