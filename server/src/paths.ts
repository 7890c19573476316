import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

let cachedRoot: string | undefined;

/**
 * The folder holding the package's package.json (and schemas/). Found by walking up from this module, so it
 * works alike from the TypeScript sources (tests) and from the bundles in dist/.
 */
export function packageRoot(): string {
  if (cachedRoot) return cachedRoot;
  for (let dir = __dirname; ; dir = dirname(dir)) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && JSON.parse(readFileSync(manifest, 'utf8')).name === 'mcpbench-studio') {
      return (cachedRoot = dir);
    }
    if (dirname(dir) === dir) throw new Error(`cannot find the mcpbench-studio package above ${__dirname}`);
  }
}

export const schemasDir = (): string => join(packageRoot(), 'schemas');
