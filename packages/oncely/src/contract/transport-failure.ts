/**
 * What happened to an attempt that got no HTTP response. Two cases a caller must tell apart:
 * - not sent: the request never left (connection refused, DNS failure, no route, connect timeout).
 *   Nothing can have happened, so it is safe to retry, even without an idempotency key.
 * - sent, no response: the request may have arrived and the work may be done (a swallowed ack,
 *   a timeout, a reset); resend only under the same key.
 * No status is invented for either: the server never sent one (docs/origins.md, "The webhook storm").
 */
export const NOT_SENT_REASONS = [
  'connection_refused',
  'dns_failure',
  'unreachable',
  'connect_timeout',
] as const;
export type NotSentReason = (typeof NOT_SENT_REASONS)[number];

export const NO_RESPONSE_REASONS = [
  'timed_out',
  'socket_closed',
  'aborted',
  'no_response',
] as const;
export type NoResponseReason = (typeof NO_RESPONSE_REASONS)[number];

export type TransportFailure =
  | { readonly sent: false; readonly reason: NotSentReason }
  | { readonly sent: true; readonly reason: NoResponseReason };

/** "not sent (connection refused)", "sent, no response (timed out)". */
export function describeTransportFailure(failure: TransportFailure): string {
  const reason =
    failure.reason === 'no_response' ? '' : ` (${failure.reason.replaceAll('_', ' ')})`;
  return failure.sent ? `sent, no response${reason}` : `not sent${reason}`;
}
