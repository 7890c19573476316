import { defineNamespace } from '../namespace.ts';
import { predicates } from './predicates.ts';
import { runtime } from './runtime.ts';
import { normalizeState, type GitState } from './state.ts';

export default defineNamespace<GitState>({ namespace: 'git', normalizeState, predicates, runtime });
