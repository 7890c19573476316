/**
 * bench/check/verdicts: what `check` adds per task for the shortcut agents (`--shortcuts`) and the mutants
 * (`--mutants`), against plain `check`, in one run on the same tasks (the first task of each namespace folder
 * of the dev set, or the files given). Prints seconds per task, episodes per task and the ratio to plain check,
 * then what the extra episodes found: mutants by operator (killed, surviving, equivalent) and shortcuts
 * (tried, passing, accepted). Needs `npm run build` first.
 *
 *   npx tsx bench/check/verdicts.ts [task files...]     (CONCURRENCY=n, default 2; SANDBOX=bwrap|process)
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { collectTaskFiles } from '../../server/src/tasks/files.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');

function sample(): string[] {
  if (process.argv.length > 2) return process.argv.slice(2);
  const tasks = join(root, 'tasks');
  return readdirSync(tasks).filter((n) => !n.includes('.')).flatMap((folder) => collectTaskFiles([join(tasks, folder)]).slice(0, 1));
}

interface Mode {
  name: string;
  flags: string[];
}

function runCheck(files: string[], mode: Mode) {
  const out = mkdtempSync(join(tmpdir(), 'mcpbench-bench-check-'));
  try {
    const args = [cli, 'check', ...files, ...mode.flags, '--reporter', 'none', '--concurrency', process.env.CONCURRENCY ?? '2', '--out', out];
    if (process.env.SANDBOX) args.push('--sandbox', process.env.SANDBOX);
    const started = performance.now();
    const run = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8', timeout: 3_600_000 });
    const seconds = (performance.now() - started) / 1000;
    const runDir = join(out, readdirSync(out)[0]!);
    const episodes = readFileSync(join(runDir, 'episodes.jsonl'), 'utf8').split('\n').filter(Boolean).length;
    const checks = JSON.parse(readFileSync(join(runDir, 'checks.json'), 'utf8')).checks as {
      ok: boolean;
      mutation?: { mutants: { id: string; outcome: string }[] };
      shortcuts?: { tried: number; passed: string[]; accepted: string[] };
    }[];
    return { seconds, episodes, checks, exit: run.status };
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
}

/** The operator of a mutant id (`ref1.drop2` → drop, `ref1.step2/sql:sql1-drop-where` → sql). */
function operator(id: string): string {
  const tail = id.slice(id.indexOf('.') + 1);
  if (/:sql\d/.test(tail)) return 'sql';
  if (/:(empty|prefix|goal)$/.test(tail)) return 'text';
  if (tail.endsWith(':omit')) return 'omit';
  if (tail.startsWith('step')) return 'replace';
  return tail.replace(/[\d-]+$/, '').replace(/\d.*$/, '');
}

function main() {
  const files = sample();
  const modes: Mode[] = [
    { name: 'plain', flags: [] },
    { name: '--shortcuts', flags: ['--shortcuts'] },
    { name: '--mutants', flags: ['--mutants'] },
  ];
  console.log(`${files.length} tasks, concurrency ${process.env.CONCURRENCY ?? '2'}`);
  const results = modes.map((mode) => ({ mode, ...runCheck(files, mode) }));
  const plain = results[0]!;
  for (const r of results) {
    const perTask = r.seconds / files.length;
    const added = (r.seconds - plain.seconds) / files.length;
    console.log(`${r.mode.name.padEnd(12)} ${r.seconds.toFixed(1)} s  ${perTask.toFixed(2)} s/task  ${(r.episodes / files.length).toFixed(1)} episodes/task  x${(r.seconds / plain.seconds).toFixed(2)} of plain  (+${added.toFixed(2)} s/task)  ${r.checks.filter((c) => c.ok).length}/${r.checks.length} ok`);
  }
  const mutants = results[2]!.checks.flatMap((c) => c.mutation?.mutants ?? []);
  const byOperator = new Map<string, Record<string, number>>();
  for (const m of mutants) {
    const counts = byOperator.get(operator(m.id)) ?? {};
    counts[m.outcome] = (counts[m.outcome] ?? 0) + 1;
    byOperator.set(operator(m.id), counts);
  }
  console.log(`mutants: ${mutants.length}`);
  for (const [op, counts] of [...byOperator].sort()) console.log(`  ${op.padEnd(12)} ${Object.entries(counts).map(([k, v]) => `${k} ${v}`).join(', ')}`);
  const shortcuts = results[1]!.checks.flatMap((c) => (c.shortcuts ? [c.shortcuts] : []));
  const passed = shortcuts.flatMap((s) => s.passed.filter((id) => !s.accepted.includes(id)));
  const kinds = new Map<string, number>();
  for (const id of passed) kinds.set(id.replace(/\d+$|:.*$/, ''), (kinds.get(id.replace(/\d+$|:.*$/, '')) ?? 0) + 1);
  console.log(`shortcuts: ${shortcuts.reduce((n, s) => n + s.tried, 0)} tried, ${passed.length} passing (${[...kinds].map(([k, v]) => `${k} ${v}`).join(', ') || 'none'}), ${shortcuts.reduce((n, s) => n + s.accepted.length, 0)} accepted`);
}

main();
