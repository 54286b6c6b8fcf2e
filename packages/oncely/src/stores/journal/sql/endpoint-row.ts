import type {
  EndpointHealth,
  EndpointRecord,
  EndpointSecret,
  EndpointSettings,
  EndpointState,
} from '../../../journal/endpoint.js';
import { EVERY_MESSAGE } from '../../../journal/subscription.js';

/**
 * The endpoints table, its own (`<table>_endpoints`), added beside the intents by ready():
 * settings, secrets and health are JSON text, written whole under the row's lock.
 */
export function endpointDdl(endpoints: string, bigint: string): string {
  return `CREATE TABLE IF NOT EXISTS ${endpoints} (
    id TEXT PRIMARY KEY,
    url TEXT NOT NULL,
    secrets TEXT NOT NULL,
    state TEXT NOT NULL CHECK (state IN ('active', 'paused', 'disabled')),
    state_reason TEXT,
    settings TEXT NOT NULL,
    health TEXT NOT NULL,
    created_at ${bigint} NOT NULL,
    updated_at ${bigint} NOT NULL
  )`;
}

/** The intents' column naming an endpoint, added to an existing table by ready(). */
export const INTENT_ENDPOINT_COLUMN = { name: 'endpoint', type: 'TEXT' } as const;

export const ENDPOINT_COLUMNS = [
  'id',
  'url',
  'secrets',
  'state',
  'state_reason',
  'settings',
  'health',
  'created_at',
  'updated_at',
] as const;

export function endpointValues(e: EndpointRecord): unknown[] {
  return [
    e.id,
    e.url,
    JSON.stringify(e.secrets),
    e.state,
    e.stateReason,
    JSON.stringify(e.settings),
    JSON.stringify(e.health),
    e.createdAt,
    e.updatedAt,
  ];
}

export function rowToEndpoint(row: Record<string, unknown>): EndpointRecord {
  return {
    id: String(row['id']),
    url: String(row['url']),
    secrets: JSON.parse(String(row['secrets'])) as EndpointSecret[],
    state: String(row['state']) as EndpointState,
    stateReason: row['state_reason'] == null ? null : String(row['state_reason']),
    // A row written before subscriptions existed has none: it gets every message, as it did.
    settings: {
      subscription: EVERY_MESSAGE,
      ...(JSON.parse(String(row['settings'])) as Partial<EndpointSettings>),
    } as EndpointSettings,
    health: JSON.parse(String(row['health'])) as EndpointHealth,
    createdAt: Number(row['created_at']),
    updatedAt: Number(row['updated_at']),
  };
}
