import { hostname } from 'node:os';
import { createNodeHttpFetch } from '../client/node-http-fetch.js';
import { InvalidOptionError } from '../contract/errors.js';
import { newKey } from '../contract/idempotency-key.js';
import type { RotatingSecret } from '../contract/secret-rotation.js';
import { checkSigningSecrets } from './signing-secrets.js';
import { systemClock, type Clock } from '../time/clock.js';
import { systemRandom, type Random } from '../time/random.js';
import type { IntentRecord, StateCounts } from './intent.js';
import type { JournalStore } from './journal-store.js';
import {
  runOutboxPass,
  type OutboxPassSetup,
  type PassResult,
  type SettledEvent,
} from './outbox-pass.js';
import { clientFor, MAX_RECEIPT_BYTES } from './send-attempt.js';
import { createWireSend } from './wire-send.js';
import { createHookSend, type OutboxDeliver } from './outbox-deliver.js';
import type { DisabledNotice } from './endpoint-notice.js';
import { createWakeLatch } from './wake-latch.js';
import { PARKED_AT } from './endpoint.js';
import type { AttemptTracer } from './attempt-tracing.js';

export type { PassResult, SettledEvent } from './outbox-pass.js';

export interface OutboxWorkerOptions {
  readonly store: JournalStore<never> | JournalStore<unknown>;
  /** Names this worker in leases and attempt rows. @default host:pid:random */
  readonly owner?: string;
  /**
   * Sends each attempt. Without one, the worker sends on node:http with keep-alive agents of its
   * own and reads the answer off the socket (wire-send.ts), as createNodeHttpFetch would under the
   * client, without a Response per attempt: a fraction of globalThis.fetch's CPU time per send,
   * no redirect followed (a 3xx is the receiver's answer), no compression asked for.
   * @default the worker's own node:http sender
   */
  readonly fetch?: typeof globalThis.fetch;
  /**
   * Delivers each attempt in place of the HTTP request (outbox-deliver.ts): another transport, or
   * a test or benchmark without a receiver. The worker still claims under a lease, writes each
   * attempt down before and after, signs and keys it, and reads the answer as an HTTP one (a
   * throw: no answer, retried under the same key). Not with `fetch`.
   * @default none: the HTTP request
   */
  readonly deliver?: OutboxDeliver;
  /** Schedules attempts, stamps the journal, sleeps until the next one is due. @default systemClock */
  readonly clock?: Clock;
  /** Times each attempt out (real I/O; see the client's `timer`). @default systemClock */
  readonly timer?: Clock;
  /** @default systemRandom */
  readonly random?: Random;
  /**
   * How long a claim keeps other workers away. Longer than any attempt may run, so a lease never
   * ends while its attempt is in flight: that is what keeps two workers from sending one intent
   * at the same time. @default 60000
   */
  readonly leaseMs?: number;
  /** Intents claimed and sent together. @default 16 */
  readonly batchSize?: number;
  /** How long an idle `run()` waits before looking again (other processes may record intents). @default 1000 */
  readonly pollMs?: number;
  /** Values of the secret headers intents name, re-supplied at send time. */
  readonly secrets?:
    | Readonly<Record<string, string>>
    | ((name: string, intent: IntentRecord) => string | undefined);
  /**
   * Standard Webhooks signing: every attempt is signed, webhook-id = the key. A `whsec_` secret
   * (`v1`) or a `whsk_` secret key (`v1a`, ed25519), or several: one signature each in the header.
   * Entries with `expiresAt` (rotateSecrets) stop signing at that instant of `clock`.
   */
  readonly signingSecret?: string | readonly (string | RotatingSecret)[];
  /**
   * Where to tell a person that an endpoint was disabled by the receiver's signals (410,
   * `webhook-delivery: disable`, only failures for days): a notification intent is recorded to
   * this URL or endpoint. @default none (the reason shows in `endpoint list`)
   */
  readonly disabledNotice?: DisabledNotice;
  /** Works on this one intent only (`oncely deliver --journal`); the others are left alone. */
  readonly onlyKey?: string;
  /**
   * An OpenTelemetry tracer (`trace.getTracer('oncely')`): each attempt is a client span, and its
   * `traceparent` goes to the receiver, whose instrumented server continues the trace (a
   * `traceparent` the intent recorded is replaced). @default none: no spans, no header
   */
  readonly tracer?: AttemptTracer;
  /** Called after every settlement: for progress output. */
  readonly onSettled?: (event: SettledEvent) => void;
  /**
   * Told about a pass `run()` could not finish (the journal's database is down, say); the worker
   * waits `pollMs` and tries again rather than stopping. @default nothing
   */
  readonly onError?: (error: unknown) => void;
}

