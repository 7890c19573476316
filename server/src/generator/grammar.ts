/**
 * Goal grammars: productions of weighted alternatives whose text holds `<production>` references and
 * `{{param}}` placeholders. Expansion picks one alternative per production by weight, depth first, left to
 * right, so a seed always yields the same sentence. Cycles are refused when the grammar is compiled: every
 * expansion terminates, and the linter can say where a loop is.
 */
import type { Alternative, Grammar } from './model.ts';
import type { Random } from './random.ts';
import { McpbenchError } from '../errors.ts';

export interface NonterminalRef {
  name: string;
  /** Index of `<` in the alternative's text. */
  index: number;
  length: number;
}

const NONTERMINAL = /<([A-Za-z_][A-Za-z0-9_]*)>/g;

export function findNonterminals(text: string): NonterminalRef[] {
  if (!text.includes('<')) return [];
  return [...text.matchAll(NONTERMINAL)].map((m) => ({ name: m[1]!, index: m.index, length: m[0].length }));
}

export const alternativeText = (a: Alternative): string => (typeof a === 'string' ? a : a.text);
export const alternativeWeight = (a: Alternative): number => (typeof a === 'string' ? 1 : a.weight);

type Part = string | { production: string };

interface CompiledProduction {
  weights: number[];
  alternatives: Part[][];
}

/** How deep productions may refer to productions (start → a → b ...): expansion recurses this deep. */
export const MAX_GRAMMAR_DEPTH = 64;

export interface GrammarProblem {
  kind: 'undefined-start' | 'undefined-nonterminal' | 'cycle' | 'too-deep';
  message: string;
  /** Where: the production and alternative index (undefined for `start`), and the reference's place in the text. */
  production?: string;
  alternative?: number;
  ref?: NonterminalRef;
}

export class GrammarError extends McpbenchError {
  static override readonly code: string = 'template-grammar';
  constructor(readonly problems: GrammarProblem[]) {
    super(problems.map((p) => p.message).join('; '));
  }
}

export interface CompiledGrammar {
  /** The goal text for one draw, placeholders still in it. */
  expand(random: Random): string;
}

/** Undefined references and cycles, each placed at its reference. */
export function grammarProblems(grammar: Grammar): GrammarProblem[] {
  const problems: GrammarProblem[] = [];
  const productions = grammar.productions;
  if (!Object.hasOwn(productions, grammar.start)) {
    problems.push({ kind: 'undefined-start', message: `the start symbol \`${grammar.start}\` is not a production (productions: ${Object.keys(productions).join(', ') || 'none'})` });
  }
  for (const [name, alternatives] of Object.entries(productions)) {
    alternatives.forEach((alternative, i) => {
      for (const ref of findNonterminals(alternativeText(alternative))) {
        if (!Object.hasOwn(productions, ref.name)) {
          problems.push({ kind: 'undefined-nonterminal', message: `<${ref.name}> is not a production`, production: name, alternative: i, ref });
        }
      }
    });
  }
  // A cycle: a reference back to a production on the current depth-first path.
  // Past MAX_GRAMMAR_DEPTH the walk stops with a problem, so a hostile chain cannot overflow the stack here
  // or in the expansion.
  const state = new Map<string, 'active' | 'done'>();
  let tooDeep = false;
  const visit = (name: string, depth: number) => {
    state.set(name, 'active');
    (productions[name] ?? []).forEach((alternative, i) => {
      for (const ref of findNonterminals(alternativeText(alternative))) {
        if (!Object.hasOwn(productions, ref.name)) continue;
        const s = state.get(ref.name);
        if (s === 'active') problems.push({ kind: 'cycle', message: `<${ref.name}> loops back (${name} → ${ref.name}): productions may not refer to themselves, directly or not`, production: name, alternative: i, ref });
        else if (s === undefined && depth + 1 >= MAX_GRAMMAR_DEPTH) {
          if (!tooDeep) problems.push({ kind: 'too-deep', message: `<${ref.name}> is ${depth + 1} productions deep: productions may nest at most ${MAX_GRAMMAR_DEPTH} levels`, production: name, alternative: i, ref });
          tooDeep = true;
        } else if (s === undefined) visit(ref.name, depth + 1);
      }
    });
    state.set(name, 'done');
  };
  for (const name of Object.keys(productions)) if (!state.has(name)) visit(name, 0);
  return problems;
}

/** Productions `start` never reaches. */
export function unreachableProductions(grammar: Grammar): string[] {
  const reached = new Set<string>();
  const stack = [grammar.start];
  while (stack.length) {
    const name = stack.pop()!;
    if (reached.has(name) || !Object.hasOwn(grammar.productions, name)) continue;
    reached.add(name);
    for (const alternative of grammar.productions[name]!) for (const ref of findNonterminals(alternativeText(alternative))) stack.push(ref.name);
  }
  return Object.keys(grammar.productions).filter((name) => !reached.has(name));
}

export function compileGrammar(grammar: Grammar): CompiledGrammar {
  const problems = grammarProblems(grammar);
  if (problems.length) throw new GrammarError(problems);
  const compiled = new Map<string, CompiledProduction>();
  for (const [name, alternatives] of Object.entries(grammar.productions)) {
    compiled.set(name, {
      weights: alternatives.map(alternativeWeight),
      alternatives: alternatives.map((alternative) => {
        const text = alternativeText(alternative);
        const parts: Part[] = [];
        let at = 0;
        for (const ref of findNonterminals(text)) {
          if (ref.index > at) parts.push(text.slice(at, ref.index));
          parts.push({ production: ref.name });
          at = ref.index + ref.length;
        }
        if (at < text.length) parts.push(text.slice(at));
        return parts;
      }),
    });
  }
  const expand = (name: string, random: Random): string => {
    const production = compiled.get(name)!;
    const index = production.alternatives.length === 1 ? 0 : random.weighted(production.weights);
    let out = '';
    for (const part of production.alternatives[index]!) out += typeof part === 'string' ? part : expand(part.production, random);
    return out;
  };
  return { expand: (random) => expand(grammar.start, random) };
}
