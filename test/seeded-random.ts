/** A small seeded PRNG (mulberry32) so randomised tests replay exactly from their seed. */
export { mulberry32 as seededRandom } from '../server/src/seeded-random.ts';

export const pick = <T>(random: () => number, items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
