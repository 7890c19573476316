import { test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { canonicalHash } from '../../server/src/canonical-json.ts';
import { boxSealer, keyFromEnvironment, parseSetKey, readSealedTasks, readTaskSources, seal, SealError, unseal, type SealedSet } from '../../server/src/tasks/seal.ts';
import { filesUnder } from '../../server/src/tasks/files.ts';

const root = join(__dirname, '..', '..');
const HEX_KEY = randomBytes(32).toString('hex');

function makeSet(): string {
  const dir = join(mkdtempSync(join(tmpdir(), 'mcpbench-seal-')), 'private');
  const tasks = [];
  for (const [ns, name] of [['travel', 'travel-cheapest-flight-001'], ['shop', 'shop-simple-order-001']] as const) {
    const text = readFileSync(join(root, 'test', 'fixtures', 'tasks', ns, `${name}.json`), 'utf8');
    mkdirSync(join(dir, 'tasks', ns), { recursive: true });
    writeFileSync(join(dir, 'tasks', ns, `${name}.json`), text);
    tasks.push({ task_id: name, file: `tasks/${ns}/${name}.json`, sha256: canonicalHash(JSON.parse(text)), added: '2026-11' });
  }
  writeFileSync(join(dir, 'set.json'), JSON.stringify({ name: 'private', tasks }, null, 2));
  return dir;
}

const writeSealed = (file: string, sealed: SealedSet) => writeFileSync(file, JSON.stringify(sealed));
const flipByte = (base64: string, at: number) => {
  const bytes = Buffer.from(base64, 'base64');
  bytes[at % bytes.length]! ^= 0x01;
  return bytes.toString('base64');
};

test('seal and unseal round-trip a set folder through one file that holds no plain text', () => {
  const setDir = makeSet();
  const out = join(setDir, '..', 'private.sealed.json');
  const sealed = seal(setDir, HEX_KEY, { out });
  const onDisk = readFileSync(out, 'utf8');
  assert.equal(JSON.parse(onDisk).format, 'mcpbench-sealed-set');
  assert.ok(!onDisk.includes('cheapest') && !onDisk.includes('travel-cheapest-flight-001'), 'no task text in the sealed file');
  assert.equal(Buffer.from(sealed.nonce, 'base64').length, 12);
  assert.notEqual(seal(setDir, HEX_KEY).nonce, sealed.nonce, 'a fresh nonce per sealed file');

  const target = join(setDir, '..', 'unsealed');
  const files = unseal(out, HEX_KEY, { out: target });
  assert.deepEqual(filesUnder(target), filesUnder(setDir));
  for (const path of filesUnder(setDir)) assert.equal(readFileSync(join(target, path), 'utf8'), readFileSync(join(setDir, path), 'utf8'), path);
  assert.equal(files.length, 3);
  assert.throws(() => unseal(out, HEX_KEY, { out: target }), /not empty/);
});

test('readSealedTasks gives run and check the listed tasks straight from the sealed file', () => {
  const setDir = makeSet();
  const out = join(setDir, '..', 'private.sealed.json');
  seal(setDir, HEX_KEY, { out });
  const tasks = readSealedTasks(out, HEX_KEY);
  assert.deepEqual(tasks.map((t) => t.file), [`${out}#tasks/travel/travel-cheapest-flight-001.json`, `${out}#tasks/shop/shop-simple-order-001.json`]);
  assert.equal(JSON.parse(tasks[0]!.text).id, 'travel-cheapest-flight-001');
  assert.deepEqual(readSealedTasks(out, parseSetKey(HEX_KEY)), tasks);

  // A set whose task no longer matches set.json is refused even though the seal itself is intact.
  const file = join(setDir, 'tasks/shop/shop-simple-order-001.json');
  writeFileSync(file, readFileSync(file, 'utf8').replace('"max_steps": ', '"max_steps": 1'));
  seal(setDir, HEX_KEY, { out });
  assert.throws(() => readSealedTasks(out, HEX_KEY), /shop-simple-order-001 does not match its sha256/);
});

test('any changed byte of a sealed file, or a wrong key, is a clear error', () => {
  const setDir = makeSet();
  const out = join(setDir, '..', 'private.sealed.json');
  const sealed = seal(setDir, HEX_KEY, { out });
  const tampered = join(setDir, '..', 'tampered.sealed.json');
  const variants: [string, SealedSet][] = [
    ['ciphertext first byte', { ...sealed, ciphertext: flipByte(sealed.ciphertext, 0) }],
    ['ciphertext middle byte', { ...sealed, ciphertext: flipByte(sealed.ciphertext, 200) }],
    ['tag', { ...sealed, tag: flipByte(sealed.tag, 5) }],
    ['nonce', { ...sealed, nonce: flipByte(sealed.nonce, 3) }],
    ['header name', { ...sealed, name: 'public' }],
  ];
  for (const [what, variant] of variants) {
    writeSealed(tampered, variant);
    assert.throws(() => unseal(tampered, HEX_KEY), (e: unknown) => e instanceof SealError && /the key is wrong or the file was changed/.test(e.message), what);
  }
  assert.throws(() => readSealedTasks(out, randomBytes(32).toString('hex')), /authentication failed/);
  assert.throws(() => readSealedTasks(out, 'a long enough passphrase'), /sealed with a 32-byte key/);
  writeFileSync(tampered, '{"format":"zip"}');
  assert.throws(() => unseal(tampered, HEX_KEY), /not a sealed set/);
});

test('keys: hex and base64 bytes are used as is, anything else is a scrypt passphrase', () => {
  const bytes = randomBytes(32);
  assert.deepEqual(parseSetKey(bytes.toString('hex')), { kind: 'raw', key: bytes });
  assert.deepEqual(parseSetKey(bytes.toString('base64')), { kind: 'raw', key: bytes });
  assert.deepEqual(parseSetKey(bytes.toString('base64url')), { kind: 'raw', key: bytes });
  assert.deepEqual(parseSetKey('correct horse battery staple'), { kind: 'passphrase', passphrase: 'correct horse battery staple' });
  assert.throws(() => parseSetKey('short'), /at least 12 characters/);
  assert.throws(() => keyFromEnvironment({}), /MCPBENCH_SET_KEY/);
  assert.deepEqual(keyFromEnvironment({ MCPBENCH_SET_KEY: bytes.toString('hex') }), { kind: 'raw', key: bytes });

  const setDir = makeSet();
  const out = join(setDir, '..', 'pass.sealed.json');
  const sealed = seal(setDir, 'correct horse battery staple', { out });
  assert.equal(sealed.kdf.name, 'scrypt');
  assert.equal(readSealedTasks(out, 'correct horse battery staple').length, 2);
  assert.throws(() => readSealedTasks(out, 'correct horse battery stapler'), /authentication failed/);
  assert.throws(() => readSealedTasks(out, bytes.toString('hex')), /sealed with a passphrase/);
});

test('readTaskSources mixes task folders, sealed sets and single sealed tasks, leaving manifests out', () => {
  const setDir = makeSet();
  const out = join(setDir, '..', 'private.sealed.json');
  seal(setDir, HEX_KEY, { out });
  const key = () => HEX_KEY;
  const plain = readTaskSources([setDir], key);
  assert.deepEqual(plain.map((s) => JSON.parse(s.text).id).sort(), ['shop-simple-order-001', 'travel-cheapest-flight-001'], 'set.json is not a task');
  const sealed = readTaskSources([out], key);
  assert.equal(sealed.length, 2);
  const one = readTaskSources([sealed[1]!.file], key);
  assert.deepEqual(one, [sealed[1]]);
  assert.throws(() => readTaskSources([`${out}#tasks/none.json`], key), /does not list this task/);
  assert.throws(() => readTaskSources([out], () => randomBytes(32).toString('hex')), /authentication failed/);
});

test('sealed boxes (queue payloads): the set key opens them, bound to their job; another key, job or byte does not', () => {
  for (const key of [HEX_KEY, 'a passphrase of the set']) {
    const coordinator = boxSealer(key);
    const box = coordinator.seal('{"goal":"Book the cheapest flight"}', 'job:run-1.abc');
    assert.ok(!JSON.stringify(box).includes('cheapest'), 'no plain text in the box');
    // A worker holds its own sealer made from the same key (from its own environment).
    const worker = boxSealer(key);
    assert.equal(worker.open(box, 'job:run-1.abc'), '{"goal":"Book the cheapest flight"}');
    assert.equal(coordinator.open(worker.seal('result', 'result:run-1.abc'), 'result:run-1.abc'), 'result');
    assert.throws(() => worker.open(box, 'job:run-1.other'), SealError, 'a box moved to another job');
    assert.throws(() => boxSealer(randomBytes(32).toString('hex')).open(box, 'job:run-1.abc'), SealError);
    const changed = { ...box, ciphertext: Buffer.from(Buffer.from(box.ciphertext, 'base64').map((b, i) => (i === 0 ? b ^ 1 : b))).toString('base64') };
    assert.throws(() => worker.open(changed, 'job:run-1.abc'), SealError);
  }
});
