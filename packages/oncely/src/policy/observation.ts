import type { NoResponseReason, NotSentReason } from '../contract/transport-failure.js';

/** What one attempt came back with, as the policy sees it. */
export type Observation =
  /** The server answered. */
  | {
      readonly kind: 'response';
      readonly status: number;
      readonly retryAfter?: string | null | undefined;
      readonly date?: string | null | undefined;
    }
  /**
   * Sent, and no answer we can trust: a timeout, a reset, a swallowed ack. The work may have
   * happened. `status` is the synthetic one chosen at the adapter boundary (408) for status
   * tables; it is internal: reports show no status for it, since the server sent none.
   */
  | {
      readonly kind: 'unknown';
      readonly status: number;
      readonly detail: string;
      readonly reason?: NoResponseReason | undefined;
    }
  /**
   * The request never left (connection refused, DNS failure): nothing happened. Retried like a
   * retryable status, and safe to retry even when `mayRetry` is false (no key).
   */
  | { readonly kind: 'not_sent'; readonly reason: NotSentReason; readonly detail: string }
  /** The operation failed in a way no retry can mend (a bug, a refused input). */
  | { readonly kind: 'failure'; readonly detail: string };
