/**
 * The composition of a task set: how its tasks spread over namespaces, categories and difficulties, and how
 * many are cross-server, information tasks (checked through `answer` predicates), tasks with distractor tools,
 * and tasks with template provenance. `mcpbench stats` prints it; tasks/README.md is its Markdown form, so the
 * table a reader sees is computed, never typed.
 */
import type { Registry } from '../mcp/registry.ts';
import { namespaceOf } from '../mcp/names.ts';
import { leaves, parsePredicate } from '../predicates/tree.ts';
import { type Task } from './model.ts';
import { CATEGORIES, DIFFICULTIES, taskNamespaces } from './vocabulary.ts';

type Category = (typeof CATEGORIES)[number];
type Difficulty = (typeof DIFFICULTIES)[number];

export interface TaskTraits {
  id: string;
  /** The first namespace of `server`: the folder the task lives in. */
  namespace: string;
  category: Category;
  difficulty: Difficulty;
  crossServer: boolean;
  /** Some predicate leaf is an `answer.*` check on the agent's final text. */
  information: boolean;
  /** `available_tools` lists a tool of a namespace the task's `server` does not name. */
  distractors: boolean;
  /** The template the task was generated from, if it has provenance. */
  template?: string;
  tags: string[];
}

export interface Composition {
  total: number;
  namespaces: string[];
  /** namespace → category → difficulty → count. */
  cells: Record<string, Record<Category, Record<Difficulty, number>>>;
  byCategory: Record<Category, number>;
  byDifficulty: Record<Difficulty, number>;
  crossServer: number;
  information: number;
  distractors: number;
  withProvenance: number;
  templates: number;
  tags: Record<string, number>;
}

export function taskTraits(task: Task, registry: Registry): TaskTraits {
  const servers = taskNamespaces(task);
  const namespaces = new Set(servers);
  return {
    id: task.id,
    namespace: servers[0]!,
    category: task.category,
    difficulty: task.difficulty,
    crossServer: namespaces.size > 1,
    // An information task: a predicate reads the agent's final answer (a virtual namespace's, `answer`).
    information: leaves(parsePredicate(task.success_predicate, ['success_predicate'])).some((leaf) => registry.predicate(leaf.name)?.declaration.reads.includes('answer') === true),
    distractors: task.available_tools.some((tool) => !namespaces.has(namespaceOf(tool))),
    ...(task.template ? { template: task.template.id } : {}),
    tags: task.tags ?? [],
  };
}

const zeroes = <K extends string>(keys: readonly K[]) => Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;

export function composition(traits: readonly TaskTraits[]): Composition {
  const namespaces = [...new Set(traits.map((t) => t.namespace))].sort();
  const cells: Composition['cells'] = {};
  for (const ns of namespaces) {
    cells[ns] = Object.fromEntries(CATEGORIES.map((c) => [c, zeroes(DIFFICULTIES)])) as Record<Category, Record<Difficulty, number>>;
  }
  const byCategory = zeroes(CATEGORIES);
  const byDifficulty = zeroes(DIFFICULTIES);
  const tags: Record<string, number> = {};
  for (const t of traits) {
    cells[t.namespace]![t.category][t.difficulty]++;
    byCategory[t.category]++;
    byDifficulty[t.difficulty]++;
    for (const tag of t.tags) tags[tag] = (tags[tag] ?? 0) + 1;
  }
  const count = (pick: (t: TaskTraits) => boolean) => traits.filter(pick).length;
  return {
    total: traits.length,
    namespaces,
    cells,
    byCategory,
    byDifficulty,
    crossServer: count((t) => t.crossServer),
    information: count((t) => t.information),
    distractors: count((t) => t.distractors),
    withProvenance: count((t) => t.template !== undefined),
    templates: new Set(traits.flatMap((t) => (t.template ? [t.template] : []))).size,
    tags,
  };
}

/** A namespace's tasks over every category and difficulty. */
function namespaceTotal(c: Composition, ns: string): number {
  return CATEGORIES.reduce((sum, cat) => sum + DIFFICULTIES.reduce((s, d) => s + c.cells[ns]![cat][d], 0), 0);
}

