/**
 * The results commands end to end, in process: `results import` (twice: the second changes nothing),
 * `results list`, `compare` (text, JSON and the HTML page), `anomalies` (exit code) and `leaderboard`; the
 * comparison page and the leaderboard opened in headless Chromium: every plot drawn, run links present,
 * nothing leaves the page.
 */
import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { chromiumMissing, openChromium } from '../chromium.ts';
import { runCli } from '../../server/src/cli/main.ts';
import { mulberry32 } from '../../server/src/seeded-random.ts';
import { modelUsage, MOVE_FILE, moveEpisode, rekeyed, writeRunFolder } from './fixtures.ts';
import { createSetManifest } from '../../server/src/tasks/set-manifest.ts';
import type { EpisodeRecord } from '../../server/src/record/schema.ts';

const scratch = mkdtempSync(join(tmpdir(), 'mcpbench-results-cli-'));
after(() => rmSync(scratch, { recursive: true, force: true }));

async function cli(...argv: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const code = await runCli(argv, { stdout: (t) => (stdout += t), stderr: (t) => (stderr += t), cwd: scratch });
  return { code, stdout, stderr };
}

/** 24 tasks over two namespaces; agent `weak` passes about 30%, `strong` about 85% (with cost), 2 trials each. */
function writeRuns(): void {
  const random = mulberry32(11);
  for (const [agent, skill, month] of [['weak', 0.3, '2026-05'], ['strong', 0.85, '2026-05'], ['strong', 0.8, '2026-06']] as const) {
    const run_id = `${agent}-${month}`;
    const episodes: EpisodeRecord[] = [];
    for (let t = 0; t < 24; t++) {
      const ns = t % 2 === 0 ? 'filesystem' : 'travel';
      for (let trial = 0; trial < 2; trial++) {
        const passed = random() < skill;
        episodes.push(rekeyed({
          ...moveEpisode(run_id, { trial, passed }),
          task_id: `${ns}-task-${t}`,
          task_hash: t.toString(16).padStart(64, 'a'),
          namespaces: [ns],
          category: t % 3 === 0 ? 'composition' : 'single-tool',
          agent,
          variant: agent,
          ...(agent === 'strong' ? { model: modelUsage(0.002 + 0.001 * (t % 4)) } : {}),
        }));
      }
    }
    writeRunFolder(join(scratch, 'runs', run_id), { run_id, agent, trials: 2, task_files: [], extra: { set: { name: 'private', month } } }, episodes);
  }
  writeFileSync(join(scratch, 'runs', `weak-2026-05`, 'report.html'), '<!DOCTYPE html><title>weak report</title>');
}

