import { TransactionEndedError } from '../../store-errors.js';
import type {
  PgPool,
  PgPoolClient,
  PgQueryConfig,
  PgQueryResult,
  PgTx,
} from '../../postgres-driver/pg-pool.js';
import {
  expectCommitted,
  firstFailure,
  resultOf,
  sendStatements,
  type PgStatement,
} from '../../postgres-driver/send-statements.js';
import { connectHeard } from '../../postgres-driver/connect-heard.js';

/**
 * One transaction on one pooled client, begun lazily: the client is taken and BEGIN sent with
 * the first statement, not before, so an effect that first awaits something else holds no
 * connection meanwhile. Every statement goes through {@link sendStatements}: BEGIN and the first
 * statement are one round trip on a pipelining pool.
 *
 * The object is the effect's handle (`PgTx`: `query`), and the store's `complete()` ends it with
 * the receipt through {@link PostgresTransaction.finishWith}: the store knows the handle it gave
 * by its class, nothing is kept on the side. The receipt decides the end by its returned row,
 * never by an error: it is sent, its answer read, and then COMMIT or ROLLBACK sent (one round
 * trip more than sending COMMIT behind it, the price of knowing). A client whose BEGIN, COMMIT or
 * ROLLBACK failed is destroyed rather than returned to the pool in an unknown state.
 */
export class PostgresTransaction implements PgTx {
  private client: PgPoolClient | undefined;
  private opening: Promise<PgPoolClient> | undefined;
  private begun = false;
  /** Statements may still be sent. */
  private active = true;
  /** COMMIT or ROLLBACK was sent already (by the receipt). */
  private ended = false;
  private broken = false;

  private constructor(
    private readonly pool: PgPool,
    /** The statement that sets the commit's level, sent just before a COMMIT without a receipt. */
    private readonly commitLevel: string,
  ) {}

  /**
   * Runs `fn` in a transaction of its own: commits when `fn` resolves (unless the receipt ended
   * the transaction already), rolls back when it rejects, then settles the same way.
   */
  static async run<T>(
    pool: PgPool,
    commitLevel: string,
    fn: (tx: PostgresTransaction) => Promise<T>,
  ): Promise<T> {
    const transaction = new PostgresTransaction(pool, commitLevel);
    let result: T;
    try {
      result = await fn(transaction);
    } catch (error) {
      await transaction.#settle('rejected');
      throw error;
    }
    await transaction.#settle('resolved');
    return result;
  }

  /** The effect's statements (an arrow: a route may pass `tx.query` on by itself). */
  readonly query = async <R>(text: string | PgQueryConfig, values?: unknown[]) => {
    if (!this.active) throw new TransactionEndedError('postgres');
    const statement = typeof text === 'string' && values !== undefined ? { text, values } : text;
    const result = await this.send(statement as PgStatement);
    return { rows: result.rows as R[], rowCount: result.rowCount ?? 0 };
  };

  /**
   * Writes the receipt and ends the transaction: COMMIT when the receipt's statement changed the
   * in-flight row (it returns a row `{ completed: 1 }`), ROLLBACK when it matched none (another
   * worker owns the key now). Resolves true once committed, false once rolled back.
   */
  async finishWith(receipt: PgQueryConfig): Promise<boolean> {
    if (!this.active) throw new TransactionEndedError('postgres');
    this.active = false;
    this.ended = true;
    let written: PgQueryResult;
    try {
      written = await this.send(receipt);
    } catch (error) {
      await this.end('ROLLBACK');
      throw error;
    }
    const won = (written.rows[0] as { completed?: unknown } | undefined)?.completed === 1;
    await this.end(won ? 'COMMIT' : 'ROLLBACK', { levelSet: true });
    return won;
  }

  /** Sends `statement`, behind BEGIN the first time; fails as BEGIN did if it did. */
  private async send(statement: PgStatement): Promise<PgQueryResult> {
    const client = this.client ?? (await this.open());
    const statements = this.begun ? [statement] : ['BEGIN', statement];
    this.begun = true;
    const answers = await sendStatements(client, statements);
    if (statements.length === 2 && !answers[0]!.ok) this.broken = true;
    const failed = firstFailure(answers);
    if (failed !== undefined) throw failed.error;
    return resultOf(answers.at(-1));
  }

  private open(): Promise<PgPoolClient> {
    this.opening ??= connectHeard(this.pool).then((c) => (this.client = c));
    return this.opening;
  }

  /**
   * COMMIT or ROLLBACK; a COMMIT that rolled back is an error. A COMMIT goes behind the statement
   * that sets the commit's level, in the same text, unless the receipt's statement set it.
   */
  private async end(how: 'COMMIT' | 'ROLLBACK', { levelSet = false } = {}): Promise<void> {
    const client = this.client;
    if (client === undefined) return;
    const ending = how === 'COMMIT' && !levelSet ? `${this.commitLevel}; COMMIT` : how;
    const answers = await sendStatements(client, [ending]);
    const failed = firstFailure(answers);
    if (failed !== undefined) {
      if (how === 'COMMIT') await this.end('ROLLBACK');
      else this.broken = true;
      throw failed.error;
    }
    if (how === 'COMMIT') expectCommitted(answers[0]);
  }

  /** After `fn`: COMMIT when it resolved, ROLLBACK when it rejected, then the client goes back. */
  async #settle(outcome: 'resolved' | 'rejected'): Promise<void> {
    this.active = false;
    const client = await this.opening?.catch(() => undefined);
    if (client === undefined) return;
    try {
      if (!this.ended && !this.broken)
        await this.end(outcome === 'resolved' ? 'COMMIT' : 'ROLLBACK');
    } catch (error) {
      if (outcome === 'resolved') throw error;
    } finally {
      client.release(this.broken);
    }
  }
}
