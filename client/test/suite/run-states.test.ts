/**
 * Honest run states, in a real VS Code, over the run record (runner/store.ts) and the CLI's event stream:
 * - a check shows expected outcomes as expected (the noop agent and counterexamples failing are green), and its
 *   history says "check ok" / "check failing" from checks.json, never "8/11 passed";
 * - a failure's message points at the failing leaf; a run is titled by what was asked for, a group by its path;
 * - an agent that breaks and an infrastructure error are errored in the Test Explorer, not failed, with the
 *   reason, and the runner panel says why;
 * - the live trace shows a call in flight with its elapsed time while a 5 s timeout is being injected;
 * - a run cancelled at the very end shows the same outcome in the runner panel and the Test Explorer.
 * Where the code-server runner drives the workbench, what the runner panel shows is read from the page itself
 * (`webviewText`); screenshots are taken where a person would look.
 */
import assert from 'node:assert/strict';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { before, beforeEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { RunBroadcast } from '../../src/testing.ts';
import { allTestItems, clickInWebview, extensionApi, screenshot, uiDriver, waitFor, webviewText, workspaceFile, type ExtensionApi } from './helpers.ts';

const CLEAN = 'tasks/filesystem/fs-bump-version-001.json';
const CLEAN_ID = 'fs-bump-version-001';
// A fixture whose initial state cannot be written (a file inside a file): every episode is an infrastructure error.
const SEED_CONFLICT = 'tasks/filesystem/fs-seed-conflict-001.json';

type RunEventOf<T extends string> = Extract<Extract<RunBroadcast, { type: 'event' }>['event'], { type: T }>;

const eventsOf = <T extends string>(messages: RunBroadcast[], type: T): RunEventOf<T>[] =>
  messages.flatMap((m) => (m.type === 'event' && m.event.type === type ? [m.event as RunEventOf<T>] : []));

const closingLine = (messages: RunBroadcast[]): string | undefined => {
  const end = [...messages].reverse().find((m) => m.type === 'end');
  return end?.type === 'end' ? end.message : undefined;
};

/** Re-reads a webview element until its text passes `accept` (the page draws a moment after it is told). */
async function webviewTextWhen(selector: string, what: string, accept: (text: string) => boolean): Promise<string | undefined> {
  let last: string | undefined;
  for (let attempt = 0; attempt < 20; attempt++) {
    last = await webviewText(selector);
    if (last === undefined || accept(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
  throw new Error(`the runner panel never showed ${what} in ${selector}; last: ${JSON.stringify(last)}`);
}

async function withSettings<T>(values: Record<string, unknown>, body: () => Promise<T>): Promise<T> {
  const config = vscode.workspace.getConfiguration('mcpbench');
  for (const [key, value] of Object.entries(values)) await config.update(key, value, vscode.ConfigurationTarget.Workspace);
  try {
    return await body();
  } finally {
    for (const key of Object.keys(values)) await config.update(key, undefined, vscode.ConfigurationTarget.Workspace);
  }
}

describe('honest run states', () => {
  let api: ExtensionApi;
  before(async () => {
    api = await extensionApi();
  });
  beforeEach(async () => {
    // The runner panel alone in the editor area: what the screenshots show and what the page reads come from it.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const panel = await api.showRunnerPanel();
    await waitFor('the runner panel', () => (panel.visible ? true : undefined), { wakeOn: [panel.onDidChangeViewState] });
  });

  it('a check shows expected failures as expected: the noop agent and counterexamples failing are green', async () => {
    const [outcome] = await api.runTests([workspaceFile(CLEAN)], 'check');
    assert.equal(outcome?.state, 'passed', outcome?.message);
    const labels = new Map<string, string>();
    for (const message of api.runnerMessages()) {
      if (message.type === 'event' && message.event.type === 'episode-finished' && message.check) labels.set(message.event.result.variant, message.check.label);
    }
    assert.equal(labels.get('noop'), 'failed, as expected');
    assert.equal(labels.get('reference:0'), 'passed, as expected');
    assert.ok([...labels].some(([variant, label]) => variant.startsWith('counterexample:') && label === 'failed, as expected'), JSON.stringify([...labels]));
    const begin = api.runnerMessages()[0];
    assert.equal(begin?.type === 'begin' ? begin.title : undefined, `Check: ${CLEAN_ID}`);
    await screenshot('check-as-expected', 2500);
  });

  it('a check\'s history says "check ok" or "check failing" (from checks.json), not how many episodes passed', async () => {
    // The check just above, as the history lists it.
    const ok = (await api.runnerHistory()).find((r) => r.kind === 'check');
    assert.equal(ok?.label, 'check ok · 1 task');
    // A task whose counterexample is its reference solution: the predicate cannot tell them apart.
    const weak = workspaceFile('tasks/filesystem/fs-weak-check-001.json');
    const task = JSON.parse(readFileSync(workspaceFile(CLEAN).fsPath, 'utf8')) as { id: string; reference_solutions: unknown[]; counterexamples: unknown[] };
    task.id = 'fs-weak-check-001';
    task.counterexamples = [task.reference_solutions[0]];
    writeFileSync(weak.fsPath, JSON.stringify(task, null, 2) + '\n');
    try {
      await waitFor('the new task in the Test Explorer', () => allTestItems(api.testController).find((i) => i.uri?.toString() === weak.toString()));
      const [outcome] = await api.runTests([weak], 'check');
      assert.equal(outcome?.state, 'failed');
      assert.match(outcome!.message!, /counterexample 1 passes: the predicate is not specific enough/);
      const counterexample = api.runnerMessages().find((m) => m.type === 'event' && m.event.type === 'episode-finished' && m.event.result.variant === 'counterexample:0');
      assert.equal(counterexample?.type === 'event' ? counterexample.check?.label : undefined, 'passed, but must fail');

      const history = await api.runnerHistory();
      assert.equal(history[0]?.label, 'check failing · 1 of 1 task: fs-weak-check-001');
      for (const check of history.filter((r) => r.kind === 'check')) assert.doesNotMatch(check.label, /passed/, `a check is not a count of passed episodes: ${check.label}`);
      const shown = await webviewTextWhen('#history', 'the failing check', (text) => text.includes('check failing · 1 of 1 task: fs-weak-check-001'));
      if (shown !== undefined) assert.match(shown, /check ok · 1 task/);
      await screenshot('check-history', 2000);
    } finally {
      rmSync(weak.fsPath, { force: true });
      await waitFor('the removed task to leave the Test Explorer', () => (allTestItems(api.testController).some((i) => i.uri?.toString() === weak.toString()) ? undefined : true));
    }
  });

  it("a failure's message points at the failing leaf, and a run is titled by what was asked for", async () => {
    await withSettings({ defaultAgent: 'noop' }, async () => {
      const [outcome] = await api.runTests([workspaceFile(CLEAN)], 'run');
      assert.equal(outcome?.state, 'failed');
      assert.match(outcome!.message!, /Fails at filesystem\.\w+ \(success_predicate\.all\[\d+\]\)/);
      const begin = api.runnerMessages().find((m) => m.type === 'begin');
      assert.deepEqual(begin && begin.type === 'begin' ? begin.title : undefined, `Run: ${CLEAN_ID}`);
      await vscode.commands.executeCommand('workbench.panel.testResults.view.focus');
      await screenshot('failure-at-leaf', 2500);
    });
  });

  it('an agent that breaks is errored, not failed, with its reason; the runner panel says why', async () => {
    const agentCommand = 'echo "model endpoint answered 503 Service Unavailable" >&2; exit 3';
    await withSettings({ defaultAgent: 'command', agentCommand }, async () => {
      const [outcome] = await api.runTests([workspaceFile(CLEAN)], 'run');
      assert.equal(outcome?.state, 'errored', outcome?.message);
      assert.match(outcome!.message!, /^Agent error \(command, faults none, trial 0\): agent-exit: /);
      assert.match(outcome!.message!, /exit code 3/);
      assert.match(outcome!.message!, /model endpoint answered 503/, 'the last lines of its stderr');

      const [episode] = eventsOf(api.runnerMessages(), 'episode-finished');
      assert.deepEqual([episode?.result.status, episode?.result.error?.kind, episode?.result.error?.code], ['agent_error', 'agent', 'agent-exit']);
      const closing = closingLine(api.runnerMessages());
      assert.match(closing ?? '', /^Finished: 1 errored\.\nfs-bump-version-001 errored: Agent error \(command, faults none, trial 0\): agent-exit: /);

      // What the panel shows: the outcome in its status line, and the error under the episode.
      const status = await webviewTextWhen('#status', 'the closing line', (text) => text.startsWith('Finished: 1 errored'));
      if (status !== undefined) assert.match(status, /agent-exit/);
      const box = await webviewText('.error-box');
      if (box !== undefined) {
        assert.match(box, /^Agent error \(agent-exit\): /);
        assert.match(box, /exit code 3/);
        assert.match(box, /model endpoint answered 503/);
      }
      // The panel above, the Test Results below (the task errored, with the reason).
      await vscode.commands.executeCommand('workbench.panel.testResults.view.focus');
      await screenshot('agent-error', 2000);
    });
  });

  it('an infrastructure error is errored after its retries, with the reason; the runner panel says why', async () => {
    const [outcome] = await api.runTests([workspaceFile(SEED_CONFLICT)], 'run');
    assert.equal(outcome?.state, 'errored', outcome?.message);
    assert.match(outcome!.message!, /^Infrastructure error \(reference:0, faults none, trial 0, attempt 3\): state-seed: could not seed the filesystem state/);
    const episodes = eventsOf(api.runnerMessages(), 'episode-finished');
    assert.deepEqual(episodes.map((e) => [e.result.status, e.result.attempt, e.result.error?.kind]), [['infra_error', 1, 'infra'], ['infra_error', 2, 'infra'], ['infra_error', 3, 'infra']], 'retried twice, never scored');
    assert.match(closingLine(api.runnerMessages()) ?? '', /^Finished: 1 errored\.\nfs-seed-conflict-001 errored: Infrastructure error .*state-seed/);
    const status = await webviewTextWhen('#status', 'the closing line', (text) => text.startsWith('Finished: 1 errored'));
    if (status !== undefined) assert.match(status, /state-seed/);
    await screenshot('infra-error-panel', 2000);
  });

  it('the live trace shows the call in flight, with its elapsed time, while a 5 s timeout is injected', async () => {
    await withSettings({ faultProfile: 'TransientTimeout-only' }, async () => {
      // Under TransientTimeout-only and the run seed, the first call of this task times out (5 s), the retry passes.
      let inFlight: RunEventOf<'call-started'> | undefined;
      const answered = new Set<string>();
      const seen = new Promise<void>((resolve) => {
        const subscription = api.onRunnerMessage((message) => {
          if (message.type !== 'event') return;
          const event = message.event;
          if (event.type === 'call') answered.add(`${event.work_unit}#${event.call.index}`);
          if (event.type === 'call-started' && !inFlight) {
            inFlight = event;
            subscription.dispose();
            resolve();
          }
        });
      });
      const running = api.runTests([workspaceFile(CLEAN)], 'faults');
      await seen;
      assert.ok(inFlight);
      assert.ok(!answered.has(`${inFlight.work_unit}#${inFlight.call.index}`), 'not answered yet');
      assert.deepEqual([inFlight.call.index, inFlight.call.qualified], [0, 'filesystem.read_text_file']);
      // The page shows the row as in flight, with a clock that runs.
      const row = await webviewText('tr.in-flight');
      await screenshot('call-in-flight', 300);
      if (row !== undefined) {
        assert.match(row, /filesystem\.read_text_file/);
        assert.match(row, /in flight/);
        assert.match(row, /\d+\.\d s…/);
      }

      const [outcome] = await running;
      assert.equal(outcome?.state, 'passed', outcome?.message);
      // The stream: the call announced, then answered under the same index, as a TransientTimeout.
      const messages = api.runnerMessages();
      const at = (predicate: (m: RunBroadcast) => boolean) => messages.findIndex(predicate);
      const startedAt = at((m) => m.type === 'event' && m.event.type === 'call-started' && m.event.call.index === 0);
      const answeredAt = at((m) => m.type === 'event' && m.event.type === 'call' && m.event.call.index === 0);
      assert.ok(startedAt >= 0 && answeredAt > startedAt, `call-started ${startedAt} before call ${answeredAt}`);
      const call = messages[answeredAt];
      assert.equal(call?.type === 'event' && call.event.type === 'call' ? call.event.call.fault?.type : undefined, 'TransientTimeout');
      // Answered, the row is a call like any other. The passed episode is folded: open it as a person would.
      if (uiDriver()) {
        clickInWebview('details.episode > summary');
        const table = await webviewTextWhen('details.episode table', 'the answered call', (text) => text.includes('TransientTimeout'));
        assert.doesNotMatch(table ?? '', /in flight/);
        assert.match(table ?? '', /\d+ ms/);
      }
    });
  });

  it('a run cancelled at the very end shows the same outcome in the runner panel and the Test Explorer', async () => {
    const cancel = new vscode.CancellationTokenSource();
    let planned = 0;
    let finished = 0;
    // As the last episode is recorded, the user presses Stop.
    const subscription = api.onRunnerMessage((message) => {
      if (message.type !== 'event') return;
      if (message.event.type === 'run-started') planned = message.event.episodes;
      if (message.event.type === 'episode-finished' && ++finished === planned) cancel.cancel();
    });
    let outcomes;
    try {
      outcomes = await api.runTests([workspaceFile(CLEAN)], 'run', { token: cancel.token });
    } finally {
      subscription.dispose();
    }
    assert.ok(cancel.token.isCancellationRequested, 'the run was cancelled');
    // The Test Explorer: the task finished before the cancel, so it passed.
    assert.deepEqual(outcomes.map(({ id, state }) => [id, state]), [[CLEAN_ID, 'passed']]);
    const [episode] = eventsOf(api.runnerMessages(), 'episode-finished');
    assert.equal(episode?.result.status, 'passed');
    // The panel says the same: 1 passed (and, when the cancel reached the CLI before it exited, that nothing was cut short).
    const closing = closingLine(api.runnerMessages()) ?? '';
    assert.match(closing, /^(Finished: 1 passed\.|1 passed \(cancelled after the last episode had finished: nothing was cut short\)\.)$/);
    console.log(`cancelled at the very end: the panel says ${JSON.stringify(closing)}`);
    const [finishedEvent] = eventsOf(api.runnerMessages(), 'run-finished');
    assert.equal(finishedEvent?.interrupted, false, 'nothing was left to run: the run is complete');
    assert.ok((await api.runnerHistory())[0]?.report, 'so its report is written');
    const status = await webviewTextWhen('#status', 'the closing line', (text) => text === closing);
    if (status !== undefined) assert.equal(status, closing);
    await screenshot('cancel-at-the-end', 2000);
  });

  it("a group's run is titled by the group, and each of its tasks shows its own outcome", async () => {
    const group = await waitFor('the filesystem › single-tool group', () =>
      allTestItems(api.testController).find((i) => !i.uri && i.label === 'single-tool' && i.parent?.label === 'filesystem'),
    );
    const tasks: string[] = [];
    group.children.forEach((child) => void tasks.push(child.label));
    assert.ok(tasks.length > 2, tasks.join());
    const outcomes = await api.runTestItems([group], 'run');
    const begin = api.runnerMessages().find((m) => m.type === 'begin');
    assert.equal(begin?.type === 'begin' ? begin.title : undefined, `Run: filesystem › single-tool (${tasks.length} tasks)`);
    const state = new Map(outcomes.map((o) => [o.id, o]));
    assert.deepEqual(new Set(state.keys()), new Set(tasks));
    assert.equal(state.get(CLEAN_ID)?.state, 'passed');
    assert.equal(state.get('fs-seed-conflict-001')?.state, 'errored');
    assert.match(state.get('fs-seed-conflict-001')!.message!, /state-seed/);
    assert.equal(state.get('fs-unopened-broken-001')?.state, 'errored');
    assert.match(state.get('fs-unopened-broken-001')!.message!, /cannot run: 2 lint errors/);
    const closing = closingLine(api.runnerMessages()) ?? '';
    assert.match(closing, /^Finished: \d+ passed(, \d+ failed)?, \d+ errored\./);
    assert.match(closing, /fs-seed-conflict-001 errored: Infrastructure error/);
    const title = await webviewTextWhen('#title', 'the group title', (text) => text.startsWith('Run: filesystem › single-tool'));
    if (title !== undefined) assert.equal(title, `Run: filesystem › single-tool (${tasks.length} tasks)`);
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await vscode.commands.executeCommand('vscode.revealTestInExplorer', group);
    await screenshot('group-run', 2000);
  });
});
