import { defineNamespace } from '../namespace.ts';
import { predicates } from './predicates.ts';
import { runtime } from './runtime.ts';
import { normalizeState, type PostgresState } from './state.ts';

export default defineNamespace<PostgresState>({ namespace: 'postgres', normalizeState, predicates, runtime });
