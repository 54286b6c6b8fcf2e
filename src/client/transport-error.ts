/**
 * Error codes that mean "the request may or may not have reached the server": Node's socket
 * errors and undici's (fetch's) own codes. Mapped to the unknown outcome at the adapter
 * boundary, never inside the pure classifier (seed 003: transport failure is not a status).
 */
export const TRANSPORT_ERROR_CODES = new Set([
  'ECONNRESET',
  'ECONNREFUSED',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENETUNREACH',
  'EHOSTUNREACH',
  'EAI_AGAIN',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_HEADERS_TIMEOUT',
  'UND_ERR_BODY_TIMEOUT',
  'UND_ERR_CLOSED',
  'UND_ERR_ABORTED',
  'UND_ERR_REQ_RETRY',
]);

const TRANSPORT_ERROR_NAMES = new Set(['TimeoutError', 'AbortError']);

/** True for timeouts and transport failures, looking through `cause` chains (fetch wraps them). */
export function isTransportError(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object') break;
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string' && TRANSPORT_ERROR_CODES.has(code)) return true;
    if (typeof name === 'string' && TRANSPORT_ERROR_NAMES.has(name)) return true;
    if (typeof message === 'string' && /socket hang up|other side closed/i.test(message)) return true;
  }
  return false;
}

/** A short description that names the innermost cause: "fetch failed: ECONNRESET". */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (let e: unknown = error, depth = 0; e && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    if (typeof e !== 'object') {
      parts.push(String(e));
      break;
    }
    const { code, message } = e as { code?: unknown; message?: unknown };
    const text = typeof message === 'string' && message ? message : typeof code === 'string' ? code : String(e);
    if (!parts.includes(text)) parts.push(typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text);
  }
  return parts.join(': ') || 'unknown error';
}
