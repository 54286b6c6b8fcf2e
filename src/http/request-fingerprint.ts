import { fingerprint, sha256Hex } from '../contract/fingerprint.js';

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
 * The default fingerprint: method, path with query, and the body's bytes (hashed). Two requests
 * that differ in any of them are different requests under one key: a 422 (IETF Idempotency-Key
 * draft, section 2.2). The host is left out so one service behind two names is still one service.
 * Bodies are compared as bytes, not parsed: an app that wants `{"a":1,"b":2}` and its reordering
 * to match can pass a fingerprintOf that canonicalises JSON (contract's `fingerprint`).
 */
export function requestFingerprint(input: FingerprintInput): string {
  return fingerprint({ method: input.method.toUpperCase(), path: `${input.url.pathname}${input.url.search}`, body: sha256Hex(input.body) });
}
