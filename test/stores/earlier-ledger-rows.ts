// Rows as an earlier oncely wrote them (fingerprints as hex text, headers as JSON, tombstones in
// place as 'expired' rows), and what a ledger over the migrated table must answer for each.
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt, type LedgerStore } from '#oncely/ledger/index.js';
import { VirtualClock } from '#oncely/time/index.js';

export const T = 1_700_000_000_000;
const DAY = 86_400_000;
export const HEX_FINGERPRINT = 'ab'.repeat(32);

/** The receipts table of the earlier layout, as its store created it (before compact receipts). */
export function earlierSchema(
  table: string,
  integer: 'INTEGER' | 'BIGINT',
  bytes: 'BLOB' | 'BYTEA',
): string {
  return `CREATE TABLE ${table} (
      scope TEXT NOT NULL, key TEXT NOT NULL, fingerprint TEXT NOT NULL,
      state TEXT NOT NULL CHECK (state IN ('in_flight', 'completed', 'expired')),
      token TEXT NOT NULL, first_seen_at ${integer} NOT NULL, expires_at ${integer} NOT NULL,
      lease_expires_at ${integer}, completed_at ${integer}, expired_at ${integer}, status INTEGER,
      headers TEXT, body ${bytes}, PRIMARY KEY (scope, key))`;
}

/** Column values in LEDGER_COLUMNS order. */
export const EARLIER_ROWS: unknown[][] = [
  // A completed receipt, with a header the line form cannot hold (kept as JSON).
  [
    's',
    'done',
    HEX_FINGERPRINT,
    'completed',
    'tok-1',
    T - 1000,
    T + DAY,
    null,
    T - 900,
    null,
    201,
    JSON.stringify([
      ['content-type', 'application/json'],
      ['X-Odd', 'a\r\nb'],
    ]),
    Buffer.from('{"n":1}'),
  ],
  // A fingerprint an app chose itself (not hex): read back exactly.
  [
    's',
    'text-fp',
    'my fingerprint',
    'completed',
    'tok-2',
    T - 1000,
    T + DAY,
    null,
    T - 900,
    null,
    200,
    JSON.stringify([['content-type', 'application/json']]),
    Buffer.from('{"n":2}'),
  ],
  [
    's',
    'running',
    HEX_FINGERPRINT,
    'in_flight',
    'tok-3',
    T - 500,
    T + DAY,
    T + 60_000,
    null,
    null,
    null,
    null,
    null,
  ],
  // A tombstone kept in place: its expires_at is the tombstone's own end.
  [
    's',
    'gone',
    HEX_FINGERPRINT,
    'expired',
    'tok-4',
    T - 2 * DAY,
    T + 6 * DAY,
    null,
    T - 2 * DAY + 10,
    T - DAY,
    null,
    null,
    null,
  ],
];

/** A completed row an earlier oncely could not have written: no body. */
export const BAD_ROW: unknown[] = [
  's',
  'broken',
  HEX_FINGERPRINT,
  'completed',
  'tok-5',
  T,
  T + DAY,
  null,
  T,
  null,
  201,
  '[]',
  null,
];

/** Every row, as a ledger on the migrated store answers it. */
export async function assertMigratedAnswers(store: LedgerStore<unknown>): Promise<void> {
  const ledger = createLedger({ store, clock: new VirtualClock({ startAt: T }) });
  const never = () => {
    throw new Error('a replay must not run the effect');
  };
  const done = await ledger.execute(
    { scope: 's', key: 'done', fingerprint: HEX_FINGERPRINT },
    never,
  );
  assert.equal(done.kind, 'replayed');
  if (done.kind !== 'replayed') return;
  assert.equal(done.receipt.status, 201);
  assert.deepEqual(done.receipt.headers, [
    ['content-type', 'application/json'],
    ['X-Odd', 'a\r\nb'],
  ]);
  assert.equal(Buffer.from(done.receipt.body).toString(), '{"n":1}');
  assert.equal(done.completedAt, T - 900);

  const other = await ledger.execute(
    { scope: 's', key: 'done', fingerprint: 'cd'.repeat(32) },
    never,
  );
  assert.equal(other.kind, 'conflict', 'another payload under the key is still told apart');

  const text = await ledger.execute(
    { scope: 's', key: 'text-fp', fingerprint: 'my fingerprint' },
    never,
  );
  assert.equal(text.kind, 'replayed');

  const running = await ledger.lookup('s', 'running');
  assert.equal(running.kind, 'in_flight');
  const gone = await ledger.lookup('s', 'gone');
  assert.equal(gone.kind, 'expired');
  if (gone.kind === 'expired') {
    assert.equal(gone.expiredAt, T - DAY);
    assert.equal(gone.fingerprint, HEX_FINGERPRINT);
  }
  const fresh = await ledger.execute({ scope: 's', key: 'new', fingerprint: 'f' }, () =>
    jsonReceipt(201, { ok: true }),
  );
  assert.equal(fresh.kind, 'executed', 'the migrated ledger takes new keys');
}
