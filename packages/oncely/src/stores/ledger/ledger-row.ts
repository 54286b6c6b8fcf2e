import { InvalidOptionError } from '../../contract/errors.js';
import type { Receipt } from '../../contract/receipt.js';
import {
  ENTRY_STATES,
  type CompletedEntry,
  type EntryState,
  type LedgerEntry,
} from '../../ledger/ledger-entry.js';
import { fingerprintFromBytes, fingerprintToBytes } from './fingerprint-bytes.js';
import { decodeReceiptHeaders, encodeReceiptHeaders } from './receipt-headers.js';

/**
 * The ledger table's columns, shared by the SQL stores. Instants are integer ms on the ledger's
 * clock (never the database's now()), so an injected clock drives leases and retention alike.
 */
export const LEDGER_COLUMNS = [
  'scope',
  'key',
  'fingerprint',
  'state',
  'token',
  'first_seen_at',
  'expires_at',
  'lease_expires_at',
  'completed_at',
  'expired_at',
  'status',
  'headers',
  'body',
] as const;

/**
 * The columns a receipt writes over its own in-flight row (`complete`): scope, key, fingerprint,
 * token and first sighting stay as claimed.
 */
export const COMPLETE_COLUMNS = [
  'state',
  'expires_at',
  'lease_expires_at',
  'completed_at',
  'status',
  'headers',
  'body',
] as const;

/** The values of {@link COMPLETE_COLUMNS} for a completed entry, in that order. */
export function completeValues(entry: CompletedEntry): unknown[] {
  const { receipt } = entry;
  return [entry.state, entry.expiresAt, null, entry.completedAt, ...receiptValues(receipt)];
}

/** A receipt's status, headers and body columns. */
function receiptValues(receipt: Receipt): [number, string, Buffer] {
  const { status, headers, body } = receipt;
  return [
    status,
    encodeReceiptHeaders(headers),
    Buffer.from(body.buffer, body.byteOffset, body.byteLength),
  ];
}

/** A row as a driver returns it: integers may come back as strings (pg's int8) or bigints. */
export type LedgerRow = Record<(typeof LEDGER_COLUMNS)[number], unknown>;

/** The column values of an entry, in {@link LEDGER_COLUMNS} order. */
export function entryValues(entry: LedgerEntry): unknown[] {
  const receipt = entry.state === 'completed' ? entry.receipt : undefined;
  return [
    entry.scope,
    entry.key,
    fingerprintToBytes(entry.fingerprint),
    entry.state,
    entry.token,
    entry.firstSeenAt,
    entry.expiresAt,
    entry.state === 'in_flight' ? entry.leaseExpiresAt : null,
    entry.state === 'in_flight' ? null : (entry.completedAt ?? null),
    entry.state === 'expired' ? entry.expiredAt : null,
    ...(receipt ? receiptValues(receipt) : [null, null, null]),
  ];
}

/** Reads a row back into an entry; a row that breaks the schema's invariants is an error. */
export function rowToEntry(row: LedgerRow): LedgerEntry {
  const state = String(row.state) as EntryState;
  const base = {
    scope: String(row.scope),
    key: String(row.key),
    fingerprint: fingerprintFromBytes(row.fingerprint),
    token: String(row.token),
    firstSeenAt: Number(row.first_seen_at),
    expiresAt: Number(row.expires_at),
  };
  switch (state) {
    case 'in_flight':
      return { ...base, state, leaseExpiresAt: Number(row.lease_expires_at) };
    case 'completed': {
      const body = row.body as Uint8Array;
      return {
        ...base,
        state,
        completedAt: Number(row.completed_at),
        receipt: {
          status: Number(row.status),
          headers: decodeReceiptHeaders(String(row.headers)),
          // A plain copy: a driver's Buffer would compare unequal to the Uint8Array first stored.
          body: new Uint8Array(body),
        },
      };
    }
    case 'expired':
      return {
        ...base,
        state,
        expiredAt: Number(row.expired_at),
        completedAt: optionalMillis(row.completed_at),
      };
    default:
      throw new TypeError(
        `ledger row for key ${base.key} has unknown state ${JSON.stringify(row.state)} (expected ${ENTRY_STATES.join(', ')})`,
      );
  }
}

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]{0,62}$/;

/** Table and schema names are spliced into SQL, so only plain identifiers are allowed. */
export function checkIdentifier(option: string, value: unknown): string {
  if (typeof value !== 'string' || !IDENTIFIER.test(value)) {
    throw new InvalidOptionError(
      option,
      value,
      'an SQL identifier: a letter or _, then letters, digits or _, at most 63 in all',
    );
  }
  return value;
}

/** A nullable BIGINT instant column (a driver may give a string, or leave it out) as a number. */
export function optionalMillis(value: unknown): number | undefined {
  return value === null || value === undefined ? undefined : Number(value);
}
