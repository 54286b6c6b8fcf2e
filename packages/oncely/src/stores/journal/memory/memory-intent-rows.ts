import { PARKED_AT } from '../../../journal/endpoint.js';
import type { FinalRecord, IntentRecord } from '../../../journal/intent.js';
import type { Backlog } from '../../../journal/journal-store.js';

/** An intent of the memory journal with its lease and its place in the record order. */
export interface Row {
  intent: IntentRecord;
  leaseOwner: string | null;
  leaseToken: string | null;
  leaseExpiresAt: number | null;
  openAttempt: boolean;
  seq: number;
}

/** A pending intent no live lease holds ends `cancelled`; false for any other. */
export function cancelRow(row: Row, final: FinalRecord, nowMs: number): boolean {
  if (row.intent.state !== 'pending' || (row.leaseExpiresAt !== null && row.leaseExpiresAt > nowMs))
    return false;
  row.intent = { ...row.intent, state: 'cancelled', outcome: final };
  row.leaseOwner = row.leaseToken = row.leaseExpiresAt = null;
  row.openAttempt = false;
  return true;
}

export function wakeParked(rows: Map<string, Row>, id: string, nowMs: number): number {
  let woken = 0;
  for (const row of rows.values())
    if (
      row.intent.endpoint === id &&
      row.intent.state === 'pending' &&
      row.intent.nextAttemptAt >= PARKED_AT
    ) {
      row.intent = { ...row.intent, nextAttemptAt: nowMs };
      woken += 1;
    }
  return woken;
}

/** The pending intents' count and the oldest one's record time. */
export function backlogOf(rows: Map<string, Row>): Backlog {
  const pending = [...rows.values()].filter((r) => r.intent.state === 'pending');
  const oldest = Math.min(...pending.map((r) => r.intent.createdAt));
  return { pending: pending.length, oldestPendingAt: pending.length > 0 ? oldest : null };
}
