export const TASK_SCHEMA_ID = 'https://mcpbench.dev/schemas/task.schema.json';
export const SERVER_SCHEMA_ID = 'https://mcpbench.dev/schemas/server.schema.json';
export const TEMPLATE_SCHEMA_ID = 'https://mcpbench.dev/schemas/template.schema.json';
export const BATCH_SCHEMA_ID = 'https://mcpbench.dev/schemas/batch.schema.json';
export const AGENT_CONFIG_SCHEMA_ID = 'https://mcpbench.dev/schemas/agent-config.schema.json';
export const PRICES_SCHEMA_ID = 'https://mcpbench.dev/schemas/prices.schema.json';
