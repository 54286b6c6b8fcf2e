/**
 * FIFO per ordering key, in SQL (docs/outbox.md, "Ordering"): an intent with an ordering key is
 * claimed only when no intent of the same key recorded before it is pending (in flight, waiting
 * for a retry or due). Record order is `seq`. Without an ordering key the condition is true at
 * once and the claim's plan stays on the pending index; the index below holds ordered pending
 * intents only, so unordered ones never write to it.
 *
 * Why it holds across workers: a claim takes an intent only when its snapshot shows every earlier
 * intent of its key finished, and finished is final, except for `reopen`, which gives the intent
 * a new `seq` (the back of its key's queue): it can only hold later intents back, never release
 * one. PostgreSQL assigns `seq` when a row is inserted, not when it commits, so recording an
 * ordered intent (and reopening one) first takes a transaction lock on its ordering key: two
 * intents of one key commit in `seq` order, and no snapshot shows a later one without the earlier.
 */

/** Its turn: nothing earlier of its ordering key is pending. `row` names the candidate row. */
export function orderedTurn(intents: string, row: string): string {
  return `(${row}.ordering_key IS NULL OR NOT EXISTS (SELECT 1 FROM ${intents} AS earlier WHERE earlier.ordering_key = ${row}.ordering_key AND earlier.state = 'pending' AND earlier.seq < ${row}.seq))`;
}

/**
 * Run by ready() after the table's own DDL: the column on a table an earlier oncely made (additive:
 * its rows have no ordering key), and the index that answers the turn's NOT EXISTS.
 */
export function orderingDdl(intents: string, index: string, addColumn: string): string {
  return `ALTER TABLE ${intents} ${addColumn} ordering_key TEXT;
  CREATE INDEX IF NOT EXISTS ${index} ON ${intents} (ordering_key, seq) WHERE state = 'pending' AND ordering_key IS NOT NULL`;
}

/** A reopened intent with an ordering key goes to the back of its key's queue: a new `seq`. */
export function reopenedSeq(nextSeq: string): string {
  return `seq = CASE WHEN ordering_key IS NULL THEN seq ELSE ${nextSeq} END`;
}
