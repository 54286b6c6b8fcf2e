import { SYNTHETIC_TIMEOUT_STATUS } from '../contract/status-class.js';
import type {
  NoResponseReason,
  NotSentReason,
  TransportFailure,
} from '../contract/transport-failure.js';
import type { Observation } from '../policy/decide.js';

/**
 * Codes of failures before the request left: the connection was never made, so nothing was sent
 * (Node's connect errors, getaddrinfo's, undici's connect timeout).
 */
const NOT_SENT_CODES: ReadonlyMap<string, NotSentReason> = new Map([
  ['ECONNREFUSED', 'connection_refused'],
  ['ENOTFOUND', 'dns_failure'],
  ['EAI_AGAIN', 'dns_failure'],
  ['EAI_NONAME', 'dns_failure'],
  ['EAI_FAIL', 'dns_failure'],
  ['ENETUNREACH', 'unreachable'],
  ['EHOSTUNREACH', 'unreachable'],
  ['UND_ERR_CONNECT_TIMEOUT', 'connect_timeout'],
]);

/**
 * Codes of failures after the connection was made: the request may have reached the server
 * (Node's socket errors, undici's own). ETIMEDOUT is here, not above: the OS reports it for an
 * established connection too, and "maybe sent" is the safe reading.
 */
const NO_RESPONSE_CODES: ReadonlyMap<string, NoResponseReason> = new Map([
  ['ECONNRESET', 'socket_closed'],
  ['ECONNABORTED', 'socket_closed'],
  ['EPIPE', 'socket_closed'],
  ['UND_ERR_SOCKET', 'socket_closed'],
  ['UND_ERR_CLOSED', 'socket_closed'],
  ['UND_ERR_REQ_RETRY', 'socket_closed'],
  ['ETIMEDOUT', 'timed_out'],
  ['UND_ERR_HEADERS_TIMEOUT', 'timed_out'],
  ['UND_ERR_BODY_TIMEOUT', 'timed_out'],
  ['UND_ERR_ABORTED', 'aborted'],
]);

/** Every code read as a transport failure (not sent, or sent without a response). */
export const TRANSPORT_ERROR_CODES: ReadonlySet<string> = new Set([
  ...NOT_SENT_CODES.keys(),
  ...NO_RESPONSE_CODES.keys(),
]);

const NO_RESPONSE_NAMES: ReadonlyMap<string, NoResponseReason> = new Map([
  ['TimeoutError', 'timed_out'],
  ['AbortError', 'aborted'],
]);

/**
 * What kind of transport failure `error` is, looking through `cause` chains (fetch wraps them),
 * or undefined for any other error. The outermost recognised link decides.
 */
export function classifyTransportError(error: unknown): TransportFailure | undefined {
  for (
    let e: unknown = error, depth = 0;
    e && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (typeof e !== 'object') break;
    const { code, name, message } = e as { code?: unknown; name?: unknown; message?: unknown };
    if (typeof code === 'string') {
      const notSent = NOT_SENT_CODES.get(code);
      if (notSent) return { sent: false, reason: notSent };
      const noResponse = NO_RESPONSE_CODES.get(code);
      if (noResponse) return { sent: true, reason: noResponse };
    }
    const byName = typeof name === 'string' ? NO_RESPONSE_NAMES.get(name) : undefined;
    if (byName) return { sent: true, reason: byName };
    if (typeof message === 'string' && /socket hang up|other side closed/i.test(message))
      return { sent: true, reason: 'socket_closed' };
  }
  return undefined;
}

/** True for timeouts and transport failures, sent or not. */
export function isTransportError(error: unknown): boolean {
  return classifyTransportError(error) !== undefined;
}

/**
 * A thrown error as the policy sees it: not sent (retry freely), sent without a response
 * (unknown: the work may have happened) or a failure no retry mends (a bad URL, a bug).
 */
export function observeError(error: unknown): Observation {
  const failure = classifyTransportError(error);
  if (failure === undefined) return { kind: 'failure', detail: describeError(error) };
  return observeTransportFailure(failure, error);
}

/** A transport failure as the policy sees it: not sent, or sent with no answer (unknown). */
export function observeTransportFailure(failure: TransportFailure, error: unknown): Observation {
  if (!failure.sent)
    return { kind: 'not_sent', reason: failure.reason, detail: describeError(error) };
  return {
    kind: 'unknown',
    status: SYNTHETIC_TIMEOUT_STATUS,
    reason: failure.reason,
    detail: describeError(error),
  };
}

/** A short description that names the innermost cause: "fetch failed: ECONNRESET". */
export function describeError(error: unknown): string {
  const parts: string[] = [];
  for (
    let e: unknown = error, depth = 0;
    e && depth < 5;
    e = (e as { cause?: unknown }).cause, depth++
  ) {
    if (typeof e !== 'object') {
      parts.push(String(e));
      break;
    }
    const { code, message } = e as { code?: unknown; message?: unknown };
    const text =
      typeof message === 'string' && message
        ? message
        : typeof code === 'string'
          ? code
          : String(e);
    if (!parts.includes(text))
      parts.push(typeof code === 'string' && !text.includes(code) ? `${text} (${code})` : text);
  }
  return parts.join(': ') || 'unknown error';
}
