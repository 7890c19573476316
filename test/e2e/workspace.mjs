// The folder both runners open in VS Code: a scratch copy, because the suite edits and saves files in it and
// the runs it starts write run folders into it. It holds the fixture files of client/test/fixtures/workspace
// (a task with a mistake, editor settings) and a few real tasks copied from test/fixtures/tasks/ into its tasks/
// at run time, so they are never stale copies, plus schemas/ so the tasks' "$schema" references resolve.
import { cpSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Real tasks (paths inside the workspace's tasks/): the suite runs the first; the others fill the Test Explorer's groups. */
export const COPIED_TASKS = [
  'tasks/filesystem/fs-bump-version-001.json',
  'tasks/memory/memory-add-colleague-001.json',
  'tasks/chat/chat-thread-ack-001.json',
];

export function createFixtureWorkspace(parent) {
  const workspace = join(parent, 'workspace');
  mkdirSync(workspace, { recursive: true });
  cpSync(join(REPO_ROOT, 'client', 'test', 'fixtures', 'workspace'), workspace, { recursive: true });
  for (const task of COPIED_TASKS) {
    mkdirSync(dirname(join(workspace, task)), { recursive: true });
    // The fixture's "$schema" points four folders up to the repository's schemas/; the workspace's is two up.
    const text = readFileSync(join(REPO_ROOT, 'test', 'fixtures', task), 'utf8');
    writeFileSync(join(workspace, task), text.replace('"../../../../schemas/', '"../../schemas/'));
  }
  cpSync(join(REPO_ROOT, 'schemas'), join(workspace, 'schemas'), { recursive: true });
  return workspace;
}
