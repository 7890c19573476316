import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadRegistry, splitQualified, type Registry } from '../../server/src/mcp/registry.ts';
import { createAjv } from '../../server/src/ajv.ts';
import { schemasDir } from '../../server/src/paths.ts';
import type { Predicate, Task } from '../../server/src/tasks/model.ts';
import plugin from '../../server/src/mcp/chat/index.ts';
import { compareTs } from '../../server/src/mcp/chat/state.ts';

const seed = {
  current_user: 'U01AGENT',
  users: [
    { id: 'U01AGENT', name: 'ops-bot', real_name: 'Ops Bot' },
    { id: 'U02MARIA', name: 'maria', real_name: 'Maria Garcia', display_name: 'Maria G' },
    { id: 'U03DEV', name: 'dev', real_name: 'Dev Patel' },
  ],
  channels: [
    {
      id: 'C0GENERAL',
      name: 'general',
      members: ['U01AGENT', 'U02MARIA'],
      topic: 'Company-wide announcements',
      messages: [
        { ts: '1767600120.000100', user: 'U01AGENT', text: 'Ping <@U02MARIA> about the Q3 report', reactions: [{ name: 'thumbsup', users: ['U02MARIA'] }] },
        { ts: '1767600000.000100', user: 'U02MARIA', text: 'Deploy of v2.4.0 is   done', thread_ts: '1767600000.000100' },
        { ts: '1767600060.000100', user: 'U03DEV', text: 'Confirmed, all green', thread_ts: '1767600000.000100' },
      ],
    },
    {
      id: 'C0OPS',
      name: 'ops',
      is_private: true,
      members: ['U01AGENT'],
      messages: [
        { ts: '1767600200.000100', user: 'U02MARIA', text: 'This message was deleted.', thread_ts: '1767600200.000100', subtype: 'tombstone' },
        { ts: '1767600260.000100', user: 'U03DEV', text: 'reply to a deleted parent', thread_ts: '1767600200.000100' },
        { ts: '1767600300.000100', user: 'U03DEV', text: 'cc @maria please review' },
      ],
    },
  ],
};

const state = plugin.normalizeState(seed);
const run = (name: string, args: unknown, s = state): boolean => plugin.predicates[name]!(args, { state: s, answer: undefined }).value;

test('normalizeState fills defaults, sorts messages by ts and canonicalises reaction names', () => {
  const empty = plugin.normalizeState(undefined);
  assert.deepEqual(empty, { current_user: 'U00000000', users: [], channels: [] });
  const general = state.channels[0]!;
  assert.deepEqual(general.messages.map((m) => m.ts), ['1767600000.000100', '1767600060.000100', '1767600120.000100']);
  assert.equal(general.is_private, false);
  assert.equal(general.messages[2]!.reactions[0]!.name, '+1');
  assert.equal(plugin.normalizeState({ users: [{ id: 'U9', name: 'x' }] }).current_user, 'U9');
});

test('compareTs orders without float rounding', () => {
  assert.equal(compareTs('1767600000.000100', '1767600000.000099'), 1);
  assert.equal(compareTs('999.5', '1000.000001'), -1);
  assert.equal(compareTs('5.1', '5.100000'), 0);
});

test('channelExists: name with or without #, case, privacy', () => {
  assert.equal(run('channelExists', { name: '#general' }), true);
  assert.equal(run('channelExists', { name: 'General' }), true);
  assert.equal(run('channelExists', { name: 'random' }), false);
  assert.equal(run('channelExists', { name: 'ops', is_private: true }), true);
  assert.equal(run('channelExists', { name: 'ops', is_private: false }), false);
  assert.equal(run('channelExists', { name: 'ops', is_archived: false }), true);
});

test('channelTopic: equals, contains, non-empty', () => {
  assert.equal(run('channelTopic', { channel: 'C0GENERAL', equals: 'company-wide  announcements' }), true);
  assert.equal(run('channelTopic', { channel: '#general', contains: 'announce' }), true);
  assert.equal(run('channelTopic', { channel: '#general', contains: 'incident' }), false);
  assert.equal(run('channelTopic', { channel: '#general', equals: 'Company-wide' }), false);
  assert.equal(run('channelTopic', { channel: '#general' }), true);
  assert.equal(run('channelTopic', { channel: '#ops' }), false);
  assert.equal(run('channelTopic', { channel: '#nope', contains: 'x' }), false);
});

