/**
 * The commands of `mcpbench`, one file each, in the order `mcpbench --help` lists them. A command is a file
 * here exporting `register(program, context)`, and its line below.
 */
import type { Command } from 'commander';
import type { CommandContext } from '../context.ts';
import * as anomalies from './anomalies.ts';
import * as api from './api.ts';
import * as check from './check.ts';
import * as compare from './compare.ts';
import * as doctor from './doctor.ts';
import * as exportRun from './export.ts';
import * as generate from './generate.ts';
import * as hash from './hash.ts';
import * as leaderboard from './leaderboard.ts';
import * as lint from './lint.ts';
import * as newTask from './new.ts';
import * as rejudge from './rejudge.ts';
import * as report from './report.ts';
import * as results from './results.ts';
import * as review from './review.ts';
import * as rotate from './rotate.ts';
import * as run from './run.ts';
import * as seal from './seal.ts';
import * as serve from './serve.ts';
import * as state from './state.ts';
import * as stats from './stats.ts';
import * as verify from './verify.ts';
import * as worker from './worker.ts';

export interface CommandModule {
  register(program: Command, context: CommandContext): void;
}

export const COMMANDS: readonly CommandModule[] = [lint, hash, stats, serve, state, run, check, report, doctor, newTask, generate, worker, api, review, rotate, verify, seal, results, compare, anomalies, leaderboard, exportRun, rejudge];
