/**
 * Tool serving is one layer for every namespace runtime (serve-tools.ts): a simulation (calendar), git and
 * Postgres answer an unknown tool and arguments that fail the namespace schema the way the official servers
 * do (memory, the SDK's McpServer): an `isError` result the agent can read, with the `MCP error -32602`
 * prefix once, and the server stays up for the next call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry } from '../../server/src/mcp/registry.ts';
import { startNamespace } from './harness.ts';

/** A tool every one of these namespaces has, called with an argument of the wrong type. */
const INVALID: Record<string, { tool: string; args: Record<string, unknown> }> = {
  memory: { tool: 'open_nodes', args: { names: 'not-an-array' } },
  calendar: { tool: 'check_calendar', args: { date: 42 } },
  git: { tool: 'git_status', args: { repo_path: 7 } },
  postgres: { tool: 'query', args: { sql: 7 } },
};

test('every runtime answers an unknown tool and invalid arguments as the official servers do', { timeout: 120_000 }, async () => {
  const registry = await loadRegistry();
  const seen = new Map<string, { unknown: string; invalid: string }>();
  for (const [namespace, invalid] of Object.entries(INVALID)) {
    const info = registry.get(namespace)!;
    assert.ok(info.tools.has(invalid.tool), `${namespace} declares ${invalid.tool}`);
    // As the runner starts it: the serve entry (or the official server) in a child process.
    const server = await startNamespace(namespace, undefined, { via: 'process' });
    try {
      const unknown = await server.call('no_such_tool', {}, { unchecked: true });
      assert.equal(unknown.isError, true, `${namespace}: an unknown tool is an error result`);
      const wrong = await server.call(invalid.tool, invalid.args, { unchecked: true });
      assert.equal(wrong.isError, true, `${namespace}: invalid arguments are an error result`);
      // The server is still up and serving.
      assert.ok((await server.listTools()).length > 0);
      seen.set(namespace, { unknown: unknown.text, invalid: wrong.text });
    } finally {
      await server.close();
    }
  }
  const official = seen.get('memory')!;
  assert.equal(official.unknown, 'MCP error -32602: Tool no_such_tool not found');
  for (const [namespace, { unknown, invalid }] of seen) {
    assert.equal(unknown, official.unknown, `${namespace}: same wording as the official server`);
    assert.equal(unknown.match(/MCP error -32602/g)?.length, 1, `${namespace}: the prefix once`);
    assert.match(invalid, new RegExp(`^MCP error -32602: Input validation error: Invalid arguments for tool ${INVALID[namespace]!.tool}: `), `${namespace}: ${invalid}`);
  }
});
