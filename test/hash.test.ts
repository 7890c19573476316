import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { CanonicalizeError, canonicalHash, canonicalJson } from '../server/src/canonical-json.ts';

test('RFC 8785: keys sorted by UTF-16 code units, no whitespace, ES number forms', () => {
  assert.equal(canonicalJson({ b: 2, a: [1, { d: true, c: null }], '\u20ac': 'x', '\r': 'y' }), '{"\\r":"y","a":[1,{"c":null,"d":true}],"b":2,"€":"x"}');
  assert.equal(canonicalJson({ n: 1.0, m: 1e21, s: 0.000001, t: 4.5e-7 }), '{"m":1e+21,"n":1,"s":0.000001,"t":4.5e-7}');
});

test('the hash ignores key order and whitespace and changes with any value', () => {
  const a = JSON.parse('{"id":"t1","max_steps":6,"goal":"Move it.","tags":["a","b"]}');
  const b = JSON.parse('{\n  "tags": [ "a", "b" ],\n  "goal": "Move it.",\n  "max_steps": 6, "id": "t1"\n}');
  assert.equal(canonicalHash(a), canonicalHash(b));
  assert.equal(canonicalHash(a), createHash('sha256').update('{"goal":"Move it.","id":"t1","max_steps":6,"tags":["a","b"]}').digest('hex'));
  assert.notEqual(canonicalHash(a), canonicalHash({ ...a, max_steps: 7 }));
  assert.notEqual(canonicalHash(a), canonicalHash({ ...a, tags: ['b', 'a'] }), 'array order is significant');
});

test('a number out of double range cannot be canonicalised: a clear error, not a crash', () => {
  const value = JSON.parse('{"id":"t","max_steps":1e999}');
  assert.throws(() => canonicalHash(value), (error: Error) => error instanceof CanonicalizeError && /numbers out of range/.test(error.message));
});
