import { InvalidOptionError } from '../contract/errors.js';
import { fingerprint } from '../contract/fingerprint.js';
import type { FingerprintInput } from './request-fingerprint.js';

/**
 * The fingerprint of a request whose payload is what `payloadOf` made of it: the canonical JSON
 * (RFC 8785) of the method, the path with query and that payload, hashed. The method and the
 * path stay in, as in the default fingerprint: the same key sent to another route is another
 * request (IETF Idempotency-Key draft, section 2.4 lets the resource choose "selected elements"
 * of the payload; the key stays bound to one operation). A payload returned as a promise is
 * awaited.
 */
export function payloadFingerprint(
  input: FingerprintInput & { readonly pathAndQuery?: string },
  payload: unknown,
): string | Promise<string> {
  if (typeof (payload as { then?: unknown } | null)?.then === 'function')
    return Promise.resolve(payload).then((value) => payloadFingerprint(input, value));
  return fingerprint({
    method: input.method.toUpperCase(),
    path: input.pathAndQuery ?? `${input.url.pathname}${input.url.search}`,
    payload,
  });
}

/**
 * The middleware's fingerprint function: the one `payloadOf` makes, else `fingerprintOf`.
 * `givenFingerprintOf` is what the caller passed (undefined for the default): both at once is
 * refused, since `fingerprintOf` replaces the fingerprint that `payloadOf` feeds.
 */
export function fingerprintOfPayload(
  payloadOf: ((input: FingerprintInput) => unknown) | undefined,
  givenFingerprintOf: unknown,
  fingerprintOf: (input: FingerprintInput) => string | Promise<string>,
): (input: FingerprintInput) => string | Promise<string> {
  if (payloadOf === undefined) return fingerprintOf;
  if (typeof payloadOf !== 'function')
    throw new InvalidOptionError('payloadOf', payloadOf, 'a function (input) => a JSON value');
  if (givenFingerprintOf !== undefined)
    throw new InvalidOptionError(
      'payloadOf',
      'a function',
      'payloadOf or fingerprintOf, not both: fingerprintOf replaces the whole fingerprint',
    );
  return (input) => payloadFingerprint(input, payloadOf(input));
}
