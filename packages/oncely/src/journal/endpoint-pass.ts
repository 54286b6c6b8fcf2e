import { admit, reserveSlots, slotSpacingMs } from './endpoint-gate.js';
import type { Clock } from '../time/clock.js';
import { observeAnswers, type EndpointAnswer } from './endpoint-signals.js';
import { activeSecrets } from '../contract/secret-rotation.js';
import type { EndpointRecord, EndpointStore } from './endpoint.js';
import type { ClaimedIntent, IntentRecord, Settlement } from './intent.js';
import type { AttemptResult } from './next-step.js';

/** A claimed intent the gate let through, with its endpoint if it names one. */
export type Admitted<T> = T & { readonly endpoint: EndpointRecord | undefined };

/**
 * Asks each endpoint named by the claimed intents for sends (state, Retry-After pause, breaker,
 * throttle slots), one locked row update per endpoint. Intents it holds back are settled pending
 * without an attempt (their budget untouched), due again when the endpoint may take them; an
 * intent whose endpoint is gone is refused.
 */
export async function gateEndpoints<T extends { readonly claim: ClaimedIntent }>(
  store: EndpointStore | undefined,
  items: readonly T[],
  nowMs: number,
): Promise<{ admitted: Admitted<T>[]; held: Settlement[] }> {
  const admitted: Admitted<T>[] = [];
  const held: Settlement[] = [];
  const idOf = (item: T) => item.claim.intent.endpoint;
  for (const item of items) if (idOf(item) == null) admitted.push({ ...item, endpoint: undefined });
  for (const [id, group] of byEndpoint(items, idOf)) {
    const gated = await store?.update(id, (current) => {
      const [next, admission] = admit(current, nowMs, group.length);
      return [next, { admission, endpoint: next ?? current }] as const;
    });
    group.forEach((item, i) => {
      const { intent, token } = item.claim;
      if (gated === undefined) held.push(refuse(intent, token, `no endpoint ${id}`, nowMs));
      else if (i < gated.admission.admitted) admitted.push({ ...item, endpoint: gated.endpoint });
      else held.push(deferred(intent, token, gated.admission.deferUntil));
    });
  }
  return { admitted, held };
}

/** The items by their endpoint's id, each group in the items' order; those without one left out. */
function byEndpoint<T>(
  items: readonly T[],
  idOf: (item: T) => string | null | undefined,
): Map<string, T[]> {
  const groups = new Map<string, T[]>();
  for (const item of items) {
    const id = idOf(item);
    if (id === null || id === undefined) continue;
    const group = groups.get(id);
    if (group) group.push(item);
    else groups.set(id, [item]);
  }
  return groups;
}

/**
 * The instant each started intent may be sent: throttle slots taken on its endpoint's row (one
 * locked update per endpoint), now for an intent without one.
 */
export async function slotsFor(
  store: EndpointStore | undefined,
  items: readonly { readonly endpoint: EndpointRecord | undefined }[],
  nowMs: number,
): Promise<number[]> {
  const sendAt = items.map(() => nowMs);
  const groups = byEndpoint(
    items.map((_, i) => i),
    (i) => items[i]!.endpoint?.id,
  );
  for (const [id, indexes] of groups) {
    const slots = await store?.update(id, (current) =>
      reserveSlots(current, nowMs, indexes.length),
    );
    indexes.forEach((index, k) => (sendAt[index] = slots?.[k] ?? nowMs));
  }
  return sendAt;
}

/**
 * Sleeps until the reserved slot. A worker woken too late (a busy machine) would send on top of
 * the next slots' sends: rather than crowd them, it takes a fresh slot, so every send leaves
 * within half a slot of a slot of its own and no 1 s window holds more than rate + 1.
 */
export async function waitForSlot(
  store: EndpointStore | undefined,
  endpoint: EndpointRecord | undefined,
  slot: number,
  clock: Clock,
): Promise<void> {
  let at = slot;
  for (;;) {
    if (at > clock.now()) await clock.sleep(at - clock.now());
    if (!endpoint) return;
    const toleranceMs = Math.min(10, slotSpacingMs(endpoint, at) / 2);
    if (clock.now() <= at + toleranceMs) return;
    const fresh = await store?.update(endpoint.id, (e) => reserveSlots(e, clock.now(), 1));
    if (fresh === undefined) return;
    at = fresh[0]!;
  }
}

/** The endpoint's URL and the secrets that sign now. */
export function sendTarget(endpoint: EndpointRecord, nowMs: number) {
  return { url: endpoint.url, secrets: activeSecrets(endpoint.secrets, nowMs) };
}

/** The pass's answers, per endpoint, written to its row: returns the endpoints this disabled, and why. */
export async function observeEndpoints(
  store: EndpointStore | undefined,
  answers: readonly {
    readonly endpoint: string;
    readonly result: AttemptResult;
    readonly endedAt?: number;
  }[],
  nowMs: number,
): Promise<{ endpoint: EndpointRecord; reason: string }[]> {
  const groups = new Map<string, EndpointAnswer[]>();
  for (const { endpoint, result, endedAt } of answers)
    groups.set(endpoint, [...(groups.get(endpoint) ?? []), { ...answerOf(result), at: endedAt }]);
  const disabled: { endpoint: EndpointRecord; reason: string }[] = [];
  for (const [id, list] of groups) {
    const outcome = await store?.update(id, (current) => {
      const [next, reason] = observeAnswers(current, nowMs, list);
      return [next, { endpoint: next, reason }] as const;
    });
    if (outcome?.reason) disabled.push({ endpoint: outcome.endpoint, reason: outcome.reason });
  }
  return disabled;
}

function answerOf(result: AttemptResult): EndpointAnswer {
  const o = result.observation;
  return o.kind === 'response'
    ? {
        status: o.status,
        retryAfter: o.retryAfter ?? null,
        date: o.date ?? null,
        hint: result.hint ?? null,
      }
    : { status: null, retryAfter: null, date: null, hint: null };
}

/**
 * The receiver answered `webhook-delivery: abort-message`: this intent ends here, refused, with no
 * further attempt, whatever the policy would have done.
 */
export function abortIfAsked(
  settlement: Settlement,
  result: AttemptResult,
  nowMs: number,
): Settlement {
  if (result.hint !== 'abort-message' || settlement.next.state !== 'pending') return settlement;
  const status = settlement.attempt?.status ?? null;
  return {
    ...settlement,
    ...(settlement.attempt ? { attempt: { ...settlement.attempt, delayMs: null } } : {}),
    next: {
      state: 'refused',
      sawUnknown: settlement.next.sawUnknown,
      final: {
        stopReason: 'fatal_status',
        status,
        body: null,
        detail: 'the receiver answered webhook-delivery: abort-message',
        finishedAt: nowMs,
      },
    },
  };
}

/** Back to pending without an attempt, due at `until`: nothing spent. */
function deferred(intent: IntentRecord, token: string, until: number): Settlement {
  return {
    key: intent.key,
    token,
    next: {
      state: 'pending',
      nextAttemptAt: until,
      previousDelayMs: intent.previousDelayMs,
      sawUnknown: intent.sawUnknown,
    },
  };
}

function refuse(intent: IntentRecord, token: string, detail: string, nowMs: number): Settlement {
  return {
    key: intent.key,
    token,
    next: {
      state: 'refused',
      sawUnknown: intent.sawUnknown,
      final: { stopReason: 'fatal_status', status: null, body: null, detail, finishedAt: nowMs },
    },
  };
}
