// Writes docs/rules.md (every lint rule: severity, what it finds, how to fix it) from the rule registry.
//   npm run rules:docs
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { RULES_DOC_PATH, rulesMarkdown } from '../server/src/tasks/rule-docs.ts';

const target = join(__dirname, '..', RULES_DOC_PATH);
writeFileSync(target, rulesMarkdown());
console.log(`wrote ${target}`);
