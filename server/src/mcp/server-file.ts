/**
 * The shape of a namespace file, schemas/servers/<ns>.json: its tools, predicates and initial-state schema
 * (zod, the one source of truth; `scripts/emit-schemas.ts` emits schemas/server.schema.json from it). The
 * task model (tasks/model.ts) builds on the names and JSON objects defined here.
 */
import { z } from 'zod';
import { NAMESPACE_PATTERN } from './names.ts';

export const JsonObject = z.record(z.string(), z.unknown());

export const Namespace = z.string().regex(NAMESPACE_PATTERN).meta({
  title: 'Namespace',
  description: 'A server namespace: the name of one file in schemas/servers/ (lower case, digits, underscores).',
  examples: ['filesystem', 'github', 'postgres'],
});

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
