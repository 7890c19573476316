import type { PredicateFunction, Verdict } from '../namespace.ts';
import { asNumber, cell, compare, findColumn, findTable, rowMatches, tableKey, typeMatches, valuesEqual, type Condition, type PostgresState, type Table } from './state.ts';

type P = PredicateFunction<PostgresState>;
type Where = Record<string, Condition> | undefined;

interface Bounds {
  equals?: number;
  min?: number;
  max?: number;
}

function withinBounds(n: number, b: Bounds): boolean {
  return (b.equals === undefined || n === b.equals) && (b.min === undefined || n >= b.min) && (b.max === undefined || n <= b.max);
}

function missingTable(state: PostgresState, table: string): Verdict {
  return { value: false, evidence: { table, exists: false, tables: Object.keys(state.tables).slice(0, 30) } };
}

/** Columns named in `where` that the table does not have: a typo there would silently match nothing. */
function unknownColumns(table: Table, where: Where): string[] {
  return Object.keys(where ?? {}).filter((c) => !findColumn(table, c));
}

/** For a failed row search: the rows that satisfy the most conditions. */
function closest(table: Table, where: Where, limit = 3): Record<string, unknown>[] {
  const entries = Object.entries(where ?? {});
  return table.rows
    .map((row) => ({ row, score: entries.filter(([c, cond]) => rowMatches(row, { [c]: cond })).length }))
    .sort((a, b) => b.score - a.score)
    .slice(0, limit)
    .map((x) => x.row);
}

export const predicates: Record<string, P> = {
  tableExists: ({ table }, { state }) => {
    const hit = findTable(state, table);
    return hit ? { value: true, evidence: { table: hit[0], rows: hit[1].rows.length } } : missingTable(state, table);
  },

  columnExists: ({ table, column, type, nullable }, { state }) => {
    const hit = findTable(state, table);
    if (!hit) return missingTable(state, table);
    const col = findColumn(hit[1], column);
    if (!col) return { value: false, evidence: { table: hit[0], column, exists: false, columns: hit[1].columns.map((c) => c.name) } };
    const ok = (type === undefined || typeMatches(col.type, type)) && (nullable === undefined || col.nullable === nullable);
    return { value: ok, evidence: { table: hit[0], column: col.name, type: col.type, nullable: col.nullable } };
  },

  rowExists: ({ table, where }, { state }) => {
    const hit = findTable(state, table);
    if (!hit) return missingTable(state, table);
    const row = hit[1].rows.find((r) => rowMatches(r, where));
    if (row) return { value: true, evidence: { table: hit[0], row } };
    const unknown = unknownColumns(hit[1], where);
    return { value: false, evidence: { table: hit[0], ...(unknown.length ? { unknownColumns: unknown } : {}), closest: closest(hit[1], where) } };
  },

  rowCount: (args, { state }) => {
    const hit = findTable(state, args.table);
    if (!hit) return { value: withinBounds(0, args), evidence: { table: tableKey(args.table), exists: false, count: 0 } };
    const rows = hit[1].rows.filter((r) => rowMatches(r, args.where));
    const unknown = unknownColumns(hit[1], args.where);
    return { value: withinBounds(rows.length, args), evidence: { table: hit[0], count: rows.length, ...(unknown.length ? { unknownColumns: unknown } : {}) } };
  },

  valueEquals: ({ table, where, column, value, tolerance }, { state }) => {
    const hit = findTable(state, table);
    if (!hit) return missingTable(state, table);
    const rows = hit[1].rows.filter((r) => rowMatches(r, where));
    if (rows.length === 0) return { value: false, evidence: { table: hit[0], matchedRows: 0, closest: closest(hit[1], where) } };
    const values = rows.map((r) => cell(r, column));
    const ok = values.every((v) => valuesEqual(v, value, tolerance ?? 0));
    return { value: ok, evidence: { table: hit[0], column, matchedRows: rows.length, values: values.slice(0, 10) } };
  },

  aggregateEquals: ({ table, column, function: fn, where, value, tolerance }, { state }) => {
    const hit = findTable(state, table);
    if (!hit) return missingTable(state, table);
    const values = hit[1].rows.filter((r) => rowMatches(r, where)).map((r) => cell(r, column)).filter((v) => v !== null && v !== undefined);
    let result: unknown = null;
    if (fn === 'count_distinct') {
      const seen: unknown[] = [];
      for (const v of values) if (!seen.some((s) => valuesEqual(s, v))) seen.push(v);
      result = seen.length;
    } else if (fn === 'min' || fn === 'max') {
      for (const v of values) {
        const sign = result === null ? undefined : compare(v, result);
        if (result === null || (sign !== undefined && (fn === 'min' ? sign < 0 : sign > 0))) result = v;
      }
    } else {
      const numbers = values.map(asNumber).filter((n): n is number => n !== undefined);
      if (numbers.length) {
        const sum = numbers.reduce((a, b) => a + b, 0);
        result = fn === 'sum' ? sum : sum / numbers.length;
      }
    }
    const ok = result !== null && valuesEqual(result, value, tolerance ?? 0);
    return { value: ok, evidence: { table: hit[0], function: fn, column, over: values.length, result } };
  },

  noDuplicates: ({ table, columns }, { state }) => {
    const hit = findTable(state, table);
    if (!hit) return missingTable(state, table);
    const seen = new Map<string, Record<string, unknown>>();
    for (const row of hit[1].rows) {
      const key = (columns as string[]).map((c) => cell(row, c));
      if (key.some((v) => v === null || v === undefined)) continue;
      // Numbers and numeric text are one value, as everywhere else in this namespace.
      const k = JSON.stringify(key.map((v) => asNumber(v) ?? v));
      const first = seen.get(k);
      if (first) return { value: false, evidence: { table: hit[0], columns, duplicate: [first, row] } };
      seen.set(k, row);
    }
    return { value: true, evidence: { table: hit[0], columns, rows: hit[1].rows.length } };
  },

  indexExists: ({ table, name, columns, unique }, { state }) => {
    const key = tableKey(table).toLowerCase();
    const onTable = state.indexes.filter((i) => i.table.toLowerCase() === key);
    const hit = onTable.find(
      (i) =>
        (name === undefined || i.name === name) &&
        (columns === undefined || (i.columns.length === columns.length && i.columns.every((c, n) => c.toLowerCase() === String(columns[n]).toLowerCase()))) &&
        (unique === undefined || i.unique === unique),
    );
    return hit ? { value: true, evidence: { index: hit } } : { value: false, evidence: { table, indexes: onTable } };
  },
};
