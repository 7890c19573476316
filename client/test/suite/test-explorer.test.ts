/**
 * Running in a real VS Code: tasks are test items grouped by namespace and category, a run from the Test
 * Explorer passes (the extension spawns the real CLI), Check with coverage marks the predicate leaves as
 * covered statements, and the runner panel shows the run. Screenshots of the Test Explorer and of the runner
 * panel are taken by the code-server runner.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { allTestItems, extensionApi, screenshot, waitFor, workspaceFile, type ExtensionApi } from './helpers.ts';

// Copied into the fixture workspace from the repository's tasks/ by the runners.
const TASK = 'tasks/filesystem/fs-bump-version-001.json';
const TASK_ID = 'fs-bump-version-001';
// The leaves of its success predicate, as the task file spells them.
const LEAVES = ['filesystem.jsonFileValid', 'filesystem.jsonFileFieldEquals', 'filesystem.jsonFileFieldEquals', 'filesystem.jsonFileFieldEquals'];

describe('the Test Explorer', () => {
  let api: ExtensionApi;
  const uri = () => workspaceFile(TASK);

  before(async () => {
    api = await extensionApi();
  });

  it('lists every task of the workspace under its namespace and category', async () => {
    const item = await waitFor(`a test item for ${TASK}`, () =>
      allTestItems(api.testController).find((i) => i.uri?.toString() === uri().toString()),
    );
    assert.equal(item.label, TASK_ID);
    assert.equal(item.parent?.label, 'single-tool');
    assert.equal(item.parent?.parent?.label, 'filesystem');
    assert.equal(item.parent?.parent?.parent, undefined, 'namespaces are the top level');
    const labels = allTestItems(api.testController).filter((i) => i.uri).map((i) => i.label).sort();
    // The fixture workspace: three tasks copied from tasks/, the one with the typo, one nobody opens, and one whose
    // initial state cannot be written.
    assert.deepEqual(labels, ['chat-thread-ack-001', 'fs-archive-report-typo-001', 'fs-bump-version-001', 'fs-seed-conflict-001', 'fs-unopened-broken-001', 'memory-add-colleague-001']);
  });

  it('runs a task and it passes', async () => {
    const outcomes = await api.runTests([uri()], 'run');
    assert.deepEqual(outcomes.map(({ id, state }) => ({ id, state })), [{ id: TASK_ID, state: 'passed' }], JSON.stringify(outcomes));

    const item = allTestItems(api.testController).find((i) => i.uri?.toString() === uri().toString());
    assert.ok(item);
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await vscode.commands.executeCommand('vscode.revealTestInExplorer', item);
    await screenshot('test-explorer');
  });

  it('runs Check with coverage and the predicate leaves are covered', async () => {
    const outcomes = await api.runTests([uri()], 'check');
    assert.deepEqual(outcomes.map(({ id, state }) => ({ id, state })), [{ id: TASK_ID, state: 'passed' }], JSON.stringify(outcomes));

    // What the user sees: the task file with its covered predicates, and the Test Coverage view.
    const document = await vscode.workspace.openTextDocument(uri());
    await vscode.window.showTextDocument(document);
    await vscode.commands.executeCommand('workbench.view.testing.focus');
    await screenshot('coverage');

    const statements = api.coverageOf(uri());
    assert.ok(statements, `coverage for ${TASK}`);
    const covered = statements.map((s) => {
      const range = s.location instanceof vscode.Range ? s.location : new vscode.Range(s.location, s.location);
      return { text: document.getText(range), covered: Number(s.executed) > 0 };
    });
    // Each statement is a leaf of the predicate tree, located on its exact text, and the reference solution
    // witnessed every one of them.
    assert.deepEqual(
      covered.map((c) => ({ leaf: Object.keys(JSON.parse(c.text) as object)[0], covered: c.covered })),
      LEAVES.map((leaf) => ({ leaf, covered: true })),
    );
  });

  it('shows the runner panel', async () => {
    // The panel alone in the editor area, so the screenshot shows the run rather than the task file beside it.
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const panel = await api.showRunnerPanel();
    await waitFor('the runner panel to become visible', () => (panel.visible ? true : undefined), {
      wakeOn: [panel.onDidChangeViewState],
    });
    assert.ok(panel.webview.html.length > 0, 'the panel has content');
    await screenshot('runner-panel', 2500);
  });
});
