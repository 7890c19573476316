/**
 * Seeding and snapshotting any namespace, whatever runs behind it: simulations keep `state.json` in the
 * sandbox, builtin and npm servers have their own runtime. Always out of band: before the server starts and
 * after it stopped, never through the agent's tools.
 */
import type { NamespaceInfo } from '../mcp/registry.ts';
import { assertValidState, seedSimulation, snapshotSimulation } from '../mcp/simulation.ts';

export function hasServer(info: NamespaceInfo): boolean {
  const plugin = info.plugin;
  return Boolean(plugin?.tools || plugin?.runtime?.createServer || plugin?.runtime?.launch);
}

/** Seeds an empty sandbox with a namespace's initial state (`undefined`: the empty state), validated first. */
export async function seedNamespace(info: NamespaceInfo, initialState: unknown, sandbox: string): Promise<void> {
  const plugin = info.plugin;
  if (plugin?.tools) return seedSimulation(info, initialState, sandbox);
  if (!plugin?.runtime) throw new Error(`namespace ${info.namespace} has no server to seed`);
  if (initialState !== undefined) assertValidState(info, initialState);
  await plugin.runtime.seed(plugin.normalizeState(initialState), sandbox);
}

export async function snapshotNamespace(info: NamespaceInfo, sandbox: string): Promise<unknown> {
  const plugin = info.plugin;
  if (plugin?.tools) return snapshotSimulation(info, sandbox);
  if (!plugin?.runtime) throw new Error(`namespace ${info.namespace} has no server to snapshot`);
  return plugin.runtime.snapshot(sandbox);
}
