/**
 * How a status code steers a retry loop (the webhook storm's classifier (docs/origins.md), RFC 9110 section 15).
 * - success: 2xx, terminal.
 * - retryable: the server asks us to come back (throttled, overloaded, timed out).
 * - fatal: the request itself is wrong; sending it again cannot help.
 * - unlisted: anything else; treated as a failure, never guessed to be retryable.
 */
export const STATUS_CLASSES = ['success', 'retryable', 'fatal', 'unlisted'] as const;
export type StatusClass = (typeof STATUS_CLASSES)[number];

export interface StatusTable {
  readonly retryable: ReadonlySet<number>;
  readonly fatal: ReadonlySet<number>;
  /**
   * Statuses that are fatal on their own but retryable when the answer carries Retry-After.
   * @default {409}: the IETF Idempotency-Key draft answers 409 while the first request with the
   * same key is still in flight, and oncely's ledger adds Retry-After to say when to come back.
   */
  readonly retryableWithRetryAfter?: ReadonlySet<number>;
}

/** @default retryable {408, 425, 429, 500, 502, 503, 504}; fatal {400, 401, 403, 404, 405, 409, 413, 415, 422} */
export const DEFAULT_STATUS_TABLE: StatusTable = {
  retryable: new Set([408, 425, 429, 500, 502, 503, 504]),
  fatal: new Set([400, 401, 403, 404, 405, 409, 413, 415, 422]),
  retryableWithRetryAfter: new Set([409]),
};

/** Builds a table from the default with some statuses moved, e.g. `{ retryable: [409] }`. */
export function statusTable(
  changes: { retryable?: readonly number[]; fatal?: readonly number[] } = {},
): StatusTable {
  const retryable = new Set(DEFAULT_STATUS_TABLE.retryable);
  const fatal = new Set(DEFAULT_STATUS_TABLE.fatal);
  for (const s of changes.retryable ?? []) {
    retryable.add(s);
    fatal.delete(s);
  }
  for (const s of changes.fatal ?? []) {
    fatal.add(s);
    retryable.delete(s);
  }
  return {
    retryable,
    fatal,
    retryableWithRetryAfter: new Set(DEFAULT_STATUS_TABLE.retryableWithRetryAfter),
  };
}

export function classifyStatus(
  status: number,
  table: StatusTable = DEFAULT_STATUS_TABLE,
): StatusClass {
  if (status >= 200 && status < 300) return 'success';
  if (table.retryable.has(status)) return 'retryable';
  if (table.fatal.has(status)) return 'fatal';
  return 'unlisted';
}

/**
 * What an attempt's result means for the intent.
 * - ok: done (terminal).
 * - retry: not done; the server invites another try.
 * - fail: not done and will not be (terminal).
 * - unknown: a timeout or a lost reply; the work may have happened. Retried only under the same
 *   key, and never reported as rejected.
 */
export const OUTCOMES = ['ok', 'retry', 'fail', 'unknown'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export function outcomeOfStatus(
  status: number,
  table: StatusTable = DEFAULT_STATUS_TABLE,
  hasRetryAfter = false,
): Outcome {
  if (hasRetryAfter && table.retryableWithRetryAfter?.has(status)) return 'retry';
  const cls = classifyStatus(status, table);
  return cls === 'success' ? 'ok' : cls === 'retryable' ? 'retry' : 'fail';
}

/** The status a transport failure is reported as (Request Timeout), chosen at the adapter boundary. */
export const SYNTHETIC_TIMEOUT_STATUS = 408;
