import pg from 'pg';
import { InvalidOptionError } from '../../contract/errors.js';
import type { PgPool } from './pg-pool.js';
import { redact } from './redact-url.js';

export { redact };

export interface OpenPostgresPoolOptions {
  /** How long to wait for the server to accept a connection. @default 5000 */
  readonly connectTimeoutMs?: number;
  /** Connections at most. @default 10 (pg's default) */
  readonly max?: number;
  /** A `search_path` for every connection (a schema of the app's). @default the server's */
  readonly searchPath?: string;
  /** Told about errors of idle pooled connections, which would otherwise end the process. @default nothing */
  readonly onError?: (error: Error) => void;
}

export const DEFAULT_OPEN_POSTGRES_POOL_OPTIONS = { connectTimeoutMs: 5000, max: 10 } as const;

/**
 * A `pg` Pool for a `postgres://` URL: `createPostgresStore({ pool: openPostgresPool(url) })`,
 * in pg's pipeline mode where the installed pg has it (8.17 and later).
 * A URL that is not one is refused at once (its password redacted from the message); an
 * unreachable server or a missing database is reported by `ledger.ready()`. Connecting never
 * waits forever: pg's own default is no timeout.
 */
export function openPostgresPool(url: string, options: OpenPostgresPoolOptions = {}): PgPool {
  if (!isPostgresUrl(url))
    throw new InvalidOptionError('url', redact(String(url)), 'a postgres:// or postgresql:// URL');
  const {
    connectTimeoutMs = DEFAULT_OPEN_POSTGRES_POOL_OPTIONS.connectTimeoutMs,
    max = DEFAULT_OPEN_POSTGRES_POOL_OPTIONS.max,
  } = options;
  const pool = new pg.Pool({
    connectionString: url,
    connectionTimeoutMillis: connectTimeoutMs,
    max,
    // Queries queued on one client go out without waiting for each other's answers: the store
    // sends BEGIN with an effect's first statement in one round trip (send-statements.ts).
    // Answers still come back in order, one per query. A pg before 8.17 ignores the option, and
    // the store then sends each statement after the last one's answer.
    pipeline: true,
    ...(options.searchPath === undefined
      ? {}
      : { options: `-c search_path=${options.searchPath}` }),
  });
  // An idle client's error (the server restarted) is emitted on the pool; unheard, it would end the process.
  pool.on('error', (error) => options.onError?.(error));
  return pool as unknown as PgPool;
}

function isPostgresUrl(url: unknown): url is string {
  if (typeof url !== 'string') return false;
  try {
    const { protocol } = new URL(url);
    return protocol === 'postgres:' || protocol === 'postgresql:';
  } catch {
    return false;
  }
}