export const DEFAULT_OUTBOX_WORKER_OPTIONS = {
  leaseMs: 60_000,
  batchSize: 16,
  pollMs: 1000,
} as const;

export interface OutboxWorker {
  readonly owner: string;
  /** Claims one batch of due intents, sends them, writes down every attempt and what follows. */
  runOnce(): Promise<PassResult>;
  /**
   * Carries every unfinished intent on, under its own key, until none is pending: waits on the
   * clock for the next due one, honouring each intent's deadline and attempt budget (attempts
   * made before a crash count). Resolves with the final counts.
   */
  resume(signal?: AbortSignal): Promise<StateCounts>;
  /**
   * Like resume(), but keeps polling for new intents until `signal` aborts. A pass that fails
   * (the database went away) is reported to `onError` and tried again after `pollMs`: a worker
   * outlives an outage of its journal, as its pool does.
   */
  run(signal: AbortSignal): Promise<void>;
}

/**
 * The outbox worker: intents are claimed under a lease, each attempt is written down before it
 * leaves and settled after, and the next attempt's time goes into the journal rather than into a
 * sleeping loop, so a Retry-After of 30 s holds no worker and survives a restart (pg-boss's
 * `startAfter`; graphile-worker's `run_at`). The send itself is the client's, with a budget of one.
 */
