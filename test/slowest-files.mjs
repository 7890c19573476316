// A test reporter (node --test-reporter=./test/slowest-files.mjs) that prints, when the unit suite ends, the
// test files that took longest: the sum of each file's top-level tests, so one can see where the suite's time
// goes (the spec reporter names tests, not files). Written next to the spec reporter's output (see package.json).
import { relative } from 'node:path';

export default async function* slowestFiles(source) {
  const perFile = new Map();
  for await (const event of source) {
    if ((event.type === 'test:pass' || event.type === 'test:fail') && event.data.nesting === 0 && event.data.file) {
      const file = relative(process.cwd(), event.data.file);
      perFile.set(file, (perFile.get(file) ?? 0) + (event.data.details?.duration_ms ?? 0));
    }
  }
  const rows = [...perFile].sort((a, b) => b[1] - a[1]);
  const total = rows.reduce((sum, [, ms]) => sum + ms, 0);
  yield `\nslowest test files (sum of their top-level tests; ${rows.length} files, ${(total / 1000).toFixed(0)} s in all, run 2 at a time):\n`;
  for (const [file, ms] of rows.slice(0, 15)) yield `  ${(ms / 1000).toFixed(1).padStart(6)} s  ${file}\n`;
}
