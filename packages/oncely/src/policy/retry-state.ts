/** What the policy remembers between attempts. */
export interface RetryState {
  /** Attempts made so far, the one being judged included. */
  readonly attempt: number;
  /** The last delay chosen (decorrelated jitter grows from it). */
  readonly previousDelayMs: number;
  /** Whether any attempt ended unknown: then a give-up is reported as unknown, not failed. */
  readonly sawUnknown: boolean;
}

export const INITIAL_RETRY_STATE: RetryState = Object.freeze({
  attempt: 0,
  previousDelayMs: 0,
  sawUnknown: false,
});
