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
}

/**
 * The Content-Types a JSON body may carry, named in every 415. JSON between systems is UTF-8
 * (RFC 8259 section 8.1) and application/json defines no charset parameter, so only none or a
 * redundant UTF-8 one is accepted.
 */
export const ACCEPTED_JSON_TYPES = ['application/json', 'application/json; charset=utf-8'] as const;

/**
 * Reads a JSON body before the ledger sees it: 415 for another media type, 413 past the limit,
 * 400 for bytes that are not UTF-8 JSON. The services check the fields of the value themselves
 * (422); a refused body changes nothing, so it never pins a key (Stripe's rule too: a request
 * that fails validation is not saved).
 */
export async function readJsonBody(request: Request, options: ReadJsonBodyOptions): Promise<JsonBodyRead> {
  const refuse = (response: Response): JsonBodyRead => ({ kind: 'refused', response });
  const type = request.headers.get('content-type');
  if (!isJsonMediaType(type)) return refuse(unsupportedMediaType(request.method, options.what, type));
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
 * The one Content-Type rule of every JSON service here (readJsonBody applies it; no service has
 * its own): `application/json` with no parameter, or with `charset=utf-8` alone; names and values
 * case-insensitive, the value optionally quoted (RFC 9110 sections 8.3.1 and 5.6.6). JSON between
 * systems is UTF-8 (RFC 8259 section 8.1), so `charset=latin1` is refused rather than decoded
 * against what the sender said; so are `+json` types (`merge-patch+json` would promise RFC 7396
 * semantics no service implements) and other parameters.
 */
export function isJsonMediaType(value: string | null): boolean {
  if (value === null) return false;
  const [essence = '', ...parameters] = value.split(';').map((part) => part.trim().toLowerCase());
  if (essence !== 'application/json') return false;
  if (parameters.length === 0) return true;
  return parameters.length === 1 && /^charset\s*=\s*(?:utf-8|"utf-8")$/.test(parameters[0]!);
}

/** 415 naming what is accepted, in the body and in Accept-Post or Accept-Patch (RFC 5789 section 3.1). */
function unsupportedMediaType(method: string, what: string, type: string | null): Response {
  const sent = type === null ? 'without a Content-Type' : `not ${JSON.stringify(type)}`;
  const response = problemResponse('unsupported_media_type', `send the ${what} as application/json (no charset, or charset=utf-8), ${sent}`, {
    extensions: { accepted: ACCEPTED_JSON_TYPES },
  });
  response.headers.set(method.toUpperCase() === 'PATCH' ? 'accept-patch' : 'accept-post', ACCEPTED_JSON_TYPES.join(', '));
  return response;
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
