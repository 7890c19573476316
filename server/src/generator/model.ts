/**
 * The shapes of template grammars (`templates/<ns>/<name>.template.json`) and of review batch manifests
 * (`batches/<template id>-<seed>/batch.json`), in zod. `scripts/emit-schemas.ts` emits
 * `schemas/template.schema.json` and `schemas/batch.schema.json` from these, so the sampler, the template
 * linter and editors read one definition. Every field carries a title, a description and examples: hover and
 * completion show them to template authors.
 *
 * Placeholders: `{{name}}` (or `{{name.field}}`, `{{name.0}}` into a pool of objects or a list) may stand in
 * any string of the task body, in object keys, in grammar alternatives and in derived parameters. A
 * placeholder that is the whole string keeps the parameter's JSON type (`"max_steps": "{{steps}}"` becomes a
 * number); inside a longer string, or in a key, it is interpolated as text. A number that a schema position
 * wants as a string is therefore derived as a string (`{ "format": "{{n}}" }`) and that parameter placed:
 * the template says what type it produces, the sampler never guesses from schemas.
 */
import { z } from 'zod';
import { Namespace } from '../mcp/server-file.ts';
import { TASK_ID_PATTERN } from '../tasks/vocabulary.ts';

/** A parameter or production name: what `{{name}}` and `<name>` refer to. */
export const IDENTIFIER_PATTERN = /^[A-Za-z_][A-Za-z0-9_]*$/;
export const TEMPLATE_ID_PATTERN = TASK_ID_PATTERN;
/** `YYYY-MM-DD`: how date bounds are written in templates. */
export const ISO_DATE_PATTERN = /^\d{4}-\d{2}-\d{2}$/;

const Json = z.unknown();

const Placeholderable = (title: string, description: string, examples: unknown[]) =>
  z.union([z.number(), z.string()]).meta({ title, description: `${description} A number, or a placeholder \`{{param}}\` naming a numeric parameter.`, examples });

// ---- Parameter kinds: an object with one kind key (like a predicate leaf), so the kind is readable at a glance.

export const PoolParameter = z
  .strictObject({
    pool: z.array(Json).min(1).meta({
      title: 'Pool',
      description:
        'The values to draw from, uniformly unless `weights` says otherwise. Values may be any JSON: objects let related values travel together (`{{route.origin}}`, `{{route.dest}}`).',
      examples: [['report.txt', 'notes.md'], [{ origin: 'LON', dest: 'PAR' }, { origin: 'NYC', dest: 'BOS' }]],
    }),
    weights: z.array(z.number().positive()).optional().meta({
      title: 'Weights',
      description: 'Relative weight of each pool value (same length as `pool`).',
      examples: [[3, 1]],
    }),
  })
  .meta({
    id: 'PoolParameter',
    title: 'Pool parameter',
    description: 'A value drawn from a fixed list.',
    examples: [{ pool: ['Alice', 'Bob', 'Chen'] }],
  });

export const IntParameter = z
  .strictObject({
    int: z
      .strictObject({
        min: z.int().meta({ title: 'Minimum', description: 'Smallest value (inclusive).', examples: [1] }),
        max: z.int().meta({ title: 'Maximum', description: 'Largest value (inclusive).', examples: [10] }),
        step: z.int().min(1).optional().meta({ title: 'Step', description: 'Values are `min + k * step` (default 1).', examples: [5] }),
      })
      .meta({ title: 'Integer range', description: 'Bounds and step of the range.', examples: [{ min: 100, max: 900, step: 10 }] }),
  })
  .meta({
    id: 'IntParameter',
    title: 'Integer parameter',
    description: 'An integer drawn uniformly from `min..max` in steps of `step`.',
    examples: [{ int: { min: 2, max: 5 } }],
  });