const SHORT: Record<Difficulty, string> = { easy: 'E', medium: 'M', hard: 'H' };

/** The composition as Markdown: one row per namespace, a column per category x difficulty. */
export function compositionMarkdown(c: Composition, title: string): string {
  const share = (n: number) => (c.total ? `${Math.round((100 * n) / c.total)}%` : '0%');
  const header = ['namespace', ...CATEGORIES.flatMap((cat) => DIFFICULTIES.map((d) => `${cat} ${SHORT[d]}`)), 'total'];
  const rows = c.namespaces.map((ns) => {
    const cells = CATEGORIES.flatMap((cat) => DIFFICULTIES.map((d) => String(c.cells[ns]![cat][d])));
    const total = namespaceTotal(c, ns);
    return [`\`${ns}\``, ...cells, String(total)];
  });
  const totals = ['**total**', ...CATEGORIES.flatMap((cat) => DIFFICULTIES.map((d) => String(c.namespaces.reduce((s, ns) => s + c.cells[ns]![cat][d], 0)))), `**${c.total}**`];
  const line = (cells: string[]) => `| ${cells.join(' | ')} |`;
  const table = [line(header), line(header.map((_, i) => (i === 0 ? '---' : '---:'))), ...rows.map(line), line(totals)].join('\n');
  const summary = [
    `| | tasks | share |`,
    `| --- | ---: | ---: |`,
    ...CATEGORIES.map((cat) => `| category \`${cat}\` | ${c.byCategory[cat]} | ${share(c.byCategory[cat])} |`),
    ...DIFFICULTIES.map((d) => `| difficulty \`${d}\` | ${c.byDifficulty[d]} | ${share(c.byDifficulty[d])} |`),
    `| cross-server (\`server\` names several namespaces) | ${c.crossServer} | ${share(c.crossServer)} |`,
    `| information (checked through \`answer.*\` predicates) | ${c.information} | ${share(c.information)} |`,
    `| distractor tools (tools of a namespace the task does not use) | ${c.distractors} | ${share(c.distractors)} |`,
    `| generated from a template (\`template\` provenance) | ${c.withProvenance} | ${share(c.withProvenance)} |`,
  ].join('\n');
  return [
    `# ${title}`,
    '',
    `<!-- Generated by \`mcpbench stats tasks --format markdown\`; do not edit by hand (a test compares it). -->`,
    '',
    `${c.total} tasks over ${c.namespaces.length} namespaces, generated from ${c.templates} template grammars in \`templates/\` and reviewed ` +
      '(the review records are in `reviews/`). Columns are category and difficulty (E easy, M medium, H hard); a cross-server ' +
      'task is counted under the first namespace of its `server`.',
    '',
    table,
    '',
    summary,
    '',
  ].join('\n');
}

export function compositionText(c: Composition): string {
  const lines = [`${c.total} tasks, ${c.namespaces.length} namespaces, ${c.templates} templates`];
  const width = Math.max(9, ...c.namespaces.map((ns) => ns.length));
  lines.push(`${'namespace'.padEnd(width)}  ${CATEGORIES.map((cat) => cat.padStart(13)).join('')}  total   (easy/medium/hard)`);
  for (const ns of c.namespaces) {
    const parts = CATEGORIES.map((cat) => DIFFICULTIES.map((d) => c.cells[ns]![cat][d]).join('/').padStart(13));
    const total = namespaceTotal(c, ns);
    lines.push(`${ns.padEnd(width)}  ${parts.join('')}  ${String(total).padStart(5)}`);
  }
  lines.push(
    `categories: ${CATEGORIES.map((cat) => `${cat} ${c.byCategory[cat]}`).join(', ')}`,
    `difficulties: ${DIFFICULTIES.map((d) => `${d} ${c.byDifficulty[d]}`).join(', ')}`,
    `cross-server ${c.crossServer}, information ${c.information}, with distractor tools ${c.distractors}, with template provenance ${c.withProvenance}`,
  );
  return lines.join('\n') + '\n';
}
