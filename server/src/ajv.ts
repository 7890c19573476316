import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';

export interface AjvOptions {
  /**
   * Compile for a quick first use: skip checking each schema against the meta-schema and skip ajv's optimising
   * pass over the generated code. For schemas the project's tests already compile in full (the task and template
   * schemas, every namespace file): a cold language server compiles hundreds of them while it lints a workspace.
   */
  quick?: boolean;
}

/**
 * One configuration for every JSON Schema the engine compiles: all errors (the linter reports each), formats
 * (dates and times in state schemas), and non-strict mode because tool schemas come from third-party servers.
 */
export function createAjv(options: AjvOptions = {}): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    strict: false,
    allowUnionTypes: true,
    verbose: true,
    ...(options.quick ? { validateSchema: false, code: { optimize: false } } : {}),
  });
  addFormats(ajv);
  return ajv;
}