test('results import, list, compare, anomalies and leaderboard from the command line', async () => {
  writeRuns();
  const first = await cli('results', 'import', 'runs', '--db', 'results.pglite');
  assert.equal(first.code, 0, first.stderr);
  assert.equal(first.stdout.match(/^imported +run /gm)?.length, 3);
  const second = await cli('results', 'import', 'runs', '--db', 'results.pglite', '--format', 'json');
  assert.deepEqual(JSON.parse(second.stdout).outcomes.map((o: { status: string }) => o.status), ['unchanged', 'unchanged', 'unchanged']);

  const list = await cli('results', 'list', '--db', 'results.pglite');
  assert.match(list.stdout, /strong-2026-06 {2}strong {2}private 2026-06/);
  const listed = JSON.parse((await cli('results', 'list', '--db', 'results.pglite', '--format', 'json')).stdout);
  const weakRun = listed.find((r: { run_id: string }) => r.run_id === 'weak-2026-05');
  const failedWeak = Object.values(weakRun.failure_modes as Record<string, number>).reduce((a, b) => a + b, 0);
  assert.ok(failedWeak > 20, 'failure modes counted per run');

  const text = await cli('compare', 'weak', 'strong', '--month', '2026-05', '--db', 'results.pglite', '--resamples', '500', '--html', 'compare.html');
  assert.equal(text.code, 0, text.stderr);
  assert.match(text.stdout, /Paired over common tasks/);
  assert.match(text.stdout, /weak +strong +24 +\+\d/, 'strong is ahead of weak on 24 common tasks');
  assert.match(text.stdout, /significant/);
  const json = await cli('compare', 'weak-2026-05', 'strong-2026-05', '--db', 'results.pglite', '--resamples', '500', '--format', 'json');
  const comparison = JSON.parse(json.stdout);
  assert.equal(comparison.pairs.length, 1);
  assert.equal(comparison.pairs[0].tasks, 24);
  assert.ok(comparison.pairs[0].success.mean > 0.3);
  assert.ok(comparison.pairs[0].p_adjusted.mcnemar < 0.05);
  assert.equal(comparison.cells.length, 48);
  assert.deepEqual(comparison.deltas.map((d: { group: string; key: string }) => `${d.group}:${d.key}`), ['namespace:filesystem', 'namespace:travel', 'category:composition', 'category:single-tool']);

  const unknown = await cli('compare', 'nobody', '--db', 'results.pglite');
  assert.equal(unknown.code, 2);
  assert.match(unknown.stderr, /nobody: no run with this id and no agent with this label .*agents: strong, weak/);

  const anomalies = await cli('anomalies', '--db', 'results.pglite', '--resamples', '300');
  assert.ok(anomalies.code === 0 || anomalies.code === 1, anomalies.stderr);
  assert.match(anomalies.stdout, /tests \(score_jump 1,/);

  const board = await cli('leaderboard', '--db', 'results.pglite', '--out', 'board');
  assert.equal(board.code, 0, board.stderr);
  const data = JSON.parse(readFileSync(join(scratch, 'board', 'leaderboard.json'), 'utf8'));
  assert.deepEqual(data.sections.map((s: { set: string; month: string; entries: { agent: string }[] }) => [s.set, s.month, s.entries.map((e) => e.agent)]), [
    ['private', '2026-06', ['strong']],
    ['private', '2026-05', ['strong', 'weak']],
  ]);
  const weak = data.sections[1].entries[1];
  assert.equal(weak.runs[0].report, '../runs/weak-2026-05/report.html');
  assert.equal(weak.cost_per_episode, null, 'no cost recorded: none shown');
  assert.ok(data.sections[1].entries[0].cost_per_episode > 0);
  assert.deepEqual(weak.pass_k.map((p: { k: number }) => p.k), [1, 2]);
});

test('the comparison page and the leaderboard in headless Chromium', {
  skip: chromiumMissing(),
}, async () => {
  if (!existsSync(join(scratch, 'board', 'index.html'))) {
    writeRuns();
    await cli('results', 'import', 'runs', '--db', 'results.pglite');
    await cli('compare', 'weak', 'strong', '--month', '2026-05', '--db', 'results.pglite', '--resamples', '500', '--html', 'compare.html');
    await cli('leaderboard', '--db', 'results.pglite', '--out', 'board');
  }
  const browser = await openChromium();
  try {
    const { page, outside, errors } = browser;
    const marks = () =>
      page.$$eval('.plot[data-mark]', (nodes) => nodes.map((n) => ({ id: n.id, marks: n.querySelectorAll(`svg g[aria-label="${n.getAttribute('data-mark')}"] > *`).length })));

    await page.goto(pathToFileURL(join(scratch, 'compare.html')).href);
    await page.waitForSelector('body[data-rendered="true"]');
    const compared = Object.fromEntries((await marks()).map((p) => [p.id, p.marks]));
    assert.equal(compared['plot-matrix'], 48, 'one heatmap cell per side and task');
    assert.equal(compared['plot-deltas'], 4, 'a dot per namespace and category delta');
    assert.ok(compared['plot-failures']! >= 1 || (await page.locator('#plot-failures .empty').count()) === 1);
    assert.equal(compared['plot-cost'], 24, 'cost is recorded for one side only: its 24 tasks');
    assert.equal(await page.locator('#sides tbody tr').count(), 2);
    assert.match(await page.locator('#pairs tbody tr').innerText(), /weak\s+strong\s+24/);
    await page.screenshot({ path: join(scratch, 'compare.png'), fullPage: true });

    await page.goto(pathToFileURL(join(scratch, 'board', 'index.html')).href);
    await page.waitForSelector('body[data-rendered="true"]');
    const board = Object.fromEntries((await marks()).map((p) => [p.id, p.marks]));
    assert.ok(board['plot-trend']! >= 1, 'the trend line is drawn');
    assert.equal(board['plot-section-0'], 1);
    assert.equal(board['plot-section-1'], 2);
    assert.deepEqual(await page.locator('section.board h2').allInnerTexts(), ['private · 2026-06', 'private · 2026-05']);
    assert.deepEqual(await page.locator('section.board[data-section="1"] tbody td:nth-child(2)').allInnerTexts(), ['strong', 'weak']);
    // The configuration each row measured under is on the page, in its own columns.
    assert.deepEqual((await page.locator('section.board[data-section="1"] thead th').allInnerTexts()).slice(0, 6), ['#', 'agent', 'faults', 'perturbation', 'trials', 'retry']);
    assert.deepEqual(await page.locator('section.board[data-section="1"] tbody tr:first-child td.config').allInnerTexts(), ['none', 'none', '2', 'no']);
    const link = page.locator('a', { hasText: 'weak-2026-05' });
    assert.equal(await link.getAttribute('href'), '../runs/weak-2026-05/report.html');
    await link.click();
    await page.waitForURL(/weak-2026-05\/report\.html$/);
    assert.equal(await page.title(), 'weak report');
    await page.goBack();
    await page.screenshot({ path: join(scratch, 'leaderboard.png'), fullPage: true });
    assert.deepEqual(errors, []);
    assert.deepEqual(outside, [], 'no request left the pages');
  } finally {
    await browser.close();
  }
});

test('a run of a set folder records the set and its month, and the import ranks it there', { timeout: 180_000 }, async () => {
  const set = join(scratch, 'sets', 'private');
  mkdirSync(join(set, 'tasks', 'filesystem'), { recursive: true });
  cpSync(MOVE_FILE, join(set, 'tasks', 'filesystem', 'fs-move-report-001.json'));
  writeFileSync(join(set, 'set.json'), JSON.stringify(createSetManifest(set, 'private', '2026-07'), null, 2));
  const ran = await cli('run', set, '--agent', 'noop', '--reporter', 'none', '--out', 'set-runs', '--sandbox', 'process', '--no-report');
  assert.equal(ran.code, 0, ran.stderr);
  const imported = await cli('results', 'import', 'set-runs', '--db', 'set.pglite', '--format', 'json');
  assert.equal(imported.code, 0, imported.stderr);
  const list = JSON.parse((await cli('results', 'list', '--db', 'set.pglite', '--format', 'json')).stdout);
  assert.deepEqual(list.map((r: { agent_label: string; set_name: string; month: string }) => [r.agent_label, r.set_name, r.month]), [['noop', 'private', '2026-07']]);
  const flagged = await cli('run', set, '--agent', 'noop', '--set', 'other', '--month', '2026-08', '--reporter', 'none', '--out', 'set-runs-2', '--sandbox', 'process', '--no-report');
  assert.equal(flagged.code, 0, flagged.stderr);
  const bad = await cli('run', set, '--agent', 'noop', '--month', '2026-13', '--out', 'set-runs-3');
  assert.equal(bad.code, 2);
});
