import type { PgPool, PgPoolClient } from './pg-pool.js';

/** Clients that have the listener below already: one per client, however often it is checked out. */
const heard = new WeakSet<object>();
const ignore = (): void => {};

interface ErrorEmitter {
  on(event: 'error', listener: (error: Error) => void): unknown;
}

/**
 * `pool.connect()`, with the client's 'error' event always heard. pg emits 'error' on a client
 * whose connection ends (the server stopped, crashed or ended the backend), and the pool listens
 * only while the client is idle in it: a checked-out client with no listener of its own ends the
 * process, by Node's rule for an unheard 'error'. The listener needs to do nothing: the query in
 * flight, and any sent after, fail with the error; the client is no longer queryable, so the pool
 * discards it at release (pg-pool checks `_queryable`).
 */
export async function connectHeard(pool: PgPool): Promise<PgPoolClient> {
  const client = await pool.connect();
  const emitter = client as Partial<ErrorEmitter>;
  if (!heard.has(client) && typeof emitter.on === 'function') {
    emitter.on('error', ignore);
    heard.add(client);
  }
  return client;
}
