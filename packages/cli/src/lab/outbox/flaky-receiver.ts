import { createIdempotencyMiddleware, withIdempotency, type FetchHandler } from 'oncely/http';
import { createLedger, systemClock, type Clock, type Random } from 'oncely';
import { createMemoryStore, type MemoryTx } from 'oncely/stores/memory';

export interface FlakyReceiverOptions {
  /** Share of requests answered 503 before any work. @default 0.3 */
  readonly failRate?: number;
  /** Share of requests whose work commits and whose answer is then lost (the socket dropped). @default 0.1 */
  readonly swallowRate?: number;
  readonly random: Random;
  /** How long the work takes: long enough for overlapping sends to meet. @default 10 */
  readonly effectMs?: number;
  /** Sleeps the effect time. @default systemClock */
  readonly clock?: Clock;
  /** False: no ledger, every request that is not failed does the work again (the naive receiver). @default true */
  readonly idempotent?: boolean;
}

export interface FlakyReceiver {
  readonly handler: FetchHandler;
  /** Effects committed per Idempotency-Key. */
  effects(): Map<string, number>;
  /** Requests per key. */
  readonly requests: Map<string, number>;
  /** Times a request arrived while another one with the same key was still in flight. */
  overlaps(): number;
}

/**
 * The receiver of the outbox crash story: it fails a share of requests with 503 before doing
 * anything, and for another share does the work and then drops the connection (the dropbox story's (docs/origins.md)
 * swallowed ack). Its work is guarded by the ledger under the sender's key, so the effects map is
 * the truth the tests compare the sender's journal against. It also counts overlapping in-flight
 * requests per key: two workers sending one intent at once would show up there.
 */
export function createFlakyReceiver(options: FlakyReceiverOptions): FlakyReceiver {
  const failRate = options.failRate ?? 0.3;
  const swallowRate = options.swallowRate ?? 0.1;
  const effectMs = options.effectMs ?? 10;
  const clock = options.clock ?? systemClock;
  // The naive receiver's effects; the guarded one writes its effects through the ledger's
  // transaction, so an effect whose request is rolled back (the sender went away) is not counted.
  const naiveEffects = new Map<string, number>();
  const store = createMemoryStore();
  const requests = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let overlaps = 0;
  const bump = (map: Map<string, number>, key: string, by = 1): number => {
    const n = (map.get(key) ?? 0) + by;
    map.set(key, n);
    return n;
  };
  const work = async (request: Request, tx: MemoryTx | undefined): Promise<Response> => {
    const key = request.headers.get('idempotency-key') ?? '';
    await request.arrayBuffer();
    if (effectMs > 0) await clock.sleep(effectMs);
    const n = tx ? (tx.get<number>('effects', key) ?? 0) + 1 : bump(naiveEffects, key);
    tx?.set('effects', key, n);
    return Response.json({ received: key, effect: n }, { status: 201 });
  };
  const guarded: FetchHandler =
    options.idempotent === false
      ? (request) => work(request, undefined)
      : withIdempotency(
          createIdempotencyMiddleware({
            ledger: createLedger({ store, clock }),
            scopeOf: () => 'sender',
          }),
          (request, context) => work(request, context?.tx),
        );

  const handler: FetchHandler = async (request, connection) => {
    const key = request.headers.get('idempotency-key') ?? '';
    bump(requests, key);
    if (bump(inFlight, key) > 1) overlaps += 1;
    try {
      const draw = options.random.next();
      if (draw < failRate) return new Response('try again', { status: 503 });
      const response = await guarded(request, connection);
      if (draw < failRate + swallowRate) connection?.drop();
      return response;
    } finally {
      bump(inFlight, key, -1);
    }
  };
  return {
    handler,
    effects: () =>
      options.idempotent === false
        ? new Map(naiveEffects)
        : new Map(store.entries<number>('effects')),
    requests,
    overlaps: () => overlaps,
  };
}
