import { createHash } from 'node:crypto';
import type { PgQueryConfig } from './pg-pool.js';

/**
 * A handler's statement as a named (prepared) one, named after its text: PostgreSQL then parses
 * and plans it once per connection instead of at every call (pg prepares a name the first time a
 * connection sees it). The name is a hash of the text, so one name always means one text, which
 * pg requires. Each connection keeps one prepared statement per distinct text an app sends: the
 * texts of an app's code, not its data (parameters are values, never spliced into the text).
 */
export function preparedByText(text: string, values: unknown[]): PgQueryConfig {
  let name = names.get(text);
  if (name === undefined) {
    // Bounded: an app that builds texts on the fly only loses the memo, not correctness.
    if (names.size >= MAX_MEMO) names.clear();
    name = `oncely_s_${createHash('sha256').update(text).digest('base64url').slice(0, 32)}`;
    names.set(text, name);
  }
  return { name, text, values };
}

const MAX_MEMO = 1000;
const names = new Map<string, string>();
