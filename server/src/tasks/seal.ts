/**
 * Sealed sets: the private set never sits in plain text in a repository. `seal` packs every file of a set
 * folder into one JSON bundle and encrypts it with AES-256-GCM (Node's crypto: authenticated encryption, a
 * fresh random 96-bit nonce per sealed file); the header (format, version, cipher, key derivation, set name)
 * is authenticated as associated data, so changing any byte of the file — header, nonce, tag or ciphertext —
 * makes opening it fail.
 *
 * The key comes from the environment variable MCPBENCH_SET_KEY:
 * - 32 random bytes as 64 hex digits or as base64 (44 characters with the `=`, or 43 base64url): used as is
 *   (`openssl rand -hex 32`);
 * - anything else is a passphrase (at least 12 characters), stretched with scrypt (N=2^15, r=8, p=1) and a
 *   random 16-byte salt stored in the sealed file.
 */
import { createCipheriv, createDecipheriv, randomBytes, scryptSync } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { writeFileAtomicSync, writeJsonAtomicSync } from '../atomic-file.ts';
import { basename, dirname, isAbsolute, join, normalize, resolve } from 'node:path';
import canonicalize from 'canonicalize';
import { collectTaskFiles, isTaskFileName, readText, filesUnder, isSetMetadataFile } from './files.ts';
import { canonicalHash } from '../canonical-json.ts';
import { SET_MANIFEST_FILE, SetManifestSchema } from './set-manifest.ts';
import { McpbenchError } from '../errors.ts';

export const SET_KEY_ENV = 'MCPBENCH_SET_KEY';
export const SEALED_FORMAT = 'mcpbench-sealed-set';
const SCRYPT = { N: 2 ** 15, r: 8, p: 1 };

export class SealError extends McpbenchError {
  static override readonly code: string = 'sealed-set';
}

export type SealKey = { kind: 'raw'; key: Buffer } | { kind: 'passphrase'; passphrase: string };

/** MCPBENCH_SET_KEY's value as a key: 32 bytes in hex or base64, else a passphrase for scrypt. */
export function parseSetKey(value: string): SealKey {
  const trimmed = value.trim();
  if (/^[0-9a-fA-F]{64}$/.test(trimmed)) return { kind: 'raw', key: Buffer.from(trimmed, 'hex') };
  if (/^[A-Za-z0-9+/]{43}=$/.test(trimmed)) return { kind: 'raw', key: Buffer.from(trimmed, 'base64') };
  if (/^[A-Za-z0-9_-]{43}$/.test(trimmed)) return { kind: 'raw', key: Buffer.from(trimmed, 'base64url') };
  if (trimmed.length < 12) throw new SealError(`${SET_KEY_ENV} is neither 32 bytes (64 hex digits or base64) nor a passphrase of at least 12 characters`);
  return { kind: 'passphrase', passphrase: trimmed };
}

export function keyFromEnvironment(env: NodeJS.ProcessEnv = process.env): SealKey {
  const value = env[SET_KEY_ENV];
  if (!value) throw new SealError(`set ${SET_KEY_ENV} to the set key (openssl rand -hex 32) or a passphrase`);
  return parseSetKey(value);
}

export type Kdf = { name: 'none' } | { name: 'scrypt'; salt: string; N: number; r: number; p: number };

export interface SealedSet {
  format: typeof SEALED_FORMAT;
  version: 1;
  cipher: 'aes-256-gcm';
  kdf: Kdf;
  /** The set's name (the folder name), for people; authenticated with the rest of the header. */
  name: string;
  nonce: string;
  tag: string;
  ciphertext: string;
}

export interface BundleFile {
  /** Relative to the set folder, `/`-separated. */
  path: string;
  text: string;
}

const asKey = (key: SealKey | string) => (typeof key === 'string' ? parseSetKey(key) : key);

