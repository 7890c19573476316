/**
 * The one source of truth for the shapes of task files and namespace (server) files.
 *
 * The TypeScript types below are inferred from these zod schemas, and `scripts/emit-schemas.ts` emits
 * `schemas/task.schema.json` and `schemas/server.schema.json` from the same schemas, so the types the
 * engine uses and the JSON Schemas editors and the linter use cannot drift (test/schemas.test.ts proves
 * the committed files equal a fresh emission). Every field carries a title, a description and examples:
 * they are what hover and completion show.
 */
import { z } from 'zod';

import { CATEGORIES, DIFFICULTIES, TASK_ID_PATTERN } from './vocabulary.ts';
import { QUALIFIED_NAME_PATTERN } from '../mcp/names.ts';
import { JsonObject, Namespace } from '../mcp/server-file.ts';

export const QualifiedToolName = z.string().regex(QUALIFIED_NAME_PATTERN).meta({
  title: 'Qualified tool name',
  description:
    'A tool as `<namespace>.<tool>`. The agent sees it as `<namespace>_<tool>`, a name every model API accepts.',
  examples: ['filesystem.move_file', 'github.merge_pull_request'],
});

export const ToolCall = z
  .strictObject({
    tool: QualifiedToolName.meta({
      title: 'Tool',
      description: 'The qualified tool to call; it must be listed in `available_tools`.',
      examples: ['filesystem.move_file'],
    }),
    arguments: JsonObject.meta({
      title: 'Arguments',
      description: "The call's arguments; they must satisfy the tool's input schema.",
      examples: [{ source: 'report.txt', destination: 'archive/report.txt' }],
    }).optional(),
  })
  .meta({
    id: 'ToolCall',
    title: 'Tool call',
    description: 'One step of a solution: a call to one of the available tools with its arguments.',
    examples: [{ tool: 'filesystem.move_file', arguments: { source: 'report.txt', destination: 'archive/report.txt' } }],
  });

export const FinalAnswer = z
  .strictObject({
    answer: z.string().meta({
      title: 'Final answer',
      description: "The agent's final text answer, checked by `answer.*` predicates.",
      examples: ['The cheapest flight is AA-500 at 300 EUR.'],
    }),
  })
  .meta({
    id: 'FinalAnswer',
    title: 'Final answer step',
    description: 'The last step of a solution to an information task: the text the agent answers with.',
    examples: [{ answer: '42' }],
  });

export const SolutionStep = z.union([ToolCall, FinalAnswer]).meta({
  id: 'SolutionStep',
  title: 'Solution step',
  description: 'A tool call, or (last) the final answer.',
});

export const ToolCallSequence = z.array(SolutionStep).meta({
  id: 'ToolCallSequence',
  title: 'Tool-call sequence',
  description:
    'A sequence of tool calls the reference agent replays, optionally ending with a final answer. Its tool calls count against `max_steps`.',
  examples: [[{ tool: 'filesystem.move_file', arguments: { source: 'report.txt', destination: 'archive/report.txt' } }]],
});

// ---- Predicates: a recursive union. The TypeScript type is written out because TypeScript cannot infer a
// recursive type; `z.ZodType<Predicate>` makes the compiler check that the zod schema and this type agree.
export type LeafPredicate = { [qualifiedPredicate: string]: Record<string, unknown> };
export type Predicate = { all: Predicate[] } | { any: Predicate[] } | { not: Predicate } | LeafPredicate;

export const AllPredicate: z.ZodType<{ all: Predicate[] }> = z
  .strictObject({
    get all() {
      return z.array(PredicateSchema).min(1).meta({
        title: 'all',
        description: 'True when every sub-predicate is true.',
      });
    },
  })
  .meta({ id: 'AllPredicate', title: 'all', description: 'Conjunction: every sub-predicate must hold.' });

export const AnyPredicate: z.ZodType<{ any: Predicate[] }> = z
  .strictObject({
    get any() {
      return z.array(PredicateSchema).min(1).meta({
        title: 'any',
        description: 'True when at least one sub-predicate is true: each branch is one admitted solution path.',
      });
    },
  })
  .meta({
    id: 'AnyPredicate',
    title: 'any',
    description: 'Disjunction: one branch per admitted solution path; each branch should be witnessed by a reference solution.',
  });

export const NotPredicate: z.ZodType<{ not: Predicate }> = z
  .strictObject({
    get not() {
      return PredicateSchema.meta({ title: 'not', description: 'True when the sub-predicate is false.' });
    },
  })
  .meta({ id: 'NotPredicate', title: 'not', description: 'Negation of one sub-predicate.' });