test('userInChannel: by id, name, display name, real name', () => {
  assert.equal(run('userInChannel', { channel: '#general', user: 'U02MARIA' }), true);
  assert.equal(run('userInChannel', { channel: '#general', user: '@maria' }), true);
  assert.equal(run('userInChannel', { channel: '#general', user: 'Maria G' }), true);
  assert.equal(run('userInChannel', { channel: '#general', user: 'maria garcia' }), true);
  assert.equal(run('userInChannel', { channel: '#general', user: 'dev' }), false);
  assert.equal(run('userInChannel', { channel: '#ops', user: 'maria' }), false);
  assert.equal(run('userInChannel', { channel: '#nowhere', user: 'maria' }), false);
});

test('messagePosted: contains (all), equals, author, where, rendered mentions, tombstones', () => {
  assert.equal(run('messagePosted', { channel: '#general', contains: ['v2.4.0', 'DONE'] }), true);
  assert.equal(run('messagePosted', { channel: '#general', contains: ['v2.4.0', 'failed'] }), false);
  assert.equal(run('messagePosted', { channel: '#general', equals: 'deploy of v2.4.0 is done' }), true);
  assert.equal(run('messagePosted', { channel: '#general', equals: 'deploy of v2.4.0' }), false);
  assert.equal(run('messagePosted', { channel: '#general', contains: 'v2.4.0', user: 'maria' }), true);
  assert.equal(run('messagePosted', { channel: '#general', contains: 'v2.4.0', user: 'dev' }), false);
  assert.equal(run('messagePosted', { channel: '#general', contains: 'all green', where: 'top_level' }), false);
  assert.equal(run('messagePosted', { channel: '#general', contains: 'all green', where: 'reply' }), true);
  assert.equal(run('messagePosted', { channel: '#general', contains: 'v2.4.0', where: 'reply' }), false);
  assert.equal(run('messagePosted', { contains: '@Maria G about' }), true);
  assert.equal(run('messagePosted', { contains: '<@U02MARIA>' }), true);
  assert.equal(run('messagePosted', { contains: 'was deleted' }), false);
  assert.equal(run('messagePosted', { channel: '#missing', contains: 'x' }), false);
  assert.equal(run('messagePosted', { channel: '#ops', contains: 'all green' }), false);
});

test('threadReply: by parent ts or parent text, reply text and author', () => {
  assert.equal(run('threadReply', { channel: '#general', parent_ts: '1767600000.000100', contains: 'confirmed' }), true);
  assert.equal(run('threadReply', { channel: '#general', parent_contains: 'v2.4.0', contains: 'all green', user: 'dev' }), true);
  assert.equal(run('threadReply', { channel: '#general', parent_contains: 'v2.4.0', user: 'maria' }), false);
  assert.equal(run('threadReply', { channel: '#general', parent_ts: '1767600120.000100' }), false);
  assert.equal(run('threadReply', { channel: '#general', parent_contains: 'Q3 report' }), false);
  // a tombstoned parent still anchors its thread by ts, but not by its (gone) text
  assert.equal(run('threadReply', { channel: '#ops', parent_ts: '1767600200.000100', contains: 'deleted parent' }), true);
  assert.equal(run('threadReply', { channel: '#ops', parent_contains: 'was deleted' }), false);
});

test('reactionAdded: by ts or text, aliases and colons, reactor', () => {
  assert.equal(run('reactionAdded', { channel: '#general', ts: '1767600120.000100', reaction: '+1' }), true);
  assert.equal(run('reactionAdded', { channel: '#general', message_contains: 'Q3 report', reaction: ':thumbsup:' }), true);
  assert.equal(run('reactionAdded', { channel: '#general', message_contains: 'Q3 report', reaction: '+1', user: 'maria' }), true);
  assert.equal(run('reactionAdded', { channel: '#general', message_contains: 'Q3 report', reaction: '+1', user: 'dev' }), false);
  assert.equal(run('reactionAdded', { channel: '#general', ts: '1767600000.000100', reaction: '+1' }), false);
  assert.equal(run('reactionAdded', { channel: '#general', message_contains: 'Q3 report', reaction: 'eyes' }), false);
  const empty = plugin.normalizeState({
    channels: [{ id: 'C1', name: 'a', messages: [{ ts: '1.000100', user: 'U1', text: 'x', reactions: [{ name: 'eyes', users: [] }] }] }],
  });
  assert.equal(run('reactionAdded', { channel: 'C1', ts: '1.000100', reaction: 'eyes' }, empty), false);
});

