export * from './errors.js';
export * from './headers.js';
export * from './idempotency-key.js';
export * from './fingerprint.js';
export * from './status-class.js';
export * from './retry-after.js';
export * from './receipt.js';
export * from './standard-webhooks.js';
export type { TraceApi, SpanEventAttributes } from './trace-api.js';
