/**
 * The episodes of a check (`mcpbench check`) by variant, and the outcome each must have: the noop agent and every
 * counterexample must fail, every reference solution must pass. One source for the check that runs them and
 * for the editor that shows whether each came out as expected.
 */
export const NOOP_VARIANT = 'noop';
export const referenceVariant = (index: number): string => `reference:${index}`;
export const counterexampleVariant = (index: number): string => `counterexample:${index}`;

/** Whether a check episode of this variant must pass or fail (undefined: not a check variant). */
export function expectedOutcome(variant: string): 'pass' | 'fail' | undefined {
  if (variant === NOOP_VARIANT || variant.startsWith('counterexample:')) return 'fail';
  if (variant.startsWith('reference:')) return 'pass';
  return undefined;
}