test('messageExists: deletion and edit checks', () => {
  assert.equal(run('messageExists', { channel: '#general', ts: '1767600120.000100' }), true);
  assert.equal(run('messageExists', { channel: '#general', ts: '1767600120.000100', contains: 'q3' }), true);
  assert.equal(run('messageExists', { channel: '#general', ts: '1767600120.000100', contains: 'Q4' }), false);
  assert.equal(run('messageExists', { channel: '#general', ts: '1767600120.000100', equals: 'ping @maria g about the q3 report' }), true);
  assert.equal(run('messageExists', { channel: '#general', ts: '1767600999.000100' }), false);
  assert.equal(run('messageExists', { channel: '#ops', ts: '1767600200.000100' }), false);
  assert.equal(run('messageExists', { channel: '#general', ts: '1767600200.000100' }), false);
});

test('messageCount: bounds and filters', () => {
  assert.equal(run('messageCount', { channel: '#general', equals: 3 }), true);
  assert.equal(run('messageCount', { channel: '#general', where: 'top_level', equals: 2 }), true);
  assert.equal(run('messageCount', { channel: '#general', where: 'reply', equals: 2 }), false);
  assert.equal(run('messageCount', { user: 'dev', min: 3 }), true);
  assert.equal(run('messageCount', { user: 'dev', max: 2 }), false);
  assert.equal(run('messageCount', { contains: 'nothing like this' }), false);
  assert.equal(run('messageCount', { contains: 'nothing like this', equals: 0 }), true);
  assert.equal(run('messageCount', { channel: '#missing', equals: 0 }), true);
  // the tombstone is not a message
  assert.equal(run('messageCount', { channel: '#ops', equals: 2 }), true);
});

test('mentionPosted: <@ID>, <@ID|label>, plain @handle as a whole word', () => {
  assert.equal(run('mentionPosted', { mentioned: 'maria', channel: '#general' }), true);
  assert.equal(run('mentionPosted', { mentioned: 'U02MARIA', channel: '#general', contains: 'Q3', user: 'ops-bot' }), true);
  assert.equal(run('mentionPosted', { mentioned: 'maria', channel: '#general', user: 'dev' }), false);
  assert.equal(run('mentionPosted', { mentioned: 'maria', channel: '#ops' }), true);
  assert.equal(run('mentionPosted', { mentioned: 'dev' }), false);
  const s = plugin.normalizeState({
    users: [{ id: 'U1', name: 'ann' }, { id: 'U2', name: 'anna' }],
    channels: [{ id: 'C1', name: 'a', messages: [
      { ts: '1.000100', user: 'U1', text: 'hi @anna and mail ann@example.com' },
      { ts: '2.000100', user: 'U1', text: 'see <@U2|anna>' },
    ] }],
  });
  assert.equal(run('mentionPosted', { mentioned: 'ann' }, s), false);
  assert.equal(run('mentionPosted', { mentioned: 'anna', contains: 'see' }, s), true);
});

// ---- task files and state examples of this namespace

function evaluate(registry: Registry, predicate: Predicate, states: Record<string, unknown>, answer: string | undefined): boolean {
  if ('all' in predicate && Array.isArray(predicate.all)) return (predicate.all as Predicate[]).every((p) => evaluate(registry, p, states, answer));
  if ('any' in predicate && Array.isArray(predicate.any)) return (predicate.any as Predicate[]).some((p) => evaluate(registry, p, states, answer));
  if ('not' in predicate && !Array.isArray(predicate.not)) return !evaluate(registry, predicate.not as Predicate, states, answer);
  const [key, args] = Object.entries(predicate)[0]!;
  const [ns, name] = splitQualified(key);
  const plugin = registry.get(ns)!.plugin!;
  return plugin.predicates[name!]!(args, { state: plugin.normalizeState(states[ns]), answer }).value;
}

function leaves(predicate: Predicate): Array<[string, unknown]> {
  if ('all' in predicate && Array.isArray(predicate.all)) return (predicate.all as Predicate[]).flatMap(leaves);
  if ('any' in predicate && Array.isArray(predicate.any)) return (predicate.any as Predicate[]).flatMap(leaves);
  if ('not' in predicate && !Array.isArray(predicate.not)) return leaves(predicate.not as Predicate);
  return Object.entries(predicate);
}