export const DecimalParameter = z
  .strictObject({
    decimal: z
      .strictObject({
        min: z.number().meta({ title: 'Minimum', description: 'Smallest value (inclusive).', examples: [9.5] }),
        max: z.number().meta({ title: 'Maximum', description: 'Largest value (inclusive).', examples: [99.5] }),
        step: z.number().positive().meta({
          title: 'Step',
          description: 'Values are `min + k * step`, rounded to the decimals of `step` (so 0.01 gives cents).',
          examples: [0.5, 0.01],
        }),
      })
      .meta({ title: 'Decimal range', description: 'Bounds and step of the range.', examples: [{ min: 10, max: 50, step: 0.25 }] }),
  })
  .meta({
    id: 'DecimalParameter',
    title: 'Decimal parameter',
    description: 'A decimal number drawn uniformly from `min..max` in steps of `step`.',
    examples: [{ decimal: { min: 19.99, max: 89.99, step: 1 } }],
  });

export const DATE_FORMAT_TOKENS = ['YYYY', 'MMMM', 'MMM', 'MM', 'M', 'DD', 'D', 'dddd', 'ddd'] as const;

export const DateFormat = z.string().min(1).meta({
  title: 'Date format',
  description:
    'How the date is written: tokens `YYYY`, `MM`/`M` (month number), `MMM`/`MMMM` (Jan/January), `DD`/`D` (day), `ddd`/`dddd` (Mon/Monday); anything else is literal. Default `YYYY-MM-DD`.',
  examples: ['YYYY-MM-DD', 'D MMMM YYYY', 'dddd, MMM D'],
});

export const DateParameter = z
  .strictObject({
    date: z
      .strictObject({
        from: z.string().regex(ISO_DATE_PATTERN).meta({ title: 'From', description: 'First possible date, YYYY-MM-DD (inclusive).', examples: ['2026-01-01'] }),
        to: z.string().regex(ISO_DATE_PATTERN).meta({ title: 'To', description: 'Last possible date, YYYY-MM-DD (inclusive).', examples: ['2026-03-31'] }),
        format: DateFormat.optional(),
      })
      .meta({ title: 'Date window', description: 'The window and the written format.', examples: [{ from: '2026-01-01', to: '2026-06-30' }] }),
  })
  .meta({
    id: 'DateParameter',
    title: 'Date parameter',
    description: 'A calendar date drawn uniformly from a window, written in `format`. Dates compare by date in `ordered`, whatever the format.',
    examples: [{ date: { from: '2026-01-05', to: '2026-02-27', format: 'YYYY-MM-DD' } }],
  });

export const PatternParameter = z
  .strictObject({
    pattern: z.string().min(1).meta({
      title: 'Pattern',
      description:
        'A small regular pattern: literal characters (`\\` escapes one), classes `[A-Z0-9_]`, `\\d`, `\\w`, alternatives in a group `(ab|cd)`, and bounded repeats `{m}`, `{m,n}`, `?`. No `*` or `+`: every pattern is bounded.',
      examples: ['[A-Z]{2}-[0-9]{3}', '(INC|REQ)-\\d{4,5}'],
    }),
  })
  .meta({
    id: 'PatternParameter',
    title: 'Pattern parameter',
    description: 'A string drawn uniformly, character by character, from a small regular pattern.',
    examples: [{ pattern: '[A-Z]{2}-\\d{3}' }],
  });

export const ValueParameter = z
  .strictObject({
    value: Json.meta({
      title: 'Value',
      description: 'Any JSON; its strings may hold placeholders of other parameters (a whole-string placeholder keeps its type).',
      examples: ['{{route.origin}}', { name: '{{first}} {{last}}' }],
    }),
  })
  .meta({
    id: 'ValueParameter',
    title: 'Value parameter',
    description: 'A fixed value, or a structure built from other parameters.',
    examples: [{ value: '{{first}} {{last}}' }],
  });

const Operands = z.array(z.union([z.number(), z.string()])).min(1).meta({
  title: 'Operands',
  description: 'Numbers or placeholders; a placeholder naming a list (or an array) contributes all its elements.',
  examples: [['{{a}}', '{{b}}', 10], ['{{flights}}']],
});

const ByField = z.string().regex(IDENTIFIER_PATTERN).meta({
  title: 'By field',
  description: 'For a list of objects: the field whose value counts.',
  examples: ['price'],
});

export const MinParameter = z
  .strictObject({ min: Operands, by: ByField.optional() })
  .meta({ id: 'MinParameter', title: 'min', description: 'The smallest operand.', examples: [{ min: ['{{a}}', '{{b}}'] }] });
