/**
 * Bodies oncely already holds as bytes, kept beside the Request or Response that carries them so
 * they are read from here rather than through the body's stream. On Node 20 a web stream costs
 * tens of microseconds to make and as much again to read; before this table a keyed request
 * streamed its body three times and its answer twice.
 *
 * The carrier keeps its real body too: code that reads `request.body` or wraps the Response sees
 * an ordinary one. The bytes here are only used while that body is unread.
 */
const requestBodies = new WeakMap<Request, Uint8Array>();
const responseBodies = new WeakMap<Response, Uint8Array>();

/** A Request whose body is `bytes` (none for GET, HEAD or no bytes), known as such. */
export function requestOfBytes(url: URL | string, init: RequestInit, bytes: Uint8Array): Request {
  const method = (init.method ?? 'GET').toUpperCase();
  const carries = bytes.byteLength > 0 && method !== 'GET' && method !== 'HEAD';
  const request = new Request(url, { ...init, body: carries ? new Uint8Array(bytes) : null });
  requestBodies.set(request, carries ? bytes : new Uint8Array(0));
  return request;
}

/** Records that `request`'s body is `bytes` (a Request that serves them itself: node-request.ts). */
export function rememberRequestBody(request: Request, bytes: Uint8Array): void {
  requestBodies.set(request, bytes);
}

/** The bytes of `request`'s body when oncely made it from them and nobody has read it yet. */
export function knownRequestBody(request: Request): Uint8Array | undefined {
  return request.bodyUsed ? undefined : requestBodies.get(request);
}

/** A Response whose body is `bytes` (null: none), known as such. */
export function responseOfBytes(bytes: Uint8Array | null, init: ResponseInit): Response {
  const response = new Response(bytes === null ? null : new Uint8Array(bytes), init);
  responseBodies.set(response, bytes ?? new Uint8Array(0));
  return response;
}

/** The bytes of `response`'s body when oncely made it from them and nobody has read it yet. */
export function knownResponseBody(response: Response): Uint8Array | undefined {
  return response.bodyUsed ? undefined : responseBodies.get(response);
}