export const LeafPredicateSchema: z.ZodType<LeafPredicate> = z
  .record(z.string().regex(QUALIFIED_NAME_PATTERN), JsonObject)
  .refine((o) => Object.keys(o).length === 1, { message: 'a predicate leaf has exactly one key `<ns>.<predicate>`' })
  .meta({
    id: 'LeafPredicate',
    title: 'Predicate leaf',
    description:
      "A check on one server's end state: exactly one key `<namespace>.<predicate>` whose value is the predicate's arguments.",
    examples: [{ 'filesystem.fileExists': { path: 'archive/report.txt' } }],
    minProperties: 1,
    maxProperties: 1,
  });

export const PredicateSchema: z.ZodType<Predicate> = z
  .union([AllPredicate, AnyPredicate, NotPredicate, LeafPredicateSchema])
  .meta({
    id: 'Predicate',
    title: 'Success predicate',
    description:
      'A declarative check over the servers\' end state: `{ "all": [..] }`, `{ "any": [..] }`, `{ "not": p }`, or a leaf `{ "<ns>.<predicate>": { ...arguments } }`.',
    examples: [
      {
        all: [
          { 'filesystem.fileExists': { path: 'archive/report.txt' } },
          { not: { 'filesystem.fileExists': { path: 'report.txt' } } },
        ],
      },
    ],
  });

export const TemplateProvenance = z
  .strictObject({
    id: z.string().meta({ title: 'Template id', description: 'The template the task was generated from.', examples: ['fs-move'] }),
    version: z.string().meta({ title: 'Template version', description: "The template's version.", examples: ['1'] }),
    parameters: JsonObject.meta({
      title: 'Parameters',
      description: 'The sampled parameter values.',
      examples: [{ file: 'report.txt', folder: 'archive' }],
    }),
    seed: z.int().meta({ title: 'Seed', description: 'The seed the variant was sampled with.', examples: [42] }),
  })
  .meta({
    title: 'Template provenance',
    description: 'Where a generated task came from: template id and version, parameters and seed.',
    examples: [{ id: 'fs-move', version: '1', parameters: { file: 'report.txt' }, seed: 42 }],
  });

export const AcceptedShortcut = z
  .strictObject({
    shortcut: z.string().min(1).meta({
      title: 'Shortcut',
      description: 'The shortcut id as `mcpbench check --shortcuts` prints it (`shotgun`, `partial-answer2`, `extra-write:filesystem.write_file`, `wrong-target1`, `fragment2`).',
      examples: ['extra-write:chat.post_message'],
    }),
    reason: z.string().min(1).meta({
      title: 'Reason',
      description: 'Why passing this way is doing the task: what a reviewer needs to accept it.',
      examples: ['A second message in the same channel repeats the announcement; the goal does not forbid it.'],
    }),
  })
  .meta({ id: 'AcceptedShortcut', title: 'Accepted shortcut', description: 'A shortcut agent of `check --shortcuts` that passes and may, with the reason.' });
export type AcceptedShortcut = z.infer<typeof AcceptedShortcut>;

export const AcceptedFinding = z
  .strictObject({
    code: z.enum(['guessable-answer', 'underivable-argument']).meta({
      title: 'Code',
      description: 'The code of a validity finding of `mcpbench check` this task accepts.',
      examples: ['guessable-answer'],
    }),
    reason: z.string().min(1).meta({
      title: 'Reason',
      description: 'Why the finding does not make the verdict unearned here: what a reviewer needs to accept it.',
      examples: ['The count is small by nature; the answer must also name the three ids, which no guess gives.'],
    }),
  })
  .meta({ id: 'AcceptedFinding', title: 'Accepted finding', description: 'A validity finding of `check` the task accepts, with the reason; it no longer fails the check.' });
export type AcceptedFinding = z.infer<typeof AcceptedFinding>;

export const EquivalentMutant = z
  .strictObject({
    mutant: z.string().min(1).meta({
      title: 'Mutant',
      description:
        'The mutant id as `mcpbench check --mutants` prints it (`ref1.drop2`, `ref1.swap1-3`, `ref1.step2/path=notes.txt`), or `<step and argument>=*` for every replacement of one argument (`ref1.step3/relations/1/relationType=*`: that value is free).',
      examples: ['ref1.swap1-2'],
    }),
    reason: z.string().min(1).meta({
      title: 'Reason',
      description: 'Why this mutant may pass: why the mistake it makes does not matter for the goal.',
      examples: ['The two bookings are independent: their order changes nothing the goal asks for.'],
    }),
  })
  .meta({
    id: 'EquivalentMutant',
    title: 'Equivalent mutant',
    description: 'A mutant of a reference solution that passes the predicate and should, with the reason.',
    examples: [{ mutant: 'ref1.swap1-2', reason: 'The two bookings are independent.' }],
  });