function checkTasks(dir: string): void {
  test(`tasks in ${dir} are well-formed and fail on their initial state`, async () => {
    const registry = await loadRegistry();
    const ajv = createAjv();
    const validateTask = ajv.compile(JSON.parse(readFileSync(join(schemasDir(), 'task.schema.json'), 'utf8')));
    const files = readdirSync(join(schemasDir(), '..', 'test', 'fixtures', 'tasks', dir)).filter((f) => f.endsWith('.json'));
    assert.ok(files.length >= 2, 'at least two tasks');
    for (const file of files) {
      const where = `${dir}/${file}`;
      const task = JSON.parse(readFileSync(join(schemasDir(), '..', 'test', 'fixtures', 'tasks', dir, file), 'utf8')) as Task;
      assert.ok(validateTask(task), `${where}: ${ajv.errorsText(validateTask.errors)}`);
      assert.equal(`${task.id}.json`, file, `${where}: id matches the file name`);
      for (const [ns, state] of Object.entries(task.initial_state)) {
        const info = registry.get(ns)!;
        assert.ok(info.validateState(state), `${where}: initial_state.${ns}: ${ajv.errorsText(info.validateState.errors)}`);
      }
      for (const [key, args] of leaves(task.success_predicate)) {
        const predicate = registry.predicate(key);
        assert.ok(predicate, `${where}: unknown predicate ${key}`);
        assert.ok(predicate.validateArguments(args), `${where}: ${key} ${ajv.errorsText(predicate.validateArguments.errors)}`);
      }
      for (const sequence of [...task.reference_solutions, ...(task.counterexamples ?? [])]) {
        sequence.forEach((step, i) => {
          if ('answer' in step) {
            assert.equal(i, sequence.length - 1, `${where}: the answer is the last step`);
            return;
          }
          assert.ok(task.available_tools.includes(step.tool), `${where}: ${step.tool} is not available`);
          const tool = registry.tool(step.tool);
          assert.ok(tool, `${where}: unknown tool ${step.tool}`);
          assert.ok(tool.validateInput(step.arguments ?? {}), `${where}: ${step.tool} ${ajv.errorsText(tool.validateInput.errors)}`);
        });
      }
      const states = task.initial_state as Record<string, unknown>;
      assert.equal(evaluate(registry, task.success_predicate, states, undefined), false, `${where}: passes on the initial state`);
      // Information tasks: the reference answers pass the answer checks, the counterexample answers do not.
      const final = (seq: unknown[]): string | undefined => {
        const last = seq[seq.length - 1] as { answer?: string } | undefined;
        return last?.answer;
      };
      if (leaves(task.success_predicate).every(([k]) => k.startsWith('answer.'))) {
        for (const seq of task.reference_solutions) assert.equal(evaluate(registry, task.success_predicate, states, final(seq)), true, `${where}: reference answer fails`);
        for (const seq of task.counterexamples ?? []) assert.equal(evaluate(registry, task.success_predicate, states, final(seq)), false, `${where}: counterexample answer passes`);
      }
    }
  });
}

function checkStateExamples(namespace: string): void {
  test(`${namespace} state_schema examples are valid states`, async () => {
    const info = (await loadRegistry()).get(namespace)!;
    const examples = (info.server.state_schema.examples ?? []) as unknown[];
    assert.ok(examples.length > 0);
    for (const example of examples) assert.ok(info.validateState(example), JSON.stringify(info.validateState.errors));
    assert.ok(info.validateState({}), 'the empty object is a valid state');
  });

  // The simulation harness stores normalizeState's output as the sandbox state and snapshots it back through
  // normalizeState, so a normalised state must itself be schema-valid and normalising must be idempotent.
  test(`${namespace} normalised states are schema-valid and normalising is idempotent`, async () => {
    const registry = await loadRegistry();
    const info = registry.get(namespace)!;
    const taskDir = join(schemasDir(), '..', 'test', 'fixtures', 'tasks', namespace);
    const seeds: unknown[] = [undefined, {}, ...((info.server.state_schema.examples ?? []) as unknown[])];
    for (const file of readdirSync(taskDir).filter((f) => f.endsWith('.json'))) {
      seeds.push((JSON.parse(readFileSync(join(taskDir, file), 'utf8')) as Task).initial_state[namespace]);
    }
    for (const seed of seeds) {
      const once = JSON.parse(JSON.stringify(info.plugin!.normalizeState(seed)));
      assert.ok(info.validateState(once), `${JSON.stringify(info.validateState.errors)}`);
      assert.deepEqual(JSON.parse(JSON.stringify(info.plugin!.normalizeState(once))), once);
    }
  });
}

checkTasks('chat');
checkStateExamples('chat');
