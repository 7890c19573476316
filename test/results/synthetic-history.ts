/**
 * A synthetic benchmark history, generated from a seed, with planted anomalies and clean controls: what the
 * anomaly detectors are validated on (test/results/anomalies.test.ts, bench/results/anomalies.ts).
 *
 * A private set of 120 tasks (4 namespaces x 3 difficulties x 10) rotates monthly from the second month:
 * a quarter retires (oldest first) into the month's Historical tag and is replaced by new tasks of the same
 * stratum. Every month every agent runs the private set and the public (historical) tasks, `trials` times
 * each. An episode passes with probability sigmoid(ability - difficulty), a task's difficulty being its
 * stratum's plus N(0, 0.5). Planted:
 * - jump: agent `jumper` gains 1.5 logits from month 4 on (a new model behind the same name);
 * - leak: agent `leaker` gains 2.5 logits on public tasks from month 5 on (trained on the published tasks);
 * - too easy: one hard task every agent always passes; broken: one medium task no agent ever passes;
 * - flip: one task every agent passes (p 0.95) until month 3 and fails (p 0.02) from month 4 on.
 * Subtle (reported, not required): agent `subtle` gains 0.25 logits from month 3, and 0.5 logits on public
 * tasks from month 4. Everything else is a control.
 */
import { mulberry32 } from '../../server/src/seeded-random.ts';
import type { HistoryCell } from '../../server/src/results/anomalies.ts';

export const MONTHS = ['2026-01', '2026-02', '2026-03', '2026-04', '2026-05', '2026-06'];
const NAMESPACES = ['filesystem', 'github', 'travel', 'support'];
const DIFFICULTY = { easy: -1.2, medium: 0, hard: 1.2 } as const;
const AGENTS: Record<string, number> = { steady: 0.6, plain: 0, weak: -0.5, jumper: -0.2, leaker: 0.3, subtle: 0.1 };

export interface SyntheticTask {
  task_id: string;
  task_hash: string;
  namespace: string;
  difficulty: keyof typeof DIFFICULTY;
  logit: number;
  added: number;
  retired?: number;
  special?: 'easy' | 'broken' | 'flip';
}

export interface SyntheticHistory {
  cells: HistoryCell[];
  tasks: SyntheticTask[];
  /** Keys (AnomalyTest.key) every detector must flag. */
  planted: string[];
  /** Keys that may or may not be flagged (weak effects): what the detectors can and cannot see. */
  subtle: string[];
}

function normal(random: () => number): number {
  const u = Math.max(random(), 1e-12);
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}

const sigmoid = (x: number) => 1 / (1 + Math.exp(-x));

export function syntheticHistory(seed: number, trials = 3): SyntheticHistory {
  const random = mulberry32(seed);
  const tasks: SyntheticTask[] = [];
  let counter = 0;
  const newTask = (namespace: string, difficulty: keyof typeof DIFFICULTY, added: number): SyntheticTask => {
    const n = counter++;
    const task: SyntheticTask = { task_id: `${namespace}-${difficulty}-${n}`, task_hash: n.toString(16).padStart(64, '0'), namespace, difficulty, logit: DIFFICULTY[difficulty] + 0.5 * normal(random), added };
    tasks.push(task);
    return task;
  };
  for (const ns of NAMESPACES) for (const d of Object.keys(DIFFICULTY) as (keyof typeof DIFFICULTY)[]) for (let i = 0; i < 10; i++) newTask(ns, d, 0);
  // The special tasks never retire, so they stay in the private set all along.
  tasks[25]!.special = 'easy';
  tasks[47]!.special = 'broken';
  tasks[95]!.special = 'flip';
  tasks[95]!.logit = DIFFICULTY[tasks[95]!.difficulty];

  const cells: HistoryCell[] = [];
  for (let m = 0; m < MONTHS.length; m++) {
    if (m > 0) {
      // Retire a quarter, oldest first (ties in seeded order), one replacement per retired task.
      const active = tasks.filter((t) => t.retired === undefined && t.added < m && !t.special);
      const order = active.map((t) => ({ t, tie: random() })).sort((a, b) => a.t.added - b.t.added || a.tie - b.tie);
      for (const { t } of order.slice(0, 30)) {
        t.retired = m;
        newTask(t.namespace, t.difficulty, m);
      }
    }
    const month = MONTHS[m]!;
    for (const [agent, base] of Object.entries(AGENTS)) {
      for (const task of tasks) {
        if (task.added > m) continue;
        const historical = task.retired !== undefined && task.retired <= m;
        let ability = base;
        if (agent === 'jumper' && m >= 3) ability += 1.5;
        if (agent === 'leaker' && historical && m >= 4) ability += 2.5;
        if (agent === 'subtle' && m >= 2) ability += 0.25;
        if (agent === 'subtle' && historical && m >= 3) ability += 0.5;
        let p = sigmoid(ability - task.logit);
        if (task.special === 'easy') p = 1;
        if (task.special === 'broken') p = 0;
        if (task.special === 'flip') p = m <= 2 ? 0.95 : 0.02;
        let passed = 0;
        for (let t = 0; t < trials; t++) if (random() < p) passed++;
        cells.push({ set: 'private', agent, month, task_id: task.task_id, task_hash: task.task_hash, namespace: task.namespace, difficulty: task.difficulty, historical, passed, episodes: trials });
      }
    }
  }
  const special = (s: SyntheticTask['special']) => tasks.find((t) => t.special === s)!;
  const planted = [
    `score_jump|private|jumper|${MONTHS[2]}|${MONTHS[3]}`,
    `historical_advantage|private|leaker|${MONTHS[4]}`,
    `historical_advantage|private|leaker|${MONTHS[5]}`,
    `task_outlier|private|${special('easy').task_hash}`,
    `task_outlier|private|${special('broken').task_hash}`,
    `verdict_flip|private|${special('flip').task_hash}|${MONTHS[2]}|${MONTHS[3]}`,
  ];
  const subtle = [`score_jump|private|subtle|${MONTHS[1]}|${MONTHS[2]}`, ...MONTHS.slice(3).map((m) => `historical_advantage|private|subtle|${m}`)];
  return { cells, tasks, planted, subtle };
}