export const TaskSchema = z
  .strictObject({
    $schema: z.string().optional().meta({
      title: 'JSON Schema',
      description: 'Optional link to the task schema, for editors.',
      examples: ['../../schemas/task.schema.json'],
    }),
    id: z.string().regex(TASK_ID_PATTERN).meta({
      title: 'Task id',
      description: 'Unique id of the task across the set (lower case letters, digits, `.`, `_`, `-`).',
      examples: ['fs-move-report-001'],
    }),
    server: z.union([Namespace, z.array(Namespace).min(1)]).meta({
      title: 'Server',
      description: 'The namespace the task runs against, or an array of namespaces for a cross-server task.',
      examples: ['filesystem', ['github', 'chat']],
    }),
    category: z.enum(CATEGORIES).meta({
      title: 'Category',
      description:
        '`single-tool`: one tool suffices; `composition`: several tools must be combined; `recovery`: the agent must recover from an error.',
      examples: ['single-tool'],
    }),
    difficulty: z.enum(DIFFICULTIES).meta({ title: 'Difficulty', description: 'How hard the task is.', examples: ['easy'] }),
    max_steps: z.int().min(1).max(1000).meta({
      title: 'Step budget',
      description: 'The most tool calls the agent may make; the gateway stops forwarding after this many.',
      examples: [6],
    }),
    goal: z.string().min(1).meta({
      title: 'Goal',
      description: 'The natural-language ask shown to the agent.',
      examples: ['Move report.txt into the archive folder.'],
    }),
    initial_state: z.record(Namespace, JsonObject).meta({
      title: 'Initial state',
      description: "The servers' state before the agent starts, keyed by namespace; each value must fit that namespace's state schema.",
      examples: [{ filesystem: { files: { 'report.txt': 'Q3 numbers', 'archive/': null } } }],
    }),
    available_tools: z.array(QualifiedToolName).min(1).meta({
      title: 'Available tools',
      description:
        'The tools the agent may use, as `<namespace>.<tool>`. Tools of namespaces the task does not need may be listed as distractors.',
      examples: [['filesystem.move_file', 'filesystem.list_directory']],
    }),
    success_predicate: PredicateSchema,
    reference_solutions: z.array(ToolCallSequence).min(1).meta({
      title: 'Reference solutions',
      description:
        'Sequences that must pass (the task is solvable); each `any` branch should be witnessed by one of them.',
      examples: [[[{ tool: 'filesystem.move_file', arguments: { source: 'report.txt', destination: 'archive/report.txt' } }]]],
    }),
    counterexamples: z.array(ToolCallSequence).optional().meta({
      title: 'Counterexamples',
      description: 'Sequences that must fail: they show the predicate is specific enough.',
      examples: [[[{ tool: 'filesystem.write_file', arguments: { path: 'archive/report.txt', content: 'Q3 numbers' } }]]],
    }),
    equivalent_mutants: z.array(EquivalentMutant).optional().meta({
      title: 'Equivalent mutants',
      description:
        'Mutants of the reference solutions (`mcpbench check --mutants`) that pass and should: each with the reason the mistake does not matter. A surviving mutant not listed here fails the check.',
      examples: [[{ mutant: 'ref1.swap1-2', reason: 'The two bookings are independent: their order changes nothing the goal asks for.' }]],
    }),
    accepted_shortcuts: z.array(AcceptedShortcut).optional().meta({
      title: 'Accepted shortcuts',
      description:
        'Shortcut agents (`mcpbench check --shortcuts`: shotgun and partial answers, an extra write on another record, the wrong target, a fragment) that pass and may: each with the reason. A passing shortcut not listed here fails the check.',
      examples: [[{ shortcut: 'extra-write:chat.post_message', reason: 'A second message in the same channel repeats the announcement; the goal does not forbid it.' }]],
    }),
    accepted_findings: z.array(AcceptedFinding).optional().meta({
      title: 'Accepted findings',
      description:
        'Validity findings of `mcpbench check` (`guessable-answer`, `underivable-argument`) that are errors by default, accepted for this task with the reason.',
      examples: [[{ code: 'guessable-answer', reason: 'The count is small by nature; the answer must also name the three ids, which no guess gives.' }]],
    }),
    tags: z.array(z.string()).optional().meta({ title: 'Tags', description: 'Free-form labels.', examples: [['files', 'move']] }),
    template: TemplateProvenance.optional(),
    timeout_s: z.number().positive().optional().meta({
      title: 'Timeout',
      description: 'Wall-clock limit for one episode, in seconds.',
      examples: [120],
    }),
  })
  .meta({
    id: 'Task',
    title: 'MCPBench task',
    description:
      'One benchmark task: a goal for an agent, the initial state of one or more MCP servers, the tools the agent may use, and a declarative success predicate over the end state.',
  });

export type Task = z.infer<typeof TaskSchema>;
export type ToolCall = z.infer<typeof ToolCall>;
export type FinalAnswer = z.infer<typeof FinalAnswer>;
export type SolutionStep = z.infer<typeof SolutionStep>;
export type TemplateProvenance = z.infer<typeof TemplateProvenance>;
export type EquivalentMutant = z.infer<typeof EquivalentMutant>;

// ---- Namespace files: schemas/servers/<ns>.json