export function createOutboxWorker(options: OutboxWorkerOptions): OutboxWorker {
  const store = options.store as JournalStore<unknown>;
  const clock = options.clock ?? systemClock;
  const timer = options.timer ?? systemClock;
  const random = options.random ?? systemRandom;
  const fetchImpl = options.fetch ?? createNodeHttpFetch();
  const { owner, leaseMs, batchSize, pollMs } = checkedWorkerOptions(options);
  const setup: OutboxPassSetup = {
    store,
    claimStarting: store.capabilities.claimStarting,
    owner,
    clock,
    timer,
    random,
    fetch: fetchImpl,
    client: clientFor({ fetch: fetchImpl, clock, timer }),
    // Without a fetch of the caller's, http(s) sends skip the Fetch layer (wire-send.ts).
    wire: options.fetch === undefined ? createWireSend(timer, MAX_RECEIPT_BYTES) : undefined,
    deliver: options.deliver && createHookSend(options.deliver, timer, MAX_RECEIPT_BYTES, clock),
    leaseMs,
    batchSize,
    options,
  };
  const runOnce = (): Promise<PassResult> => runOutboxPass(setup);
  // A recorded intent ends the wait at once (LISTEN/NOTIFY on PostgreSQL, in process elsewhere);
  // pollMs stays as the fallback for a wake that is lost.
  const latch = createWakeLatch();

  const dueOf = async (key: string): Promise<number | undefined> => {
    const intent = await store.get(key);
    return intent?.state === 'pending' ? intent.nextAttemptAt : undefined;
  };

  /** Sleeps until the next intent is due, at most `pollMs` (another worker may finish it first). */
  async function waitForWork(
    signal: AbortSignal | undefined,
    keepPolling: boolean,
  ): Promise<boolean> {
    const next =
      options.onlyKey === undefined ? await store.nextDueAt() : await dueOf(options.onlyKey);
    // Parked intents (their endpoint paused or disabled) wait for a person, not for the clock.
    const due = next !== undefined && next >= PARKED_AT ? undefined : next;
    if (due === undefined && !keepPolling) return false;
    const waitMs = due === undefined ? pollMs : Math.max(0, Math.min(due - clock.now(), pollMs));
    if (waitMs > 0) await latch.sleep(clock, waitMs, signal);
    return true;
  }

  return {
    owner,
    runOnce,
    async resume(signal) {
      const unwatch = await store.watch(latch.wake);
      try {
        for (;;) {
          if (signal?.aborted) break;
          const pass = await runOnce();
          if (pass.claimed > pass.missingSecrets.length) continue;
          if (pass.missingSecrets.length > 0) break; // nothing else can move without those secrets
          if (!(await waitForWork(signal, false).catch(() => false))) break;
        }
      } finally {
        unwatch();
      }
      return store.counts();
    },
    async run(signal) {
      const unwatch = await store.watch(latch.wake);
      try {
        await runUntil(signal);
      } finally {
        unwatch();
      }
    },
  };

  /** `run`'s loop: a pass, then a wait for work, until `signal` aborts. */
  async function runUntil(signal: AbortSignal): Promise<void> {
    while (!signal.aborted) {
      let pass: PassResult;
      try {
        pass = await runOnce();
      } catch (error) {
        // An intent claimed before the failure keeps its lease and is taken again when it ends.
        options.onError?.(error);
        await clock.sleep(pollMs, signal).catch(() => undefined);
        continue;
      }
      if (pass.claimed > pass.missingSecrets.length) continue;
      await waitForWork(signal, true).catch(() => undefined);
    }
  }
}

/** The worker's own numbers and name, defaults filled in; bad options refused before it starts. */
function checkedWorkerOptions(options: OutboxWorkerOptions) {
  const owner = options.owner ?? `${hostname()}:${process.pid}:${newKey().slice(0, 8)}`;
  const leaseMs = options.leaseMs ?? DEFAULT_OUTBOX_WORKER_OPTIONS.leaseMs;
  const batchSize = options.batchSize ?? DEFAULT_OUTBOX_WORKER_OPTIONS.batchSize;
  const pollMs = options.pollMs ?? DEFAULT_OUTBOX_WORKER_OPTIONS.pollMs;
  if (!Number.isSafeInteger(leaseMs) || leaseMs < 1)
    throw new InvalidOptionError('leaseMs', leaseMs, 'a whole number of milliseconds >= 1');
  if (!Number.isSafeInteger(batchSize) || batchSize < 1)
    throw new InvalidOptionError('batchSize', batchSize, 'a whole number >= 1');
  if (!Number.isSafeInteger(pollMs) || pollMs < 1)
    throw new InvalidOptionError('pollMs', pollMs, 'a whole number of milliseconds >= 1');
  const capabilities = (options.store as Partial<JournalStore> | undefined)?.capabilities;
  if (typeof capabilities !== 'object' || capabilities === null)
    throw new InvalidOptionError('store', options.store, 'a JournalStore (missing capabilities)');
  checkSigningSecrets(options.signingSecret);
  if (options.deliver !== undefined && typeof options.deliver !== 'function')
    throw new InvalidOptionError('deliver', options.deliver, 'a function');
  if (options.deliver !== undefined && options.fetch !== undefined)
    throw new InvalidOptionError('deliver', options.deliver, 'either deliver or fetch, not both');
  if (options.tracer !== undefined && typeof options.tracer?.startSpan !== 'function')
    throw new InvalidOptionError('tracer', options.tracer, "a tracer: trace.getTracer('oncely')");
  return { owner, leaseMs, batchSize, pollMs };
}
