/**
 * The CLI's `--reporter jsonl` stream as RunEvents. stdout arrives in chunks that split lines anywhere, so
 * lines are reassembled here; a line that is not a RunEvent (a stray log line) is handed back, not dropped
 * silently, so the output channel can show it.
 */
import type { RunEvent } from '../../server/src/engine/protocol.ts';

// A Record, so that a type added to the RunEvent union does not compile until it is listed here.
const KNOWN: Record<RunEvent['type'], true> = {
  'run-started': true,
  'episode-started': true,
  'call-started': true,
  call: true,
  fault: true,
  'episode-finished': true,
  notice: true,
  'run-finished': true,
};
const EVENT_TYPES = new Set(Object.keys(KNOWN));

export function parseRunEvent(line: string): RunEvent | undefined {
  const trimmed = line.trim();
  if (!trimmed.startsWith('{')) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(trimmed);
  } catch {
    return undefined;
  }
  if (typeof value !== 'object' || value === null) return undefined;
  const type = (value as { type?: unknown }).type;
  return typeof type === 'string' && EVENT_TYPES.has(type) ? (value as RunEvent) : undefined;
}

export class JsonlEventReader {
  private buffer = '';

  constructor(
    private readonly onEvent: (event: RunEvent) => void,
    private readonly onOtherLine: (line: string) => void = () => undefined,
  ) {}

  push(chunk: string): void {
    this.buffer += chunk;
    let newline: number;
    while ((newline = this.buffer.indexOf('\n')) >= 0) {
      const line = this.buffer.slice(0, newline);
      this.buffer = this.buffer.slice(newline + 1);
      this.handle(line);
    }
  }

  /** The process ended: a last line without its newline still counts. */
  end(): void {
    const rest = this.buffer;
    this.buffer = '';
    if (rest.trim()) this.handle(rest);
  }

  private handle(line: string): void {
    if (!line.trim()) return;
    const event = parseRunEvent(line);
    if (event) this.onEvent(event);
    else this.onOtherLine(line);
  }
}
