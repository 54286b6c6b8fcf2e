import { OncelyError } from '../contract/errors.js';
import { systemClock, type Clock } from '../time/clock.js';
import type { AttemptEntry, IntentRecord, NewIntent, StateCounts } from './intent.js';
import { checkIntentFilter } from './intent-filter.js';
import type { Backlog, IntentFilter, JournalStore, Reopening } from './journal-store.js';
import {
  replayIntents,
  type ReplayFilter,
  type ReplayOptions,
  type ReplayResult,
} from './replay.js';
import { prepareIntent, sameIntent, type IntentInput } from './prepare-intent.js';
import { createEndpoints, EndpointStateError, type Endpoints } from './endpoints.js';
import {
  prepareMessage,
  publishMessage,
  type MessageInput,
  type PublishDeps,
  type PublishResult,
} from './publish.js';

/** A key recorded before with a different send (target, method, headers or payload): the notes story's request-ID conflict (docs/origins.md). */
export class IntentConflictError extends OncelyError {
  readonly key: string;
  constructor(key: string) {
    super(
      'intent_conflict',
      `intent ${key} is already recorded with a different target, method, headers or payload; use a new key for a new intent`,
    );
    this.name = 'IntentConflictError';
    this.key = key;
  }
}

/** An intent that is not in the journal, or not in a state that allows the operation. */
export class IntentStateError extends OncelyError {
  readonly key: string;
  constructor(key: string, message: string) {
    super('intent_state', message);
    this.name = 'IntentStateError';
    this.key = key;
  }
}

export interface RecordResult {
  readonly intent: IntentRecord;
  /** False when the key was already recorded with the same send: nothing new was written. */
  readonly created: boolean;
}

/** An intent and every attempt, for `oncely outbox show`. */
export interface IntentReport {
  readonly intent: IntentRecord;
  readonly attempts: readonly AttemptEntry[];
}

export interface Journal<Tx> {
  readonly store: JournalStore<Tx>;
  /** The receivers intents may name: state, throttle, breaker, signing secrets. */
  readonly endpoints: Endpoints;
  /**
   * Records the intent durably before anything is sent. Recording the same key with the same send
   * again is a no-op that returns the stored intent (a restarted program resumes rather than
   * sending a second intent); with a different send it throws {@link IntentConflictError}.
   */
  record(input: IntentInput): Promise<RecordResult>;
  /** The transactional outbox: records inside the caller's open transaction. False when the key exists. */
  recordWithin(tx: Tx, input: IntentInput): Promise<boolean>;
  /**
   * Publishes a message of an event type: one intent for each endpoint subscribed to its type and
   * channels, each under the key `<message id>:<endpoint id>`. The same id again records only
   * what its subscribers lack; another type or data under it throws {@link IntentConflictError}.
   */
  publish(message: MessageInput): Promise<PublishResult>;
  /** `publish` inside the caller's open transaction: the message commits with the app's writes. */
  publishWithin(tx: Tx, message: MessageInput): Promise<PublishResult>;
  get(key: string): Promise<IntentRecord | undefined>;
  report(key: string): Promise<IntentReport | undefined>;
  /** Intents newest recorded first, narrowed by `filter`; a bad filter throws InvalidOptionError. */
  list(filter?: IntentFilter): Promise<IntentRecord[]>;
  counts(): Promise<StateCounts>;
  /** How many intents are pending and when the oldest was recorded: the queue's depth and age. */
  backlog(): Promise<Backlog>;
  /** Cancels a pending intent no worker is sending right now. */
  cancel(key: string, reason?: string): Promise<IntentRecord>;
  /** Gives a dead intent (refused, gave up, unknown, cancelled) a fresh budget under the same key. */
  retry(
    key: string,
    options?: { maxAttempts?: number; deadlineAt?: number | null },
  ): Promise<IntentRecord>;
  /**
   * Replays dead letters: `retry` for every intent the filter selects (by default refused,
   * gave_up and unknown; cancelled only when named), each under its own key. An `unknown` one
   * may have done its work: the receiver's ledger answers a replay of it from its receipt while
   * it keeps the key. `dryRun` lists them and changes nothing.
   */
  replay(filter: ReplayFilter, options?: ReplayOptions): Promise<ReplayResult>;
  close(): Promise<void>;
}

