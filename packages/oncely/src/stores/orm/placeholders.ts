/** A statement with `$n` placeholders rewritten for a driver that takes `?` in order. */
export interface PositionalStatement {
  readonly sql: string;
  readonly params: unknown[];
}

const DOLLAR = /\$(\d+)/g;

/**
 * `$1, $2 …` (each may repeat or come out of order) as `?` in order, the values repeated and
 * reordered to match: for Knex, whose raw statements bind `?` on every client, and for SQLite.
 */
export function dollarToQuestion(sql: string, params: readonly unknown[]): PositionalStatement {
  const values: unknown[] = [];
  const text = sql.replace(DOLLAR, (_, n: string) => {
    values.push(params[Number(n) - 1]);
    return '?';
  });
  return { sql: text, params: values };
}

/**
 * A statement cut at its placeholders (`$n` on PostgreSQL, `?` on SQLite): the texts between
 * them, and the value of each placeholder in order. For a builder that assembles a statement
 * from text and values (Drizzle's `sql`).
 */
export function cutAtPlaceholders(
  sql: string,
  params: readonly unknown[],
  dialect: 'postgres' | 'sqlite',
): { readonly texts: string[]; readonly values: unknown[] } {
  const texts: string[] = [];
  const values: unknown[] = [];
  let last = 0;
  let position = 0;
  const pattern = dialect === 'postgres' ? DOLLAR : /\?/g;
  for (const m of sql.matchAll(pattern)) {
    texts.push(sql.slice(last, m.index));
    values.push(dialect === 'postgres' ? params[Number(m[1]) - 1] : params[position++]);
    last = m.index + m[0].length;
  }
  texts.push(sql.slice(last));
  return { texts, values };
}
