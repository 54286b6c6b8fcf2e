/** What each attempt is given. The key is the same on every attempt: that is the point. */
export interface AttemptContext {
  readonly attempt: number;
  readonly key: string | undefined;
  readonly signal: AbortSignal | undefined;
}

/** The parts of a prepared retry that say what its first attempt is given. */
export interface FirstAttemptInputs {
  /** Made once when the retry is prepared, and frozen: shared by every call that keeps it. */
  readonly firstContext: AttemptContext;
  readonly key: string | undefined;
  readonly signal: AbortSignal | undefined;
}

/** What the first attempt is given: the shared context, unless this call has its own key or signal. */
export function firstAttemptContext(prepared: FirstAttemptInputs): AttemptContext {
  const shared = prepared.firstContext;
  return shared.key === prepared.key && shared.signal === prepared.signal
    ? shared
    : { attempt: 1, key: prepared.key, signal: prepared.signal };
}
