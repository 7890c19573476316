/**
 * The anomaly detectors on seeded synthetic histories (test/results/synthetic-history.ts): per seed, how many
 * planted anomalies are caught and how many clean controls are flagged, and how many of the subtle (weak)
 * effects are seen, at alpha 0.05 with Holm's correction within each detector.
 *
 *   npx tsx bench/results/anomalies.ts [seeds=20] [first seed=1]
 */
import { execSync } from 'node:child_process';
import { detectAnomalies } from '../../server/src/results/anomalies.ts';
import { syntheticHistory } from '../../test/results/synthetic-history.ts';

const seeds = Number(process.argv[2] ?? 20);
const first = Number(process.argv[3] ?? 1);
console.log(`load before: ${execSync('uptime').toString().trim()}`);
let planted = 0;
let caught = 0;
let controls = 0;
let falseFlags = 0;
let subtle = 0;
let subtleSeen = 0;
let historiesWithFalseFlag = 0;
for (let seed = first; seed < first + seeds; seed++) {
  const history = syntheticHistory(seed);
  const report = detectAnomalies(history.cells, { seed });
  const flagged = new Set(report.flags.map((f) => f.key));
  const wrong = report.flags.filter((f) => !history.planted.includes(f.key) && !history.subtle.includes(f.key));
  planted += history.planted.length;
  caught += history.planted.filter((k) => flagged.has(k)).length;
  controls += report.tests.length - history.planted.length - history.subtle.length;
  falseFlags += wrong.length;
  if (wrong.length) historiesWithFalseFlag++;
  subtle += history.subtle.length;
  subtleSeen += history.subtle.filter((k) => flagged.has(k)).length;
  console.log(`seed ${seed}: planted caught ${history.planted.filter((k) => flagged.has(k)).length}/${history.planted.length}, controls flagged ${wrong.length}${wrong.length ? ` (${wrong.map((w) => w.key.split('|')[0]).join(', ')})` : ''}, subtle seen ${history.subtle.filter((k) => flagged.has(k)).length}/${history.subtle.length}`);
}
console.log(`over ${seeds} histories: planted caught ${caught}/${planted}; controls flagged ${falseFlags}/${controls} (${historiesWithFalseFlag} histories with any); subtle seen ${subtleSeen}/${subtle}`);
console.log(`load after: ${execSync('uptime').toString().trim()}`);
