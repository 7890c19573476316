/** Every JSON Schema the project publishes under schemas/, emitted from the zod models of each layer. */
import { TASK_SCHEMA_ID, SERVER_SCHEMA_ID, TEMPLATE_SCHEMA_ID, BATCH_SCHEMA_ID, AGENT_CONFIG_SCHEMA_ID, PRICES_SCHEMA_ID } from '../tasks/json-schemas.ts';
import { z } from 'zod';
import { BatchManifestSchema, TemplateSchema } from '../generator/model.ts';
import { TaskSchema } from '../tasks/model.ts';
import { AgentConfigSchema } from '../runner/agents/settings.ts';
import { PriceFileSchema } from '../runner/agents/usage.ts';
import { ServerFileSchema } from '../mcp/server-file.ts';

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
