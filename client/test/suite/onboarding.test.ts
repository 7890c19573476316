/**
 * Onboarding in a real VS Code: New Task writes a skeleton whose findings are its to-do list, the snippets of the
 * task language, the template code lenses (Generate Batch, Lint a Sample, Open Last Batch) and what they do, the
 * Getting Started walkthrough, and the fault profile picker that says what each profile means. Screenshots of
 * each are taken.
 */
import assert from 'node:assert/strict';
import { existsSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { answerInputBox, diagnosticCode, extensionApi, mcpbenchDiagnostics, screenshot, uiDriver, waitFor, workspaceFile, type ExtensionApi } from './helpers.ts';

const TEMPLATE = 'templates/filesystem/file-away.template.json';

describe('onboarding', () => {
  let api: ExtensionApi;
  const created: string[] = [];

  before(async () => {
    api = await extensionApi();
  });

  after(async () => {
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    for (const file of created) rmSync(file, { recursive: true, force: true });
  });

  it('New Task writes a skeleton that lints with a finding for each thing left to write', async () => {
    const uri = await api.newTask({ namespaces: ['filesystem'], category: 'composition', difficulty: 'medium', id: 'fs-onboarding-001' });
    assert.ok(uri, 'the command wrote a task');
    created.push(uri.fsPath);
    assert.equal(uri.fsPath, workspaceFile('tasks/filesystem/fs-onboarding-001.json').fsPath);
    const editor = vscode.window.activeTextEditor!;
    assert.equal(editor.document.uri.toString(), uri.toString(), 'the new task is open');
    assert.equal(editor.document.languageId, 'mcpbench-task');
    assert.equal(editor.document.getText(new vscode.Range(editor.selection.start, editor.selection.start.translate(0, 5))), 'TODO:', 'the cursor is on the first TODO');
    const findings = await waitFor('the skeleton to be linted', () => {
      const ours = mcpbenchDiagnostics(uri);
      return ours.some((d) => diagnosticCode(d) === 'todo') ? ours : undefined;
    }, { wakeOn: [vscode.languages.onDidChangeDiagnostics] });
    assert.ok(findings.some((d) => diagnosticCode(d) === 'empty-combinator'), findings.map((d) => d.message).join('\n'));
    assert.match(findings.find((d) => diagnosticCode(d) === 'todo')!.message, /left to do: what the agent must do/);
    await screenshot('new-task');
  });

  it('the task language has snippets for a task and each predicate shape', async () => {
    const document = await vscode.workspace.openTextDocument({ language: 'mcpbench-task', content: '' });
    const editor = await vscode.window.showTextDocument(document);
    for (const [name, start] of [['Predicate: any', '{ "any": ['], ['Predicate: not', '{ "not": '], ['Solution step: tool call', '{ "tool": ']] as const) {
      await editor.edit((b) => b.delete(new vscode.Range(0, 0, document.lineCount, 0)));
      await vscode.commands.executeCommand('editor.action.insertSnippet', { langId: 'mcpbench-task', name });
      assert.ok(document.getText().startsWith(start), `${name}: ${document.getText()}`);
    }
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('a template has the lenses Generate Batch and Lint a Sample; generating opens the review view and adds Open Last Batch', async () => {
    const template = workspaceFile(TEMPLATE);
    const document = await vscode.workspace.openTextDocument(template);
    await vscode.window.showTextDocument(document);
    assert.equal(document.languageId, 'mcpbench-template');
    const titles = async () => ((await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', template)) ?? []).map((l) => l.command?.title ?? '');
    const before = await waitFor('the template lenses', async () => {
      const found = await titles();
      return found.length ? found : undefined;
    });
    assert.deepEqual(before.slice(0, 2), ['Generate Batch...', 'Lint a Sample']);
    await screenshot('template-lenses');

    created.push(workspaceFile('batches/fs-file-away-11').fsPath);
    const session = await api.generateBatch(template, { count: 2, seed: 11, check: false });
    assert.ok(session, 'the review view opened on the new batch');
    assert.equal(session.directory, workspaceFile('batches/fs-file-away-11').fsPath);
    assert.equal(session.candidates().length, 2);
    await screenshot('generated-batch-review');
    const after = await waitFor('the Open Last Batch lens', async () => (await titles()).find((t) => t.startsWith('Open Last Batch')));
    assert.equal(after, 'Open Last Batch (fs-file-away-11)');
  });

  it('Lint a Sample opens one fresh instance as a task, linted live', async () => {
    const sample = await api.lintTemplateSample(workspaceFile(TEMPLATE), 5);
    assert.ok(sample);
    assert.equal(sample.languageId, 'mcpbench-task');
    assert.equal(sample.isUntitled, true);
    const task = JSON.parse(sample.getText()) as { template: { id: string; seed: number } };
    assert.equal(task.template.id, 'fs-file-away');
    // Linted as any task is: a clean template gives a clean sample (published, empty).
    await waitFor('the sample to be linted', () => (vscode.languages.getDiagnostics(sample.uri).length === 0 ? true : undefined));
    await screenshot('template-sample');
    await vscode.commands.executeCommand('workbench.action.revertAndCloseActiveEditor');
  });

  it('the Getting Started walkthrough opens', async () => {
    await vscode.commands.executeCommand('workbench.action.openWalkthrough', 'mcpbench.mcpbench-studio#gettingStarted', false);
    await screenshot('walkthrough', 3000);
    const packaged = vscode.extensions.getExtension('mcpbench.mcpbench-studio')!.packageJSON.contributes.walkthroughs[0].steps as { id: string; media: { markdown: string } }[];
    assert.deepEqual(packaged.map((s) => s.id), ['doctor', 'openTask', 'run', 'check', 'generate', 'review']);
    for (const step of packaged) assert.ok(existsSync(path.join(vscode.extensions.getExtension('mcpbench.mcpbench-studio')!.extensionPath, step.media.markdown)), step.media.markdown);
    await vscode.commands.executeCommand('workbench.action.closeActiveEditor');
  });

  it('the fault profile picker says what each profile means', async function () {
    if (!uiDriver()) this.skip(); // the picker needs a user: only the code-server runner drives the workbench
    const task = workspaceFile('tasks/filesystem/fs-bump-version-001.json');
    const running = vscode.commands.executeCommand<{ id: string; state: string }[]>('mcpbench.runTaskWithFaults', task);
    await screenshot('fault-profile-picker', 2500);
    answerInputBox('light');
    const outcomes = await running;
    assert.deepEqual(outcomes?.map((o) => o.state), ['passed'], JSON.stringify(outcomes));
  });
});
