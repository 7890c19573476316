import assert from 'node:assert/strict';
import { test } from 'node:test';
import { groupTasks, isTaskFile, readTaskHeader, UNPARSED, type TaskEntry } from '../../client/src/task-tree.ts';

test('the header reads id, server (one or several) and category only', () => {
  assert.deepEqual(readTaskHeader('/w/tasks/fs/a.json', '{"id":"fs-a","server":"filesystem","category":"single-tool","goal":1}'), {
    id: 'fs-a', namespaces: ['filesystem'], category: 'single-tool', parsed: true,
  });
  assert.deepEqual(readTaskHeader('/w/x.task.json', '{"server":["github","chat"]}').namespaces, ['chat', 'github']);
  assert.equal(readTaskHeader('/w/x.task.json', '{"server":["github","chat"]}').id, 'x');
});

test('a file that does not parse still becomes a task, named after the file', () => {
  const header = readTaskHeader('/w/tasks/fs/broken-001.json', '{"id": "x",');
  assert.deepEqual(header, { id: 'broken-001', namespaces: [], category: UNPARSED, parsed: false });
});

test('tasks group by namespace, then category, sorted', () => {
  const entry = (uri: string, text: string): TaskEntry => ({ uri, header: readTaskHeader(uri, text) });
  const groups = groupTasks([
    entry('file:///t/fs/b.json', '{"id":"fs-b","server":"filesystem","category":"single-tool"}'),
    entry('file:///t/fs/a.json', '{"id":"fs-a","server":"filesystem","category":"single-tool"}'),
    entry('file:///t/fs/c.json', '{"id":"fs-c","server":"filesystem","category":"composition"}'),
    entry('file:///t/x/d.json', '{"id":"x-d","server":["github","chat"],"category":"composition"}'),
  ]);
  assert.deepEqual(
    groups.map((g) => [g.label, g.categories.map((c) => [c.label, c.tasks.map((t) => t.header.id)])]),
    [
      ['chat + github', [['composition', ['x-d']]]],
      ['filesystem', [['composition', ['fs-c']], ['single-tool', ['fs-a', 'fs-b']]]],
    ],
  );
  const ids = groups.flatMap((g) => [g.id, ...g.categories.map((c) => c.id)]);
  assert.equal(new Set(ids).size, ids.length);
});

test('task files are those under tasks/ or named *.task.json; templates and build folders are not', () => {
  assert.equal(isTaskFile('tasks/fs/a.json'), true);
  assert.equal(isTaskFile('extra/one.task.json'), true);
  assert.equal(isTaskFile('tasks/fs/a.template.json'), false);
  assert.equal(isTaskFile('node_modules/p/tasks/a.json'), false);
  assert.equal(isTaskFile('.git/tasks/a.json'), false);
  assert.equal(isTaskFile('runs/check-1/tasks/a.json'), false);
  assert.equal(isTaskFile('tasks/fs/a.schema.json'), false);
  assert.equal(isTaskFile('src/a.json'), false);
});

test('a run is titled by what was asked for: all tasks, a group by its path, one task by its id, else a count', async () => {
  const { runTitle } = await import('../../client/src/task-tree.ts');
  const ids = Array.from({ length: 17 }, (_, i) => `fs-task-${i}`);
  assert.equal(runTitle('Run', { all: true, groups: [], taskIds: ids }), 'Run: all 17 tasks');
  assert.equal(runTitle('Check', { all: false, groups: [['filesystem', 'single-tool']], taskIds: ids }), 'Check: filesystem › single-tool (17 tasks)');
  assert.equal(runTitle('Run', { all: false, groups: [], taskIds: ['fs-a'] }), 'Run: fs-a');
  assert.equal(runTitle('Run', { all: false, groups: [['filesystem'], ['memory']], taskIds: ids }), 'Run: 17 tasks');
  assert.ok(!runTitle('Run', { all: false, groups: [['filesystem']], taskIds: ids }).includes('fs-task-3'));
});
