/**
 * The sends of one outbox pass (outbox-pass.ts): each admitted intent's attempt and its
 * settlement, with what the batch's intents share made once for all of them.
 */
import type { Settlement } from './intent.js';
import type { OutboxPassSetup, ToSend } from './outbox-pass.js';
import { settleAttempt, type AttemptResult } from './next-step.js';
import { sendAttempt, type SendContext } from './send-attempt.js';
import { abortIfAsked, sendTarget, type Admitted } from './endpoint-pass.js';
import { endAttemptSpan, startAttemptSpan } from './attempt-tracing.js';

/** The secret header values of an intent that names none: one object for all of them. */
export const NO_SECRETS: Readonly<Record<string, string>> = Object.freeze({});

/** A batch's sends: what they share, and what each one's answer adds. */
export interface BatchSends {
  readonly setup: OutboxPassSetup;
  /** The batch's one send context (sharedSendContext). */
  readonly context: SendContext;
  /** The answers of intents with an endpoint, for its signals (observeEndpoints). */
  readonly answers: { endpoint: string; result: AttemptResult; endedAt: number }[];
  /** How long each intent's attempt took, by key, for onSettled. */
  readonly durations: Map<string, number>;
}

/**
 * One intent's attempt and the settlement its answer leads to. Not an async function: the
 * attempt's own promise carries the settlement, without another promise and frame per intent.
 */
export function sendAndSettle(sends: BatchSends, item: Admitted<ToSend>): Promise<Settlement> {
  const { setup } = sends;
  const { clock, options } = setup;
  const { claim, secrets, endpoint } = item;
  const sentAt = clock.now();
  const target = endpoint && sendTarget(endpoint, sentAt);
  const traced =
    options.tracer &&
    startAttemptSpan(
      options.tracer,
      claim.intent,
      claim.intent.attemptCount + 1,
      target?.url ?? claim.intent.target,
    );
  // The batch's one context, unless this intent has secrets, an endpoint or a span of its own.
  const context =
    secrets === NO_SECRETS && target === undefined && traced === undefined
      ? sends.context
      : {
          ...sends.context,
          secretHeaders: secrets,
          endpoint: target,
          traceparent: traced?.traceparent,
        };
  return sendAttempt(claim.intent, context, setup.client).then((result) => {
    if (traced) endAttemptSpan(traced.span, result);
    // One instant for the intent's next attempt and the endpoint's hold (a Retry-After).
    const endedAt = clock.now();
    sends.durations.set(claim.intent.key, endedAt - sentAt);
    if (endpoint) sends.answers.push({ endpoint: endpoint.id, result, endedAt });
    const settled = settleAttempt(
      claim.intent,
      claim.token,
      claim.intent.attemptCount + 1,
      result,
      endedAt,
      setup.random,
    );
    return abortIfAsked(settled, result, endedAt);
  });
}

/** A batch's sends before any: one send context, no answers yet. */
export function batchSends(setup: OutboxPassSetup): BatchSends {
  return { setup, context: sharedSendContext(setup), answers: [], durations: new Map() };
}

/** What every attempt of the worker is sent with; an intent's own secrets, endpoint, span added. */
function sharedSendContext(setup: OutboxPassSetup): SendContext {
  return {
    fetch: setup.fetch,
    clock: setup.clock,
    timer: setup.timer,
    secretHeaders: NO_SECRETS,
    signingSecret: setup.options.signingSecret,
    endpoint: undefined,
    traceparent: undefined,
    wire: setup.wire,
    deliver: setup.deliver,
  };
}
