import { filterStates } from '../../../journal/intent-filter.js';
import type { IntentFilter } from '../../../journal/journal-store.js';

/**
 * A listing's statement for `filter` on the intents table: one WHERE clause per field given, in
 * a fixed order, so the few shapes a filter can take are a few statement texts (each prepared and
 * cached once). The same text serves SQLite and PostgreSQL: a prefix is compared with substr()
 * rather than LIKE, which SQLite matches without regard to case and which reads `%` and `_`.
 * Paging is by key: the rows recorded before the row holding `after` (none when no row does).
 */
export function listStatement(
  intents: string,
  filter: IntentFilter,
): { readonly text: string; readonly params: unknown[] } {
  const params: unknown[] = [];
  const param = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const where: string[] = [];
  const states = filterStates(filter);
  if (states !== undefined) where.push(`state IN (${states.map(param).join(', ')})`);
  if (filter.target !== undefined) where.push(`target = ${param(filter.target)}`);
  if (filter.targetPrefix !== undefined) {
    const prefix = `CAST(${param(filter.targetPrefix)} AS TEXT)`;
    where.push(`substr(target, 1, length(${prefix})) = ${prefix}`);
  }
  if (filter.endpoint !== undefined) where.push(`endpoint = ${param(filter.endpoint)}`);
  if (filter.finishedSince !== undefined)
    where.push(`finished_at >= ${param(filter.finishedSince)}`);
  if (filter.after !== undefined)
    where.push(`seq < (SELECT seq FROM ${intents} WHERE key = ${param(filter.after)})`);
  const limit = param(filter.limit ?? 100);
  const conditions = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`;
  return {
    text: `SELECT * FROM ${intents}${conditions} ORDER BY seq DESC LIMIT ${limit}`,
    params,
  };
}
