import { distance } from 'fastest-levenshtein';

/**
 * The candidate closest to `word` by edit distance, when close enough to be what the author meant
 * (at most a third of the word's length, and at least 1 edit apart; case differences count as half an edit), or
 * else the shortest candidate the word abbreviates.
 */
export function closest(word: string, candidateNames: Iterable<string>): string | undefined {
  const candidates = [...candidateNames];
  let best: string | undefined;
  let bestScore = Infinity;
  for (const candidate of candidates) {
    if (candidate === word) continue;
    const score = Math.min(distance(word, candidate), distance(word.toLowerCase(), candidate.toLowerCase()) + 0.5);
    if (score < bestScore) {
      bestScore = score;
      best = candidate;
    }
  }
  const limit = Math.max(2, Math.ceil(word.length / 3));
  if (bestScore <= limit) return best;
  // An abbreviation (`list_dir` for `list_directory`): the shortest candidate it begins.
  if (word.length < 3) return undefined;
  let prefixed: string | undefined;
  for (const candidate of candidates) {
    if (candidate.toLowerCase().startsWith(word.toLowerCase()) && (!prefixed || candidate.length < prefixed.length)) prefixed = candidate;
  }
  return prefixed;
}

export function quoteList(values: readonly string[]): string {
  return values.map((v) => `\`${v}\``).join(', ');
}
