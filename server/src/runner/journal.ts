/**
 * The run journal: `runs/<run-id>/run.json` (the run's configuration) and `episodes.jsonl` (one finished
 * EpisodeResult per line, appended and fsynced before the next episode starts). A run killed at any point
 * loses at most the episodes that were still running; `--resume` reads what is there, cuts a torn last
 * line, and runs only the episodes not yet recorded, so nothing is lost or counted twice.
 */
import { closeSync, existsSync, fsyncSync, mkdirSync, openSync, readFileSync, truncateSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { EpisodeKey, EpisodeResult } from './types.ts';

export const RUN_FILE = 'run.json';
export const EPISODES_FILE = 'episodes.jsonl';

/** What a run was asked to do; enough to resume it. */
export interface RunConfig {
  run_id: string;
  created_at: string;
  /** Absolute paths of the task files (or sealed-set entries). */
  task_files: string[];
  tasks: string[];
  agent: string;
  agent_options?: Record<string, unknown>;
  fault_profile: string;
  /** The perturbation level, or several comma-separated (`none,light,medium`): each is in the episode keys. */
  perturbation: string;
  /** The same levels as a list (runs written before lists were possible have only `perturbation`). */
  perturbations?: string[];
  /** The OpenAI-compatible endpoint heavy-level goals were paraphrased through (the API key is never recorded). */
  paraphrase?: { baseUrl: string; model: string };
  trials: number;
  seed: number;
  concurrency: number;
  sandbox: string;
  /** The reference agent's sequences per task (`reference:0` ...), or the agent name. */
  variants?: Record<string, string[]>;
  retry?: boolean;
  /** The task set measured and its month (a set folder's set.json, or --set / --month): what the results database ranks by. */
  set?: { name: string; month?: string };
}

export function episodeId(key: EpisodeKey): string {
  return [key.task_id, key.variant, key.fault_profile, key.perturbation, key.trial].join('|');
}

export class Journal {
  private constructor(
    readonly directory: string,
    readonly config: RunConfig,
    private readonly recorded: EpisodeResult[],
  ) {}

  /** Starts a new run directory; refuses to overwrite an existing run. */
  static create(directory: string, config: RunConfig): Journal {
    if (existsSync(join(directory, RUN_FILE))) throw new Error(`${directory} already holds a run: use --resume to finish it`);
    mkdirSync(directory, { recursive: true });
    writeFileSync(join(directory, RUN_FILE), JSON.stringify(config, null, 2) + '\n');
    writeFileSync(join(directory, EPISODES_FILE), '');
    return new Journal(directory, config, []);
  }

  /** Opens a run to resume it: its config, and the episodes finished so far (a torn last line is cut off). */
  static resume(directory: string): Journal {
    const configFile = join(directory, RUN_FILE);
    if (!existsSync(configFile)) throw new Error(`${directory} is not a run directory (no ${RUN_FILE})`);
    const config = JSON.parse(readFileSync(configFile, 'utf8')) as RunConfig;
    const { results, validBytes, torn } = readEpisodes(directory);
    if (torn) truncateSync(join(directory, EPISODES_FILE), validBytes);
    return new Journal(directory, config, results);
  }

  results(): EpisodeResult[] {
    return [...this.recorded];
  }

  finished(): Set<string> {
    return new Set(this.recorded.map(episodeId));
  }

  /** Appends one finished episode and makes it durable before returning. */
  append(result: EpisodeResult): void {
    const fd = openSync(join(this.directory, EPISODES_FILE), 'a');
    try {
      writeSync(fd, JSON.stringify(result) + '\n');
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    this.recorded.push(result);
  }
}

/** Reads episodes.jsonl; a last line without its newline (a kill mid-write) is not an episode. */
export function readEpisodes(directory: string): { results: EpisodeResult[]; validBytes: number; torn: boolean } {
  const file = join(directory, EPISODES_FILE);
  if (!existsSync(file)) return { results: [], validBytes: 0, torn: false };
  const buffer = readFileSync(file);
  const results: EpisodeResult[] = [];
  let start = 0;
  let validBytes = 0;
  for (let i = 0; i < buffer.length; i++) {
    if (buffer[i] !== 0x0a) continue;
    const line = buffer.subarray(start, i).toString('utf8');
    start = i + 1;
    if (!line.trim()) {
      validBytes = start;
      continue;
    }
    try {
      results.push(JSON.parse(line) as EpisodeResult);
      validBytes = start;
    } catch {
      break; // a corrupt line: everything after it is suspect
    }
  }
  return { results, validBytes, torn: validBytes < buffer.length };
}
