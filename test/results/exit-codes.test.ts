/**
 * Honest exit codes (issue 28, case 3): a run in which every episode ends in the same setup error (the model
 * endpoint answers 401 to a wrong key) exits 4 and says why, not 0; a run that measured its agent exits 0.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_UNMEASURED } from '../../server/src/errors.ts';
import { openRun } from '../../server/src/record/run-folder.ts';
import { cliIn, MOVE_FILE } from './fixtures.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-exit-codes-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

const cli = cliIn(scratch);

test('every episode refused with 401 by the model endpoint: exit 4 with the reason; a measured run exits 0', { timeout: 120_000 }, async () => {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests++;
    res.writeHead(401, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  const saved = process.env.OPENAI_API_KEY;
  process.env.OPENAI_API_KEY = 'sk-wrong';
  try {
    const result = await cli('run', MOVE_FILE, '--agent', 'openai', '--base-url', `http://127.0.0.1:${port}/v1`, '--model', 'sim-1', '--trials', '2', '--out', 'runs-401', '--sandbox', 'process', '--reporter', 'none', '--no-report');
    assert.equal(result.code, EXIT_UNMEASURED, result.stderr);
    assert.match(result.stderr, /every episode \(2\) ended in the same agent error, model-rejected: .*401.*the agent was not measured/);
    assert.ok(requests >= 2);
    const [folder] = readdirSync(join(scratch, 'runs-401'));
    assert.deepEqual(openRun(join(scratch, 'runs-401', folder!)).episodes.map((e) => e.error?.code), ['model-rejected', 'model-rejected']);
  } finally {
    if (saved === undefined) delete process.env.OPENAI_API_KEY;
    else process.env.OPENAI_API_KEY = saved;
    await new Promise((resolve) => server.close(resolve));
  }
  const measured = await cli('run', MOVE_FILE, '--agent', 'reference', '--out', 'runs-ok', '--sandbox', 'process', '--reporter', 'none', '--no-report');
  assert.equal(measured.code, 0, measured.stderr);
});
