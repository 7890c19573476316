/**
 * bench/resume: SIGKILL a run at random points, damage its journal each time, resume it, and count what was
 * lost and what was counted twice (the run record's promise: both 0). Needs `npm run build` first.
 *
 *   npx tsx bench/resume/run.ts [--kills 6] [--seed 1] [--trials 3] [--concurrency 2] [task folders...]
 *   (default tasks: the calendar, travel and shop fixtures; SANDBOX=bwrap|process, default process)
 *
 * Each round starts the run (the first) or resumes it, waits for 1 to 3 finished episodes plus 0 to 400 ms
 * (so a kill lands between episodes, mid-episode or mid-append), kills the CLI with SIGKILL, and injects a
 * damaged line at a random position of episodes.jsonl. Once the planned kills are done the run is resumed
 * until it finishes. Then, over the final journal:
 * - lost: planned work units without a scored record, and records present before a kill that are gone;
 * - duplicated: work units with more than one scored record;
 * - quarantined: damaged lines moved to episodes.quarantine.jsonl (every injected line must be there);
 * - leftover sandboxes of the run in the temporary folder.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { openRun, QUARANTINE_FILE, EPISODES_FILE } from '../../server/src/record/run-folder.ts';
import { mulberry32 } from '../../server/src/seeded-random.ts';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';
import { latestByWorkUnit, isScored } from '../../server/src/record/work-units.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    kills: { type: 'string', default: '6' },
    seed: { type: 'string', default: '1' },
    trials: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '2' },
  },
});
const kills = Number(values.kills);
const random = mulberry32(Number(values.seed));
const sandbox = process.env.SANDBOX ?? 'process';
const taskDirs = positionals.length ? positionals : ['calendar', 'travel', 'shop'].map((ns) => join(root, 'test', 'fixtures', 'tasks', ns));

/** Runs the CLI; `killAfter` finished episodes (plus a random delay) it is SIGKILLed. Resolves with how it ended. */
function runOnce(args: string[], killAfter: number | undefined, cwd: string): Promise<{ killed: boolean; code: number | null; finished: number; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [cli, ...args], { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let finished = 0;
    let killed = false;
    let buffer = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      const lines = buffer.split('\n');
      buffer = lines.pop()!;
      for (const line of lines) {
        if (JSON.parse(line).type !== 'episode-finished') continue;
        finished++;
        if (killAfter !== undefined && finished === killAfter && !killed) {
          killed = true;
          setTimeout(() => child.kill('SIGKILL'), Math.floor(random() * 400));
        }
      }
    });
    child.on('exit', (code) => resolve({ killed: killed && code === null, code, finished, stderr }));
  });
}

function injectDamage(folder: string): string {
  const file = join(folder, EPISODES_FILE);
  const text = readFileSync(file, 'utf8');
  const lines = text.split('\n');
  const at = Math.floor(random() * lines.length);
  const damaged = `{"work_unit": "${Math.floor(random() * 1e9).toString(16)}", "status": "pas`;
  lines.splice(at, 0, damaged);
  writeFileSync(file, lines.join('\n'));
  return damaged;
}

async function main() {
  const work = mkdtempSync(join(tmpdir(), 'mcpbench-bench-resume-'));
  const out = join(work, 'runs');
  const taskCount = collectTaskFiles(taskDirs).length;
  const planned = taskCount * Number(values.trials);
  const common = ['--reporter', 'jsonl', '--no-report', '--sandbox', sandbox, '--concurrency', values.concurrency!];
  console.log(`bench/resume: ${planned} episodes (${taskCount} tasks x ${values.trials} trials), ${kills} kills at random points, a damaged line injected after each, sandbox ${sandbox}, seed ${values.seed}`);

  let folder: string | undefined;
  const injected: string[] = [];
  /** Every scored record line seen before a kill: each must still be in the final journal. */
  const kept = new Set<string>();
  let done = 0;
  let rounds = 0;
  const started = performance.now();
  for (;;) {
    const args = folder ? ['run', '--resume', folder, ...common] : ['run', ...taskDirs, '--trials', values.trials!, '--out', out, ...common];
    const killAfter = done < kills ? 1 + Math.floor(random() * 3) : undefined;
    const result = await runOnce(args, killAfter, work);
    rounds++;
    folder ??= join(out, readdirSync(out)[0]!);
    if (!result.killed) {
      if (result.code !== 0) throw new Error(`round ${rounds}: the run exited with ${result.code}:\n${result.stderr}`);
      break;
    }
    done++;
    for (const line of readFileSync(join(folder, EPISODES_FILE), 'utf8').split('\n')) {
      try {
        const record = JSON.parse(line) as { status?: string };
        if (record.status && record.status !== 'infra_error') kept.add(line);
      } catch {
        // a damaged or torn line: not a record to keep
      }
    }
    injected.push(injectDamage(folder));
    console.log(`  kill ${done}: after ${result.finished} finished episode(s) of this round; ${openRun(folder).episodes.length} records; damaged line injected`);
  }
  const wallS = (performance.now() - started) / 1000;

  const run = openRun(folder!);
  const records = [...run.episodes];
  const scored = records.filter(isScored);
  const perUnit = new Map<string, number>();
  for (const r of scored) perUnit.set(r.work_unit, (perUnit.get(r.work_unit) ?? 0) + 1);
  const duplicated = [...perUnit.values()].filter((n) => n > 1).length;
  const lostUnits = planned - latestByWorkUnit(records).filter(isScored).length;
  const finalLines = new Set(readFileSync(join(folder!, EPISODES_FILE), 'utf8').split('\n'));
  const lostRecords = [...kept].filter((line) => !finalLines.has(line)).length;
  const quarantine = existsSync(join(folder!, QUARANTINE_FILE)) ? readFileSync(join(folder!, QUARANTINE_FILE), 'utf8').split('\n').filter(Boolean) : [];
  const injectedQuarantined = injected.filter((line) => quarantine.includes(line)).length;
  const runId = run.config.run_id;
  const leftovers = readdirSync(tmpdir()).filter((name) => name.startsWith(`mcpbench-${runId}-`)).length;

  console.log(`  ${done} kills in ${rounds} rounds, ${wallS.toFixed(1)} s`);
  console.log(`  work units planned ${planned}, scored ${perUnit.size}; lost ${lostUnits} (planned units without a scored record) + ${lostRecords} (records seen before a kill and gone)`);
  console.log(`  duplicated ${duplicated} (work units with more than one scored record)`);
  console.log(`  damaged lines injected ${injected.length}, quarantined ${quarantine.length} (of them injected ${injectedQuarantined}; the rest torn by a kill mid-append), damaged lines left in the journal ${run.damaged.length}`);
  console.log(`  leftover sandbox folders ${leftovers}`);
  rmSync(work, { recursive: true, force: true });
  const ok = lostUnits === 0 && lostRecords === 0 && duplicated === 0 && injectedQuarantined === injected.length && run.damaged.length === 0 && leftovers === 0;
  console.log(ok ? 'OK: 0 lost, 0 duplicated' : 'FAILED');
  if (!ok) process.exitCode = 1;
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
