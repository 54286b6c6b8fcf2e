import type { JournalWake } from '../journal-wake.js';
import type { ClaimMarkHearing, ClaimPosition } from '../sql/claim-mark.js';
import { connectHeard } from '../../postgres-driver/connect-heard.js';
import type { PgPool, PgPoolClient } from '../../postgres-driver/pg-pool.js';

/** What a listening client emits besides query results (pg's Client is an EventEmitter). */
interface NotificationEmitter {
  on(event: 'notification', listener: (message: { payload?: string }) => void): unknown;
  on(event: 'end', listener: () => void): unknown;
  on(event: 'error', listener: (error: Error) => void): unknown;
  removeAllListeners(event: 'notification' | 'end'): unknown;
}

/**
 * The journal's wake on PostgreSQL: LISTEN/NOTIFY on one channel per journal table. A record's
 * INSERT carries its own `pg_notify` (one statement, no extra round trip), so the notification
 * leaves when the intent commits, inside the app's transaction too; a reopening sends one after
 * it committed. Listening takes one connection of the pool while anything watches (given back
 * closed, so no pooled connection stays LISTENing). When it ends (the server restarted), `ensure`
 * at the worker's next poll takes another.
 *
 * A record's notification carries its row's position in the claim order, `next_attempt_at seq`,
 * for the store's claim mark (claim-mark.ts), which is told when listening begins and ends;
 * other writes notify without one.
 *
 * `channel` is built from checked identifiers only (no quote can be in it).
 */
export function postgresJournalWake(pool: () => PgPool, channel: string): JournalWake {
  const listeners = new Set<() => void>();
  let hearing: ClaimMarkHearing | undefined;
  let listening: Promise<PgPoolClient | undefined> | undefined;
  // Which listen is the current one: a LISTEN that succeeds after it was given up tells no one.
  let generation = 0;
  const stopHearing = (): void => {
    generation++;
    hearing?.listening(false);
  };
  const fire = (): void => {
    for (const onDue of listeners) onDue();
  };
  const heard = (message: { payload?: string }): void => {
    hearing?.heard(positionOf(message.payload));
    fire();
  };
  const stop = (client: PgPoolClient | undefined, destroy: boolean): void => {
    if (client === undefined) return;
    (client as Partial<NotificationEmitter>).removeAllListeners?.('notification');
    (client as Partial<NotificationEmitter>).removeAllListeners?.('end');
    client.release(destroy);
  };
  const listen = (): Promise<PgPoolClient | undefined> =>
    (listening ??= (async () => {
      const mine = ++generation;
      const client = await connectHeard(pool());
      const emitter = client as unknown as NotificationEmitter;
      emitter.on('notification', heard);
      emitter.on('end', () => {
        stopHearing();
        listening = undefined;
        stop(client, true);
        fire(); // whatever was notified meanwhile is found by looking now
      });
      try {
        await client.query(`LISTEN "${channel}"`);
      } catch (error) {
        stop(client, true); // a LISTEN refused keeps no connection from the pool
        throw error;
      }
      if (mine === generation) hearing?.listening(true);
      return client;
    })().catch(() => {
      listening = undefined; // the poll goes on; the next relisten tries again
      return undefined;
    }));
  return {
    recordStatement: (insert) =>
      `WITH recorded AS (${insert} RETURNING next_attempt_at, seq) SELECT pg_notify('${channel}', next_attempt_at || ' ' || seq) FROM recorded`,
    hearWith(claimMark) {
      hearing = claimMark;
    },
    async written(kind) {
      // Best effort: the write has committed; a lost notification costs a poll, not the write.
      if (kind === 'other')
        await pool()
          .query(`SELECT pg_notify('${channel}', '')`)
          .catch(() => undefined);
    },
    ensure() {
      if (listeners.size > 0) void listen();
    },
    async watch(onDue) {
      const listener = (): void => onDue();
      listeners.add(listener);
      await listen();
      return () => {
        listeners.delete(listener);
        if (listeners.size > 0 || listening === undefined) return;
        stopHearing();
        const ending = listening;
        listening = undefined;
        void ending.then((client) => stop(client, true));
      };
    },
    async close() {
      listeners.clear();
      stopHearing();
      const ending = listening;
      listening = undefined;
      stop(await ending, true);
    },
  };
}

/** A record's position from its notification's payload; undefined for one without (`''`). */
export function positionOf(payload: string | undefined): ClaimPosition | undefined {
  const match = /^(-?\d+) (\d+)$/.exec(payload ?? '');
  return match ? { at: Number(match[1]), seq: Number(match[2]) } : undefined;
}
