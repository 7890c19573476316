/**
 * `mcpbench lint --format sarif` as code scanning reads it: every log validates against the official SARIF 2.1.0
 * schema (OASIS, vendored from an npm package by scripts/vendor-sarif-schema.mjs) whatever the paths (a space,
 * `#`, `%`, a file outside the root, run from `/`); artifact URIs are relative to `--sarif-root` (default the
 * repository root) with `originalUriBaseIds` saying where that is; every rule that can fire, template rules
 * included, is listed with its descriptions, help and help URI; fingerprints survive unrelated edits; and
 * docs/rules.md, where the help URIs point, is current.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import Ajv from 'ajv';
import addFormats from 'ajv-formats';
import { ALL_RULES } from '../../server/src/tasks/diagnostics.ts';
import { RULES_DOC_PATH, rulesMarkdown } from '../../server/src/tasks/rule-docs.ts';

const root = join(__dirname, '..', '..');
const cli = join(root, 'dist', 'cli.js');
const broken = join(__dirname, '..', 'fixtures', 'broken');

const schema = JSON.parse(readFileSync(join(__dirname, '..', 'fixtures', 'sarif', 'sarif-schema-2.1.0.json'), 'utf8'));
const ajv = new Ajv({ allErrors: true, strict: false });
addFormats(ajv);
const validateSarif = ajv.compile(schema);

interface SarifLog {
  runs: {
    tool: { driver: { rules: { id: string; shortDescription: { text: string }; fullDescription: { text: string }; help: { text: string; markdown?: string }; helpUri: string }[] } };
    originalUriBaseIds: Record<string, { uri: string }>;
    results: {
      ruleId: string;
      ruleIndex: number;
      partialFingerprints: Record<string, string>;
      locations: { physicalLocation: { artifactLocation: { uri: string; uriBaseId?: string }; region: { startLine: number } } }[];
    }[];
  }[];
}

function lintSarif(args: string[], cwd = root): SarifLog {
  const result = spawnSync(process.execPath, [cli, 'lint', '--format', 'sarif', ...args], { cwd, encoding: 'utf8' });
  assert.ok(result.status === 0 || result.status === 1, `exit ${result.status}: ${result.stderr}`);
  const log = JSON.parse(result.stdout) as SarifLog;
  assert.ok(validateSarif(log), `not valid SARIF 2.1.0: ${JSON.stringify(validateSarif.errors?.slice(0, 5), null, 2)}`);
  return log;
}

/** Where a result's file is, as a path: its URI resolved against its uriBaseId. */
function resultPath(log: SarifLog, result: SarifLog['runs'][0]['results'][0]): string {
  const { uri, uriBaseId } = result.locations[0]!.physicalLocation.artifactLocation;
  const base = uriBaseId ? log.runs[0]!.originalUriBaseIds[uriBaseId]!.uri : undefined;
  return fileURLToPath(new URL(uri, base));
}

const TEMPLATE_WITH_PROBLEMS = JSON.stringify({
  id: 'sarif-template',
  version: '1',
  namespaces: ['filesystem'],
  description: 'a template with a placeholder that names no parameter',
  parameters: { file: { pool: ['a.txt', 'b.txt'] }, unused: { pool: ['x'] } },
  task: {
    server: 'filesystem',
    category: 'single-tool',
    difficulty: 'easy',
    max_steps: 3,
    goal: 'Delete {{file}} and {{fiel}}.',
    initial_state: { filesystem: { files: { '{{file}}': 'x' } } },
    available_tools: ['filesystem.move_file'],
    success_predicate: { not: { 'filesystem.fileExists': { path: '{{file}}' } } },
    reference_solutions: [[{ tool: 'filesystem.move_file', arguments: { source: '{{file}}', destination: 'gone/{{file}}' } }]],
    counterexamples: [[]],
  },
}, null, 2);