function deriveKey(key: SealKey, kdf: Kdf): Buffer {
  if (key.kind === 'raw') {
    if (kdf.name !== 'none') throw new SealError('this set was sealed with a passphrase; set MCPBENCH_SET_KEY to that passphrase');
    if (key.key.length !== 32) throw new SealError('the set key must be 32 bytes');
    return key.key;
  }
  if (kdf.name !== 'scrypt') throw new SealError('this set was sealed with a 32-byte key; set MCPBENCH_SET_KEY to that key (hex or base64)');
  return scryptSync(key.passphrase, Buffer.from(kdf.salt, 'base64'), 32, { N: kdf.N, r: kdf.r, p: kdf.p, maxmem: 256 * kdf.N * kdf.r });
}

const header = (s: Pick<SealedSet, 'format' | 'version' | 'cipher' | 'kdf' | 'name'>) =>
  Buffer.from(canonicalize({ format: s.format, version: s.version, cipher: s.cipher, kdf: s.kdf, name: s.name })!, 'utf8');

/** AES-256-GCM of `plaintext` under a 32-byte key, `aad` authenticated with it (a fresh 96-bit nonce each time). */
function encrypt(plaintext: Buffer, key: Buffer, aad: Buffer): { nonce: string; tag: string; ciphertext: string } {
  const nonce = randomBytes(12);
  const cipher = createCipheriv('aes-256-gcm', key, nonce);
  cipher.setAAD(aad);
  const ciphertext = Buffer.concat([cipher.update(plaintext), cipher.final()]);
  return { nonce: nonce.toString('base64'), tag: cipher.getAuthTag().toString('base64'), ciphertext: ciphertext.toString('base64') };
}

/** The inverse of `encrypt`; throws (without detail) when the key, the AAD or any byte is wrong. */
function decrypt(box: { nonce: unknown; tag: unknown; ciphertext: unknown }, key: Buffer, aad: Buffer, what: string): Buffer {
  const nonce = Buffer.from(String(box.nonce), 'base64');
  const tag = Buffer.from(String(box.tag), 'base64');
  if (nonce.length !== 12 || tag.length !== 16) throw new SealError(`${what}: the file was changed (nonce or tag has the wrong length)`);
  const decipher = createDecipheriv('aes-256-gcm', key, nonce);
  decipher.setAAD(aad);
  decipher.setAuthTag(tag);
  return Buffer.concat([decipher.update(Buffer.from(String(box.ciphertext), 'base64')), decipher.final()]);
}

/** A key and its derivation for a new sealed file: as is for 32 bytes, scrypt with a fresh salt for a passphrase. */
function newDerivedKey(key: SealKey | string): { kdf: Kdf; key: Buffer } {
  const k = asKey(key);
  const kdf: Kdf = k.kind === 'raw' ? { name: 'none' } : { name: 'scrypt', salt: randomBytes(16).toString('base64'), ...SCRYPT };
  return { kdf, key: deriveKey(k, kdf) };
}

/** Encrypts a bundle of files. */
export function sealFiles(files: readonly BundleFile[], key: SealKey | string, name: string): SealedSet {
  const derived = newDerivedKey(key);
  const base = { format: SEALED_FORMAT as typeof SEALED_FORMAT, version: 1 as const, cipher: 'aes-256-gcm' as const, kdf: derived.kdf, name };
  const plaintext = Buffer.from(JSON.stringify({ files: files.map((f) => ({ path: f.path, text: f.text })) }), 'utf8');
  return { ...base, ...encrypt(plaintext, derived.key, header(base)) };
}

/**
 * A sealed box: a small message (a queue job's payload or result) encrypted with the set key, by the same
 * AES-256-GCM as sealed sets. The key is derived once per `BoxSealer` (scrypt runs once for a passphrase, not
 * once per message); `context` (a job id) is authenticated with the message, so a box cannot be moved to
 * another job.
 */
export interface SealedBox {
  kdf: Kdf;
  nonce: string;
  tag: string;
  ciphertext: string;
}

export interface BoxSealer {
  seal(plaintext: string, context: string): SealedBox;
  /** Opens a box sealed with the same set key (by any sealer); SealError when the key or any byte is wrong. */
  open(box: SealedBox, context: string): string;
}

