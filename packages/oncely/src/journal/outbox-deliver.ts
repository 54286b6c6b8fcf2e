import { classifyTransportError, observeTransportFailure } from '../client/transport-error.js';
import type { Observation } from '../policy/observation.js';
import type { Clock } from '../time/clock.js';
import { createDeadlineSweep } from './deadline-sweep.js';
import type { IntentRecord } from './intent.js';
import type { AttemptResult } from './next-step.js';
import { attemptOfAnswer } from './wire-attempt.js';
import type { WireAnswer } from './wire-send.js';

/**
 * One attempt handed to the worker's `deliver` hook: the request the worker would have sent over
 * HTTP, signed and keyed as it would have been.
 */
export interface OutboxDelivery {
  /** The intent's key, the same on every attempt; also in `headers` as idempotency-key. */
  readonly key: string;
  /** This attempt's number, 1 for the first. */
  readonly attempt: number;
  /** The intent's target, or its endpoint's current URL (an http(s) URL, as recorded). */
  readonly target: string;
  readonly method: string;
  /**
   * The headers as they would go out: the intent's, its secret headers' values, idempotency-key,
   * the Standard Webhooks signature when signing, traceparent when traced.
   */
  readonly headers: Readonly<Record<string, string>>;
  /** The payload byte for byte; null for GET and HEAD. */
  readonly body: Uint8Array | null;
  /** The attempt's limit (its timeout, cut at the deadline): the worker waits no longer. */
  readonly timeoutMs: number;
}

/** The receiver's answer, read as an HTTP answer would be. */
export interface OutboxDeliveryAnswer {
  /**
   * 2xx is delivered, the intent's status table decides the rest; a status outside 200..599 (or
   * none) refuses the intent, as fetch refuses such an HTTP answer.
   */
  readonly status: number;
  /** Any case; `retry-after`, `date` and `webhook-delivery` act as over HTTP. Kept in the attempt log. */
  readonly headers?: Readonly<Record<string, string>>;
  /** The receipt of a 2xx, and the attempt log's first bytes. */
  readonly body?: Uint8Array | string;
}

/**
 * Replaces the worker's HTTP request (OutboxWorkerOptions.deliver): for another transport, or a
 * test or benchmark with no receiver. Everything around the request stays: the lease, the attempt
 * written down before and settled after, the same key on every attempt, the policy's reading of
 * the answer. A throw is no answer: the work may have happened, so the intent is retried under
 * its key (`unknown` if its budget runs out), as after a timeout; a connection refused (Node's
 * ECONNREFUSED, DNS failures) is not sent, as over HTTP.
 */
export type OutboxDeliver = (delivery: OutboxDelivery) => Promise<OutboxDeliveryAnswer>;

/** An attempt through the hook, timed out on one sweep shared by every attempt in flight. */
export type HookSend = (delivery: OutboxDelivery) => Promise<AttemptResult>;

const NO_HEADERS: readonly string[] = Object.freeze([]);
const NO_BODY = new Uint8Array(0);
const encoder = new TextEncoder();

/**
 * The worker's sender when it was given `deliver`: its answers read as wire answers, each timed
 * on `clock` from the hook's call to its answer (the attempt's `durationMs`). One promise an
 * attempt beyond the hook's own: the answer, the timeout and the reading meet in it.
 */
export function createHookSend(
  deliver: OutboxDeliver,
  timer: Clock,
  keepBytes: number,
  clock: Clock = timer,
): HookSend {
  const sweep = createDeadlineSweep(timer);
  return (delivery) =>
    new Promise((resolve, reject) => {
      const sentAt = clock.now();
      const limitMs = delivery.timeoutMs;
      // Whichever comes first, the answer or the limit, resolves; the other finds `done`.
      let done = false;
      const unwatch = sweep.watch(limitMs, () => {
        done = true;
        const error = new DOMException(`attempt timed out after ${limitMs} ms`, 'TimeoutError');
        resolve(hookFailure(error, clock.now() - sentAt));
      });
      let answer: Promise<OutboxDeliveryAnswer>;
      try {
        answer = Promise.resolve(deliver(delivery));
      } catch (error) {
        answer = Promise.reject(error);
      }
      answer.then(
        (value) => {
          if (done) return;
          done = true;
          unwatch();
          try {
            const wire = wireAnswerOf(value, keepBytes);
            resolve(attemptOfAnswer(wire, delivery.method, clock.now() - sentAt));
          } catch (error) {
            reject(error); // an answer that cannot be read fails the pass, as a throw in it would
          }
        },
        (error: unknown) => {
          if (done) return;
          done = true;
          unwatch();
          resolve(hookFailure(error, clock.now() - sentAt));
        },
      );
    });
}

/** A throw, or the limit passed: the attempt's result without an answer. */
function hookFailure(error: unknown, durationMs: number): AttemptResult {
  return { observation: observeHookError(error), body: null, durationMs };
}

/** The delivery of `intent`'s attempt `attempt`, or undefined when its deadline has passed. */
export function deliveryOf(
  intent: IntentRecord,
  attempt: number,
  target: string,
  headers: Record<string, string>,
  nowMs: number,
): OutboxDelivery | undefined {
  const untilDeadline =
    intent.deadlineAt === null ? Number.POSITIVE_INFINITY : intent.deadlineAt - nowMs;
  if (untilDeadline <= 0) return undefined;
  const bodiless = intent.method === 'GET' || intent.method === 'HEAD';
  return {
    key: intent.key,
    attempt,
    target,
    method: intent.method,
    headers,
    body: bodiless ? null : intent.body,
    timeoutMs: Math.max(1, Math.min(intent.policy.attemptTimeoutMs, untilDeadline)),
  };
}

/**
 * An attempt whose deadline passed before it left (a throttle slot came late): the hook is not
 * called, and the attempt reads as the client's path reads it (the client refuses to start it).
 */
export const DEADLINE_BEFORE_DELIVERY: AttemptResult = Object.freeze({
  observation: Object.freeze({
    kind: 'failure',
    detail: 'the deadline passed before the attempt left',
  }),
  body: null,
  durationMs: 0,
});

/** A throw: a transport failure the client knows, else sent with no answer (it may have happened). */
function observeHookError(error: unknown): Observation {
  const failure = classifyTransportError(error) ?? { sent: true, reason: 'no_response' as const };
  return observeTransportFailure(failure, error);
}

/** The hook's answer in the form the wire sender gives: raw header pairs, bytes cut to `keepBytes`. */
function wireAnswerOf(answer: OutboxDeliveryAnswer, keepBytes: number): WireAnswer {
  const headers = answer?.headers;
  let rawHeaders = NO_HEADERS;
  if (headers !== undefined && headers !== null) {
    const pairs: string[] = [];
    for (const name of Object.keys(headers)) pairs.push(name, String(headers[name]));
    rawHeaders = pairs;
  }
  const given = answer?.body;
  const body =
    given === undefined || given === null
      ? NO_BODY
      : typeof given === 'string'
        ? encoder.encode(given).subarray(0, keepBytes)
        : // A copy: the hook may reuse its buffer before the settlement is written.
          given.slice(0, keepBytes);
  return { status: answer?.status, rawHeaders, body };
}
