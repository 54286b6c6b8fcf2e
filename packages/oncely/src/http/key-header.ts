import { InvalidOptionError } from '../contract/errors.js';
import { keyProblem, MAX_KEY_LENGTH } from '../contract/idempotency-key.js';
import { readKeyField } from '../contract/key-field.js';

/** The key of a request, or why its Idempotency-Key field holds none (a 400 invalid_key). */
export type KeyFromHeader =
  | { readonly ok: true; readonly key: string }
  | { readonly ok: false; readonly problem: string };

/**
 * The key from an Idempotency-Key field value: one RFC 9651 Item (contract/key-field.ts says
 * what is accepted: `"k"` and a bare `k` are the same key; a list, a repeated field or
 * parameters are refused), then validated like any key (contract/idempotency-key), then held to
 * the receiver's `minKeyLength`. The draft's security considerations (section 5) ask a resource
 * to fix and publish its key format and to validate every key against it.
 */
export function keyFromHeader(value: string, minKeyLength: number): KeyFromHeader {
  const read = readKeyField(value);
  if (!read.ok) return read;
  const malformed = keyProblem(read.key);
  if (malformed !== undefined) return { ok: false, problem: malformed };
  if (read.key.length < minKeyLength)
    return {
      ok: false,
      problem: `idempotency key is ${read.key.length} characters long; this server needs at least ${minKeyLength} (minKeyLength)`,
    };
  return { ok: true, key: read.key };
}

/** Checks the `minKeyLength` option: a whole number of characters a key can have. */
export function checkMinKeyLength(value: number): void {
  if (!Number.isSafeInteger(value) || value < 1 || value > MAX_KEY_LENGTH)
    throw new InvalidOptionError(
      'minKeyLength',
      value,
      `a whole number of characters from 1 to ${MAX_KEY_LENGTH}`,
    );
}
