import { OncelyError } from '../../contract/errors.js';
import { TransactionEndedError } from '../store-errors.js';
import type { PgPool, PgPoolClient, PgQueryConfig, PgQueryResult, PgTx } from './pg-pool.js';
import { connectHeard } from './connect-heard.js';

/**
 * Writes the receipt and commits, in one round trip when the pool pipelines: the receipt's
 * statement must fail (not match nothing) when the key is no longer ours, so that the COMMIT sent
 * behind it rolls the effect back. Resolves true once committed, false when the key was lost.
 */
export type FinishTransaction = (receipt: PgQueryConfig) => Promise<boolean>;

/** The finish of each open transaction handle made by {@link lazyTransaction}. */
const finishers = new WeakMap<PgTx, FinishTransaction>();

/** How `tx`'s transaction ends with a receipt in one round trip, if `tx` is one of ours. */
export function finisherOf(tx: PgTx): FinishTransaction | undefined {
  return finishers.get(tx);
}

/** SQLSTATE 22012: how the receipt statement says it matched no row (see the store's SQL). */
export const RECEIPT_LOST = '22012';

/**
 * A transaction that takes a pooled client and sends BEGIN at its first query, not before: an
 * effect that awaits something else first holds no connection meanwhile. BEGIN is queued with
 * that first query, and the receipt with COMMIT ({@link finisherOf}; the receipt's statement sets
 * the commit's level itself, and `commitLevel`, a statement that sets it, goes in front of a
 * COMMIT without a receipt, in the same message): on a pool made with
 * `pipeline: true` (pg 8.17 and later) each pair is one round trip, elsewhere the driver sends
 * the second as soon as the first is answered. BEGIN only fails with its connection, and then
 * the query queued behind it fails too. COMMIT when `fn` resolves (unless the receipt committed
 * already), ROLLBACK when it rejects. A client whose BEGIN, COMMIT or ROLLBACK failed is
 * destroyed rather than returned to the pool in an unknown state.
 */
export async function lazyTransaction<T>(
  pool: PgPool,
  commitLevel: string,
  fn: (tx: PgTx) => Promise<T>,
): Promise<T> {
  let client: PgPoolClient | undefined;
  let opening: Promise<PgPoolClient> | undefined;
  /** BEGIN's answer, until a query behind it has checked it. */
  let began: Promise<PgQueryResult> | undefined;
  let active = true;
  /** The transaction ended inside `fn` (the receipt committed it, or rolled it back). */
  let ended = false;
  let broken = false;

  let begun = false;
  const open = (): Promise<PgPoolClient> =>
    (opening ??= connectHeard(pool).then((c) => (client = c)));
  /** Sends `text`, behind BEGIN in the same write the first time; fails as BEGIN did if it did. */
  const send = async (text: string | PgQueryConfig, values?: unknown[]): Promise<PgQueryResult> => {
    const c = client ?? (await open());
    if (!pipelines(c)) {
      // Without pipeline mode pg would queue the query behind BEGIN itself, with a deprecation
      // warning (the queue goes in pg 9): wait for BEGIN's answer first instead.
      if (!begun) {
        begun = true;
        try {
          await c.query('BEGIN');
        } catch (error) {
          broken = true;
          throw error;
        }
      }
      return typeof text === 'string' ? c.query(text, values) : c.query(text);
    }
    const sent = together(c, () => {
      if (!begun) {
        begun = true;
        began = settledLater(c.query('BEGIN'));
      }
      return settledLater(typeof text === 'string' ? c.query(text, values) : c.query(text));
    });
    const beginning = began;
    began = undefined;
    if (beginning !== undefined) {
      try {
        await beginning;
      } catch (error) {
        broken = true;
        await sent.catch(() => {});
        throw error;
      }
    }
    return sent;
  };
  const tx: PgTx = {
    async query<R>(text: string | PgQueryConfig, values?: unknown[]) {
      if (!active) throw new TransactionEndedError('postgres');
      const result = await send(text, values);
      return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
    },
  };
  finishers.set(tx, async (receipt) => {
    if (!active) throw new TransactionEndedError('postgres');
    active = false;
    const c = client ?? (await open());
    // Pipelined: both queued at once (`client` is set, so send does not wait first), in one
    // write. Otherwise COMMIT follows the receipt's answer, whatever it was (a lost key's COMMIT
    // answers ROLLBACK, as in the pipeline).
    const [writing, committing] = pipelines(c)
      ? together(c, () => [send(receipt), settledLater(c.query('COMMIT'))])
      : sequentially(send(receipt), () => c.query('COMMIT'));
    ended = true;
    let lost = false;
    try {
      await writing;
    } catch (error) {
      if ((error as { code?: unknown }).code !== RECEIPT_LOST) {
        await committing.catch(() => {
          broken = true;
        });
        throw error;
      }
      lost = true; // the COMMIT behind it rolled the effect back
    }
    let outcome: PgQueryResult;
    try {
      outcome = await committing;
    } catch (error) {
      broken = true;
      throw error;
    }
    if (lost) return false;
    if ((outcome as { command?: unknown }).command === 'ROLLBACK')
      throw new OncelyError('commit_failed', 'postgres: the transaction rolled back at COMMIT');
    return true;
  });

  let result: T;
  try {
    result = await fn(tx);
  } catch (error) {
    active = false;
    const c = await opening?.catch(() => undefined);
    if (c) {
      if (!ended && !broken)
        await c.query('ROLLBACK').catch(() => {
          broken = true;
        });
      c.release(broken);
    }
    throw error;
  }
  active = false;
  const c = await opening;
  if (c) {
    if (!ended) {
      try {
        await send(`${commitLevel}; COMMIT`);
      } catch (error) {
        await c.query('ROLLBACK').catch(() => {
          broken = true;
        });
        c.release(broken);
        throw error;
      }
    }
    c.release(broken);
  }
  return result;
}

/**
 * Runs `queue` (which queues queries on `client`) with the client's socket corked, so queries
 * queued together go out in one write (one syscall) instead of one each. It reaches for pg's
 * `connection.stream`, as pg's own queries do to cork their messages; a client without one
 * (another driver, a test double) simply writes as it goes.
 */
export function together<T>(client: PgPoolClient, queue: () => T): T {
  const stream = (client as { connection?: { stream?: Partial<Corkable> } }).connection?.stream;
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') return queue();
  const socket = stream as Corkable;
  socket.cork();
  try {
    return queue();
  } finally {
    socket.uncork();
  }
}

interface Corkable {
  cork(): void;
  uncork(): void;
}

/** True for a client of a pool made with `pipeline: true` (pg 8.17 and later). */
export function pipelines(client: PgPoolClient): boolean {
  return (client as { pipeline?: unknown }).pipeline === true;
}

/** `first`, and `then` sent once `first` is answered, however it ended; both marked handled. */
function sequentially(
  first: Promise<PgQueryResult>,
  then: () => Promise<PgQueryResult>,
): [Promise<PgQueryResult>, Promise<PgQueryResult>] {
  const written = settledLater(first);
  return [written, settledLater(written.then(then, then))];
}

/** `promise`, marked as handled: it is awaited later, after another answer. */
export function settledLater<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => {});
  return promise;
}
