/**
 * `answer`: no server, only checks on the agent's final text answer (information tasks). Its state is
 * always the empty object; the predicates read `context.answer`.
 */
import { defineNamespace } from '../namespace.ts';
import * as p from './predicates.ts';

type AnswerState = Record<string, never>;

export default defineNamespace<AnswerState>({
  namespace: 'answer',
  normalizeState: () => ({}),
  predicates: {
    includes: (args, { answer }) => p.includes(args, answer),
    includesAll: (args, { answer }) => p.includesAll(args, answer),
    includesAny: (args, { answer }) => p.includesAny(args, answer),
    equals: (args, { answer }) => p.equals(args, answer),
    matches: (args, { answer }) => p.matches(args, answer),
    numberNear: (args, { answer }) => p.numberNear(args, answer),
    dateEquals: (args, { answer }) => p.dateEquals(args, answer),
    nonEmpty: (args, { answer }) => p.nonEmpty(args, answer),
    maxLength: (args, { answer }) => p.maxLength(args, answer),
  },
});
