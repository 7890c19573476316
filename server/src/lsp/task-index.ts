/**
 * The workspace's task ids: which files (by URI) hold which id, so the set-wide rule (ids unique across all
 * task files) can be checked as files are opened, edited and changed on disk. Open documents speak for
 * themselves; closed files for what is on disk.
 */
export class TaskIdIndex {
  private readonly idByUri = new Map<string, string>();
  private readonly urisById = new Map<string, Set<string>>();

  /**
   * Records the id of `uri` (undefined: it has none). Returns the files whose duplicate-id status may have
   * changed (every file sharing the old or the new id), empty when nothing changed.
   */
  set(uri: string, id: string | undefined): string[] {
    const old = this.idByUri.get(uri);
    if (old === id) return [];
    const affected = new Set<string>([uri]);
    if (old !== undefined) {
      const owners = this.urisById.get(old)!;
      owners.delete(uri);
      owners.forEach((u) => affected.add(u));
      if (owners.size === 0) this.urisById.delete(old);
      this.idByUri.delete(uri);
    }
    if (id !== undefined) {
      this.idByUri.set(uri, id);
      const owners = this.urisById.get(id) ?? new Set<string>();
      owners.forEach((u) => affected.add(u));
      owners.add(uri);
      this.urisById.set(id, owners);
    }
    return [...affected];
  }

  delete(uri: string): string[] {
    return this.set(uri, undefined);
  }

  id(uri: string): string | undefined {
    return this.idByUri.get(uri);
  }

  /** The other files with the same id as `uri`, sorted. */
  others(uri: string): string[] {
    const id = this.idByUri.get(uri);
    if (id === undefined) return [];
    return [...(this.urisById.get(id) ?? [])].filter((u) => u !== uri).sort();
  }

  get size(): number {
    return this.idByUri.size;
  }
}
