/**
 * The template grammar: parameters drawn within their bounds, constraints and derived parameters holding over
 * many samples, placeholders keeping or losing their type as documented, grammar weights respected, patterns
 * and dates, and clear errors for what cannot be sampled.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatDay, parseIsoDay } from '../../server/src/generator/dates.ts';
import { TemplateSchema, type Template } from '../../server/src/generator/model.ts';
import { compilePattern, PatternError } from '../../server/src/generator/pattern.ts';
import { fill } from '../../server/src/generator/placeholders.ts';
import { createRandom } from '../../server/src/generator/random.ts';
import { compileTemplate, sampleParameters, sampleVariant, TemplateError, UnsatisfiableError } from '../../server/src/generator/sample.ts';
import { seededRandom } from '../seeded-random.ts';

const BODY = {
  server: 'filesystem',
  category: 'single-tool',
  difficulty: 'easy',
  max_steps: 5,
  initial_state: { filesystem: { files: {} } },
  available_tools: ['filesystem.write_file'],
  success_predicate: { 'filesystem.fileExists': { path: 'x.txt' } },
  reference_solutions: [[{ tool: 'filesystem.write_file', arguments: { path: 'x.txt', content: 'x' } }]],
};

function template(parameters: Record<string, unknown>, extra: Record<string, unknown> = {}): Template {
  return TemplateSchema.parse({ id: 't', version: '1', namespaces: ['filesystem'], description: 'test', parameters, task: { ...BODY, goal: 'Do it.' }, ...extra });
}

function samples(t: Template, n: number, seed = 7): Map<string, unknown>[] {
  const compiled = compileTemplate(t);
  const random = createRandom(seed);
  return Array.from({ length: n }, () => sampleParameters(compiled, random).values);
}

test('the generator PRNG is the same mulberry32 as the test helper', () => {
  const a = createRandom(42);
  const b = seededRandom(42);
  for (let i = 0; i < 100; i++) assert.equal(a.next(), b());
});

test('drawn parameters stay within their bounds and steps', () => {
  const t = template({
    n: { int: { min: 10, max: 50, step: 5 } },
    price: { decimal: { min: 1.5, max: 3, step: 0.25 } },
    day: { date: { from: '2026-02-20', to: '2026-03-05' } },
    name: { pool: ['a', 'b', 'c'] },
    code: { pattern: '[A-C]{2}-\\d{3}' },
  });
  const seen = { n: new Set<unknown>(), price: new Set<unknown>() };
  for (const v of samples(t, 2000)) {
    const n = v.get('n') as number;
    assert.ok(Number.isInteger(n) && n >= 10 && n <= 50 && n % 5 === 0, `n=${n}`);
    const price = v.get('price') as number;
    assert.ok(price >= 1.5 && price <= 3 && Number.isInteger((price - 1.5) / 0.25), `price=${price}`);
    assert.equal(String(price).length <= 4, true, `price ${price} carries float noise`);
    const day = parseIsoDay(v.get('day') as string)!;
    assert.ok(day >= parseIsoDay('2026-02-20')! && day <= parseIsoDay('2026-03-05')!);
    assert.ok(['a', 'b', 'c'].includes(v.get('name') as string));
    assert.match(v.get('code') as string, /^[A-C]{2}-\d{3}$/);
    seen.n.add(n);
    seen.price.add(price);
  }
  assert.equal(seen.n.size, 9, 'every step of the range is drawn');
  assert.equal(seen.price.size, 7);
});

test('distinct, ordered and derived parameters hold over many samples', () => {
  const t = template(
    {
      a: { int: { min: 1, max: 6 } },
      b: { int: { min: 1, max: 6 } },
      c: { int: { min: 1, max: 6 } },
      low: { pool: ['x', 'y', 'z'] },
      high: { pool: ['x', 'y', 'z'] },
      check_in: { date: { from: '2026-01-01', to: '2026-01-31', format: 'D MMMM YYYY' } },
      nights: { int: { min: 1, max: 9 } },
      check_out: { date_add: '{{check_in}}', days: '{{nights}}', format: 'YYYY-MM-DD' },
      smallest: { min: ['{{a}}', '{{b}}', '{{c}}'] },
      largest: { max: ['{{a}}', '{{b}}', '{{c}}'] },
      total: { sum: ['{{a}}', '{{b}}', '{{c}}', 0.5] },
      label: { format: ['%s-%03d', '{{low}}', '{{a}}'] },
      shout: { upper: '{{low}}{{high}}' },
      city: { pick: ['London', 'Paris', 'Oslo', 'Rome', 'Bonn', 'Linz'], index: '{{smallest}}' },
    },
    { constraints: [{ distinct: ['a', 'b', 'c'] }, { ordered: ['low', 'high'] }, { ordered: ['a', 'c'] }] },
  );
  const pool = ['London', 'Paris', 'Oslo', 'Rome', 'Bonn', 'Linz'];
  for (const v of samples(t, 1500)) {
    const [a, b, c] = ['a', 'b', 'c'].map((k) => v.get(k) as number) as [number, number, number];
    assert.equal(new Set([a, b, c]).size, 3);
    assert.ok(a < c);
    assert.ok((v.get('low') as string) < (v.get('high') as string));
    assert.equal(v.get('smallest'), Math.min(a, b, c));
    assert.equal(v.get('largest'), Math.max(a, b, c));
    assert.equal(v.get('total'), a + b + c + 0.5);
    assert.equal(v.get('label'), `${v.get('low')}-${String(a).padStart(3, '0')}`);
    assert.equal(v.get('shout'), `${v.get('low')}${v.get('high')}`.toUpperCase());
    assert.equal(v.get('city'), pool[Math.min(a, b, c)]);
    const [d, month, year] = (v.get('check_in') as string).split(' ') as [string, string, string];
    assert.equal(month, 'January');
    const inDay = parseIsoDay(`${year}-01-${d.padStart(2, '0')}`)!;
    assert.equal(parseIsoDay(v.get('check_out') as string)! - inDay, v.get('nights'));
  }
});

test('ordered compares dates by date whatever their format', () => {
  const t = template(
    {
      first: { date: { from: '2026-01-01', to: '2026-12-31', format: 'D MMM YYYY' } },
      second: { date: { from: '2026-01-01', to: '2026-12-31', format: 'D MMM YYYY' } },
    },
    { constraints: [{ ordered: ['first', 'second'] }] },
  );
  let stringOrderDiffers = 0;
  for (const v of samples(t, 500)) {
    const [first, second] = [v.get('first') as string, v.get('second') as string];
    assert.ok(Date.parse(first) < Date.parse(second), `${first} < ${second}`);
    if (!(first < second)) stringOrderDiffers++;
  }
  assert.ok(stringOrderDiffers > 50, 'the dates were not simply ordered as strings');
});

test('a list draws its fields per element, keeps distinct fields apart, and argmin/argmax pick by a field', () => {
  const t = template({
    origin: { pool: ['LON', 'NYC'] },
    flights: {
      list: {
        length: { min: 2, max: 6 },
        fields: { id: { pattern: '[A-B]{1}\\d' }, origin: { value: '{{origin}}' }, price: { int: { min: 1, max: 12 } } },
        distinct: ['id', 'price'],
      },
    },
    cheapest: { argmin: '{{flights}}', by: 'price' },
    priciest: { argmax: '{{flights}}', by: 'price' },
    cheapest_price: { min: ['{{flights}}'], by: 'price' },
    second: { pick: '{{flights}}', index: 1 },
  });
  const lengths = new Set<number>();
  for (const v of samples(t, 800)) {
    const flights = v.get('flights') as { id: string; origin: string; price: number }[];
    lengths.add(flights.length);
    assert.ok(flights.length >= 2 && flights.length <= 6);
    assert.equal(new Set(flights.map((f) => f.id)).size, flights.length);
    assert.equal(new Set(flights.map((f) => f.price)).size, flights.length);
    for (const f of flights) assert.equal(f.origin, v.get('origin'));
    const prices = flights.map((f) => f.price);
    assert.deepEqual(v.get('cheapest'), flights[prices.indexOf(Math.min(...prices))]);
    assert.deepEqual(v.get('priciest'), flights[prices.indexOf(Math.max(...prices))]);
    assert.equal(v.get('cheapest_price'), Math.min(...prices));
    assert.deepEqual(v.get('second'), flights[1]);
  }
  assert.equal(lengths.size, 5);
});

test('placeholders: a whole-string placeholder keeps its type, in a longer string or a key it becomes text', () => {
  const values = new Map<string, unknown>([
    ['n', 7],
    ['price', 12.5],
    ['flag', true],
    ['file', 'report.txt'],
    ['route', { origin: 'LON', dest: 'PAR' }],
    ['list', [1, 2]],
  ]);
  const filled = fill(
    {
      max_steps: '{{n}}',
      price: '{{price}}',
      flag: '{{ flag }}',
      text: '{{n}} files, {{price}} EUR, {{flag}}',
      route: '{{route}}',
      origin: '{{route.origin}}',
      second: '{{list.1}}',
      files: { '{{file}}': 'x', 'archive/{{file}}': null, '{{n}}': '{{n}}' },
    },
    values,
  );
  assert.deepEqual(filled, {
    max_steps: 7,
    price: 12.5,
    flag: true,
    text: '7 files, 12.5 EUR, true',
    route: { origin: 'LON', dest: 'PAR' },
    origin: 'LON',
    second: 2,
    files: { 'report.txt': 'x', 'archive/report.txt': null, '7': 7 },
  });
  assert.notEqual((filled as { route: object }).route, values.get('route'), 'placed structures are copies');
  assert.throws(() => fill('route: {{route}}', values), /only strings, numbers and booleans can be written into text/);
  assert.throws(() => fill({ '{{file}}': 1, 'report.txt': 2 }, values), /two keys become "report.txt"/);
});

test('grammar weights are respected (fixed seed, tolerance of several standard deviations)', () => {
  const t = template(
    { who: { pool: ['Ann'] } },
    {
      grammar: {
        start: 'goal',
        productions: {
          goal: [{ text: '<verb> it for {{who}}.', weight: 3 }, 'Please <verb> it.'],
          verb: ['move', { text: 'shift', weight: 0.5 }, { text: 'carry', weight: 1.5 }],
        },
      },
      task: BODY,
    },
  );
  const compiled = compileTemplate(t);
  const n = 6000;
  const counts = new Map<string, number>();
  for (let seed = 0; seed < n; seed++) {
    const goal = sampleVariant(compiled, seed).goal!;
    const key = `${goal.startsWith('Please') ? 'please' : 'for'}:${/move|shift|carry/.exec(goal)![0]}`;
    counts.set(key, (counts.get(key) ?? 0) + 1);
  }
  const share = (predicate: (key: string) => boolean) => [...counts].filter(([k]) => predicate(k)).reduce((a, [, c]) => a + c, 0) / n;
  const near = (observed: number, p: number) => {
    const sigma = Math.sqrt((p * (1 - p)) / n);
    assert.ok(Math.abs(observed - p) < 5 * sigma, `observed ${observed.toFixed(4)}, expected ${p} ± ${(5 * sigma).toFixed(4)}`);
  };
  near(share((k) => k.startsWith('for')), 0.75);
  near(share((k) => k.endsWith('move')), 1 / 3);
  near(share((k) => k.endsWith('shift')), 0.5 / 3);
  near(share((k) => k.endsWith('carry')), 1.5 / 3);
  assert.ok(sampleVariant(compiled, 1).goal!.length > 0);
  assert.equal(sampleVariant(compiled, 5).goal, sampleVariant(compiled, 5).goal);
});

test('patterns generate only matching strings and cover their classes and alternatives', () => {
  const cases: [string, RegExp][] = [
    ['[A-Z]{2}-[0-9]{3}', /^[A-Z]{2}-[0-9]{3}$/],
    ['(INC|REQ)-\\d{4,5}', /^(INC|REQ)-\d{4,5}$/],
    ['v\\d\\.\\d{1,2}', /^v\d\.\d{1,2}$/],
    ['[a-c_]{1,3}x?', /^[a-c_]{1,3}x?$/],
    ['\\w{4}', /^\w{4}$/],
  ];
  const random = createRandom(3);
  for (const [pattern, regex] of cases) {
    const compiled = compilePattern(pattern);
    const seen = new Set<string>();
    for (let i = 0; i < 300; i++) {
      const s = compiled.generate(random);
      assert.match(s, regex, `${pattern} gave ${s}`);
      seen.add(s);
    }
    assert.ok(seen.size > 10, `${pattern} varies`);
  }
  const inc = compilePattern('(INC|REQ)-\\d{4,5}');
  const prefixes = new Set(Array.from({ length: 100 }, () => inc.generate(random).slice(0, 3)));
  assert.deepEqual([...prefixes].sort(), ['INC', 'REQ']);
});

test('unbounded or ambiguous pattern syntax is refused with its position', () => {
  const refused: [string, number, RegExp][] = [
    ['[a-z]+', 5, /without bound/],
    ['ab*', 2, /without bound/],
    ['a.b', 1, /any character/],
    ['[^a]', 0, /negated/],
    ['(ab', 0, /unclosed group/],
    ['[z-a]', 1, /empty range/],
    ['a{3,1}', 1, /below the minimum/],
    ['a{1,100}', 1, /over 64/],
    ['\\q', 0, /not supported/],
  ];
  for (const [pattern, index, message] of refused) {
    assert.throws(() => compilePattern(pattern), (error: unknown) => error instanceof PatternError && error.index === index && message.test(error.message), pattern);
  }
});

test('dates format with tokens and round-trip through day numbers', () => {
  const day = parseIsoDay('2026-03-09')!;
  assert.equal(formatDay(day), '2026-03-09');
  assert.equal(formatDay(day, 'dddd D MMMM YYYY'), 'Monday 9 March 2026');
  assert.equal(formatDay(day, 'ddd, MMM DD'), 'Mon, Mar 09');
  assert.equal(formatDay(day + 30, 'M/D/YYYY'), '4/8/2026');
  assert.equal(parseIsoDay('2026-02-30'), undefined);
});

test('a constraint that cannot be met fails with an error naming it', () => {
  const t = template({ a: { pool: ['x'] }, b: { pool: ['x', 'y'] }, c: { pool: ['x'] } }, { constraints: [{ distinct: ['a', 'b'] }, { distinct: ['a', 'c'] }], max_tries: 50 });
  assert.throws(
    () => samples(t, 1),
    (error: unknown) => error instanceof UnsatisfiableError && error.path.join('.') === 'constraints.1' && /constraint 2 \{"distinct":\["a","c"\]\} could not be met in 50 draws/.test(error.message),
  );
  const list = template({ l: { list: { length: 5, fields: { v: { int: { min: 1, max: 3 } } }, distinct: ['v'] } } }, { max_tries: 30 });
  assert.throws(() => samples(list, 1), (error: unknown) => error instanceof UnsatisfiableError && /list `l`: no element 4 of 5 with distinct `v`/.test(error.message));
});

test('template mistakes are errors at their parameter: loops, unknown names, bad indexes', () => {
  const loop = template({ a: { format: '{{b}}' }, b: { upper: '{{a}}' } });
  assert.throws(() => compileTemplate(loop), (e: unknown) => e instanceof TemplateError && /loop: a → b → a/.test(e.message));
  const unknown = template({ a: { format: '{{nope}}' } });
  assert.throws(() => compileTemplate(unknown), (e: unknown) => e instanceof TemplateError && e.path.join('.') === 'parameters.a' && /nope/.test(e.message));
  const index = template({ i: { int: { min: 0, max: 5 } }, p: { pick: ['a', 'b'], index: '{{i}}' } });
  assert.throws(() => samples(index, 50), (e: unknown) => e instanceof TemplateError && /index \d is outside the pool of 2/.test(e.message));
  assert.throws(() => compileTemplate(template({ r: { int: { min: 5, max: 1 } } })), /max 1 is below min 5/);
  assert.throws(() => compileTemplate(template({ d: { date: { from: '2026-02-30', to: '2026-03-01' } } })), /not a calendar date/);
});

test('every property of the template and batch schemas has a title, a description and examples', async () => {
  const { emitJsonSchemas } = await import('../../server/src/engine/json-schemas.ts');
  const emitted = emitJsonSchemas();
  for (const file of ['template.schema.json', 'batch.schema.json']) {
    const schema = emitted[file] as { $defs: Record<string, Record<string, unknown>> };
    const missing: string[] = [];
    const visit = (node: unknown, where: string) => {
      if (Array.isArray(node)) return node.forEach((child) => visit(child, where));
      if (node === null || typeof node !== 'object') return;
      const record = node as Record<string, unknown>;
      for (const [name, property] of Object.entries((record.properties as Record<string, Record<string, unknown>>) ?? {})) {
        if (name === '$schema') continue;
        const documented = property.$ref ? schema.$defs[String(property.$ref).split('/').pop()!]! : property;
        for (const key of ['title', 'description', 'examples']) if (!documented[key]) missing.push(`${file} ${where}.${name}: ${key}`);
      }
      for (const [key, child] of Object.entries(record)) visit(child, `${where}/${key}`);
    };
    visit(schema, '');
    assert.deepEqual(missing, []);
  }
});
