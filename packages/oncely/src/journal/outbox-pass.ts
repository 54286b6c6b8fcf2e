import type { Outcome } from '../contract/status-class.js';
import type { Clock } from '../time/clock.js';
import type { Random } from '../time/random.js';
import type {
  AttemptStart,
  ClaimedIntent,
  IntentRecord,
  IntentState,
  Settlement,
} from './intent.js';
import type { JournalCapabilities, JournalStore } from './journal-store.js';
import { INTERRUPTED, settleAttempt, stopBeforeAttempt } from './next-step.js';
import type { OutboxWorkerOptions } from './outbox-worker.js';
import type { clientFor } from './send-attempt.js';
import { batchSends, NO_SECRETS, sendAndSettle } from './batch-sends.js';
import { gateEndpoints, observeEndpoints, slotsFor, waitForSlot } from './endpoint-pass.js';
import { recordDisabledNotices } from './endpoint-notice.js';
import type { WireSend } from './wire-send.js';
import type { HookSend } from './outbox-deliver.js';

/** One intent settled by this worker: after an attempt, or without one (deadline, budget). */
export interface SettledEvent {
  readonly key: string;
  readonly state: IntentState;
  /** The attempt just closed, if one was. */
  readonly attempt: number | undefined;
  readonly status: number | null;
  readonly detail: string | null;
  /** False when the lease had been lost: another worker owns the intent now. */
  readonly written: boolean;
  /** The attempt's outcome class, if one was closed. */
  readonly outcome: Outcome | undefined;
  /** The endpoint the intent names, null for a bare target: a metrics label. */
  readonly endpoint: string | null;
  /** How long the attempt's request took (its throttle wait left out), if this worker sent it. */
  readonly durationMs: number | undefined;
  /** When the intent was recorded: a delivery's end-to-end latency is from here. */
  readonly recordedAt: number;
}

/** What one pass did. */
export interface PassResult {
  readonly claimed: number;
  readonly sent: number;
  /** Claimed intents skipped because a secret header had no value: left pending, never sent without it. */
  readonly missingSecrets: readonly string[];
}

/** What a pass works with: the worker's options, resolved and checked once. */
export interface OutboxPassSetup {
  readonly store: JournalStore<unknown>;
  /** The store's claim-and-start, read once from its capabilities (undefined: claim, then start). */
  readonly claimStarting: JournalCapabilities['claimStarting'];
  readonly owner: string;
  readonly clock: Clock;
  readonly timer: Clock;
  readonly random: Random;
  readonly fetch: typeof globalThis.fetch;
  readonly client: ReturnType<typeof clientFor>;
  /** The worker's own sender, when no fetch was given (wire-send.ts). */
  readonly wire: WireSend | undefined;
  /** The caller's `deliver` hook, in place of HTTP (outbox-deliver.ts). */
  readonly deliver: HookSend | undefined;
  readonly leaseMs: number;
  readonly batchSize: number;
  readonly options: Pick<
    OutboxWorkerOptions,
    'secrets' | 'signingSecret' | 'onlyKey' | 'onSettled' | 'disabledNotice' | 'tracer'
  >;
}

/** A claimed intent with the secret header values it is sent with. */
export interface ToSend {
  readonly claim: ClaimedIntent;
  readonly secrets: Readonly<Record<string, string>>;
}

/** Claims one batch of due intents, sends them, writes down every attempt and what follows. */
export async function runOutboxPass(setup: OutboxPassSetup): Promise<PassResult> {
  const { store, owner, clock, options } = setup;
  // Where the store can, each claimed intent's attempt starts with its claim (one write a batch).
  const claimed = await (setup.claimStarting?.claim ?? store.claim.bind(store))(
    owner,
    clock.now(),
    setup.leaseMs,
    setup.batchSize,
    options.onlyKey,
  );
  const { early, toSend, missingSecrets } = sortClaims(setup, claimed);
  const intents = new Map(claimed.map(({ intent }) => [intent.key, intent]));
  const settleSome = (some: Settlement[], durations?: Map<string, number>) =>
    writeSettlements(setup, some, intents, durations);
  // Missing secrets: the lease simply runs out; nothing is sent without the header.
  const skipped = new Set([...early.map((x) => x.key), ...missingSecrets]);
  await giveBackStarts(setup, claimed, skipped);
  if (early.length > 0) await settleSome(early);
  // Endpoints hold some back (paused, throttled, breaker open): pending again, nothing spent.
  const { admitted, held } = await gateEndpoints(store.endpoints, toSend, clock.now());
  await giveBackStarts(setup, claimed, new Set(held.map((x) => x.key)));
  if (held.length > 0) await settleSome(held);
  const toStart = admitted.filter(({ claim }) => claim.started !== true);
  const started = await store.startAttempts(toStart.map(({ claim }) => startOf(setup, claim)));
  const startedNow = new Set(toStart.filter((_, i) => started[i] === true).map((x) => x.claim));
  const sending = admitted.filter(({ claim }) => claim.started === true || startedNow.has(claim));
  // Throttle slots are taken now, just before sending: a slow start cannot bunch the sends.
  const slots = await slotsFor(store.endpoints, sending, clock.now());
  const sends = batchSends(setup);
  const settlements = await Promise.all(
    sending.map((item, i) =>
      // A reserved throttle slot: wait for it, holding the lease (about SLOT_HORIZON_MS at most).
      // Without an endpoint the slot is now: nothing to wait for, no promise spent on it.
      item.endpoint !== undefined || slots[i]! > clock.now()
        ? waitForSlot(store.endpoints, item.endpoint, slots[i]!, clock).then(() =>
            sendAndSettle(sends, item),
          )
        : sendAndSettle(sends, item),
    ),
  );
  const { answers, durations } = sends;
  if (settlements.length > 0) await settleSome(settlements, durations);
  const disabled = await observeEndpoints(store.endpoints, answers, clock.now());
  await recordDisabledNotices(store, options.disabledNotice, disabled, clock.now());
  return { claimed: claimed.length, sent: sending.length, missingSecrets };
}

