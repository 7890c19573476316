/**
 * Reviewing generated tasks in a real VS Code: a batch written by `mcpbench generate --check` opens in the review
 * view from the code lens of its batch.json; a candidate shows its goal, parameters and diff; Accept asks for a
 * reason and the batch manifest records the decision; "Accept batch into tasks/" brings the accepted candidate
 * into the set (the Test Explorer lists it) and leaves undecided ones out. Where the runner drives the workbench
 * (code-server), the clicks and the reason are real clicks and keystrokes in the webview and the input box;
 * elsewhere the same steps go through the extension's API. A screenshot of the review view is taken.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import * as path from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'mocha';
import * as vscode from 'vscode';
import type { ReviewSession } from '../../src/api.ts';
import {
  allTestItems,
  answerInputBox,
  clickInWebview,
  EXTENSION_ID,
  extensionApi,
  screenshot,
  uiDriver,
  waitFor,
  workspaceFile,
  workspaceRoot,
  type ExtensionApi,
} from './helpers.ts';

// A template of the fixture workspace (client/test/fixtures/workspace/templates/), generated here with a fixed seed.
const TEMPLATE = 'templates/filesystem/file-away.template.json';
const BATCH = 'batches/fs-file-away-7';
const REASON = 'Natural goal; the distractor folder makes the target matter';

interface ManifestCandidate {
  task_id: string;
  review?: { decision: string; reason: string; at: string };
}

const readManifest = (): { candidates: ManifestCandidate[] } => JSON.parse(readFileSync(workspaceFile(`${BATCH}/batch.json`).fsPath, 'utf8'));

describe('the review view', () => {
  let api: ExtensionApi;
  let session: ReviewSession;
  let ids: string[] = [];
  const accepted: string[] = [];

  before(async () => {
    api = await extensionApi();
    // The batch, as a user makes it: the extension's own CLI, with the self-check of every candidate.
    const extension = vscode.extensions.getExtension(EXTENSION_ID)!;
    const cli = path.join(extension.extensionPath, 'dist', 'cli.js');
    const { stdout } = await promisify(execFile)(process.execPath, [cli, 'generate', TEMPLATE, '--count', '3', '--seed', '7', '--check'], {
      cwd: workspaceRoot().fsPath,
      env: { ...process.env, ELECTRON_RUN_AS_NODE: '1' },
      timeout: 170_000,
    });
    assert.match(stdout, /3 candidates, 3 checked ok/);
  });

  after(async () => {
    // The accepted task leaves the set again, so the suites after this one see the workspace as it was.
    for (const id of accepted) rmSync(workspaceFile(`tasks/filesystem/${id}.json`).fsPath, { force: true });
    if (accepted.length) {
      await waitFor('the accepted task to leave the Test Explorer', () => (allTestItems(api.testController).some((i) => accepted.includes(i.label)) ? undefined : true));
    }
    session?.panel.dispose();
  });

  it('opens from the code lens of batch.json and lists every candidate with its lint and check result', async () => {
    const document = await vscode.workspace.openTextDocument(workspaceFile(`${BATCH}/batch.json`));
    await vscode.window.showTextDocument(document);
    const lens = await waitFor('the review code lens on batch.json', async () => {
      const lenses = await vscode.commands.executeCommand<vscode.CodeLens[]>('vscode.executeCodeLensProvider', document.uri);
      return lenses.find((l) => l.command?.command === 'mcpbench.reviewBatch');
    });
    assert.match(lens.command!.title, /Review this batch/);
    session = (await vscode.commands.executeCommand<ReviewSession>(lens.command!.command, ...(lens.command!.arguments ?? [])))!;
    assert.ok(session, 'the command returns the review session');
    assert.equal(session.directory, workspaceFile(BATCH).fsPath);
    const candidates = await waitFor('the candidates', () => (session.candidates().length ? session.candidates() : undefined), { wakeOn: [session.onDidChange] });
    ids = candidates.map((c) => c.task_id);
    assert.equal(ids.length, 3);
    for (const c of candidates) {
      assert.match(c.task_id, /^fs-file-away-[0-9a-f]{8}$/);
      assert.deepEqual([c.state, c.integrity, c.lint.errors, c.check?.ok], ['undecided', 'ok', 0, true], JSON.stringify(c));
      assert.match(c.goal ?? '', /folder|directory/);
    }
    // The command again (the palette, the context menu) reveals the same view.
    assert.equal(await api.reviewBatch(workspaceFile(BATCH)), session);
  });

  it("shows a candidate's goal, parameters and diff from the other variants", async () => {
    const [first] = ids;
    if (uiDriver()) clickInWebview(`[data-task-id="${first}"]`);
    else await session.select(first!);
    await waitFor(`the page to draw ${first}`, () => (session.rendered() === first ? true : undefined), { wakeOn: [session.onDidChange] });
    assert.equal(session.selected(), first);
  });

  it('accepts a candidate with a reason, and the batch manifest records it', async () => {
    const [first] = ids;
    if (uiDriver()) {
      // The Accept button asks for the reason in an input box; the runner types it.
      clickInWebview('button[data-action="accept"]');
      answerInputBox(REASON);
    } else {
      assert.equal(await session.decide(first!, 'accept', REASON), true);
    }
    const review = await waitFor('the decision in batch.json', () => readManifest().candidates.find((c) => c.task_id === first)?.review, { timeoutMs: 60_000 });
    assert.equal(review.decision, 'accepted');
    assert.equal(review.reason, REASON);
    assert.ok(!Number.isNaN(Date.parse(review.at)));
    await waitFor('the view to show the decision', () => (session.candidates().find((c) => c.task_id === first)?.state === 'accepted' ? true : undefined), { wakeOn: [session.onDidChange] });
    assert.deepEqual(readManifest().candidates.filter((c) => c.review).map((c) => c.task_id), [first], 'only that candidate is decided');

    // The review view alone in the editor area for the picture.
    await vscode.commands.executeCommand('workbench.action.closeSidebar');
    session.panel.reveal(vscode.ViewColumn.One);
    await vscode.commands.executeCommand('workbench.action.closeOtherEditors');
    await waitFor(`the page to draw ${first} again`, () => (session.rendered() === first ? true : undefined), { wakeOn: [session.onDidChange] });
    await screenshot('review-view', 2500);
  });

  it('accepts the batch into tasks/: the accepted candidate joins the set, the rejected and undecided ones do not', async () => {
    const [first, second, third] = ids;
    assert.equal(await session.decide(second!, 'reject', 'Too close to its sibling'), true);
    const target = workspaceFile(`tasks/filesystem/${first}.json`);
    accepted.push(first!);
    if (uiDriver()) clickInWebview('button[data-action="accept-batch"]');
    else {
      const report = await session.acceptIntoTasks();
      assert.deepEqual(report?.accepted.map((a) => a.task_id), [first]);
      assert.deepEqual(report?.refused.map((r) => r.task_id), [third]);
    }
    await waitFor(`${first} in tasks/filesystem/`, () => (existsSync(target.fsPath) ? true : undefined), { timeoutMs: 60_000 });
    assert.equal(JSON.parse(readFileSync(target.fsPath, 'utf8')).id, first);
    assert.ok(!existsSync(workspaceFile(`tasks/filesystem/${second}.json`).fsPath), 'the rejected candidate stays out');
    assert.ok(!existsSync(workspaceFile(`tasks/filesystem/${third}.json`).fsPath), 'the undecided candidate stays out');
    // The set's Test Explorer picks the new task up like any other.
    await waitFor(`${first} in the Test Explorer`, () => allTestItems(api.testController).find((i) => i.label === first));
  });
});
