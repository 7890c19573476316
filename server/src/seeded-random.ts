import { createHash } from 'node:crypto';

/**
 * mulberry32: a tiny seeded PRNG, identical on every platform, for everything that must replay from a seed
 * (template sampling, bootstrap resampling, randomised tests). Not for anything secret.
 */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

// ---- Seeded randomness ------------------------------------------------------------------------------------

/**
 * Uniform numbers in [0, 1) from SHA-256(JSON [...parts, block]) in counter mode, 48 bits each: the same
 * parts give the same stream on every platform, and JSON keeps `("a-1", 2)` apart from `("a", 12)`.
 */
export function hashedRandom(parts: readonly unknown[]): () => number {
  let block = 0;
  let bytes = Buffer.alloc(0);
  let offset = 0;
  return () => {
    if (offset + 6 > bytes.length) {
      bytes = createHash('sha256').update(JSON.stringify([...parts, block++])).digest();
      offset = 0;
    }
    const value = bytes.readUIntBE(offset, 6) / 2 ** 48;
    offset += 6;
    return value;
  };
}

export function seededShuffle<T>(random: () => number, items: readonly T[]): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

