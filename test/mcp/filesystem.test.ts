import { before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { loadRegistry, type NamespaceInfo } from '../../server/src/mcp/registry.ts';
import { globToRegExp } from '../../server/src/mcp/filesystem/state.ts';

let info: NamespaceInfo;
before(async () => {
  info = (await loadRegistry()).get('filesystem')!;
});

/** Validates arguments and state against the namespace file, then evaluates on the normalised state. */
function check(name: string, args: Record<string, unknown>, state: unknown): boolean {
  const predicate = info.predicates.get(name);
  assert.ok(predicate, `no predicate ${name}`);
  assert.ok(predicate.validateArguments(args), `${name} arguments ${JSON.stringify(args)}: ${JSON.stringify(predicate.validateArguments.errors)}`);
  if (state !== undefined) assert.ok(info.validateState(state), `state ${JSON.stringify(state)}: ${JSON.stringify(info.validateState.errors)}`);
  const verdict = info.plugin!.predicates[name]!(args, { state: info.plugin!.normalizeState(state), answer: undefined });
  JSON.stringify(verdict.evidence);
  return verdict.value;
}

const tree = {
  files: {
    'report.txt': 'Q3 numbers\r\nline two\n',
    'archive/': null,
    'archive/old.log': 'x',
    'archive/2023/jan.log': 'y',
    'archive/2023/notes.md': 'z',
    'tmp/': null,
    'src/app.js': 'const port = 8080;\n',
    'config/app.json': '{"name":"demo","version":"1.0.0","deps":{"a/b":1},"tags":["x","y"]}',
    'config/bad.json': '{"name":',
    'copy/report.txt': 'Q3 numbers\nline two\n',
    '.gitignore': 'node_modules/\n  dist  \n',
  },
};

describe('filesystem state schema', () => {
  test('accepts the DESIGN example and rejects malformed paths', () => {
    assert.ok(info.validateState({ files: { 'report.txt': 'Q3 numbers', 'archive/': null } }));
    assert.ok(info.validateState({}));
    assert.equal(info.validateState({ files: { 'report.txt': null } }), false, 'a file needs content');
    assert.equal(info.validateState({ files: { 'dir/': 'text' } }), false, 'a directory has no content');
    assert.equal(info.validateState({ files: { '/etc/passwd': 'x' } }), false, 'absolute path');
    assert.equal(info.validateState({ files: { '../up.txt': 'x' } }), false, 'parent segment');
    assert.equal(info.validateState({ files: { 'a//b.txt': 'x' } }), false, 'empty segment');
    assert.equal(info.validateState({ other: 1 }), false);
  });
});

describe('filesystem predicates', () => {
  test('fileExists: files only, normalised paths', () => {
    assert.equal(check('fileExists', { path: 'report.txt' }, tree), true);
    assert.equal(check('fileExists', { path: './archive/2023/jan.log' }, tree), true);
    assert.equal(check('fileExists', { path: 'archive' }, tree), false, 'a directory is not a file');
    assert.equal(check('fileExists', { path: 'Report.txt' }, tree), false, 'case-sensitive');
    assert.equal(check('fileExists', { path: 'report.txt' }, undefined), false, 'empty state');
  });

  test('directoryExists: explicit, implied, root', () => {
    assert.equal(check('directoryExists', { path: 'tmp' }, tree), true);
    assert.equal(check('directoryExists', { path: 'archive/2023/' }, tree), true, 'implied by files below it');
    assert.equal(check('directoryExists', { path: 'config' }, tree), true);
    assert.equal(check('directoryExists', { path: '.' }, undefined), true, 'the root always exists');
    assert.equal(check('directoryExists', { path: 'report.txt' }, tree), false);
    assert.equal(check('directoryExists', { path: 'missing' }, tree), false);
  });

  test('directoryEmpty', () => {
    assert.equal(check('directoryEmpty', { path: 'tmp' }, tree), true);
    assert.equal(check('directoryEmpty', { path: 'archive' }, tree), false);
    assert.equal(check('directoryEmpty', { path: 'nowhere' }, tree), false, 'a missing directory is not empty');
    assert.equal(check('directoryEmpty', { path: 'a' }, { files: { 'a/': null, 'a/b/': null } }), false, 'a subdirectory counts');
  });

  test('directoryContains: direct children and kind', () => {
    assert.equal(check('directoryContains', { path: 'archive', name: 'old.log' }, tree), true);
    assert.equal(check('directoryContains', { path: 'archive', name: '2023', kind: 'directory' }, tree), true);
    assert.equal(check('directoryContains', { path: 'archive', name: '2023', kind: 'file' }, tree), false);
    assert.equal(check('directoryContains', { path: 'archive', name: 'jan.log' }, tree), false, 'not a direct child');
    assert.equal(check('directoryContains', { path: '.', name: 'report.txt', kind: 'file' }, tree), true);
  });

  test('fileContains: CRLF-insensitive, case option', () => {
    assert.equal(check('fileContains', { path: 'report.txt', text: 'numbers\nline' }, tree), true);
    assert.equal(check('fileContains', { path: 'report.txt', text: 'q3 NUMBERS' }, tree), false);
    assert.equal(check('fileContains', { path: 'report.txt', text: 'q3 NUMBERS', case_insensitive: true }, tree), true);
    assert.equal(check('fileContains', { path: 'missing.txt', text: 'x' }, tree), false);
  });

  test('fileEquals: exact, trim', () => {
    assert.equal(check('fileEquals', { path: 'report.txt', content: 'Q3 numbers\nline two\n' }, tree), true);
    assert.equal(check('fileEquals', { path: 'report.txt', content: 'Q3 numbers\nline two' }, tree), false);
    assert.equal(check('fileEquals', { path: 'report.txt', content: 'Q3 numbers\nline two', trim: true }, tree), true);
    assert.equal(check('fileEquals', { path: 'tmp', content: '' }, tree), false, 'a directory has no content');
  });

  test('fileMatches: regex with flags, invalid pattern is false', () => {
    assert.equal(check('fileMatches', { path: 'src/app.js', pattern: 'port = \\d{4};' }, tree), true);
    assert.equal(check('fileMatches', { path: 'src/app.js', pattern: '^const PORT', flags: 'i' }, tree), true);
    assert.equal(check('fileMatches', { path: 'report.txt', pattern: '^line two$' }, tree), false, 'without m, ^ is the start');
    assert.equal(check('fileMatches', { path: 'report.txt', pattern: '^line two$', flags: 'm' }, tree), true);
    const plugin = info.plugin!.predicates.fileMatches!;
    const verdict = plugin({ path: 'report.txt', pattern: '(' }, { state: info.plugin!.normalizeState(tree), answer: undefined });
    assert.equal(verdict.value, false);
  });

  test('fileHasLine', () => {
    assert.equal(check('fileHasLine', { path: '.gitignore', line: 'node_modules/' }, tree), true);
    assert.equal(check('fileHasLine', { path: '.gitignore', line: 'dist' }, tree), false);
    assert.equal(check('fileHasLine', { path: '.gitignore', line: 'dist', trim: true }, tree), true);
    assert.equal(check('fileHasLine', { path: '.gitignore', line: 'node_modules' }, tree), false, 'whole lines only');
  });

  test('fileLineCount: final newline does not add a line', () => {
    assert.equal(check('fileLineCount', { path: 'report.txt', equals: 2 }, tree), true);
    assert.equal(check('fileLineCount', { path: 'config/app.json', equals: 1 }, tree), true);
    assert.equal(check('fileLineCount', { path: 'report.txt', min: 3 }, tree), false);
    assert.equal(check('fileLineCount', { path: 'e.txt', equals: 0 }, { files: { 'e.txt': '' } }), true);
    assert.equal(check('fileLineCount', { path: 'nope.txt', max: 10 }, tree), false, 'a missing file has no line count');
  });

  test('fileCount: recursion, globs, bounds', () => {
    assert.equal(check('fileCount', { path: 'archive', equals: 3 }, tree), true);
    assert.equal(check('fileCount', { path: 'archive', recursive: false, equals: 1 }, tree), true);
    assert.equal(check('fileCount', { path: 'archive', glob: '*.log', equals: 2 }, tree), true, 'a glob without / matches names');
    assert.equal(check('fileCount', { path: 'archive', glob: '2023/*', equals: 2 }, tree), true);
    assert.equal(check('fileCount', { path: 'archive', glob: '**/*.{md,log}', equals: 3 }, tree), true);
    assert.equal(check('fileCount', { glob: '*.json', min: 2, max: 2 }, tree), true, 'whole sandbox by default');
    assert.equal(check('fileCount', { path: 'tmp', equals: 0 }, tree), true);
    assert.equal(check('fileCount', { path: 'archive', max: 2 }, tree), false);
    assert.equal(check('fileCount', { path: 'gone', equals: 0 }, tree), true, 'a missing directory holds no files');
  });

  test('globToRegExp', () => {
    assert.ok(globToRegExp('*.txt').test('a.txt'));
    assert.ok(!globToRegExp('*.txt').test('d/a.txt'));
    assert.ok(globToRegExp('**/a.txt').test('a.txt'));
    assert.ok(globToRegExp('**/a.txt').test('x/y/a.txt'));
    assert.ok(globToRegExp('file?.[ch]').test('file1.c'));
    assert.ok(!globToRegExp('a.b').test('axb'), 'dots are literal');
    assert.ok(globToRegExp('{').test('{'), 'an unbalanced brace is literal');
  });

  test('filesIdentical', () => {
    assert.equal(check('filesIdentical', { path: 'copy/report.txt', other: 'report.txt' }, tree), true, 'CRLF and LF are the same text');
    assert.equal(check('filesIdentical', { path: 'src/app.js', other: 'report.txt' }, tree), false);
    assert.equal(check('filesIdentical', { path: 'report.txt', other: 'nope.txt' }, tree), false);
  });

  test('jsonFileValid', () => {
    assert.equal(check('jsonFileValid', { path: 'config/app.json' }, tree), true);
    assert.equal(check('jsonFileValid', { path: 'config/bad.json' }, tree), false);
    assert.equal(check('jsonFileValid', { path: 'config/none.json' }, tree), false);
  });

  test('jsonFileFieldEquals: pointers, escapes, deep equality', () => {
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/version', value: '1.0.0' }, tree), true);
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/version', value: '1.0.1' }, tree), false);
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/deps/a~1b', value: 1 }, tree), true);
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/tags/1', value: 'y' }, tree), true);
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/tags/2', value: null }, tree), false, 'out of range is not null');
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/deps', value: { 'a/b': 1 } }, tree), true);
    assert.equal(check('jsonFileFieldEquals', { path: 'config/app.json', pointer: '/missing', value: null }, tree), false);
    assert.equal(check('jsonFileFieldEquals', { path: 'config/bad.json', pointer: '', value: {} }, tree), false);
  });
});
