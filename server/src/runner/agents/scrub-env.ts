/**
 * Removing a secret from the runner's own environment before an unconfined agent starts: from `process.env`
 * (so nothing spawned later inherits it) and from the process's initial environment block, which Linux shows
 * to every process of the same user at /proc/<pid>/environ whatever `process.env` says since. The block is
 * overwritten in place through /proc/self/mem (a process may write its own memory); where that is not
 * possible (not Linux), the result says so.
 */
import { closeSync, openSync, readFileSync, readSync, writeSync } from 'node:fs';

/** Removes `name` from process.env and blanks its value in /proc/self/environ; whether the block was scrubbed (or had no such entry). */
export function scrubEnvironment(name: string): { scrubbed: boolean; detail: string } {
  delete process.env[name];
  if (process.platform !== 'linux') return { scrubbed: false, detail: 'not Linux: the initial environment block was left as it is' };
  try {
    // Fields 50 and 51 of /proc/self/stat (proc(5)): env_start, env_end; the third field follows the command's ')'.
    const stat = readFileSync('/proc/self/stat', 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const start = Number(fields[50 - 3]);
    const end = Number(fields[51 - 3]);
    if (!Number.isSafeInteger(start) || !Number.isSafeInteger(end) || end <= start || end - start > 1 << 24) return { scrubbed: false, detail: 'the environment block could not be located' };
    const fd = openSync('/proc/self/mem', 'r+');
    try {
      const block = Buffer.alloc(end - start);
      readSync(fd, block, 0, block.length, start);
      const prefix = Buffer.from(`${name}=`);
      let found = 0;
      for (let at = 0; at < block.length; ) {
        const stop = block.indexOf(0, at);
        const entryEnd = stop === -1 ? block.length : stop;
        if (block.subarray(at, at + prefix.length).equals(prefix)) {
          // Keep the name (so the entry is still well-formed), blank the value.
          block.fill(0x2a, at + prefix.length, entryEnd);
          writeSync(fd, block, at + prefix.length, entryEnd - at - prefix.length, start + at + prefix.length);
          found++;
        }
        at = entryEnd + 1;
      }
      return { scrubbed: true, detail: found ? `blanked ${found} entr${found === 1 ? 'y' : 'ies'}` : 'not in the initial environment' };
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    return { scrubbed: false, detail: `the environment block could not be rewritten (${(error as Error).message})` };
  }
}
