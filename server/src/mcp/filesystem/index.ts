import { defineNamespace } from '../namespace.ts';
import { predicates } from './predicates.ts';
import { filesystemRuntime } from './runtime.ts';
import { normalizeState, type FilesystemState } from './state.ts';

export default defineNamespace<FilesystemState>({
  namespace: 'filesystem',
  normalizeState,
  predicates,
  runtime: filesystemRuntime,
});