const boxAad = (kdf: Kdf, context: string) => Buffer.from(canonicalize({ format: 'mcpbench-sealed-box', version: 1, kdf, context })!, 'utf8');

export function boxSealer(key: SealKey | string): BoxSealer {
  const k = asKey(key);
  let own: { kdf: Kdf; key: Buffer } | undefined;
  /** Keys derived for the salts of boxes opened (one scrypt per salt). */
  const derived = new Map<string, Buffer>();
  return {
    seal(plaintext, context) {
      own ??= newDerivedKey(k);
      return { kdf: own.kdf, ...encrypt(Buffer.from(plaintext, 'utf8'), own.key, boxAad(own.kdf, context)) };
    },
    open(box, context) {
      const id = JSON.stringify(box.kdf);
      let key = derived.get(id);
      if (!key) {
        key = deriveKey(k, box.kdf);
        derived.set(id, key);
      }
      try {
        return decrypt(box, key, boxAad(box.kdf, context), 'a sealed box').toString('utf8');
      } catch (error) {
        if (error instanceof SealError) throw error;
        throw new SealError('cannot open a sealed box: the set key is wrong or the box was changed (authentication failed)');
      }
    },
  };
}

/** Seals every file of a set folder into one sealed set; writes it to `out` when given. */
export function seal(setDir: string, key: SealKey | string, options: { out?: string } = {}): SealedSet {
  if (!existsSync(setDir)) throw new SealError(`${setDir}: no such set folder`);
  const files = filesUnder(setDir)
    .filter((path) => !path.endsWith('.sealed.json'))
    .map((path) => ({ path, text: readText(join(setDir, path)) }));
  if (files.length === 0) throw new SealError(`${setDir}: nothing to seal`);
  const sealed = sealFiles(files, key, basename(setDir.replace(/[\\/]+$/, '')));
  if (options.out) {
    mkdirSync(dirname(options.out), { recursive: true });
    writeJsonAtomicSync(options.out, sealed);
  }
  return sealed;
}

/** Decrypts a sealed set; a wrong key and a changed byte both fail authentication, with one clear error. */
export function openSealed(sealedFile: string, key: SealKey | string): BundleFile[] {
  if (!existsSync(sealedFile)) throw new SealError(`${sealedFile}: no such sealed set`);
  let sealed: SealedSet;
  try {
    sealed = JSON.parse(readFileSync(sealedFile, 'utf8')) as SealedSet;
  } catch (error) {
    throw new SealError(`${sealedFile}: not a sealed set (${(error as Error).message})`);
  }
  if (sealed?.format !== SEALED_FORMAT || sealed.version !== 1 || sealed.cipher !== 'aes-256-gcm') {
    throw new SealError(`${sealedFile}: not a sealed set of a version this mcpbench reads (format ${SEALED_FORMAT}, version 1)`);
  }
  let plaintext: Buffer;
  try {
    plaintext = decrypt(sealed, deriveKey(asKey(key), sealed.kdf), header(sealed), sealedFile);
  } catch (error) {
    if (error instanceof SealError) throw error;
    throw new SealError(`${sealedFile}: cannot open: the key is wrong or the file was changed (authentication failed)`);
  }
  const bundle = JSON.parse(plaintext.toString('utf8')) as { files: BundleFile[] };
  for (const f of bundle.files) {
    if (isAbsolute(f.path) || normalize(f.path).split(/[\\/]/).includes('..')) throw new SealError(`${sealedFile}: refusing a path outside the set: ${f.path}`);
  }
  return bundle.files;
}

/** Decrypts a sealed set into `out` (which must be missing or empty unless `overwrite`). */
export function unseal(sealedFile: string, key: SealKey | string, options: { out?: string; overwrite?: boolean } = {}): BundleFile[] {
  const files = openSealed(sealedFile, key);
  if (options.out) {
    if (existsSync(options.out) && readdirSync(options.out).length > 0 && !options.overwrite) {
      throw new SealError(`${options.out} is not empty; unseal into a new folder`);
    }
    for (const f of files) {
      const target = join(options.out, f.path);
      mkdirSync(dirname(target), { recursive: true });
      writeFileAtomicSync(target, f.text);
    }
  }
  return files;
}

