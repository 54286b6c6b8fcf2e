import { fingerprint } from '../contract/fingerprint.js';
import { problemResponse, type ProblemType } from './problem.js';
import { requestFingerprint, type FingerprintInput } from './request-fingerprint.js';
import type { Validate } from './request-validation.js';
import { invalidFieldsResponse } from './error-list.js';
import { parseStrictJson } from './strict-json.js';

/**
 * The Content-Types a JSON body may carry, named in every 415. JSON between systems is UTF-8
 * (RFC 8259 section 8.1) and application/json defines no charset parameter, so only none or a
 * redundant UTF-8 one is accepted.
 */
export const ACCEPTED_JSON_TYPES = ['application/json', 'application/json; charset=utf-8'] as const;

/** A service's check of a parsed JSON value: the typed value, or every reason it is not one. */
export type JsonCheck<V> = (
  value: unknown,
) =>
  | { readonly ok: true; readonly value: V }
  | { readonly ok: false; readonly errors: readonly string[] };

export interface JsonValidatorOptions<V> {
  /** What the body carries, for the 415 message: "send the submission as application/json". */
  readonly what: string;
  /** The service's own field check. */
  readonly check: JsonCheck<V>;
  /** The service's 422 kind for a value that fails `check` (`invalid_submission`, `invalid_command`). */
  readonly invalid: ProblemType;
}

/**
 * A JSON service's `validate` step for the idempotency middleware: 415 for another media type,
 * 400 for bytes that are not UTF-8 JSON or JSON that means two things (a repeated member name,
 * named in `member` and `pointer`; a lone surrogate; nesting past MAX_JSON_DEPTH: see
 * parseStrictJson), the service's 422 (the first 20 errors, and how many in all) for a value
 * its `check` refuses. The body is parsed here once; the handler gets
 * the checked value.
 */
export function jsonValidator<V>(options: JsonValidatorOptions<V>): Validate<V> {
  return ({ request, body }) => {
    const type = request.headers.get('content-type');
    if (!isJsonMediaType(type))
      return { ok: false, response: unsupportedMediaType(request.method, options.what, type) };
    const parsed = parseStrictJson(body);
    if (parsed.kind === 'invalid') {
      const extensions =
        parsed.member === undefined
          ? undefined
          : { member: parsed.member, pointer: parsed.pointer };
      return {
        ok: false,
        response: problemResponse(
          'invalid_json',
          `the body is not valid UTF-8 JSON: ${parsed.reason}`,
          { extensions },
        ),
      };
    }
    const checked = options.check(parsed.value);
    if (!checked.ok)
      return { ok: false, response: invalidFieldsResponse(options.invalid, checked.errors) };
    return { ok: true, value: checked.value };
  };
}

/**
 * The one Content-Type rule of every JSON service here (jsonValidator applies it; no service has
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
  return problemResponse(
    'unsupported_media_type',
    `send the ${what} as application/json (no charset, or charset=utf-8), ${sent}`,
    {
      extensions: { accepted: ACCEPTED_JSON_TYPES },
      headers: {
        [method.toUpperCase() === 'PATCH' ? 'accept-patch' : 'accept-post']:
          ACCEPTED_JSON_TYPES.join(', '),
      },
    },
  );
}

/**
 * A JSON service's fingerprint: method, path and the body as canonical JSON (RFC 8785) under
 * `field`, so a retry whose JSON differs only in key order or spacing is the same request and
 * replays, while any changed value is a different one (422). The middleware passes the value its
 * `validate` step parsed, so the body is not parsed twice; called without one (a direct call),
 * the bytes are decoded, and bytes that are not JSON are fingerprinted as bytes.
 */
export function jsonBodyFingerprint(input: FingerprintInput, field: string): string {
  let value: unknown = input.value;
  if (value === undefined) {
    const parsed = parseStrictJson(input.body);
    if (parsed.kind === 'invalid') return requestFingerprint(input);
    value = parsed.value;
  }
  return fingerprint({
    method: input.method.toUpperCase(),
    path: `${input.url.pathname}${input.url.search}`,
    [field]: value,
  });
}
