import assert from 'node:assert/strict';
import {
  decide,
  INITIAL_RETRY_STATE,
  resolveRetryPolicy,
  type Decision,
  type DelayReason,
  type Observation,
  type RetryPolicyOptions,
  type StopReason,
} from '#oncely/policy/index.js';
import { SYNTHETIC_TIMEOUT_STATUS } from '#oncely/contract/status-class.js';
import { seededRandom, type Random } from '#oncely/time/random.js';

/**
 * docs/design.md, habit 1: a policy is a pure step, tested as a list of delays with no time passing.
 * An observation may be written short: a status (`503`), `'timeout'` for an unknown outcome, or
 * a full {@link Observation} (to carry Retry-After and Date).
 */
export type ObservationLike = Observation | number | 'timeout';

/** An exact delay, or an inclusive range `[min, max]` for a jittered one. */
export type ExpectedDelay = number | readonly [number, number];

export interface RunPolicyOptions {
  /** @default seededRandom(0) */
  readonly random?: Random;
  /** The clock reading when the first attempt starts. @default 0 */
  readonly startAt?: number;
  /** How long each attempt takes before it is judged. @default 0 */
  readonly attemptDurationMs?: number;
}

export interface PolicyTrace {
  readonly delays: readonly number[];
  readonly delayReasons: readonly DelayReason[];
  readonly decisions: readonly Decision[];
  /** When each attempt started, on the policy's own timeline. */
  readonly attemptStartedAt: readonly number[];
  /** The final decision, or undefined when the observations ran out first. */
  readonly stop: Extract<Decision, { action: 'stop' }> | undefined;
}

export function toObservation(value: ObservationLike): Observation {
  if (typeof value === 'number') return { kind: 'response', status: value };
  if (value === 'timeout')
    return { kind: 'unknown', status: SYNTHETIC_TIMEOUT_STATUS, detail: 'timeout' };
  return value;
}

/**
 * Feeds observations one per attempt through `decide`, moving a virtual "now" by each attempt's
 * duration and each chosen delay, until the policy stops or the observations run out.
 */
export function runPolicy(
  policy: Partial<RetryPolicyOptions>,
  observations: readonly ObservationLike[],
  options: RunPolicyOptions = {},
): PolicyTrace {
  const resolved = resolveRetryPolicy(policy);
  const random = options.random ?? seededRandom(0);
  let nowMs = options.startAt ?? 0;
  let state = INITIAL_RETRY_STATE;
  const delays: number[] = [];
  const delayReasons: DelayReason[] = [];
  const decisions: Decision[] = [];
  const attemptStartedAt: number[] = [];
  for (const observation of observations) {
    attemptStartedAt.push(nowMs);
    nowMs += options.attemptDurationMs ?? 0;
    const [decision, next] = decide(state, toObservation(observation), nowMs, random, resolved);
    state = next;
    decisions.push(decision);
    if (decision.action === 'stop')
      return { delays, delayReasons, decisions, attemptStartedAt, stop: decision };
    delays.push(decision.delayMs);
    delayReasons.push(decision.delayReason);
    nowMs += decision.delayMs;
  }
  return { delays, delayReasons, decisions, attemptStartedAt, stop: undefined };
}

/**
 * Asserts the delays a policy chooses for a run of observations, and (with `stop`) why it ends.
 * Returns the trace for further checks.
 */
export function expectDelays(
  policy: Partial<RetryPolicyOptions>,
  observations: readonly ObservationLike[],
  expected: readonly ExpectedDelay[],
  options: RunPolicyOptions & { readonly stop?: StopReason } = {},
): PolicyTrace {
  const trace = runPolicy(policy, observations, options);
  assert.equal(
    trace.delays.length,
    expected.length,
    `expected ${expected.length} delays, got [${trace.delays.join(', ')}]`,
  );
  expected.forEach((want, i) => {
    const got = trace.delays[i]!;
    if (typeof want === 'number') {
      assert.equal(
        got,
        want,
        `delay ${i + 1}: expected ${want} ms, got ${got} ms (all: [${trace.delays.join(', ')}])`,
      );
    } else {
      assert.ok(
        got >= want[0] && got <= want[1],
        `delay ${i + 1}: expected ${want[0]}..${want[1]} ms, got ${got} ms`,
      );
    }
  });
  if (options.stop !== undefined) {
    assert.ok(trace.stop, `expected a stop (${options.stop}), but the observations ran out first`);
    assert.equal(trace.stop.reason, options.stop);
  }
  return trace;
}