/**
 * The task files of a sealed set, read in memory, for `run` and `check`: the tasks set.json lists (each
 * checked against its sha256), or every task file when there is no set.json. `file` names the sealed file
 * and the path inside it: `sets/private.sealed.json#tasks/travel/x.json`.
 */
export function readSealedTasks(sealedFile: string, key: SealKey | string = keyFromEnvironment()): { file: string; text: string }[] {
  const files = openSealed(sealedFile, key);
  const byPath = new Map(files.map((f) => [f.path, f.text]));
  const manifestText = byPath.get(SET_MANIFEST_FILE);
  if (manifestText === undefined) {
    return files
      .filter((f) => isTaskFileName(basename(f.path)) && !isSetMetadataFile(basename(f.path)))
      .map((f) => ({ file: `${sealedFile}#${f.path}`, text: f.text }));
  }
  const manifest = SetManifestSchema.parse(JSON.parse(manifestText));
  return manifest.tasks.map((entry) => {
    const text = byPath.get(entry.file);
    if (text === undefined) throw new SealError(`${sealedFile}: set.json lists ${entry.file}, which the sealed set does not hold`);
    let hash: string;
    try {
      hash = canonicalHash(JSON.parse(text));
    } catch {
      throw new SealError(`${sealedFile}#${entry.file} is not JSON`);
    }
    if (hash !== entry.sha256) throw new SealError(`${sealedFile}#${entry.file}: ${entry.task_id} does not match its sha256 in set.json`);
    return { file: `${sealedFile}#${entry.file}`, text };
  });
}

const SEALED_SUFFIX = '.sealed.json';

/** Whether a task source (as run.json records it) is a task of a sealed set: `x.sealed.json#tasks/a.json`. */
export const isSealedSource = (file: string): boolean => file.includes(`${SEALED_SUFFIX}#`);

/**
 * The task sources `run` and `check` read: task files and folders as `collectTaskFiles` finds them (set,
 * batch and history manifests left out), sealed sets (`*.sealed.json`, opened with the key), and single
 * tasks of a sealed set as `readSealedTasks` names them (`x.sealed.json#tasks/a.json`, what a journal
 * records, so a resumed run finds them again).
 */
export function readTaskSources(paths: readonly string[], key: () => SealKey | string = keyFromEnvironment): { file: string; text: string }[] {
  const opened = new Map<string, Map<string, { file: string; text: string }>>();
  const open = (file: string) => {
    let entries = opened.get(file);
    if (!entries) {
      let k: SealKey | string;
      try {
        k = key();
      } catch (error) {
        // No key (or a malformed one): say which file needed it.
        if (error instanceof SealError) throw new SealError(`${file} is a sealed set: ${error.message}`);
        throw error;
      }
      entries = new Map(readSealedTasks(file, k).map((entry) => [entry.file, entry]));
      opened.set(file, entries);
    }
    return entries;
  };
  const out: { file: string; text: string }[] = [];
  for (const path of paths) {
    const inner = path.indexOf(`${SEALED_SUFFIX}#`);
    if (path.endsWith(SEALED_SUFFIX)) out.push(...open(resolve(path)).values());
    else if (inner >= 0) {
      const file = resolve(path.slice(0, inner + SEALED_SUFFIX.length));
      const wanted = `${file}${path.slice(inner + SEALED_SUFFIX.length)}`;
      const entry = open(file).get(wanted);
      if (!entry) throw new SealError(`${path}: the sealed set does not list this task`);
      out.push(entry);
    } else {
      for (const file of collectTaskFiles([path])) if (!isSetMetadataFile(basename(file))) out.push({ file, text: readText(file) });
    }
  }
  return out;
}
