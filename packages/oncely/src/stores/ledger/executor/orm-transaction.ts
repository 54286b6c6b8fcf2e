import { OncelyError } from '../../../contract/errors.js';
import { SQL_HANDLE } from '../../../ledger/sql-handle.js';
import { TransactionEndedError } from '../../store-errors.js';
import { executorSql } from './executor-sql.js';
import { recorder } from './call-recorder.js';
import type { ExecutorRows, SqlExecutor } from '../../orm/sql-executor.js';

type Ending = { readonly ok: true } | { readonly ok: false; readonly error: unknown };

/**
 * One request's transaction in the ORM, begun at its first statement: the route gets `handle`,
 * typed as the ORM's own transaction object, at once; the ORM's callback-shaped transaction
 * (`db.transaction().execute(fn)`, `knex.transaction(fn)`, `db.transaction(fn)`) starts only when
 * the route's first statement (or the receipt) needs it. So an effect that first awaits something
 * else holds no connection meanwhile, and on SQLite, where every statement shares one
 * connection, other requests' claims and replays go on (as with the built-in stores).
 *
 * The ORM's callback stays open until the ledger settles the transaction: resolved, it returns
 * and the ORM commits; rejected, it throws and the ORM rolls back.
 */
export class OrmTransaction<Tx> {
  private state: 'waiting' | 'open' | 'ended' = 'waiting';
  private real: Tx | undefined;
  private opening: Promise<Tx> | undefined;
  /** The ORM's transaction: settles once it committed or rolled back. */
  private done: Promise<void> | undefined;
  private finish: (ending: Ending) => void = () => {};
  readonly handle: Tx;

  constructor(private readonly executor: SqlExecutor<Tx>) {
    this.handle = this.makeHandle();
  }

  /**
   * True from the first statement (the ORM's BEGIN asked for) until the transaction ends: on
   * SQLite it holds, or waits first in line for, the one connection every other statement of
   * the store waits for (StoreCapabilities.holdsWriter).
   */
  get begun(): boolean {
    return this.opening !== undefined && this.state !== 'ended';
  }

  /** The ORM's transaction object, beginning it if it has not begun. */
  open(): Promise<Tx> {
    if (this.state === 'ended')
      return Promise.reject(new TransactionEndedError(this.executor.name));
    this.opening ??= new Promise<Tx>((resolve, reject) => {
      const finished = new Promise<void>((ok, fail) => {
        this.finish = (ending) => (ending.ok ? ok() : fail(ending.error));
      });
      // Heard here too: when BEGIN failed, no callback awaits it.
      finished.catch(() => undefined);
      this.done = this.executor.transaction(async (tx) => {
        this.real = tx;
        if (this.state === 'waiting') this.state = 'open';
        resolve(tx);
        await finished;
      });
      // BEGIN failed (no connection): the statement that asked for it fails with that error.
      this.done.catch(reject);
    });
    return this.opening;
  }

  /** A statement of the ledger's own (the receipt) inside this transaction. */
  async query(sql: string, params: readonly unknown[]): Promise<ExecutorRows> {
    return this.executor.queryIn(await this.open(), sql, params);
  }

  /**
   * Ends the transaction as the ledger's callback ended: commits (rejecting when the COMMIT
   * failed) or rolls back. From here on the handle refuses every use.
   */
  async settle(ending: Ending): Promise<void> {
    this.state = 'ended';
    if (this.done === undefined) return; // never begun: nothing to end
    this.finish(ending);
    if (ending.ok) await this.done;
    else await this.done.catch(() => undefined);
  }

  private makeHandle(): Tx {
    const { name, capabilities } = this.executor;
    const ending = new Set(capabilities.endingMethods);
    const check = (prop?: PropertyKey): void => {
      if (this.state === 'ended') throw new TransactionEndedError(name);
      if (typeof prop === 'string' && ending.has(prop))
        throw new OncelyError(
          'transaction_owned',
          `${name}: the ledger commits this transaction with its receipt; ${prop}() is refused (throw to roll back)`,
        );
    };
    const resolve = (): Promise<object> => this.open() as Promise<object>;
    // A function target, so that a callable transaction (Knex's `trx('orders')`) stays callable.
    return new Proxy(function transaction() {}, {
      get: (_target, prop) => {
        // Not a thenable: an async function may return the handle without awaiting it.
        if (prop === 'then') return undefined;
        check(prop);
        // The journal's recordWithin(tx, intent) writes through it (sql-handle.ts).
        if (prop === SQL_HANDLE) return executorSql(this.executor.dialect, this);
        if (this.state === 'waiting') return recorder(resolve, [{ get: prop }]);
        const real = this.real as object;
        const value: unknown = Reflect.get(real, prop, real);
        return typeof value === 'function' ? value.bind(real) : value;
      },
      apply: (_target, _this, args: unknown[]) => {
        check();
        if (this.state === 'waiting') return recorder(resolve, [{ call: args }]);
        return Reflect.apply(this.real as (...a: unknown[]) => unknown, undefined, args);
      },
    }) as Tx;
  }
}
