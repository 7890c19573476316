/**
 * Lint, stats and a namespace state built from a file: what `mcpbench lint`, `stats` and `state` do, without
 * argv. Errors are McpbenchErrors with their code and exit status.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { EXIT_FINDINGS, McpbenchError } from '../errors.ts';
import { lintTemplate } from '../generator/lint-template.ts';
import type { Registry } from '../mcp/registry.ts';
import { composition, taskTraits, type Composition } from '../tasks/composition.ts';
import type { Diagnostic } from '../tasks/diagnostics.ts';
import { collectLintableFiles, collectTaskFiles, readText } from '../tasks/files.ts';
import { lintTaskSet } from '../tasks/lint.ts';
import { TaskSchema } from '../tasks/model.ts';

/** One linted file: its findings and its text (for the SARIF snippets). */
export interface LintedFile {
  path: string;
  diagnostics: Diagnostic[];
  text: string;
}

/** Lints task files and template grammars (files or folders of them), tasks as one set (duplicate ids ...). */
export function lintPaths(paths: readonly string[], registry: Registry): LintedFile[] {
  const files = collectLintableFiles([...paths]);
  if (files.tasks.length + files.templates.length === 0) throw new McpbenchError(`no task or template files found in ${paths.join(', ')}`, { code: 'no-task-files' });
  const results = lintTaskSet(files.tasks.map((path) => ({ uri: path, text: readText(path) })), registry);
  return [
    ...results.map((r) => ({ path: r.document.uri, diagnostics: r.diagnostics, text: r.document.text })),
    ...files.templates.map((path) => {
      const text = readText(path);
      return { path, diagnostics: lintTemplate(path, text, registry).diagnostics, text };
    }),
  ];
}

/** A set's composition: namespace x category x difficulty, cross-server, information and distractor tasks. */
export function setComposition(paths: readonly string[], registry: Registry): Composition {
  const traits = collectTaskFiles([...paths]).map((path) => {
    const parsed = TaskSchema.safeParse(JSON.parse(readText(path)));
    if (!parsed.success) throw new McpbenchError(`${path}: not a valid task (run mcpbench lint ${path})`, { code: 'invalid-task', file: path, exitStatus: EXIT_FINDINGS });
    return taskTraits(parsed.data, registry);
  });
  return composition(traits);
}

/** A namespace's initial state built from a file in its backend's own format (postgres: a SQL script). */
export async function stateFromFile(namespace: string, file: string, registry: Registry): Promise<unknown> {
  const info = registry.get(namespace);
  const build = info?.plugin?.runtime?.stateFrom;
  if (!info || !build) throw new McpbenchError(`${namespace} cannot build a state from a file${info ? '' : ' (unknown namespace)'}`, { code: 'no-state-builder' });
  let text: string;
  try {
    text = readText(file);
  } catch (error) {
    throw new McpbenchError(`${file}: ${(error as Error).message}`, { code: 'unreadable', file, cause: error });
  }
  const scratch = mkdtempSync(join(tmpdir(), `mcpbench-state-${namespace}-`));
  try {
    return await build(text, scratch);
  } catch (error) {
    throw new McpbenchError(`${file}: ${(error as Error).message}`, { code: 'invalid-state-source', file, exitStatus: EXIT_FINDINGS, cause: error });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
}
