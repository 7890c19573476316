import { z } from 'zod';
import { BatchManifestSchema, TemplateSchema } from '../generator/model.ts';
import { ServerFileSchema, TaskSchema } from './model.ts';
import { AgentConfigSchema } from '../runner/agents/settings.ts';
import { PriceFileSchema } from '../runner/agents/usage.ts';

export const TASK_SCHEMA_ID = 'https://mcpbench.dev/schemas/task.schema.json';
export const SERVER_SCHEMA_ID = 'https://mcpbench.dev/schemas/server.schema.json';
export const TEMPLATE_SCHEMA_ID = 'https://mcpbench.dev/schemas/template.schema.json';
export const BATCH_SCHEMA_ID = 'https://mcpbench.dev/schemas/batch.schema.json';
export const AGENT_CONFIG_SCHEMA_ID = 'https://mcpbench.dev/schemas/agent-config.schema.json';
export const PRICES_SCHEMA_ID = 'https://mcpbench.dev/schemas/prices.schema.json';

/** The JSON Schemas (2020-12) emitted from the zod model, by file name under schemas/. */
export function emitJsonSchemas(): Record<string, Record<string, unknown>> {
  const emit = (schema: z.ZodType, id: string) => {
    const json = z.toJSONSchema(schema, { target: 'draft-2020-12', io: 'input', cycles: 'ref' });
    const { $schema, ...rest } = json as Record<string, unknown>;
    return { $schema, $id: id, ...rest };
  };
  return {
    'task.schema.json': emit(TaskSchema, TASK_SCHEMA_ID),
    'server.schema.json': emit(ServerFileSchema, SERVER_SCHEMA_ID),
    'template.schema.json': emit(TemplateSchema, TEMPLATE_SCHEMA_ID),
    'batch.schema.json': emit(BatchManifestSchema, BATCH_SCHEMA_ID),
    'agent-config.schema.json': emit(AgentConfigSchema, AGENT_CONFIG_SCHEMA_ID),
    'prices.schema.json': emit(PriceFileSchema, PRICES_SCHEMA_ID),
  };
}
