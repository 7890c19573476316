/**
 * The episode viewer in headless Chromium: a real model run (the openai agent against the local simulation,
 * faults injected) writes one page per episode beside report.html; the report links each episode to its
 * page, and the page shows the goal, every model turn, every call with its arguments and result, the faults
 * delivered, the answer and the verdict tree leaf by leaf. Agent text is shown as text, never as markup, and
 * the page loads nothing. Screenshots go to a temporary folder named in the test output.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { episodeViewFile, openRun, REPORT_FILES } from '../../server/src/record/run-folder.ts';
import type { EpisodeRecord, NodeVerdict } from '../../server/src/record/schema.ts';
import { turnsOf } from '../../server/src/record/trace.ts';
import { latestByWorkUnit } from '../../server/src/record/work-units.ts';
import { loadRunTasks } from '../../server/src/tasks/load.ts';
import { renderEpisodeHtml } from '../../server/src/scoring/episode-html.ts';
import { chromiumMissing, openChromium, type Browser } from '../chromium.ts';
import { modelRun, type ModelRun } from '../traces/model-run.ts';

let run: ModelRun;
let browser: Browser | undefined;
const shots = mkdtempSync(join(tmpdir(), 'mcpbench-episode-view-shots-'));

before(async () => {
  const [made, opened] = await Promise.all([modelRun({ faults: 'empty-only', faultRate: 0.6, seed: 11 }), chromiumMissing() ? undefined : openChromium()]);
  run = made;
  browser = opened;
});

after(async () => {
  await browser?.close();
  if (run) rmSync(run.work, { recursive: true, force: true });
});

const nodes = (v: NodeVerdict): number => 1 + (v.children ?? []).reduce((n, c) => n + nodes(c), 0);

test('the report writes one episode page per episode, under views/', () => {
  const standing = latestByWorkUnit([...openRun(run.directory).episodes]);
  assert.deepEqual(readdirSync(join(run.directory, 'views')).sort(), standing.map((r) => `${r.work_unit}.html`).sort());
});

test('from report.html to an episode: goal, turns, calls with arguments and results, faults, answer, verdict', { skip: chromiumMissing(), timeout: 60_000 }, async (t) => {
  const records = latestByWorkUnit([...openRun(run.directory).episodes]);
  const tasks = loadRunTasks(openRun(run.directory).config);
  const faulted = records.find((r) => r.calls.some((c) => c.fault))!;
  assert.ok(faulted, 'an episode with a fault delivered');
  const { page } = browser!;
  {
    await page.goto(pathToFileURL(join(run.directory, REPORT_FILES.html)).href);
    await page.waitForSelector('body[data-rendered="true"]');
    assert.equal(await page.locator('a.open-view').count(), records.length, 'every episode links to its page');
    const index = await page.locator('details.episode').evaluateAll((list, id) => list.findIndex((d) => d.querySelector('a.open-view')?.getAttribute('href') === id), `views/${faulted.work_unit}.html`);
    assert.ok(index >= 0);
    await page.locator('a.open-view').nth(index).click();
    await page.waitForURL(/views\/[0-9a-f]{64}\.html$/);
    assert.equal(page.url(), pathToFileURL(episodeViewFile(run.directory, faulted.work_unit)).href);
    await page.screenshot({ path: join(shots, 'episode.png'), fullPage: true });
    t.diagnostic(`screenshot: ${join(shots, 'episode.png')}`);

    assert.equal(await page.locator('h1 code').textContent(), faulted.task_id);
    assert.equal(await page.locator('pre.goal').textContent(), tasks.get(faulted.task_hash)!.goal);
    assert.equal(await page.locator('li.turn').count(), turnsOf(faulted).length);
    assert.equal(await page.locator('.call').count(), faulted.calls.length);
    assert.deepEqual(await page.locator('.call h4 code').allTextContents(), faulted.calls.map((c) => c.tool));
    assert.deepEqual(
      (await page.locator('.call pre.arguments').allTextContents()).map((s) => JSON.parse(s)),
      faulted.calls.map((c) => c.arguments),
    );
    assert.deepEqual(
      (await page.locator('.call pre.result').allTextContents()).map((s) => JSON.parse(s)),
      faulted.calls.map((c) => c.result),
    );
    assert.deepEqual(
      await page.locator('.call[data-fault]').evaluateAll((list) => list.map((c) => Number(c.getAttribute('data-call-index')))),
      faulted.calls.filter((c) => c.fault).map((c) => c.index),
    );
    assert.equal(await page.locator('pre.answer').textContent(), faulted.answer);
    assert.equal(await page.locator('ul.verdict li.node').count(), nodes(faulted.verdict!));
    assert.equal(await page.locator('ul.verdict > li.node').getAttribute('data-value'), String(faulted.verdict!.value));
    await page.locator('a.back').click();
    await page.waitForSelector('body[data-rendered="true"]');
    assert.deepEqual(browser!.outside, []);
    assert.deepEqual(browser!.errors, []);
  }
});

test('agent text is shown as text: markup in an answer, a result or evidence neither renders nor runs', { skip: chromiumMissing(), timeout: 60_000 }, async () => {
  const [base] = latestByWorkUnit([...openRun(run.directory).episodes]);
  const hostile = '<img src=x onerror="document.title=\'pwned\'"><script>document.title="pwned"</script></pre><b>bold</b>';
  const record: EpisodeRecord = {
    ...base!,
    answer: hostile,
    calls: base!.calls.map((c) => ({ ...c, result: { content: [{ type: 'text', text: hostile }] } })),
    verdict: { path: [], kind: 'leaf', name: 'answer.includes', value: false, evidence: hostile },
  };
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-episode-hostile-'));
  const file = join(dir, 'page.html');
  writeFileSync(file, renderEpisodeHtml(record, { run_id: 'r', agent: 'openai' }, { reportHref: null }));
  const { page } = browser!;
  try {
    await page.goto(pathToFileURL(file).href);
    assert.equal(await page.locator('img, script, b').count(), 0);
    assert.equal(await page.locator('pre.answer').textContent(), hostile);
    assert.ok((await page.locator('pre.evidence').textContent())!.includes(hostile));
    assert.notEqual(await page.title(), 'pwned');
    assert.deepEqual(browser!.outside, []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
