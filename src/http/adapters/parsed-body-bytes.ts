import { canonicalJson } from '../../contract/fingerprint.js';

/**
 * The bytes a framework adapter fingerprints when a body parser ran before it, or undefined when
 * none did (the adapter then reads the stream itself):
 * 1. `rawBody`, the exact bytes, when the parser's verify hook kept them (`captureRawBody`);
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

/**
 * A body parser's `verify` hook that keeps the exact bytes on `req.rawBody`, so the fingerprint
 * is taken from what was sent: `app.use(express.json({ verify: captureRawBody }))`.
 */
export function captureRawBody(req: object, _res: unknown, buffer: Uint8Array): void {
  (req as { rawBody?: Uint8Array }).rawBody = buffer;
}
