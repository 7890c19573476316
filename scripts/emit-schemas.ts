/**
 * Emits schemas/task.schema.json and schemas/server.schema.json from the zod definitions in
 * server/src/tasks/model.ts, and schemas/template.schema.json and schemas/batch.schema.json from
 * server/src/generator/model.ts, and schemas/agent-config.schema.json and schemas/prices.schema.json from the model
 * agents' settings and price file (server/src/runner/agents/). `npm run schemas` writes them; test/schemas.test.ts fails when the committed
 * files differ from a fresh emission.
 */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { emitJsonSchemas } from '../server/src/engine/json-schemas.ts';

const root = join(__dirname, '..');
for (const [file, schema] of Object.entries(emitJsonSchemas())) {
  writeFileSync(join(root, 'schemas', file), JSON.stringify(schema, null, 2) + '\n');
  console.log(`wrote schemas/${file}`);
}
