import { canonicalJson, sha256Hex } from './fingerprint.js';
import { InvalidKeyError } from './errors.js';

/** The longest key we accept. Long enough for a UUID plus a prefix; short enough to index. */
export const MAX_KEY_LENGTH = 255;

/** Printable ASCII, space to tilde: what an HTTP header value can carry without encoding. */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * Says what is wrong with a key, or returns undefined for a good one. The first message is the
 * one the dropbox story's fixture C prints (docs/origins.md): a blank key is an error, never something to fill in.
 */
export function keyProblem(key: unknown): string | undefined {
  if (typeof key !== 'string')
    return `idempotency key must be a string, got ${key === null ? 'null' : typeof key}`;
  if (key.trim() === '') return 'empty idempotency key';
  if (key.length > MAX_KEY_LENGTH)
    return `idempotency key is ${key.length} characters long; at most ${MAX_KEY_LENGTH} are allowed`;
  if (!PRINTABLE_ASCII.test(key)) {
    const bad = [...key].find((ch) => !PRINTABLE_ASCII.test(ch)) ?? '';
    const code = bad.codePointAt(0) ?? 0;
    return `idempotency key contains a character outside printable ASCII (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
  }
  if (key !== key.trim()) return 'idempotency key has leading or trailing whitespace';
  return undefined;
}

/** Returns the key unchanged, or throws an {@link InvalidKeyError} naming the problem. */
export function validateKey(key: unknown): string {
  const problem = keyProblem(key);
  if (problem !== undefined) throw new InvalidKeyError(problem, key);
  return key as string;
}

/**
 * Derives a key from the fields that identify one intent (say, student + assignment + version).
 * Deterministic and never from the clock: the same intent always gets the same key, so a retry
 * after a crash or restart is recognised as the same intent.
 */
export function keyFor(intent: unknown, prefix = 'ik'): string {
  // Validated like any other key: a prefix with a space or a non-ASCII letter, or one too long,
  // must fail here, where it is made, not as a 400 from the receiver.
  return validateKey(`${prefix}_${sha256Hex(canonicalJson(intent)).slice(0, 40)}`);
}

/** A fresh key for a new intent. Keep it with the intent and reuse it on every retry. */
export function newKey(generate: () => string = () => globalThis.crypto.randomUUID()): string {
  return validateKey(generate());
}