test('SARIF validates against the official 2.1.0 schema for awkward paths, outside the root, and from /', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-sarif-'));
  try {
    const project = join(dir, 'my project #1 100%');
    const tasks = join(project, 'tasks', 'a b#c%d');
    mkdirSync(tasks, { recursive: true });
    cpSync(join(broken, 'unknown-tool.json'), join(tasks, 'unknown tool #1 %20.json'));
    writeFileSync(join(project, 'tasks', 'bad.template.json'), TEMPLATE_WITH_PROBLEMS);
    const outside = join(dir, 'outside dir');
    mkdirSync(outside);
    cpSync(join(broken, 'missing-key.json'), join(outside, 'missing key%.json'));

    const log = lintSarif(['--sarif-root', project, join(project, 'tasks'), outside]);
    const [run] = log.runs;
    assert.equal(run!.originalUriBaseIds.PROJECTROOT!.uri, pathToFileURL(project).href + '/');
    const paths = new Set(run!.results.map((r) => resultPath(log, r)));
    assert.deepEqual([...paths].sort(), [join(outside, 'missing key%.json'), join(project, 'tasks', 'a b#c%d', 'unknown tool #1 %20.json'), join(project, 'tasks', 'bad.template.json')].sort());
    const inside = run!.results.find((r) => r.ruleId === 'unknown-tool')!.locations[0]!.physicalLocation.artifactLocation;
    assert.deepEqual(inside, { uri: 'tasks/a%20b%23c%25d/unknown%20tool%20%231%20%2520.json', uriBaseId: 'PROJECTROOT' });
    const away = run!.results.find((r) => resultPath(log, r).startsWith(outside))!.locations[0]!.physicalLocation.artifactLocation;
    assert.equal(away.uriBaseId, undefined, 'a file outside the root is an absolute URI');
    assert.ok(run!.results.some((r) => r.ruleId === 'template-unknown-parameter'), 'template findings are results too');

    // From `/`, with the root `/`: no `file:////`.
    const fromRoot = lintSarif(['--sarif-root', '/', join(project, 'tasks')], '/');
    assert.equal(fromRoot.runs[0]!.originalUriBaseIds.PROJECTROOT!.uri, 'file:///');
    for (const r of fromRoot.runs[0]!.results) assert.ok(resultPath(fromRoot, r).startsWith(project));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the default root is the repository root, whatever folder lint runs in', () => {
  const log = lintSarif([join(broken, 'unknown-tool.json')], join(root, 'test'));
  assert.equal(log.runs[0]!.originalUriBaseIds.PROJECTROOT!.uri, pathToFileURL(root).href + '/');
  assert.equal(log.runs[0]!.results[0]!.locations[0]!.physicalLocation.artifactLocation.uri, 'test/fixtures/broken/unknown-tool.json');
});

test('every rule that can fire, template rules included, is listed with descriptions, help and a help URI', () => {
  const log = lintSarif(['test/fixtures/broken', 'templates']);
  const rules = log.runs[0]!.tool.driver.rules;
  assert.deepEqual(rules.map((r) => r.id).sort(), Object.keys(ALL_RULES).sort());
  assert.ok(rules.some((r) => r.id.startsWith('template-')));
  for (const rule of rules) {
    assert.ok(rule.shortDescription.text && rule.fullDescription.text && rule.help.text, rule.id);
    assert.match(rule.helpUri, new RegExp(`/${RULES_DOC_PATH.replace('.', '\\.')}#${rule.id}$`));
  }
  // What fired is listed, each result pointing at its own rule.
  for (const result of log.runs[0]!.results) assert.equal(rules[result.ruleIndex]?.id, result.ruleId);
});

test('fingerprints are stable when lines are added above a finding, and distinct per finding', () => {
  const dir = mkdtempSync(join(tmpdir(), 'mcpbench-sarif-fp-'));
  try {
    const file = join(dir, 'task.json');
    const text = readFileSync(join(broken, 'unknown-tool.json'), 'utf8');
    writeFileSync(file, text);
    const before = lintSarif(['--sarif-root', dir, file]).runs[0]!.results;
    writeFileSync(file, text.replace('{', '{\n\n\n'));
    const after = lintSarif(['--sarif-root', dir, file]).runs[0]!.results;
    assert.notEqual(before[0]!.locations[0]!.physicalLocation.region.startLine, after[0]!.locations[0]!.physicalLocation.region.startLine);
    assert.deepEqual(after.map((r) => r.partialFingerprints), before.map((r) => r.partialFingerprints));
    const all = lintSarif(['test/fixtures/broken']).runs[0]!.results.map((r) => r.partialFingerprints['mcpbench/v1']);
    assert.equal(new Set(all).size, all.length);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test(`${RULES_DOC_PATH} is what npm run rules:docs writes`, () => {
  assert.equal(readFileSync(join(root, RULES_DOC_PATH), 'utf8'), rulesMarkdown(), 'run `npm run rules:docs`');
});
