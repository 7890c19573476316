#!/usr/bin/env node
/**
 * dist/serve.js: `node dist/serve.js <namespace> --dir SANDBOX [--state FILE]`, the lean twin of
 * `mcpbench serve` that episodes start (see serve.ts for why it is separate).
 */
import { parseArgs } from 'node:util';
import { serveNamespace, ServeError } from './serve.ts';
import packageJson from '../../../package.json';
import { McpbenchError } from '../errors.ts';

async function main(): Promise<number> {
  let parsed;
  try {
    parsed = parseArgs({ allowPositionals: true, options: { dir: { type: 'string' }, state: { type: 'string' } } });
  } catch (error) {
    throw new ServeError((error as Error).message);
  }
  const [namespace] = parsed.positionals;
  const { dir, state } = parsed.values;
  if (namespace === undefined || dir === undefined || parsed.positionals.length !== 1) {
    throw new ServeError('usage: serve.js <namespace> --dir SANDBOX [--state FILE]');
  }
  return serveNamespace(namespace, { dir, ...(state !== undefined ? { state } : {}) }, packageJson.version);
}

main().then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(error instanceof McpbenchError ? `mcpbench serve: ${error.message}\n` : `mcpbench serve: internal error: ${(error as Error).stack ?? error}\n`);
    process.exitCode = error instanceof McpbenchError ? error.exitStatus : 2;
  },
);
