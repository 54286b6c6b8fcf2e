/**
 * The default `onError` of the middleware and the node adapters: a failure the client sees only
 * as a 500 or 503 must not go unseen, so it is one line on stderr with the request and the stack.
 * Pass your own `onError` to send it to your logger instead.
 */
export function logOncelyError(error: unknown, request?: Request): void {
  const detail = error instanceof Error ? (error.stack ?? error.message) : String(error);
  console.error(`oncely: ${request ? `${request.method} ${request.url} ` : ''}failed: ${detail}`);
}

/** The default `onWarning`: the warning as one line on stderr. */
export function logOncelyWarning(message: string): void {
  console.warn(message);
}
