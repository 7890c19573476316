/**
 * The filesystem namespace runs the pinned official server, rooted at the sandbox. Seeding writes the files
 * of the state into the sandbox; the snapshot reads the tree back (text files as text, other bytes as
 * `{ "base64": ... }`; empty folders as `dir/`).
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { NamespaceRuntime } from '../namespace.ts';
import { packageRoot } from '../../paths.ts';
import { filesystemServer } from './official.ts';
import { contentBytes, contentOf, type FilesystemState } from './state.ts';

export const filesystemRuntime: NamespaceRuntime<FilesystemState> = {
  async seed(state, sandbox) {
    for (const [path, content] of Object.entries(state.files)) {
      const target = join(sandbox, path);
      if (path.endsWith('/') || content === null) mkdirSync(target, { recursive: true });
      else {
        mkdirSync(dirname(target), { recursive: true });
        writeFileSync(target, contentBytes(content));
      }
    }
  },
  async snapshot(sandbox) {
    const files: FilesystemState['files'] = {};
    const walk = (relative: string): void => {
      const entries = readdirSync(join(sandbox, relative), { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name));
      if (entries.length === 0 && relative !== '') files[`${relative}/`] = null;
      for (const entry of entries) {
        const path = relative === '' ? entry.name : `${relative}/${entry.name}`;
        if (entry.isDirectory()) walk(path);
        else if (entry.isFile()) files[path] = contentOf(readFileSync(join(sandbox, path)));
      }
    };
    walk('');
    return { files };
  },
  launch: (sandbox, options) => filesystemServer.launch(packageRoot(), sandbox, options),
};
