/**
 * Strings from a small, always-bounded regular pattern: literals (`\` escapes one character), classes
 * `[A-Z0-9_]` with ranges, `\d` and `\w`, groups of alternatives `(ab|cd)`, and repeats `{m}`, `{m,n}`, `?`.
 * `*`, `+`, `.`, anchors and negated classes are refused rather than given a surprising meaning: a template
 * pattern says exactly which strings it can produce.
 */
import type { Random } from './random.ts';
import { McpbenchError } from '../errors.ts';

type Node =
  | { kind: 'chars'; chars: string[] } // one character out of these (a literal is a class of one)
  | { kind: 'group'; alternatives: Node[][] }
  | { kind: 'repeat'; node: Node; min: number; max: number };

export class PatternError extends McpbenchError {
  static override readonly code: string = 'template-pattern';
  constructor(
    message: string,
    /** Index in the pattern string where the problem is. */
    readonly index: number,
    readonly length = 1,
  ) {
    super(message);
  }
}

const DIGITS = [...'0123456789'];
const WORD = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_'];
/** Upper bound on `{m,n}`: keeps generated strings reasonable and catches typos like `{1,1000}`. */
const MAX_REPEAT = 64;

export interface CompiledPattern {
  source: string;
  generate(random: Random): string;
}

export function compilePattern(source: string): CompiledPattern {
  const parser = new Parser(source);
  const sequence = parser.parseAlternatives();
  if (parser.index < source.length) throw new PatternError('unbalanced `)`', parser.index);
  const nodes = sequence.length === 1 ? sequence[0]! : [{ kind: 'group', alternatives: sequence } as Node];
  return { source, generate: (random) => generateSequence(nodes, random) };
}

function generateSequence(nodes: Node[], random: Random): string {
  let out = '';
  for (const node of nodes) out += generateNode(node, random);
  return out;
}

function generateNode(node: Node, random: Random): string {
  switch (node.kind) {
    case 'chars':
      return node.chars.length === 1 ? node.chars[0]! : random.pick(node.chars);
    case 'group':
      return generateSequence(random.pick(node.alternatives), random);
    case 'repeat': {
      const times = random.int(node.min, node.max);
      let out = '';
      for (let i = 0; i < times; i++) out += generateNode(node.node, random);
      return out;
    }
  }
}

class Parser {
  index = 0;
  constructor(private readonly source: string) {}

  parseAlternatives(): Node[][] {
    const alternatives: Node[][] = [this.parseSequence()];
    while (this.source[this.index] === '|') {
      this.index++;
      alternatives.push(this.parseSequence());
    }
    return alternatives;
  }

  private parseSequence(): Node[] {
    const nodes: Node[] = [];
    while (this.index < this.source.length) {
      const c = this.source[this.index]!;
      if (c === '|' || c === ')') break;
      const atom = this.parseAtom();
      nodes.push(this.parseQuantifier(atom));
    }
    return nodes;
  }

  private parseAtom(): Node {
    const start = this.index;
    const c = this.source[this.index++]!;
    switch (c) {
      case '\\':
        return { kind: 'chars', chars: this.parseEscape(start) };
      case '[':
        return this.parseClass(start);
      case '(': {
        const alternatives = this.parseAlternatives();
        if (this.source[this.index] !== ')') throw new PatternError('unclosed group: `)` expected', start);
        this.index++;
        return { kind: 'group', alternatives };
      }
      case '*':
      case '+':
        throw new PatternError(`\`${c}\` repeats without bound: use {m,n}`, start);
      case '.':
        throw new PatternError('`.` (any character) is not supported: write `\\.` for a dot, or a class', start);
      case '^':
      case '$':
        throw new PatternError(`anchors are not needed: the whole pattern is generated (write \`\\${c}\` for the character)`, start);
      case '{':
      case '?':
        throw new PatternError(`\`${c}\` has nothing to repeat`, start);
      default:
        return { kind: 'chars', chars: [c] };
    }
  }

  private parseEscape(start: number): string[] {
    const e = this.source[this.index++];
    if (e === undefined) throw new PatternError('`\\` at the end of the pattern', start);
    if (e === 'd') return DIGITS;
    if (e === 'w') return WORD;
    if (/[A-Za-z0-9]/.test(e)) throw new PatternError(`\`\\${e}\` is not supported (only \\d and \\w); escape punctuation only`, start, 2);
    return [e];
  }

  private parseClass(start: number): Node {
    if (this.source[this.index] === '^') throw new PatternError('negated classes are not supported: list the characters', start);
    const chars: string[] = [];
    for (;;) {
      const c = this.source[this.index];
      if (c === undefined) throw new PatternError('unclosed class: `]` expected', start);
      if (c === ']') {
        this.index++;
        break;
      }
      const at = this.index;
      let first: string[];
      if (c === '\\') {
        this.index++;
        first = this.parseEscape(at);
      } else {
        this.index++;
        first = [c];
      }
      if (first.length === 1 && this.source[this.index] === '-' && this.source[this.index + 1] !== ']' && this.source[this.index + 1] !== undefined) {
        this.index++;
        let last = this.source[this.index++]!;
        if (last === '\\') last = this.source[this.index++] ?? '';
        const from = first[0]!.codePointAt(0)!;
        const to = last.codePointAt(0) ?? -1;
        if (to < from) throw new PatternError(`empty range ${first[0]}-${last}`, at, this.index - at);
        for (let code = from; code <= to; code++) chars.push(String.fromCodePoint(code));
      } else {
        chars.push(...first);
      }
    }
    const unique = [...new Set(chars)];
    if (unique.length === 0) throw new PatternError('empty class', start, this.index - start);
    return { kind: 'chars', chars: unique };
  }

  private parseQuantifier(node: Node): Node {
    const c = this.source[this.index];
    if (c === '?') {
      this.index++;
      return { kind: 'repeat', node, min: 0, max: 1 };
    }
    if (c === '*' || c === '+') throw new PatternError(`\`${c}\` repeats without bound: use {m,n}`, this.index);
    if (c !== '{') return node;
    const start = this.index;
    const match = /^\{(\d+)(?:,(\d+))?\}/.exec(this.source.slice(this.index));
    if (!match) throw new PatternError('a repeat is `{m}` or `{m,n}`', start);
    this.index += match[0].length;
    const min = Number(match[1]);
    const max = match[2] === undefined ? min : Number(match[2]);
    if (max < min) throw new PatternError(`repeat {${min},${max}}: the maximum is below the minimum`, start, match[0].length);
    if (max > MAX_REPEAT) throw new PatternError(`repeat {${match[0].slice(1, -1)}} is over ${MAX_REPEAT}`, start, match[0].length);
    return { kind: 'repeat', node, min, max };
  }
}
