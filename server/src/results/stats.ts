/**
 * The statistics of comparisons and anomaly detection: pure, seeded, no I/O.
 *
 * - Paired bootstrap over tasks: the mean of per-task differences, its percentile interval, and a two-sided
 *   bootstrap p-value (twice the smaller share of resampled means on either side of 0, with the +1
 *   correction so it is never 0).
 * - McNemar's exact test on paired binary outcomes (b = A passed and B failed, c = the reverse): two-sided
 *   binomial p-value with p = 1/2 on the b + c discordant pairs, and the conditional odds ratio c / b with its
 *   exact (Clopper-Pearson) interval.
 * - Holm's step-down and Benjamini-Hochberg's step-up adjustments of a family of p-values.
 * - The beta-binomial tail, for counts whose rate varies from task to task (overdispersion) more than a
 *   binomial allows.
 */
import { mulberry32 } from '../seeded-random.ts';
import { quantile, type Interval } from '../scoring/metrics.ts';

export interface BootstrapOptions {
  resamples: number;
  seed: number;
  confidence: number;
}

export interface PairedBootstrap {
  /** Mean of the paired differences (B - A). */
  mean: number;
  ci: Interval;
  p: number;
  n: number;
}

/** FNV-1a of a label into a seed: each test draws its own stream. */
export function labelSeed(seed: number, label: string): number {
  let h = (0x811c9dc5 ^ (seed >>> 0)) >>> 0;
  for (let i = 0; i < label.length; i++) h = Math.imul(h ^ label.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

/** `bounds`: the range each value can take (default -1 to 1, a difference of two rates). */
export function pairedBootstrap(differences: readonly number[], options: BootstrapOptions & { label: string; bounds?: readonly [number, number] }): PairedBootstrap | null {
  const n = differences.length;
  if (n === 0) return null;
  const mean = differences.reduce((s, d) => s + d, 0) / n;
  if (differences.every((d) => d === differences[0])) {
    // Resampling n equal values gives a zero-width interval, which n tasks do not warrant: bound the share of
    // tasks that could differ from the rest (Clopper-Pearson for n of n), each by as much as the range allows.
    const [lowest, highest] = options.bounds ?? [-1, 1];
    const share = 1 - Math.pow((1 - options.confidence) / 2, 1 / n);
    return { mean, ci: { low: mean - share * (mean - lowest), high: mean + share * (highest - mean) }, p: mean === 0 ? 1 : 2 / (options.resamples + 1), n };
  }
  const random = mulberry32(labelSeed(options.seed, options.label));
  const means = new Float64Array(options.resamples);
  let below = 0;
  let above = 0;
  for (let b = 0; b < options.resamples; b++) {
    let sum = 0;
    for (let i = 0; i < n; i++) sum += differences[Math.floor(random() * n)]!;
    const m = sum / n;
    means[b] = m;
    if (m <= 0) below++;
    if (m >= 0) above++;
  }
  const sorted = Array.from(means).sort((a, b) => a - b);
  const alpha = (1 - options.confidence) / 2;
  const p = Math.min(1, (2 * (Math.min(below, above) + 1)) / (options.resamples + 1));
  return { mean, ci: { low: quantile(sorted, alpha), high: quantile(sorted, 1 - alpha) }, p, n };
}

// ---- Binomial and beta functions ------------------------------------------------------------------------

/** ln Γ(x) by the Lanczos approximation (g = 7, n = 9), accurate to about 15 digits for x > 0. */
export function logGamma(x: number): number {
  const g = 7;
  const c = [0.99999999999980993, 676.5203681218851, -1259.1392167224028, 771.32342877765313, -176.61502916214059, 12.507343278686905, -0.13857109526572012, 9.9843695780195716e-6, 1.5056327351493116e-7];
  if (x < 0.5) return Math.log(Math.PI / Math.sin(Math.PI * x)) - logGamma(1 - x);
  x -= 1;
  let a = c[0]!;
  const t = x + g + 0.5;
  for (let i = 1; i < g + 2; i++) a += c[i]! / (x + i);
  return 0.5 * Math.log(2 * Math.PI) + (x + 0.5) * Math.log(t) - t + Math.log(a);
}

const logChoose = (n: number, k: number) => logGamma(n + 1) - logGamma(k + 1) - logGamma(n - k + 1);

/** P(X <= k) for X ~ Binomial(n, p). */
export function binomialCdf(k: number, n: number, p: number): number {
  if (k < 0) return 0;
  if (k >= n) return 1;
  if (p <= 0) return 1;
  if (p >= 1) return 0;
  let sum = 0;
  for (let i = 0; i <= k; i++) sum += Math.exp(logChoose(n, i) + i * Math.log(p) + (n - i) * Math.log1p(-p));
  return Math.min(1, sum);
}

/** Clopper-Pearson interval for k successes in n trials (bisection on the binomial tails). */
export function clopperPearson(k: number, n: number, confidence: number): Interval {
  const alpha = (1 - confidence) / 2;
  const solve = (f: (p: number) => number) => {
    let lo = 0;
    let hi = 1;
    for (let i = 0; i < 60; i++) {
      const mid = (lo + hi) / 2;
      if (f(mid) > 0) hi = mid;
      else lo = mid;
    }
    return (lo + hi) / 2;
  };
  // lower: P(X >= k | p) = alpha, increasing in p; upper: P(X <= k | p) = alpha, decreasing in p.
  const low = k === 0 ? 0 : solve((p) => 1 - binomialCdf(k - 1, n, p) - alpha);
  const high = k === n ? 1 : solve((p) => alpha - binomialCdf(k, n, p));
  return { low, high };
}

export interface McNemar {
  /** A passed, B failed. */
  b: number;
  /** A failed, B passed. */
  c: number;
  p: number;
  /** c / b: the odds that a discordant task favours B; null when b + c = 0. Infinity when b = 0. */
  odds_ratio: number | null;
  odds_ratio_ci: Interval | null;
}

export function mcnemarExact(b: number, c: number, confidence = 0.95): McNemar {
  const n = b + c;
  if (n === 0) return { b, c, p: 1, odds_ratio: null, odds_ratio_ci: null };
  const p = Math.min(1, 2 * binomialCdf(Math.min(b, c), n, 0.5));
  const share = clopperPearson(c, n, confidence);
  const odds = (q: number) => (q >= 1 ? Infinity : q / (1 - q));
  return { b, c, p, odds_ratio: b === 0 ? Infinity : c / b, odds_ratio_ci: { low: odds(share.low), high: odds(share.high) } };
}

// ---- Multiple comparisons -------------------------------------------------------------------------------

export type Correction = 'holm' | 'bh';

/** Adjusted p-values, in the input order. Holm controls the family-wise error; BH the false discovery rate. */
export function adjustPValues(pvalues: readonly number[], method: Correction): number[] {
  const m = pvalues.length;
  const order = pvalues.map((p, i) => ({ p, i })).sort((a, b) => a.p - b.p || a.i - b.i);
  const adjusted = new Array<number>(m);
  if (method === 'holm') {
    let running = 0;
    order.forEach(({ p, i }, rank) => {
      running = Math.max(running, Math.min(1, (m - rank) * p));
      adjusted[i] = running;
    });
  } else {
    let running = 1;
    for (let rank = m - 1; rank >= 0; rank--) {
      const { p, i } = order[rank]!;
      running = Math.min(running, Math.min(1, (p * m) / (rank + 1)));
      adjusted[i] = running;
    }
  }
  return adjusted;
}

// ---- Beta-binomial --------------------------------------------------------------------------------------

const logBeta = (a: number, b: number) => logGamma(a) + logGamma(b) - logGamma(a + b);

/** P(X = k) for X ~ BetaBinomial(n, alpha, beta). */
export function betaBinomialPmf(k: number, n: number, alpha: number, beta: number): number {
  return Math.exp(logChoose(n, k) + logBeta(k + alpha, n - k + beta) - logBeta(alpha, beta));
}

/** Two-sided tail p-value of k under BetaBinomial(n, alpha, beta): twice the smaller tail, at most 1. */
export function betaBinomialTwoSided(k: number, n: number, alpha: number, beta: number): { p: number; expected: number } {
  let lower = 0;
  let upper = 0;
  for (let i = 0; i <= n; i++) {
    const pmf = betaBinomialPmf(i, n, alpha, beta);
    if (i <= k) lower += pmf;
    if (i >= k) upper += pmf;
  }
  return { p: Math.min(1, 2 * Math.min(lower, upper)), expected: (n * alpha) / (alpha + beta) };
}

/**
 * Beta parameters by the method of moments from rates observed with sampling noise: the spread of the true
 * rates is the observed variance less the mean binomial variance, floored so the fit stays proper.
 */
export function fitBeta(rates: readonly { rate: number; n: number }[]): { alpha: number; beta: number; mean: number; sd: number } | null {
  if (rates.length < 2) return null;
  const mean = rates.reduce((s, r) => s + r.rate, 0) / rates.length;
  const variance = rates.reduce((s, r) => s + (r.rate - mean) ** 2, 0) / (rates.length - 1);
  const sampling = rates.reduce((s, r) => s + (r.rate * (1 - r.rate)) / Math.max(1, r.n), 0) / rates.length;
  const m = Math.min(0.98, Math.max(0.02, mean));
  const spread = Math.max(variance - sampling, 0.0025, 0);
  const v = Math.min(spread, m * (1 - m) * 0.95);
  const common = (m * (1 - m)) / v - 1;
  return { alpha: m * common, beta: (1 - m) * common, mean, sd: Math.sqrt(v) };
}

// ---- Student's t ----------------------------------------------------------------------------------------

/** Continued fraction of the regularized incomplete beta function (modified Lentz). */
function betaContinuedFraction(x: number, a: number, b: number): number {
  const tiny = 1e-300;
  let c = 1;
  let d = 1 - ((a + b) * x) / (a + 1);
  if (Math.abs(d) < tiny) d = tiny;
  d = 1 / d;
  let h = d;
  for (let m = 1; m <= 300; m++) {
    const m2 = 2 * m;
    let aa = (m * (b - m) * x) / ((a + m2 - 1) * (a + m2));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    h *= d * c;
    aa = (-(a + m) * (a + b + m) * x) / ((a + m2) * (a + m2 + 1));
    d = 1 + aa * d;
    if (Math.abs(d) < tiny) d = tiny;
    c = 1 + aa / c;
    if (Math.abs(c) < tiny) c = tiny;
    d = 1 / d;
    const delta = d * c;
    h *= delta;
    if (Math.abs(delta - 1) < 1e-14) break;
  }
  return h;
}

/** The regularized incomplete beta function I_x(a, b). */
export function incompleteBeta(x: number, a: number, b: number): number {
  if (x <= 0) return 0;
  if (x >= 1) return 1;
  const front = Math.exp(a * Math.log(x) + b * Math.log1p(-x) - logBeta(a, b));
  return x < (a + 1) / (a + b + 2) ? (front * betaContinuedFraction(x, a, b)) / a : 1 - (front * betaContinuedFraction(1 - x, b, a)) / b;
}

/** Two-sided p-value of a t statistic with `df` degrees of freedom. */
export function studentTTwoSided(t: number, df: number): number {
  return Math.min(1, incompleteBeta(df / (df + t * t), df / 2, 0.5));
}
