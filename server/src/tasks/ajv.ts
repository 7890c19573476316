import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

/**
 * One configuration for every JSON Schema the engine compiles: all errors (the linter reports each), formats
 * (dates and times in state schemas), and non-strict mode because tool schemas come from third-party servers.
 */
export function createAjv(): Ajv2020 {
  const ajv = new Ajv2020({ allErrors: true, strict: false, allowUnionTypes: true, verbose: true });
  addFormats(ajv);
  return ajv;
}