export const MaxParameter = z
  .strictObject({ max: Operands, by: ByField.optional() })
  .meta({ id: 'MaxParameter', title: 'max', description: 'The largest operand.', examples: [{ max: ['{{a}}', '{{b}}'] }] });
export const SumParameter = z
  .strictObject({ sum: Operands, by: ByField.optional() })
  .meta({ id: 'SumParameter', title: 'sum', description: 'The sum of the operands (rounded to 10 decimals, so 0.1 + 0.2 is 0.3).', examples: [{ sum: ['{{price}}', '{{fee}}'] }] });

export const ArgminParameter = z
  .strictObject({
    argmin: z.string().meta({ title: 'List', description: 'A placeholder naming a list (or array-valued pool) of objects.', examples: ['{{flights}}'] }),
    by: ByField,
  })
  .meta({
    id: 'ArgminParameter',
    title: 'argmin',
    description: 'The element of a list whose `by` field is smallest (the first on a tie): "the cheapest flight".',
    examples: [{ argmin: '{{flights}}', by: 'price' }],
  });
export const ArgmaxParameter = z
  .strictObject({
    argmax: z.string().meta({ title: 'List', description: 'A placeholder naming a list (or array-valued pool) of objects.', examples: ['{{flights}}'] }),
    by: ByField,
  })
  .meta({
    id: 'ArgmaxParameter',
    title: 'argmax',
    description: 'The element of a list whose `by` field is largest (the first on a tie).',
    examples: [{ argmax: '{{flights}}', by: 'price' }],
  });

export const FormatParameter = z
  .strictObject({
    format: z.union([z.string(), z.array(z.union([z.string(), z.number()])).min(1)]).meta({
      title: 'Format',
      description:
        'A template string (`"{{first}}.{{last}}@example.com"`), or printf-style `["%s-%03d", "{{a}}", "{{n}}"]` with `%s`, `%d`, `%f`, `%.2f`, `%05d`, `%%`.',
      examples: ['{{first}}.{{last}}@example.com', ['INV-%05d', '{{n}}'], ['%.2f EUR', '{{price}}']],
    }),
  })
  .meta({ id: 'FormatParameter', title: 'format', description: 'A string built from other parameters.', examples: [{ format: 'Q{{quarter}} report' }] });

export const UpperParameter = z
  .strictObject({ upper: z.string().meta({ title: 'Text', description: 'A template string, upper-cased.', examples: ['{{city}}'] }) })
  .meta({ id: 'UpperParameter', title: 'upper', description: 'Upper-cases a string.', examples: [{ upper: '{{code}}' }] });
export const LowerParameter = z
  .strictObject({ lower: z.string().meta({ title: 'Text', description: 'A template string, lower-cased.', examples: ['{{name}}'] }) })
  .meta({ id: 'LowerParameter', title: 'lower', description: 'Lower-cases a string.', examples: [{ lower: '{{first}}.{{last}}' }] });

export const PickParameter = z
  .strictObject({
    pick: z.union([z.array(Json).min(1), z.string()]).meta({
      title: 'From',
      description: 'A literal pool, or a placeholder naming a list or array-valued parameter.',
      examples: [['London', 'Paris', 'Boston'], '{{flights}}'],
    }),
    index: Placeholderable('Index', 'The 0-based index into the pool.', ['{{city_index}}', 0]),
  })
  .meta({
    id: 'PickParameter',
    title: 'pick',
    description: 'The element at `index` of a pool: parallel pools stay aligned by sharing one index parameter.',
    examples: [{ pick: ['London', 'Paris'], index: '{{city}}' }],
  });

export const DateAddParameter = z
  .strictObject({
    date_add: z.string().meta({
      title: 'Date',
      description: 'A placeholder naming a date parameter (or another `date_add`), or a literal YYYY-MM-DD.',
      examples: ['{{departure}}', '2026-01-05'],
    }),
    days: Placeholderable('Days', 'Days to add (negative goes back).', [3, '{{nights}}']),
    format: DateFormat.optional(),
  })
  .meta({
    id: 'DateAddParameter',
    title: 'date_add',
    description: 'A date some days after (or before) another; written in `format` (default: the source date\'s format).',
    examples: [{ date_add: '{{departure}}', days: '{{nights}}' }],
  });

