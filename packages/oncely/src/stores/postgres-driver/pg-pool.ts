/**
 * The part of a `pg` Pool the store uses (docs/design.md, habit 4): a structural slice, so the store does
 * not depend on the driver's types and a test can hand it a pool that fails on purpose.
 */
export interface PgQueryResult {
  readonly rows: unknown[];
  readonly rowCount: number | null;
}

/** A named query: prepared by the server once per connection, then only bound and run. */
export interface PgQueryConfig {
  readonly name: string;
  readonly text: string;
  readonly values: unknown[];
}

export interface PgQueryable {
  query(text: string, values?: unknown[]): Promise<PgQueryResult>;
  query(config: PgQueryConfig): Promise<PgQueryResult>;
}

export interface PgPoolClient extends PgQueryable {
  /** `release(true)` destroys the connection instead of returning it to the pool. */
  release(destroy?: boolean | Error): void;
}

export interface PgPool extends PgQueryable {
  connect(): Promise<PgPoolClient>;
  end(): Promise<void>;
}

/**
 * The PostgreSQL store's transaction handle: queries on the very client, inside the very
 * transaction, that writes the receipt. Valid only while that transaction runs.
 */
export interface PgTx {
  /** The transaction begins (a pooled client, BEGIN) at the first query. */
  query<R = Record<string, unknown>>(
    text: string | PgQueryConfig,
    values?: unknown[],
  ): Promise<{ readonly rows: R[]; readonly rowCount: number }>;
}
