import type { LEDGER_COLUMNS } from '../ledger-row.js';

/**
 * Each ledger column's PostgreSQL type, as the receipts table declares it
 * (postgres-ledger-schema.ts): for the casts and parameters of statements that pass whole rows
 * (the claim function, the migration's batched INSERT).
 */
export const LEDGER_COLUMN_TYPES: Readonly<Record<(typeof LEDGER_COLUMNS)[number], string>> = {
  scope: 'text',
  key: 'text',
  fingerprint: 'bytea',
  state: 'text',
  token: 'text',
  first_seen_at: 'bigint',
  expires_at: 'bigint',
  lease_expires_at: 'bigint',
  completed_at: 'bigint',
  expired_at: 'bigint',
  status: 'integer',
  headers: 'text',
  body: 'bytea',
};
