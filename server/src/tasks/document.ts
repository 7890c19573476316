/**
 * A JSON document parsed with positions: jsonc-parser's error-tolerant tree (so a broken file still yields
 * every node it can), its syntax errors, and offset ↔ line/character conversion. Offsets and characters
 * are UTF-16 code units, as in JavaScript strings and the LSP.
 */
import { findNodeAtLocation, getNodeValue, parseTree, printParseErrorCode, type Node, type ParseError } from 'jsonc-parser';
import { lineStarts, positionAt, type Position } from './positions.ts';
import type { JsonPath } from '../json-values.ts';

export type { Position };

export interface Span {
  offset: number;
  length: number;
}

export interface SyntaxProblem extends Span {
  message: string;
}

/**
 * How deep arrays and objects may nest in a task or template file. Real tasks stay far below it; a hostile
 * file 10,000 levels deep would otherwise overflow the stack of every recursive reader after the parser.
 */
export const MAX_JSON_DEPTH = 64;

/** The offset of the first `[` or `{` that opens a level beyond `max`, if any (strings skipped). */
export function tooDeepAt(text: string, max = MAX_JSON_DEPTH): number | undefined {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c) i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) {
      if (++depth > max) return i;
    } else if (c === 0x5d || c === 0x7d) depth--;
  }
  return undefined;
}

export class JsonDocument {
  readonly syntaxProblems: SyntaxProblem[];
  private tree: Node | undefined | null = null; // null: not built yet
  private parsedValue: unknown;
  private lineStarts: number[] | undefined;

  constructor(
    readonly uri: string,
    readonly text: string,
  ) {
    // Most documents are valid JSON and most valid tasks have no finding to place: the native parser gives
    // the value several times faster than building a position tree, which is then built only when a range
    // is asked for. Invalid JSON goes straight to the error-tolerant parser for its errors and its partial tree.
    // Nesting past the limit is refused before any parser sees it: no value, no tree, one precise problem.
    const deep = tooDeepAt(text);
    if (deep !== undefined) {
      this.tree = undefined;
      this.syntaxProblems = [{ offset: deep, length: 1, message: `nesting deeper than ${MAX_JSON_DEPTH} levels: no task or template needs this many nested arrays and objects` }];
      return;
    }
    try {
      this.parsedValue = JSON.parse(text);
      this.syntaxProblems = [];
    } catch {
      const errors: ParseError[] = [];
      this.tree = this.parse(errors);
      this.parsedValue = this.tree ? getNodeValue(this.tree) : undefined;
      this.syntaxProblems = errors.map((e) => {
        const message = describeParseError(e, text);
        if (message.startsWith('trailing comma')) {
          // jsonc-parser points at the bracket; the comma is what the author must delete.
          const comma = text.slice(0, e.offset).search(/,\s*$/);
          if (comma >= 0) return { offset: comma, length: 1, message };
        }
        return { offset: e.offset, length: e.length, message };
      });
    }
  }

  private parse(errors: ParseError[] = []): Node | undefined {
    // Task files are strict JSON: comments and trailing commas are reported, not silently accepted.
    return parseTree(this.text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
  }

  /** The position tree (built on first use). */
  get root(): Node | undefined {
    if (this.tree === null) this.tree = this.parse();
    return this.tree;
  }

  /** Whether the text parsed to some value (false for an empty or hopeless file). */
  get hasValue(): boolean {
    return this.syntaxProblems.length === 0 || this.root !== undefined;
  }

  /** The parsed value (best effort when there are syntax errors). */
  value(): unknown {
    return this.parsedValue;
  }

  nodeAt(path: JsonPath): Node | undefined {
    return this.root ? findNodeAtLocation(this.root, path) : undefined;
  }

  /** The key node of the property at `path` (its last segment must be a key), or undefined. */
  keyNodeAt(path: JsonPath): Node | undefined {
    const value = this.nodeAt(path);
    const property = value?.parent;
    return property?.type === 'property' ? property.children?.[0] : undefined;
  }

  positionAt(offset: number): Position {
    return positionAt((this.lineStarts ??= lineStarts(this.text)), offset);
  }

  offsetAt(position: Position): number {
    const starts = (this.lineStarts ??= lineStarts(this.text));
    const lineStart = starts[Math.min(Math.max(position.line, 0), starts.length - 1)]!;
    return Math.min(lineStart + position.character, this.text.length);
  }
}

const PARSE_ERROR_HELP: Record<string, string> = {
  InvalidSymbol: 'unexpected character',
  InvalidNumberFormat: 'invalid number',
  PropertyNameExpected: 'a property name in double quotes was expected',
  ValueExpected: 'a value was expected',
  ColonExpected: 'a colon was expected after the property name',
  CommaExpected: 'a comma was expected between items',
  CloseBraceExpected: 'a closing brace `}` was expected',
  CloseBracketExpected: 'a closing bracket `]` was expected',
  EndOfFileExpected: 'nothing may follow the top-level value',
  InvalidCommentToken: 'comments are not allowed in task files (strict JSON)',
  UnexpectedEndOfComment: 'unterminated comment',
  UnexpectedEndOfString: 'unterminated string: a closing `"` was expected',
  UnexpectedEndOfNumber: 'unexpected end of number',
  InvalidUnicode: 'invalid unicode escape',
  InvalidEscapeCharacter: 'invalid escape character in string',
  InvalidCharacter: 'invalid character in string (control characters must be escaped)',
};

function describeParseError(error: ParseError, text: string): string {
  const code = printParseErrorCode(error.error);
  if (code === 'ValueExpected' && error.offset >= text.length) return 'unexpected end of file: the JSON is truncated';
  if (code === 'InvalidSymbol' && text.slice(error.offset, error.offset + 2) === '//') {
    return 'comments are not allowed in task files (strict JSON)';
  }
  if ((code === 'PropertyNameExpected' || code === 'ValueExpected') && /^\s*[}\]]/.test(text.slice(error.offset)) && /,\s*$/.test(text.slice(0, error.offset))) {
    return 'trailing comma: remove the comma before this bracket';
  }
  return `JSON syntax error: ${PARSE_ERROR_HELP[code] ?? code}`;
}
