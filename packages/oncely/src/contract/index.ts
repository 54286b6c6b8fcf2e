// The contract layer by name, for the layers above it (src/index.ts picks the public ones).
export {
  isOncelyError,
  isInvalidOptionError,
  isInvalidKeyError,
  OncelyError,
  InvalidOptionError,
  InvalidKeyError,
} from './errors.js';
export {
  HEADER,
  PROBLEM_JSON,
} from './headers.js';
export {
  keyProblem,
  validateKey,
  keyFor,
  newKey,
  MAX_KEY_LENGTH,
} from './idempotency-key.js';
export {
  canonicalJson,
  sha256Hex,
  fingerprint,
} from './fingerprint.js';
export {
  statusTable,
  classifyStatus,
  outcomeOfStatus,
  STATUS_CLASSES,
  type StatusClass,
  type StatusTable,
  DEFAULT_STATUS_TABLE,
  OUTCOMES,
  type Outcome,
  SYNTHETIC_TIMEOUT_STATUS,
} from './status-class.js';
export {
  parseHttpDate,
  parseRetryAfter,
  formatHttpDate,
  type RetryAfter,
} from './retry-after.js';
export {
  type Receipt,
  DEFAULT_RECEIPT_HEADERS,
} from './receipt.js';
export {
  signWebhook,
  verifyWebhook,
  WEBHOOK_HEADER,
  DEFAULT_WEBHOOK_TOLERANCE_MS,
  type WebhookVerification,
} from './standard-webhooks.js';
export {
  generateWebhookSecret,
  generateWebhookKeyPair,
  webhookKeyKind,
  type WebhookKeyKind,
} from './webhook-keys.js';
export { rotateSecrets, activeSecrets, type RotatingSecret } from './secret-rotation.js';
export type { TraceApi, SpanEventAttributes } from './trace-api.js';
export {
  describeTransportFailure,
  NOT_SENT_REASONS,
  type NotSentReason,
  NO_RESPONSE_REASONS,
  type NoResponseReason,
  type TransportFailure,
} from './transport-failure.js';