/** The kinds a list item's field may use: drawn per element. */
export const FieldParameter = z
  .union([PoolParameter, IntParameter, DecimalParameter, DateParameter, PatternParameter, ValueParameter])
  .meta({
    id: 'FieldParameter',
    title: 'List field',
    description: 'How one field of each list element is drawn: a pool, a range, a date, a pattern, or a value (placeholders of top-level parameters).',
    examples: [{ pattern: '[A-Z]{2}-\\d{3}' }, { value: '{{route.origin}}' }],
  });

/** The most elements a list parameter may draw: a task's state, not a data set. */
export const MAX_LIST_LENGTH = 1000;
/** The most variants one `generate` may ask for (a batch is for human review). */
export const MAX_VARIANTS = 100_000;

export const ListParameter = z
  .strictObject({
    list: z
      .strictObject({
        length: z
          .union([
            z.int().min(0).max(MAX_LIST_LENGTH),
            z.strictObject({
              min: z.int().min(0).max(MAX_LIST_LENGTH).meta({ title: 'Minimum', description: 'Fewest elements.', examples: [2] }),
              max: z.int().min(0).max(MAX_LIST_LENGTH).meta({ title: 'Maximum', description: `Most elements (at most ${MAX_LIST_LENGTH}).`, examples: [5] }),
            }),
          ])
          .meta({ title: 'Length', description: `How many elements: a number, or \`{min, max}\` drawn uniformly; at most ${MAX_LIST_LENGTH}.`, examples: [3, { min: 2, max: 5 }] }),
        fields: z.record(z.string().regex(IDENTIFIER_PATTERN), FieldParameter).meta({
          title: 'Fields',
          description: 'Each element is an object with these fields, each drawn independently per element (in this order).',
          examples: [{ id: { pattern: '[A-Z]{2}-\\d{3}' }, price: { int: { min: 80, max: 900, step: 10 } } }],
        }),
        distinct: z.array(z.string().regex(IDENTIFIER_PATTERN)).optional().meta({
          title: 'Distinct fields',
          description: 'Fields whose values differ between all elements (ids, prices that must not tie).',
          examples: [['id', 'price']],
        }),
      })
      .meta({
        title: 'List',
        description: 'Length, fields and distinct fields of the list.',
        examples: [{ length: 3, fields: { id: { pattern: 'F\\d{3}' }, price: { int: { min: 50, max: 500 } } }, distinct: ['id'] }],
      }),
  })
  .meta({
    id: 'ListParameter',
    title: 'List parameter',
    description:
      'A list of objects with drawn fields, e.g. the N flights of a route. A whole-string placeholder `"{{flights}}"` places the array; `argmin`/`argmax`/`pick` select elements.',
    examples: [{ list: { length: { min: 2, max: 4 }, fields: { id: { pattern: '[A-Z]{2}-\\d{3}' }, price: { int: { min: 80, max: 900 } } }, distinct: ['id', 'price'] } }],
  });

/** Kind key → its schema; the first key of a parameter object that is a kind selects the branch. */
export const PARAMETER_KINDS = {
  pool: PoolParameter,
  int: IntParameter,
  decimal: DecimalParameter,
  date: DateParameter,
  pattern: PatternParameter,
  list: ListParameter,
  value: ValueParameter,
  min: MinParameter,
  max: MaxParameter,
  sum: SumParameter,
  argmin: ArgminParameter,
  argmax: ArgmaxParameter,
  format: FormatParameter,
  upper: UpperParameter,
  lower: LowerParameter,
  pick: PickParameter,
  date_add: DateAddParameter,
} as const;
export type ParameterKind = keyof typeof PARAMETER_KINDS;
/** Kinds computed from other parameters (the rest are drawn). */
export const DERIVED_KINDS: readonly ParameterKind[] = ['value', 'min', 'max', 'sum', 'argmin', 'argmax', 'format', 'upper', 'lower', 'pick', 'date_add'];

