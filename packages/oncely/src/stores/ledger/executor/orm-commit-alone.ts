import type { CommitAlone } from '../../../ledger/ledger-store.js';
import { neutralParams } from '../../../ledger/sql-handle.js';
import { postgresCommitAlone } from '../../postgres-driver/postgres-sql.js';
import { dollarToQuestion } from '../../orm/placeholders.js';
import type { SqlExecutor } from '../../orm/sql-executor.js';

/**
 * LedgerStore.commitAlone on an ORM store: the statement through the executor's `query`, which
 * runs one statement on its own, committed by itself, with no ORM transaction around it (a step
 * that wrote nothing is then one statement, not a BEGIN, an INSERT and a COMMIT through the ORM).
 * On PostgreSQL it is wrapped as the built-in store's is (postgres-sql.ts), so its implicit
 * transaction commits at the store's durability (`commitLevel`). On SQLite it goes as a claim
 * does (`query`, never inside another request's transaction), committed as the app's connection
 * is set to (the durability the store declares).
 */
export function ormCommitAlone<Tx>(executor: SqlExecutor<Tx>, commitLevel: string): CommitAlone {
  if (executor.dialect === 'postgres')
    return postgresCommitAlone(
      (statement) => executor.query(statement.text, statement.values),
      commitLevel,
    );
  return async (sql, params) => {
    const positional = dollarToQuestion(sql, neutralParams(params));
    return (await executor.query(positional.sql, positional.params)).rows;
  };
}
