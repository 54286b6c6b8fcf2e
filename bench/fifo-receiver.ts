/**
 * The receiver of the FIFO check (bench/fifo.ts and test/journal/journal-ordering-conformance.ts):
 * each delivery's body is {"k": ordering key, "n": its place in that key, from 1}. It fails a
 * seeded share of arrivals with 503 before any work, does the work of the others once per
 * intent (a re-delivery of the same intent is fine) and, for a share of those, loses the answer
 * after the work (the swallowed ack). An arrival of intent n before intent n - 1's work was done
 * is a violation: the sender let a later intent of a key overtake an earlier one.
 */
import type { Random } from 'oncely';

export type Answer = 'failed' | 'ok' | 'swallowed';

export interface FifoReceiver {
  /** One arrival: what becomes of it. */
  receive(body: string): Answer;
  report(): FifoReport;
}

export interface FifoReport {
  readonly keys: number;
  /** Intents whose work was done (once each). */
  readonly intents: number;
  /** Keys whose intents were all done, 1, 2, 3 … in that order, with no violation. */
  readonly inOrder: number;
  /** Arrivals of an intent before its predecessor's work was done. */
  readonly violations: number;
  readonly arrivals: number;
}

export function createFifoReceiver(options: {
  readonly random: Random;
  /** @default 0.3 */
  readonly failRate?: number;
  /** Of the arrivals that do the work, the share whose answer is lost. @default 0.1 */
  readonly swallowRate?: number;
  /** Intents per key: a key is in order when all of them were done in order. */
  readonly perKey: number;
}): FifoReceiver {
  const { random, perKey } = options;
  const failRate = options.failRate ?? 0.3;
  const swallowRate = options.swallowRate ?? 0.1;
  const done = new Map<string, number[]>();
  const badKeys = new Set<string>();
  let violations = 0;
  let arrivals = 0;
  return {
    receive(body) {
      const { k, n } = JSON.parse(body) as { k: string; n: number };
      arrivals += 1;
      const list = done.get(k) ?? [];
      done.set(k, list);
      if (n > 1 && !list.includes(n - 1)) {
        violations += 1;
        badKeys.add(k);
      }
      if (random.next() < failRate) return 'failed';
      if (!list.includes(n)) list.push(n);
      return random.next() < swallowRate ? 'swallowed' : 'ok';
    },
    report() {
      let inOrder = 0;
      let intents = 0;
      for (const [k, list] of done) {
        intents += list.length;
        const ordered = list.length === perKey && list.every((n, i) => n === i + 1);
        if (ordered && !badKeys.has(k)) inOrder += 1;
      }
      return { keys: done.size, intents, inOrder, violations, arrivals };
    },
  };
}

/** The receiver as an in-process fetch: a swallowed answer is a reset after the request left. */
export function fifoFetch(receiver: FifoReceiver): typeof globalThis.fetch {
  return (async (_url: string | URL | Request, init?: RequestInit) => {
    const body = new TextDecoder().decode(init?.body as Uint8Array);
    const answer = receiver.receive(body);
    if (answer === 'swallowed')
      throw Object.assign(new TypeError('fetch failed'), {
        cause: Object.assign(new Error('socket hang up'), { code: 'ECONNRESET' }),
      });
    return new Response(answer === 'ok' ? '{"ok":true}' : 'busy', {
      status: answer === 'ok' ? 200 : 503,
    });
  }) as typeof globalThis.fetch;
}
