import { canonicalJson } from '../../contract/fingerprint.js';

/**
 * The bytes a framework adapter fingerprints when a body parser ran before it, or undefined when
 * none did (the adapter then reads the stream itself):
 * 1. the raw bytes, when the parser's verify hook kept them (`captureRawBody`, or `req.rawBody`);
 * 2. a Buffer or string body (`express.raw()`, `express.text()`), as sent;
 * 3. a parsed body (`express.json()`, a urlencoded form, Fastify's JSON), canonicalised
 *    (RFC 8785), so a retry that differs only in whitespace or key order is the same payload.
 * The exact bytes are better: canonical JSON cannot tell `1.0` from `1`.
 */
export function parsedBodyBytes(
  rawBody: unknown,
  body: unknown,
  parsed: boolean,
): Uint8Array | undefined {
  if (rawBody instanceof Uint8Array) return rawBody;
  if (body instanceof Uint8Array) return body;
  if (typeof body === 'string') return new TextEncoder().encode(body);
  if (!parsed || body === undefined || body === null) return parsed ? new Uint8Array(0) : undefined;
  return new TextEncoder().encode(canonicalJson(body));
}

/** The bytes `captureRawBody` kept, by request. */
const rawBodies = new WeakMap<object, Uint8Array>();

/**
 * A body parser's `verify` hook that keeps the exact bytes, so the fingerprint is taken from what
 * was sent: `app.use(express.json({ verify: captureRawBody }))`. Kept beside the request, not on
 * it: a property added to an Express request (whose prototype Express changed) gives it a hidden
 * class of its own, a few µs of V8's time per request.
 */
export function captureRawBody(req: object, _res: unknown, buffer: Uint8Array): void {
  rawBodies.set(req, buffer);
}

/** What `captureRawBody` kept for `req`, else a `rawBody` another hook set on it. */
export function rawBodyOf(req: { readonly rawBody?: unknown }): unknown {
  return rawBodies.get(req) ?? req.rawBody;
}