export function createJournal<Tx>(options: {
  store: JournalStore<Tx>;
  clock?: Clock;
}): Journal<Tx> {
  const { store } = options;
  const clock = options.clock ?? systemClock;
  const must = async (key: string): Promise<IntentRecord> => {
    const intent = await store.get(key);
    if (!intent)
      throw new IntentStateError(key, `no intent with key ${JSON.stringify(key)} in the journal`);
    return intent;
  };
  const prepare = (input: IntentInput): Promise<NewIntent> =>
    prepareForEndpoint(store, input, clock.now());
  const journal: Journal<Tx> = {
    store,
    endpoints: createEndpoints(store.endpoints, clock),
    publish: async (message) =>
      publishMessage(
        publishDeps(store, async (input) => (await journal.record(input)).created),
        prepareMessage(message, clock.now()),
      ),
    publishWithin: async (tx, message) =>
      publishMessage(
        publishDeps(store, (input) => journal.recordWithin(tx, input)),
        prepareMessage(message, clock.now()),
      ),
    async record(input) {
      const intent = await prepare(input);
      if (await store.record(intent)) return { intent: await must(intent.key), created: true };
      const existing = await must(intent.key);
      if (!sameIntent(existing, intent)) throw new IntentConflictError(intent.key);
      return { intent: existing, created: false };
    },
    recordWithin: async (tx, input) => store.recordWithin(tx, await prepare(input)),
    get: (key) => store.get(key),
    async report(key) {
      const intent = await store.get(key);
      return intent && { intent, attempts: await store.attempts(key) };
    },
    list: async (filter = {}) => store.list(checkIntentFilter(filter)),
    counts: () => store.counts(),
    // A store without backlog() (written before it) still gives the depth; the age is unknown.
    backlog: async () =>
      (await store.backlog?.()) ?? {
        pending: (await store.counts()).pending,
        oldestPendingAt: null,
      },
    async cancel(key, reason = 'cancelled by hand') {
      const intent = await must(key);
      if (intent.state !== 'pending')
        throw new IntentStateError(
          key,
          `intent ${key} is ${intent.state}, not pending: nothing to cancel`,
        );
      const final = {
        stopReason: 'cancelled' as const,
        status: null,
        body: null,
        detail: reason,
        finishedAt: clock.now(),
      };
      if (!(await store.cancel(key, final, clock.now())))
        throw new IntentStateError(
          key,
          `intent ${key} is being sent right now; try again when its attempt ends`,
        );
      return must(key);
    },
    async retry(key, retryOptions = {}) {
      const intent = await must(key);
      if (intent.state === 'pending' || intent.state === 'delivered')
        throw new IntentStateError(
          key,
          `intent ${key} is ${intent.state}: only a refused, given-up, unknown or cancelled intent can be retried`,
        );
      const reopened = await store.reopen(key, reopening(intent, retryOptions, clock.now()));
      if (!reopened) throw new IntentStateError(key, `intent ${key} changed meanwhile; look again`);
      return must(key);
    },
    replay: (filter, replayOptions = {}) =>
      replayIntents(
        store,
        filter,
        (intent) => reopening(intent, replayOptions, clock.now()),
        replayOptions,
      ),
    close: () => store.close(),
  };
  return journal;
}

/**
 * An intent naming an endpoint is sent to the endpoint's URL: it must exist when recorded. Its
 * retry settings go under the intent's own.
 */
async function prepareForEndpoint<Tx>(
  store: JournalStore<Tx>,
  input: IntentInput,
  nowMs: number,
): Promise<NewIntent> {
  if (input?.endpoint === undefined) return prepareIntent(input, nowMs);
  const endpoint = await store.endpoints?.get(input.endpoint);
  if (!endpoint)
    throw new EndpointStateError(
      input.endpoint,
      `no endpoint ${JSON.stringify(input.endpoint)} in the journal`,
    );
  if (input.target !== undefined)
    throw new EndpointStateError(endpoint.id, 'either a target or an endpoint, not both');
  return prepareIntent({ ...input, target: endpoint.url }, nowMs, endpoint.settings.retry ?? {});
}

/** What publishing needs of the journal: its endpoints, and `record` (or recordWithin's). */
function publishDeps<Tx>(store: JournalStore<Tx>, record: PublishDeps['record']): PublishDeps {
  return {
    endpoints: async () => {
      if (store.endpoints === undefined)
        throw new EndpointStateError(
          '*',
          `the ${store.name} journal keeps no endpoints to publish to`,
        );
      return store.endpoints.list();
    },
    record,
    storedBody: async (key) => (await store.get(key))?.body,
    isConflict: (error) => error instanceof IntentConflictError,
  };
}

/**
 * What a retried intent gets: its own budget again on top of the attempts made (the attempt
 * numbers go on), or `maxAttempts` more; the new deadline or none; due at once. Its `sawUnknown`
 * stays: an intent that once lost an answer never ends `gave_up`, only `unknown` or delivered.
 */
function reopening(
  intent: IntentRecord,
  options: { maxAttempts?: number | undefined; deadlineAt?: number | null | undefined },
  nowMs: number,
): Reopening {
  return {
    maxAttempts: intent.attemptCount + (options.maxAttempts ?? intent.policy.maxAttempts),
    deadlineAt: options.deadlineAt ?? null,
    nextAttemptAt: nowMs,
  };
}
