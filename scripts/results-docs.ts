/**
 * Writes docs/results-database.md from the results database's own comments (a fresh in-memory PGlite,
 * migrated to the latest step). test/results/database.test.ts fails when the file is out of date.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openResultsDb, schemaMarkdown } from '../server/src/results/db.ts';

async function main() {
  const opened = await openResultsDb('memory://');
  try {
    const file = join(__dirname, '..', 'docs', 'results-database.md');
    writeFileSync(file, await schemaMarkdown(opened.db));
    console.log(`wrote ${file}`);
  } finally {
    await opened.close();
  }
}

main().catch((error) => {
  console.error(error);
  process.exitCode = 1;
});
