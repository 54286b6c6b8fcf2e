/** Header names of the wire contract (IETF draft-ietf-httpapi-idempotency-key-header, RFC 9110). */
export const HEADER = {
  idempotencyKey: 'Idempotency-Key',
  idempotentReplayed: 'Idempotent-Replayed',
  retryAfter: 'Retry-After',
  date: 'Date',
  contentType: 'Content-Type',
} as const;

/** The media type of error bodies (RFC 9457). */
export const PROBLEM_JSON = 'application/problem+json';
