import { fingerprint } from '../contract/fingerprint.js';
import { problemResponse } from './problem.js';
import { readBodyWithin } from './read-body.js';
import { requestFingerprint, type FingerprintInput } from './request-fingerprint.js';

/** A JSON body read in full and parsed, with the bytes it came in; or the problem to answer instead. */
export type JsonBodyRead =
  | { readonly kind: 'json'; readonly value: unknown; readonly bytes: Uint8Array }
  | { readonly kind: 'refused'; readonly response: Response };

export interface ReadJsonBodyOptions {
  /** Largest body accepted, in bytes (413 past it). */
  readonly maxBodyBytes: number;
  /** What the body carries, for the 415 message: "send the submission as application/json". */
  readonly what: string;
  /** Which Content-Types count as JSON. @default isJsonMediaType */
  readonly isJson?: (contentType: string | null) => boolean;
}

/**
 * Reads a JSON body before the ledger sees it: 415 for another media type, 413 past the limit,
 * 400 for bytes that are not UTF-8 JSON. The services check the fields of the value themselves
 * (422); a refused body changes nothing, so it never pins a key (Stripe's rule too: a request
 * that fails validation is not saved).
 */
export async function readJsonBody(request: Request, options: ReadJsonBodyOptions): Promise<JsonBodyRead> {
  const refuse = (response: Response): JsonBodyRead => ({ kind: 'refused', response });
  const type = request.headers.get('content-type');
  if (!(options.isJson ?? isJsonMediaType)(type)) {
    return refuse(problemResponse('unsupported_media_type', `send the ${options.what} as application/json, not ${type === null ? 'without a Content-Type' : JSON.stringify(type)}`));
  }
  const read = await readBodyWithin(request, options.maxBodyBytes);
  if (read.kind === 'too_large') return refuse(problemResponse('payload_too_large', `the body exceeds ${read.limitBytes} bytes`));
  let value: unknown;
  try {
    value = decodeJson(read.bytes);
  } catch (error) {
    return refuse(problemResponse('invalid_json', `the body is not valid UTF-8 JSON: ${error instanceof Error ? error.message : String(error)}`));
  }
  return { kind: 'json', value, bytes: read.bytes };
}

/**
 * `application/json` with no charset or UTF-8 (RFC 8259 section 8.1: JSON between systems is
 * UTF-8), or `application/…+json` (RFC 6839).
 */
export function isJsonMediaType(value: string | null): boolean {
  if (value === null) return false;
  const [essence = '', ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  const json = essence === 'application/json' || (/^application\/[a-z0-9.!#$&^_-]+\+json$/.test(essence));
  const charset = parameters.find((p) => p.startsWith('charset='))?.slice('charset='.length).replace(/^"|"$/g, '');
  return json && (charset === undefined || charset === 'utf-8' || charset === 'utf8');
}

/**
 * A JSON service's fingerprint: method, path and the body as canonical JSON (RFC 8785) under
 * `field`, so a retry whose JSON differs only in key order or spacing is the same request and
 * replays, while any changed value is a different one (422). A body that is not JSON never gets
 * this far (readJsonBody refuses it); should one, its bytes are fingerprinted.
 */
export function jsonBodyFingerprint(input: FingerprintInput, field: string): string {
  let value: unknown;
  try {
    value = decodeJson(input.body);
  } catch {
    return requestFingerprint(input);
  }
  return fingerprint({ method: input.method.toUpperCase(), path: `${input.url.pathname}${input.url.search}`, [field]: value });
}

function decodeJson(bytes: Uint8Array): unknown {
  return JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(bytes));
}
