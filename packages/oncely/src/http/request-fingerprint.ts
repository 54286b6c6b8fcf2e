import * as crypto from 'node:crypto';

/** What the middleware knows of a request when it fingerprints it. */
export interface FingerprintInput {
  readonly method: string;
  readonly url: URL;
  readonly headers: Headers;
  readonly body: Uint8Array;
  /** The value the service's `validate` step made of the body, when it has one. */
  readonly value?: unknown;
}

/**
 * SHA-256 as lowercase hex through node:crypto (OpenSSL): several times faster than the pure-JS
 * hash the browser-safe `contract/fingerprint` uses, with the same digests (docs/performance.md).
 * `crypto.hash` (Node 20.12 and later) is the one-shot form, without a Hash object per call.
 */
const sha256Hex: (input: string | Uint8Array) => string =
  typeof crypto.hash === 'function'
    ? (input) => crypto.hash('sha256', input, 'hex')
    : (input) => crypto.createHash('sha256').update(input).digest('hex');

/**
 * The default fingerprint: method, path with query, and the body's bytes (hashed). Two requests
 * that differ in any of them are different requests under one key: a 422 (IETF Idempotency-Key
 * draft, section 2.2). The host is left out so one service behind two names is still one service.
 * Bodies are compared as bytes, not parsed: an app that wants `{"a":1,"b":2}` and its reordering
 * to match can pass a fingerprintOf that canonicalises JSON (contract's `fingerprint`).
 *
 * Equal to `fingerprint({ method, path, body: sha256Hex(body) })` of contract/fingerprint, digit
 * for digit (a test holds them together): that is the canonical JSON (RFC 8785) of an object of
 * three strings, written out here with its keys in sorted order, since JCS writes a string as
 * `JSON.stringify` does.
 */
export function requestFingerprint(
  input: FingerprintInput & { readonly pathAndQuery?: string },
): string {
  const method = JSON.stringify(input.method.toUpperCase());
  // The guard's input carries the path and query already (guard-inputs.ts): no URL is parsed.
  const path = JSON.stringify(input.pathAndQuery ?? `${input.url.pathname}${input.url.search}`);
  return sha256Hex(`{"body":"${sha256Hex(input.body)}","method":${method},"path":${path}}`);
}
