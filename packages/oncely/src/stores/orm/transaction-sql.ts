import { OncelyError } from '../../contract/errors.js';
import { sqlHandleOf, type SqlHandle } from '../../ledger/sql-handle.js';
import { executorSql } from '../ledger/executor/executor-sql.js';
import type { SqlExecutor } from './sql-executor.js';

/**
 * The SQL handle of a transaction the app opened itself with its ORM (outside a guarded route),
 * for `journal.recordWithin(transactionSql(executor, trx), intent)`: the intent commits with
 * the app's writes in that transaction. The route's own transaction (context.tx) is taken as it
 * is. Anything that is not an open transaction of the executor's ORM is refused: the ORM's base
 * client would write the intent on its own, apart from the order.
 */
export function transactionSql<Tx>(executor: SqlExecutor<Tx>, tx: Tx): SqlHandle {
  const route = sqlHandleOf(tx);
  if (route !== undefined) return route;
  if (!executor.isTransaction(tx))
    throw new OncelyError(
      'not_in_transaction',
      `${executor.name}: not an open transaction (give the object the ORM's transaction callback received)`,
    );
  return executorSql(executor.dialect, {
    query: (sql, params) => executor.queryIn(tx, sql, params),
  });
}
