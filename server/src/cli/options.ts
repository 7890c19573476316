/**
 * The option parsers and the options several commands share. A parser throws commander's
 * InvalidArgumentError, which commander reports as a usage error (exit 2).
 */
import { InvalidArgumentError, Option } from 'commander';
import { DB_ENV, DEFAULT_DB_PATH } from '../results/db.ts';
import { SANDBOX_BACKENDS } from '../runner/sandbox.ts';

/** A repeatable option: each use adds one value. */
export function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

export function numberOption(value: string): number {
  const n = Number(value);
  if (value.trim() === '' || !Number.isFinite(n)) throw new InvalidArgumentError('expected a number');
  return n;
}

export function jsonObjectOption(value: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    throw new InvalidArgumentError('expected a JSON object, e.g. \'{"top_k": 20}\'');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new InvalidArgumentError('expected a JSON object');
  return Object.fromEntries(Object.entries(parsed));
}

/** A whole number >= 0. */
export function integerOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('expected a whole number >= 0');
  return n;
}

/** A whole number >= 1. */
export function positiveInteger(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError('expected a whole number >= 1');
  return n;
}

/** A whole number, negative too (seeds). */
export function seedOption(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n)) throw new InvalidArgumentError('expected a whole number');
  return n;
}

export function monthOption(value: string): string {
  if (!/^\d{4}-(0[1-9]|1[0-2])$/.test(value)) throw new InvalidArgumentError('expected YYYY-MM, e.g. 2026-12');
  return value;
}

/** A share from 0 to 1 inclusive. */
export function shareOption(value: string): number {
  const n = Number(value);
  if (!(n >= 0 && n <= 1)) throw new InvalidArgumentError('expected a number from 0 to 1, e.g. 0.25');
  return n;
}

/** A probability strictly between 0 and 1. */
export function probability(value: string): number {
  const n = Number(value);
  if (!(n > 0 && n < 1)) throw new InvalidArgumentError('expected a number between 0 and 1, e.g. 0.05');
  return n;
}

/** `-f, --format` with these choices, text by default. */
export const formatOption = (choices: readonly string[] = ['text', 'json'], description = 'output format') => new Option('-f, --format <format>', description).choices([...choices]).default('text');

export const sandboxOption = (description = 'sandbox backend (default: bwrap where it works, else a plain process)') => new Option('--sandbox <backend>', description).choices([...SANDBOX_BACKENDS]);

export const reporterOption = () => new Option('--reporter <kind>', 'progress on stderr, or one JSON event per line on stdout').choices(['progress', 'jsonl', 'none']).default('progress');

export const dbOption = () => new Option('--db <target>', `the results database: a PGlite folder, postgres://user@host/db, or memory:// (default: ${DB_ENV} or ${DEFAULT_DB_PATH})`);

export const correctionOption = () => new Option('--correction <method>', 'multiple-comparison correction').choices(['holm', 'bh']);
