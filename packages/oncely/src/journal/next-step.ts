import {
  decide,
  INITIAL_RETRY_STATE,
  mayStartAttempt,
  type Observation,
  type RetryState,
  type StopReason,
} from '../policy/decide.js';
import { resolveRetryPolicy, type RetryPolicyOptions } from '../policy/retry-options.js';
import type { Random } from '../time/random.js';
import type { IntentRecord, IntentState, Settlement } from './intent.js';
import type { AttemptResponse } from './attempt-response.js';

/** What one attempt returned, as the journal keeps it (the receipt of a delivery). */
export interface AttemptResult {
  readonly observation: Observation;
  /** The response body, kept as the receipt when the intent is delivered. */
  readonly body: Uint8Array | null;
  /** The receiver's `webhook-delivery` header (`disable`, `abort-message`), lower case. */
  readonly hint?: string | null;
  /** The response's headers and first bytes, for the attempt log; absent without a response. */
  readonly response?: AttemptResponse | null;
  /** How long the request took, send to answer or failure (ms); absent when none was sent. */
  readonly durationMs?: number | null;
}

/** The observation recorded for an attempt whose worker died before writing down its answer. */
export const INTERRUPTED: Observation = {
  kind: 'unknown',
  status: 408,
  detail: 'the worker stopped mid-attempt; no answer was recorded',
};

/** The refusals: the receiver answered for good, so the intent is refused, not given up. */
const REFUSALS: readonly StopReason[] = ['fatal_status', 'unlisted_status', 'operation_failed'];

/** The last policy resolved for each intent policy object, and the deadline it was resolved with. */
const resolved = new WeakMap<object, { deadlineAt: number; policy: RetryPolicyOptions }>();

/**
 * The intent's own policy with its deadline: the same decide() the client runs, across restarts.
 * Resolved once per policy object and deadline: a journal's rows share one policy object per
 * distinct text (policyFromJson), and a batch asks twice per intent (before and after its attempt).
 */
export function intentPolicy(intent: IntentRecord): RetryPolicyOptions {
  const deadlineAt = intent.deadlineAt ?? Number.POSITIVE_INFINITY;
  const known = resolved.get(intent.policy);
  if (known !== undefined && known.deadlineAt === deadlineAt) return known.policy;
  const { attemptTimeoutMs: _timeout, ...given } = intent.policy;
  const policy = Object.freeze(resolveRetryPolicy({ ...given, deadlineAt }));
  resolved.set(intent.policy, { deadlineAt, policy });
  return policy;
}

/**
 * Before an attempt: may it start? Not when the deadline has come or the budget is spent (a
 * restarted worker counts the attempts already made, the interrupted one included).
 */
export function stopBeforeAttempt(
  intent: IntentRecord,
  token: string,
  nowMs: number,
): Settlement | undefined {
  const policy = intentPolicy(intent);
  if (!mayStartAttempt(nowMs, policy))
    return finish(intent, token, 'deadline_passed', intent.sawUnknown, nowMs);
  if (intent.attemptCount >= policy.maxAttempts)
    return finish(intent, token, 'budget_exhausted', intent.sawUnknown, nowMs);
  return undefined;
}

/**
 * After attempt `attempt` ended at `endedAt` with `result`: the policy step (decide) says stop or
 * wait, and the settlement writes it down. The state fed to decide() is rebuilt from the journal,
 * so the budget, the deadline and decorrelated jitter carry across restarts.
 */
export function settleAttempt(
  intent: IntentRecord,
  token: string,
  attempt: number,
  result: AttemptResult,
  endedAt: number,
  random: Random,
): Settlement {
  const [decision, next] = decide(
    retryStateBefore(intent, attempt),
    result.observation,
    endedAt,
    random,
    intentPolicy(intent),
  );
  const observation = result.observation;
  const ended = {
    attempt,
    endedAt,
    outcome: decision.attemptOutcome,
    status: observation.kind === 'response' ? observation.status : null, // none for a transport failure: the server sent none
    detail: observation.kind === 'response' ? null : observation.detail,
    delayMs: decision.action === 'retry' ? decision.delayMs : null,
    durationMs: result.durationMs ?? null,
    response: result.response ?? null,
  };
  if (decision.action === 'retry') {
    return {
      key: intent.key,
      token,
      attempt: ended,
      next: {
        state: 'pending',
        nextAttemptAt: endedAt + decision.delayMs,
        previousDelayMs: next.previousDelayMs,
        sawUnknown: next.sawUnknown,
      },
    };
  }
  return finish(
    intent,
    token,
    decision.reason,
    next.sawUnknown,
    endedAt,
    ended.status,
    decision.reason === 'ok' ? result.body : null,
    ended.detail,
    ended,
  );
}

/**
 * decide()'s state before attempt `attempt`, rebuilt from the journal: a first attempt with nothing
 * behind it is INITIAL_RETRY_STATE itself, whose plain success decide() answers without allocating.
 */
function retryStateBefore(intent: IntentRecord, attempt: number): RetryState {
  if (attempt === 1 && intent.previousDelayMs === 0 && !intent.sawUnknown)
    return INITIAL_RETRY_STATE;
  return {
    attempt: attempt - 1,
    previousDelayMs: intent.previousDelayMs,
    sawUnknown: intent.sawUnknown,
  };
}

function finish(
  intent: IntentRecord,
  token: string,
  reason: StopReason,
  sawUnknown: boolean,
  nowMs: number,
  status: number | null = null,
  body: Uint8Array | null = null,
  detail: string | null = null,
  attempt?: Settlement['attempt'],
): Settlement {
  const next: Settlement['next'] = {
    state: finalState(reason, sawUnknown),
    sawUnknown,
    final: { stopReason: reason, status, body, detail, finishedAt: nowMs },
  };
  return attempt === undefined
    ? { key: intent.key, token, next }
    : { key: intent.key, token, attempt, next };
}

/** ok is delivered; a receiver's no is refused; running out is unknown after a lost answer, else gave_up. */
export function finalState(
  reason: StopReason,
  sawUnknown: boolean,
): Exclude<IntentState, 'pending'> {
  if (reason === 'ok') return 'delivered';
  if (REFUSALS.includes(reason)) return 'refused';
  return sawUnknown ? 'unknown' : 'gave_up';
}