export const ParameterSpec = z
  .union([
    PoolParameter,
    IntParameter,
    DecimalParameter,
    DateParameter,
    PatternParameter,
    ListParameter,
    ValueParameter,
    MinParameter,
    MaxParameter,
    SumParameter,
    ArgminParameter,
    ArgmaxParameter,
    FormatParameter,
    UpperParameter,
    LowerParameter,
    PickParameter,
    DateAddParameter,
  ])
  .meta({
    id: 'Parameter',
    title: 'Parameter',
    description:
      'One template parameter: drawn (`pool`, `int`, `decimal`, `date`, `pattern`, `list`) or derived from others (`value`, `min`, `max`, `sum`, `argmin`, `argmax`, `format`, `upper`, `lower`, `pick`, `date_add`).',
    examples: [{ pool: ['report.txt', 'notes.md'] }, { int: { min: 2, max: 6 } }, { format: '{{file}}.bak' }],
  });

export const Constraint = z
  .union([
    z.strictObject({
      distinct: z.array(z.string().regex(IDENTIFIER_PATTERN)).min(2).meta({
        title: 'Distinct',
        description: 'Parameters whose values must all differ (compared as canonical JSON).',
        examples: [['source_folder', 'target_folder']],
      }),
    }),
    z.strictObject({
      ordered: z.array(z.string().regex(IDENTIFIER_PATTERN)).min(2).meta({
        title: 'Ordered',
        description: 'Parameters in strictly increasing order: numbers by value, dates by date, strings by code point.',
        examples: [['low', 'high'], ['check_in', 'check_out']],
      }),
    }),
  ])
  .meta({
    id: 'Constraint',
    title: 'Constraint',
    description: 'A condition over drawn and derived parameters; samples that break it are redrawn (a bounded number of times).',
    examples: [{ distinct: ['a', 'b'] }, { ordered: ['start', 'end'] }],
  });

export const Alternative = z
  .union([
    z.string(),
    z.strictObject({
      text: z.string().meta({ title: 'Text', description: 'The alternative: words, `{{param}}` placeholders and `<production>` references.', examples: ['Please <verb> {{file}}.'] }),
      weight: z.number().positive().meta({ title: 'Weight', description: 'Relative weight (a plain string weighs 1).', examples: [3] }),
    }),
  ])
  .meta({
    id: 'Alternative',
    title: 'Alternative',
    description: 'One way to say a production: a string (weight 1), or `{ "text", "weight" }`.',
    examples: ['Move {{file}} into <folder_phrase>.', { text: 'Book <flight_phrase> for {{passenger}}.', weight: 2 }],
  });

export const Grammar = z
  .strictObject({
    start: z.string().regex(IDENTIFIER_PATTERN).meta({
      title: 'Start symbol',
      description: "The production the goal is expanded from.",
      examples: ['goal'],
    }),
    productions: z.record(z.string().regex(IDENTIFIER_PATTERN), z.array(Alternative).min(1)).meta({
      title: 'Productions',
      description:
        'Name → weighted alternatives. In an alternative, `<name>` expands another production (no cycles), `{{param}}` interpolates a parameter.',
      examples: [{ goal: ['<verb> {{file}} into {{folder}}.', 'Please <verb> {{file}} to the {{folder}} folder.'], verb: ['Move', { text: 'Relocate', weight: 0.5 }] }],
    }),
  })
  .meta({
    id: 'Grammar',
    title: 'Goal grammar',
    description: "Productions for the goal's phrasing; the goal is the expansion of `start`, so one template yields many natural goals.",
    examples: [{ start: 'goal', productions: { goal: ['<verb> {{file}} into {{folder}}.'], verb: ['Move', { text: 'Please move', weight: 2 }] } }],
  });

const bodyField = (title: string, description: string, examples: unknown[]) =>
  Json.meta({ title, description: `${description} Placeholders allowed.`, examples });

