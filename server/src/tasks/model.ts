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

import { CATEGORIES, COMBINATORS, DIFFICULTIES, NAMESPACE_PATTERN, QUALIFIED_NAME_PATTERN, TASK_ID_PATTERN } from './vocabulary.ts';

export { CATEGORIES, COMBINATORS, DIFFICULTIES, NAMESPACE_PATTERN, QUALIFIED_NAME_PATTERN, TASK_ID_PATTERN };

const JsonObject = z.record(z.string(), z.unknown());

export const Namespace = z.string().regex(NAMESPACE_PATTERN).meta({
  title: 'Namespace',
  description: 'A server namespace: the name of one file in schemas/servers/ (lower case, digits, underscores).',
  examples: ['filesystem', 'github', 'postgres'],
});

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

/**
 * The namespaces a task names in `server` (one, or several for a cross-server task), in order: the one
 * reading of `server: string | string[]`. Takes unchecked JSON too (the linter's input): what is not a
 * string is skipped.
 */
export function taskNamespaces(task: { server?: unknown }): string[] {
  const server = task.server;
  if (typeof server === 'string') return [server];
  return Array.isArray(server) ? server.filter((s): s is string => typeof s === 'string') : [];
}
export type ToolCall = z.infer<typeof ToolCall>;
export type FinalAnswer = z.infer<typeof FinalAnswer>;
export type SolutionStep = z.infer<typeof SolutionStep>;
export type TemplateProvenance = z.infer<typeof TemplateProvenance>;
export type EquivalentMutant = z.infer<typeof EquivalentMutant>;

// ---- Namespace files: schemas/servers/<ns>.json

const JsonSchemaObject = JsonObject.meta({
  title: 'JSON Schema',
  description: 'A JSON Schema (2020-12) for an object.',
  examples: [{ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] }],
});

export const ToolDeclaration = z
  .strictObject({
    name: z.string().regex(/^[A-Za-z_][A-Za-z0-9_-]*$/).meta({
      title: 'Tool name',
      description: 'The name the MCP server gives the tool in tools/list.',
      examples: ['move_file'],
    }),
    title: z.string().optional().meta({ title: 'Title', description: 'A human-readable title.', examples: ['Move File'] }),
    description: z.string().meta({
      title: 'Description',
      description: 'What the tool does, as the server describes it.',
      examples: ['Move or rename files and directories.'],
    }),
    inputSchema: JsonSchemaObject.meta({
      title: 'Input schema',
      description: "The tool's input schema, exactly as the server's tools/list returns it.",
    }),
    outputSchema: JsonSchemaObject.optional().meta({
      title: 'Output schema',
      description: "The tool's structured output schema, where the server declares one.",
    }),
    annotations: z
      .strictObject({
        title: z.string().optional(),
        readOnlyHint: z.boolean().optional(),
        destructiveHint: z.boolean().optional(),
        idempotentHint: z.boolean().optional(),
        openWorldHint: z.boolean().optional(),
      })
      .optional()
      .meta({
        title: 'Annotations',
        description: 'MCP tool annotations. `readOnlyHint` marks reads (the StaleData fault replays earlier reads).',
        examples: [{ readOnlyHint: true }],
      }),
    execution: z
      .strictObject({ taskSupport: z.enum(['forbidden', 'optional', 'required']).optional() })
      .optional()
      .meta({
        title: 'Execution',
        description: 'MCP task support, as the server lists it (`taskSupport`).',
        examples: [{ taskSupport: 'forbidden' }],
      }),
  })
  .meta({ id: 'ToolDeclaration', title: 'Tool', description: 'One tool of the namespace, as its MCP server lists it.' });

export const PredicateDeclaration = z
  .strictObject({
    name: z.string().regex(/^[a-z][A-Za-z0-9]*$/).meta({
      title: 'Predicate name',
      description: 'camelCase; used in tasks as `<namespace>.<name>`.',
      examples: ['fileExists'],
    }),
    description: z.string().meta({
      title: 'Description',
      description: 'What the predicate checks, in one or two sentences (shown on hover).',
      examples: ['True when a file exists at `path` (relative to the sandbox root).'],
    }),
    arguments: JsonSchemaObject.meta({
      title: 'Arguments',
      description: "JSON Schema of the predicate's arguments object.",
      examples: [{ type: 'object', properties: { path: { type: 'string' } }, required: ['path'], additionalProperties: false }],
    }),
    reads: z.array(z.string()).min(1).meta({
      title: 'Reads',
      description: "The parts of the namespace's state (top-level keys of its state schema) the predicate reads; `answer` reads the final answer.",
      examples: [['files']],
    }),
    examples: z.array(JsonObject).optional().meta({
      title: 'Examples',
      description: 'Example argument objects (completion offers the first as a snippet).',
      examples: [[{ path: 'archive/report.txt' }]],
    }),
  })
  .meta({
    id: 'PredicateDeclaration',
    title: 'Predicate',
    description: "One predicate over the namespace's end state.",
  });

export const ServerFileSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ title: 'JSON Schema', description: 'Link to server.schema.json.' }),
    namespace: Namespace,
    title: z.string().meta({ title: 'Title', description: 'Human-readable name.', examples: ['Filesystem'] }),
    description: z.string().meta({ title: 'Description', description: 'What the server is and what state it holds.' }),
    implementation: z
      .strictObject({
        kind: z.enum(['npm', 'builtin', 'simulation', 'virtual']).meta({
          title: 'Kind',
          description:
            '`npm`: an official server from the npm registry; `builtin`: our MCP server over a real backend (git, Postgres); `simulation`: a faithful local simulation of a hosted service; `virtual`: no server (answer checks).',
        }),
        package: z.string().optional().meta({ title: 'Package', description: 'The npm package, for `npm`.', examples: ['@modelcontextprotocol/server-filesystem'] }),
        version: z.string().optional().meta({ title: 'Version', description: 'The pinned package version.', examples: ['2026.8.31'] }),
        simulates: z.string().optional().meta({ title: 'Simulates', description: 'What a simulation stands in for.', examples: ['GitHub MCP server (github/github-mcp-server)'] }),
      })
      .meta({ title: 'Implementation', description: 'What runs behind the namespace.' }),
    tools: z.array(ToolDeclaration).meta({ title: 'Tools', description: "The namespace's tools, as its MCP server lists them." }),
    predicates: z.array(PredicateDeclaration).min(1).meta({ title: 'Predicates', description: "The namespace's predicate catalog." }),
    state_schema: JsonSchemaObject.meta({
      title: 'State schema',
      description:
        "JSON Schema of the namespace's state: `initial_state.<ns>` is checked against it, and the server's snapshot after a run has the same shape, so predicates read both alike.",
    }),
  })
  .meta({
    id: 'ServerFile',
    title: 'MCPBench namespace',
    description: 'One server namespace: its tools, its predicates and its state schema.',
  });

export type ServerFile = z.infer<typeof ServerFileSchema>;
export type ToolDeclaration = z.infer<typeof ToolDeclaration>;
export type PredicateDeclaration = z.infer<typeof PredicateDeclaration>;
