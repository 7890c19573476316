/**
 * The generator's only source of randomness: mulberry32 (server/src/seeded-random.ts, shared with the bootstrap and the tests), so a
 * seed replays a batch byte for byte on every machine and Node version (Math.random is never used).
 */
import { mulberry32 } from '../seeded-random.ts';

export interface Random {
  /** A float in [0, 1). */
  next(): number;
  /** An integer in [min, max] (inclusive). */
  int(min: number, max: number): number;
  /** A uniformly chosen element. */
  pick<T>(items: readonly T[]): T;
  /** An index chosen with the given positive weights. */
  weighted(weights: readonly number[]): number;
  /** A 32-bit unsigned integer: seeds derived variant by variant. */
  uint32(): number;
}

export { mulberry32 };

export function createRandom(seed: number): Random {
  const next = mulberry32(seed);
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!,
    weighted: (weights) => {
      const total = weights.reduce((a, b) => a + b, 0);
      let r = next() * total;
      for (let i = 0; i < weights.length; i++) {
        r -= weights[i]!;
        if (r < 0) return i;
      }
      return weights.length - 1; // rounding at the top end
    },
    uint32: () => Math.floor(next() * 4294967296) >>> 0,
  };
}