export const TaskBody = z
  .strictObject({
    server: bodyField('Server', 'The namespace, or an array of namespaces.', ['filesystem', ['github', 'chat']]),
    category: bodyField('Category', '`single-tool`, `composition` or `recovery`.', ['single-tool']),
    difficulty: bodyField('Difficulty', '`easy`, `medium` or `hard`.', ['easy']),
    max_steps: bodyField('Step budget', 'The most tool calls the agent may make.', [6, '{{steps}}']),
    goal: bodyField('Goal', 'The goal, when the template has no `grammar` (a grammar writes the goal itself).', ['Move {{file}} into {{folder}}.']).optional(),
    initial_state: bodyField('Initial state', 'Keyed by namespace; placeholders work in keys too (file paths).', [
      { filesystem: { files: { '{{file}}': '{{content}}', '{{folder}}/': null } } },
    ]),
    available_tools: bodyField('Available tools', 'Qualified tool names.', [['filesystem.move_file']]),
    success_predicate: bodyField('Success predicate', 'The predicate over the end state.', [{ 'filesystem.fileExists': { path: '{{folder}}/{{file}}' } }]),
    reference_solutions: bodyField('Reference solutions', 'Sequences that must pass.', [
      [[{ tool: 'filesystem.move_file', arguments: { source: '{{file}}', destination: '{{folder}}/{{file}}' } }]],
    ]),
    counterexamples: bodyField('Counterexamples', 'Sequences that must fail.', [
      [[{ tool: 'filesystem.write_file', arguments: { path: '{{folder}}/{{file}}', content: '{{content}}' } }]],
    ]).optional(),
    equivalent_mutants: bodyField('Equivalent mutants', 'Mutants of the reference solutions that pass and should, each with its reason.', [
      [{ mutant: 'ref1.swap1-2', reason: 'The two bookings are independent.' }],
    ]).optional(),
    tags: bodyField('Tags', 'Free-form labels.', [['generated', 'files']]).optional(),
    timeout_s: bodyField('Timeout', 'Wall-clock limit of one episode, in seconds.', [120]).optional(),
  })
  .meta({
    id: 'TaskBody',
    title: 'Task body',
    description:
      'The task with placeholders: every key of a task except `id` (made from the template id and the variant\'s hash) and `template` (the provenance, written by the generator).',
    examples: [
      {
        server: 'filesystem',
        category: 'single-tool',
        difficulty: 'easy',
        max_steps: 6,
        initial_state: { filesystem: { files: { '{{file}}': 'Q3 numbers', '{{folder}}/': null } } },
        available_tools: ['filesystem.move_file'],
        success_predicate: { 'filesystem.fileExists': { path: '{{folder}}/{{file}}' } },
        reference_solutions: [[{ tool: 'filesystem.move_file', arguments: { source: '{{file}}', destination: '{{folder}}/{{file}}' } }]],
      },
    ],
  });

export const TemplateSchema = z
  .strictObject({
    $schema: z.string().optional().meta({
      title: 'JSON Schema',
      description: 'Optional link to the template schema, for editors.',
      examples: ['../../schemas/template.schema.json'],
    }),
    id: z.string().regex(TEMPLATE_ID_PATTERN).meta({
      title: 'Template id',
      description: 'Unique id of the template; variant ids are `<template id>-<first 8 hex digits of the variant hash>`.',
      examples: ['travel-cheapest-flight'],
    }),
    version: z.string().min(1).meta({
      title: 'Version',
      description: 'Bump it when a change alters what the template generates; provenance records it.',
      examples: ['1', '2026-06'],
    }),
    namespaces: z.array(Namespace).min(1).meta({
      title: 'Namespaces',
      description: 'The namespaces the generated tasks use (the folder under templates/ is the first).',
      examples: [['travel'], ['github', 'chat']],
    }),
    description: z.string().min(1).meta({
      title: 'Description',
      description: 'What family of tasks the template generates, for reviewers.',
      examples: ['Book the cheapest of N flights on a route and date for a passenger.'],
    }),
    parameters: z.record(z.string().regex(IDENTIFIER_PATTERN), ParameterSpec).meta({
      title: 'Parameters',
      description: 'Name → how its value is drawn or derived. Derived parameters may refer to any other parameter (no cycles).',
      examples: [{ file: { pool: ['report.txt', 'notes.md'] }, folder: { pool: ['archive', 'old'] } }],
    }),
    constraints: z.array(Constraint).optional().meta({
      title: 'Constraints',
      description: 'Conditions every sample meets (redrawn until it does, up to `max_tries`).',
      examples: [[{ distinct: ['source', 'target'] }, { ordered: ['low', 'high'] }]],
    }),
    max_tries: z.int().min(1).max(100000).optional().meta({
      title: 'Max tries',
      description: 'How many draws one variant may take to meet the constraints before sampling fails (default 1000).',
      examples: [1000],
    }),
    grammar: Grammar.optional(),
    task: TaskBody,
  })
  .meta({
    id: 'Template',
    title: 'MCPBench template grammar',
    description:
      'A family of tasks: bounded parameters with constraints, a grammar for the goal\'s phrasing, and the task body with `{{param}}` placeholders. `mcpbench generate` samples it with a seed.',
  });

