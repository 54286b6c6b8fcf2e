import { AsyncMutex } from '../async-mutex.js';
import type { ExecutorRows } from './sql-executor.js';

type Send = (sql: string, params: readonly unknown[]) => Promise<ExecutorRows>;

/**
 * One SQLite connection shared by turns: a transaction holds it from BEGIN IMMEDIATE to COMMIT
 * or ROLLBACK, and every other statement of the ledger waits for its turn, so none lands inside
 * another request's transaction. For a driver whose own transactions cannot span an await
 * (Drizzle on better-sqlite3).
 */
export function sqliteExclusive(send: Send) {
  const mutex = new AsyncMutex();
  return {
    query: (sql: string, params: readonly unknown[]) => mutex.run(() => send(sql, params)),
    transaction: <T>(fn: () => Promise<T>): Promise<T> =>
      mutex.run(async () => {
        await send('BEGIN IMMEDIATE', []);
        let result: T;
        try {
          result = await fn();
        } catch (error) {
          await send('ROLLBACK', []).catch(() => undefined);
          throw error;
        }
        try {
          await send('COMMIT', []);
        } catch (error) {
          await send('ROLLBACK', []).catch(() => undefined);
          throw error;
        }
        return result;
      }),
  };
}
