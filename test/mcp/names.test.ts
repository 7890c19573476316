import { test } from 'node:test';
import assert from 'node:assert/strict';
import { exposedName, namespaceOf, namespacesOf, qualifyAll, splitQualified } from '../../server/src/mcp/names.ts';

test('a qualified name splits at its first dot; a name without one is a namespace alone', () => {
  assert.deepEqual(splitQualified('filesystem.move_file'), ['filesystem', 'move_file']);
  assert.deepEqual(splitQualified('postgres.rowExists.v2'), ['postgres', 'rowExists.v2']);
  assert.deepEqual(splitQualified('filesystem'), ['filesystem', undefined]);
  assert.deepEqual(splitQualified('fs.'), ['fs', '']);
  assert.equal(namespaceOf('git.git_status'), 'git');
  assert.equal(namespaceOf('answer'), 'answer');
});

test('the namespaces of a list of names come once each, in order of first use', () => {
  assert.deepEqual(namespacesOf(['shop.create_order', 'calendar.book_meeting', 'shop.find_customer', 'answer']), ['shop', 'calendar', 'answer']);
  assert.deepEqual(namespacesOf(new Set<string>()), []);
});

test('bare names qualify under their namespace, and the agent sees a tool with an underscore', () => {
  assert.deepEqual(qualifyAll('git', new Map([['git_status', 1], ['git_log', 2]]).keys()), ['git.git_status', 'git.git_log']);
  assert.equal(exposedName('filesystem.move_file'), 'filesystem_move_file');
  assert.equal(exposedName(qualifyAll('github', ['merge_pull_request'])[0]!), 'github_merge_pull_request');
});
