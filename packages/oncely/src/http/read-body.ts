import { knownRequestBody } from './known-body.js';

/** A body read in full, or the news that it was larger than allowed. */
export type BodyRead =
  | { readonly kind: 'ok'; readonly bytes: Uint8Array }
  | { readonly kind: 'too_large'; readonly limitBytes: number };

/** Bytes already read, judged against the limit. */
export function bytesWithin(bytes: Uint8Array, maxBytes: number): BodyRead {
  return bytes.byteLength > maxBytes
    ? { kind: 'too_large', limitBytes: maxBytes }
    : { kind: 'ok', bytes };
}

/**
 * Reads a request body, refusing one larger than `maxBytes` without buffering it: a declared
 * Content-Length over the limit is refused before reading, and a streamed body is cut off at the
 * first chunk past it. (The receipt needs the whole body, so there is no streaming through.)
 * A body the node adapters already read (known-body.ts) is taken as is and left unread, so the
 * same Request can go on to the handler.
 */
export async function readBodyWithin(request: Request, maxBytes: number): Promise<BodyRead> {
  const known = knownRequestBody(request);
  if (known !== undefined) return bytesWithin(known, maxBytes);
  const declared = Number(request.headers.get('content-length') ?? Number.NaN);
  if (Number.isFinite(declared) && declared > maxBytes)
    return { kind: 'too_large', limitBytes: maxBytes };
  if (request.body === null) return { kind: 'ok', bytes: new Uint8Array(0) };
  const reader = request.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > maxBytes) {
      // Not awaited: the cancel of a tee'd branch (a clone's body, as the Fetch adapter reads)
      // settles only once its twin is cancelled too, and the answer need not wait for it.
      reader.cancel().catch(() => {});
      return { kind: 'too_large', limitBytes: maxBytes };
    }
    chunks.push(value);
  }
  const bytes = new Uint8Array(total);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return { kind: 'ok', bytes };
}