export type Template = z.infer<typeof TemplateSchema>;
export type ParameterSpec = z.infer<typeof ParameterSpec>;
export type FieldParameter = z.infer<typeof FieldParameter>;
export type Constraint = z.infer<typeof Constraint>;
export type Grammar = z.infer<typeof Grammar>;
export type Alternative = z.infer<typeof Alternative>;

// ---- Review batches: batches/<template id>-<seed>/batch.json

export const CandidateCheck = z
  .strictObject({
    ok: z.boolean().meta({ title: 'OK', description: 'The candidate passed `mcpbench check`.', examples: [true] }),
    problems: z.array(z.string()).meta({
      title: 'Problems',
      description: 'What check found (empty when ok).',
      examples: [['counterexample 1 passes: the predicate is not specific enough']],
    }),
  })
  .meta({
    title: 'Check result',
    description: 'The self-test: noop fails, references pass, counterexamples fail, recoverable under faults.',
    examples: [{ ok: true, problems: [] }],
  });

export const CandidateReview = z
  .strictObject({
    decision: z.enum(['accepted', 'rejected']).meta({ title: 'Decision', description: 'Whether the candidate may enter a task set.', examples: ['accepted'] }),
    reason: z.string().meta({ title: 'Reason', description: 'Why, in a sentence.', examples: ['Natural goal, predicate specific.'] }),
    reviewer: z.string().optional().meta({ title: 'Reviewer', description: 'Who decided.', examples: ['ana'] }),
    at: z.string().meta({ title: 'At', description: 'When (ISO 8601).', examples: ['2026-11-20T10:00:00.000Z'] }),
  })
  .meta({
    title: 'Review',
    description: "A person's decision on the candidate; absent until reviewed.",
    examples: [{ decision: 'rejected', reason: 'The goal gives away the flight id.', reviewer: 'ana', at: '2026-11-20T10:00:00.000Z' }],
  });

export const BatchCandidate = z
  .strictObject({
    file: z.string().meta({ title: 'File', description: 'The candidate task file, relative to the batch folder.', examples: ['travel-cheapest-flight-1a2b3c4d.json'] }),
    task_id: z.string().regex(TASK_ID_PATTERN).meta({ title: 'Task id', description: "The candidate's task id.", examples: ['travel-cheapest-flight-1a2b3c4d'] }),
    sha256: z.string().regex(/^[0-9a-f]{64}$/).meta({
      title: 'SHA-256',
      description: 'Canonical hash (RFC 8785 JSON, SHA-256) of the file as written, provenance included; `mcpbench hash` prints the same.',
      examples: ['5d41402abc4b2a76b9719d911017c5925d41402abc4b2a76b9719d911017c592'],
    }),
    parameters: z.record(z.string(), z.unknown()).meta({
      title: 'Parameters',
      description: 'The drawn parameter values, as in the task\'s `template.parameters` (derived ones follow from them).',
      examples: [{ passenger: 'Bob', route: { origin: 'LON', dest: 'PAR' } }],
    }),
    seed: z.int().meta({ title: 'Seed', description: "The variant's own seed: sampling the template with it gives this candidate again.", examples: [2841170381] }),
    lint: z
      .strictObject({
        errors: z.int().min(0).meta({ title: 'Errors', description: 'Lint errors (a written candidate has none).', examples: [0] }),
        warnings: z.int().min(0).meta({ title: 'Warnings', description: 'Lint warnings.', examples: [0] }),
      })
      .meta({ title: 'Lint result', description: 'Counts of `mcpbench lint` findings on the candidate file.', examples: [{ errors: 0, warnings: 1 }] }),
    check: CandidateCheck.optional(),
    review: CandidateReview.optional(),
  })
  .meta({ id: 'BatchCandidate', title: 'Candidate', description: 'One generated task awaiting review.' });