/** The start of a claimed intent's next attempt, by this worker, now. */
function startOf(setup: OutboxPassSetup, claim: ClaimedIntent): AttemptStart {
  return {
    key: claim.intent.key,
    token: claim.token,
    attempt: claim.intent.attemptCount + 1,
    worker: setup.owner,
    startedAt: setup.clock.now(),
  };
}

/** Takes back the attempts started with the claim (claimStarting) of intents not sent after all. */
async function giveBackStarts(
  setup: OutboxPassSetup,
  claimed: readonly ClaimedIntent[],
  keys: ReadonlySet<string>,
): Promise<void> {
  if (keys.size === 0) return;
  const unsent = claimed.filter((claim) => claim.started === true && keys.has(claim.intent.key));
  if (unsent.length > 0)
    await setup.claimStarting?.unstart(unsent.map((claim) => startOf(setup, claim)));
}

/**
 * What becomes of each claimed intent before any send: settled at once (interrupted, or stopped
 * by its deadline or budget), sent, or left alone for want of a secret.
 */
function sortClaims(
  setup: OutboxPassSetup,
  claimed: readonly ClaimedIntent[],
): { early: Settlement[]; toSend: ToSend[]; missingSecrets: string[] } {
  const { clock, random } = setup;
  const early: Settlement[] = [];
  const toSend: ToSend[] = [];
  const missingSecrets: string[] = [];
  for (const claim of claimed) {
    const { intent, token } = claim;
    // Its last attempt never came back to the journal: count it as unknown (it may have
    // happened) and let the policy decide, as if that answer had just been lost.
    if (claim.interrupted) {
      early.push(
        settleAttempt(
          intent,
          token,
          intent.attemptCount,
          { observation: INTERRUPTED, body: null },
          clock.now(),
          random,
        ),
      );
      continue;
    }
    const stop = stopBeforeAttempt(intent, token, clock.now());
    if (stop) {
      early.push(stop);
      continue;
    }
    const secrets = secretsFor(setup.options.secrets, intent);
    if (secrets === undefined) {
      missingSecrets.push(intent.key);
      continue;
    }
    toSend.push({ claim, secrets });
  }
  return { early, toSend, missingSecrets };
}

/** The values of the secret headers `intent` names; undefined when one has none. */
function secretsFor(
  secrets: OutboxWorkerOptions['secrets'],
  intent: IntentRecord,
): Readonly<Record<string, string>> | undefined {
  if (intent.secretHeaders.length === 0) return NO_SECRETS;
  const values: Record<string, string> = {};
  for (const name of intent.secretHeaders) {
    const value = typeof secrets === 'function' ? secrets(name, intent) : secrets?.[name];
    if (value === undefined) return undefined;
    values[name] = value;
  }
  return values;
}

/** Writes settlements down, then tells `onSettled` of each, and whether its lease still held. */
async function writeSettlements(
  setup: OutboxPassSetup,
  settlements: Settlement[],
  intents: ReadonlyMap<string, IntentRecord>,
  durations?: ReadonlyMap<string, number>,
): Promise<void> {
  const written = await setup.store.settle(settlements);
  const onSettled = setup.options.onSettled;
  if (onSettled === undefined) return;
  settlements.forEach((settlement, i) => {
    // Every settlement is of a claimed intent.
    const intent = intents.get(settlement.key)!;
    onSettled({
      key: settlement.key,
      state: settlement.next.state,
      attempt: settlement.attempt?.attempt,
      status: settlement.attempt?.status ?? null,
      detail: settlement.attempt?.detail ?? null,
      written: written[i] === true,
      outcome: settlement.attempt?.outcome,
      endpoint: intent.endpoint ?? null,
      durationMs: durations?.get(settlement.key),
      recordedAt: intent.createdAt,
    });
  });
}