export const BatchManifestSchema = z
  .strictObject({
    $schema: z.string().optional().meta({ title: 'JSON Schema', description: 'Link to batch.schema.json.', examples: ['../../schemas/batch.schema.json'] }),
    template: z
      .strictObject({
        id: z.string().meta({ title: 'Template id', description: 'The template sampled.', examples: ['travel-cheapest-flight'] }),
        version: z.string().meta({ title: 'Template version', description: "The template's version.", examples: ['1'] }),
        file: z.string().meta({ title: 'Template file', description: 'The template file, relative to the working folder of `generate`.', examples: ['templates/travel/cheapest-flight.template.json'] }),
      })
      .meta({
        title: 'Template',
        description: 'Which template the batch was generated from.',
        examples: [{ id: 'travel-cheapest-flight', version: '1', file: 'templates/travel/cheapest-flight.template.json' }],
      }),
    seed: z.int().meta({ title: 'Seed', description: 'The batch seed given to `generate --seed`.', examples: [1] }),
    count: z.int().min(0).max(MAX_VARIANTS).meta({ title: 'Count', description: `How many variants were asked for (\`--count\`, at most ${MAX_VARIANTS}).`, examples: [20] }),
    created_at: z.string().meta({ title: 'Created at', description: 'When the batch was generated (ISO 8601).', examples: ['2026-11-20T09:00:00.000Z'] }),
    dropped: z
      .strictObject({
        duplicates: z.int().min(0).meta({ title: 'Duplicates', description: 'Samples equal (by canonical hash, provenance aside) to an earlier one.', examples: [3] }),
        invalid: z.int().min(0).meta({ title: 'Invalid', description: 'Samples with lint errors, listed in `invalid` and not written.', examples: [0] }),
      })
      .meta({ title: 'Dropped', description: 'Samples not written.', examples: [{ duplicates: 2, invalid: 0 }] }),
    invalid: z
      .array(
        z.strictObject({
          task_id: z.string().meta({ title: 'Task id', description: 'The id the sample would have had.', examples: ['travel-cheapest-flight-0badcafe'] }),
          seed: z.int().meta({ title: 'Seed', description: "The sample's seed.", examples: [12] }),
          problems: z.array(z.string()).meta({ title: 'Problems', description: 'Its lint errors, as `path: code message`.', examples: [['max_steps: invalid-type `max_steps` must be an integer']] }),
        }),
      )
      .meta({
        title: 'Invalid samples',
        description: 'Samples that failed lint: reported here so the template can be fixed.',
        examples: [[{ task_id: 'fs-move-file-0badcafe', seed: 12, problems: ['7:16 invalid-value `max_steps` must be >= 1'] }]],
      }),
    check_run: z.string().optional().meta({ title: 'Check run', description: 'The check run folder (relative to the batch folder), with `--check`.', examples: ['check'] }),
    candidates: z.array(BatchCandidate).meta({
      title: 'Candidates',
      description: 'One entry per written candidate file, in generation order.',
      examples: [
        [
          {
            file: 'fs-move-file-394e9d97.json',
            task_id: 'fs-move-file-394e9d97',
            sha256: 'b86de7d10121768de7dee875cbf6ed5abb3925ed5e89c1c62e2d0f987b8aab0a',
            parameters: { file: 'draft.txt', folder: 'old' },
            seed: 2693262067,
            lint: { errors: 0, warnings: 0 },
          },
        ],
      ],
    }),
  })
  .meta({
    id: 'BatchManifest',
    title: 'MCPBench review batch',
    description:
      'A review batch written by `mcpbench generate`: one file per candidate and this manifest. Reviewers set each candidate\'s `review`; `mcpbench review accept` moves accepted ones into a task set.',
  });

export type BatchManifest = z.infer<typeof BatchManifestSchema>;
export type BatchCandidate = z.infer<typeof BatchCandidate>;
