import { InvalidOptionError } from '../contract/errors.js';
import { checkSigningKey } from '../contract/signing-key.js';
import { generateWebhookSecret } from '../contract/webhook-keys.js';
import { resolveOutboxPolicy } from './outbox-policy.js';
import { EVERY_MESSAGE, prepareSubscription } from './subscription.js';
import {
  DEFAULT_AUTO_DISABLE_MS,
  DEFAULT_BREAKER,
  freshHealth,
  type BreakerSettings,
  type EndpointRecord,
  type EndpointSettings,
  type EndpointRetry,
} from './endpoint.js';

/** What a caller says about a new endpoint. Only `id` and `url` are required. */
export interface EndpointInput {
  /** A name: letters, digits, `.`, `_`, `-`, at most 64. */
  readonly id: string;
  readonly url: string | URL;
  /** Standard Webhooks keys: `whsec_` secrets (v1) or `whsk_` secret keys (v1a). @default one fresh whsec_ secret */
  readonly secrets?: readonly string[];
  /** Messages per second across every worker. @default no limit */
  readonly ratePerSecond?: number | null;
  readonly breaker?: Partial<BreakerSettings>;
  /** @default 5 days */
  readonly autoDisableAfterMs?: number;
  /** The event types it gets of published messages: `order.created`, `order.*`, `*`. @default every type (null) */
  readonly eventTypes?: readonly string[] | null;
  /** Only messages tagged with one of these (a tenant, a region). @default every message (null) */
  readonly channels?: readonly string[] | null;
  /** Its intents' retry schedule, attempt limit, max delay and max Retry-After. @default the outbox's (DEFAULT_OUTBOX_POLICY) */
  readonly retry?: EndpointRetry;
}

const ID = /^[A-Za-z0-9._-]{1,64}$/;

/** An endpoint's signing key: checked as every signing key is (contract/signing-key.ts). */
export function checkSecret(secret: unknown): string {
  return checkSigningKey('secret', secret);
}

/** The endpoint's retry settings, checked as an intent's would be; only the ones given are kept. */
function checkRetry(retry: EndpointRetry | undefined): EndpointRetry | undefined {
  if (retry === undefined) return undefined;
  if (typeof retry !== 'object' || retry === null)
    throw new InvalidOptionError(
      'retry',
      retry,
      'an object: schedule, maxAttempts, maxDelayMs, maxRetryAfterMs',
    );
  const { schedule, maxAttempts, maxDelayMs, maxRetryAfterMs } = retry;
  resolveOutboxPolicy({ schedule, maxAttempts, maxDelayMs, maxRetryAfterMs });
  return {
    ...(schedule === undefined ? {} : { schedule: [...schedule] }),
    ...(maxAttempts === undefined ? {} : { maxAttempts }),
    ...(maxDelayMs === undefined ? {} : { maxDelayMs }),
    ...(maxRetryAfterMs === undefined ? {} : { maxRetryAfterMs }),
  };
}

export function checkEndpointId(id: unknown): string {
  if (typeof id !== 'string' || !ID.test(id))
    throw new InvalidOptionError('endpoint', id, 'a name of letters, digits, . _ - (at most 64)');
  return id;
}

export function checkUrl(url: unknown): string {
  try {
    const parsed = new URL(String(url));
    if (parsed.protocol === 'http:' || parsed.protocol === 'https:') return parsed.href;
  } catch {
    // reported below
  }
  throw new InvalidOptionError('url', String(url), 'an absolute http(s) URL');
}

const positive = (option: string, value: number, allowed = 'a number > 0'): number => {
  if (typeof value !== 'number' || !Number.isFinite(value) || value <= 0)
    throw new InvalidOptionError(option, value, allowed);
  return value;
};

/** The settings a caller may give, each optional: checked once, at the edge. */
export type SettingsInput = Pick<
  EndpointInput,
  'ratePerSecond' | 'breaker' | 'autoDisableAfterMs' | 'eventTypes' | 'channels' | 'retry'
>;

/** `input` over `base` (a new endpoint's defaults, or its current settings when edited), checked. */
export function prepareSettings(input: SettingsInput, base: EndpointSettings): EndpointSettings {
  const rate = input.ratePerSecond === undefined ? base.ratePerSecond : input.ratePerSecond;
  if (rate !== null) positive('ratePerSecond', rate);
  if (input.breaker !== undefined && (typeof input.breaker !== 'object' || input.breaker === null))
    throw new InvalidOptionError('breaker', input.breaker, 'an object of breaker settings');
  const breaker = { ...base.breaker, ...input.breaker };
  positive('breaker.failureRatio', breaker.failureRatio);
  if (breaker.failureRatio > 1)
    throw new InvalidOptionError('breaker.failureRatio', breaker.failureRatio, 'a ratio in (0, 1]');
  positive('breaker.windowMs', breaker.windowMs);
  positive('breaker.coolDownMs', breaker.coolDownMs);
  if (!Number.isSafeInteger(breaker.minRequests) || breaker.minRequests < 1)
    throw new InvalidOptionError('breaker.minRequests', breaker.minRequests, 'a whole number >= 1');
  const autoDisableAfterMs = positive(
    'autoDisableAfterMs',
    input.autoDisableAfterMs ?? base.autoDisableAfterMs,
  );
  // An endpoint made before subscriptions existed has none: it got, and gets, every message.
  const subscription = prepareSubscription(input, base.subscription ?? EVERY_MESSAGE);
  const retry = input.retry === undefined ? base.retry : checkRetry(input.retry);
  return {
    ratePerSecond: rate,
    breaker,
    autoDisableAfterMs,
    subscription,
    ...(retry === undefined ? {} : { retry }),
  };
}

export const DEFAULT_ENDPOINT_SETTINGS: EndpointSettings = {
  ratePerSecond: null,
  breaker: DEFAULT_BREAKER,
  autoDisableAfterMs: DEFAULT_AUTO_DISABLE_MS,
  subscription: EVERY_MESSAGE,
};

/** Validates a new endpoint once, at the edge: active, breaker closed, no slot taken. */
export function prepareEndpoint(input: EndpointInput, nowMs: number): EndpointRecord {
  if (typeof input !== 'object' || input === null)
    throw new InvalidOptionError('endpoint', input, 'an object with an id and a url');
  const settings = prepareSettings(input, DEFAULT_ENDPOINT_SETTINGS);
  const secrets = (input.secrets ?? [generateWebhookSecret()]).map((secret) => ({
    secret: checkSecret(secret),
    expiresAt: null,
  }));
  return {
    id: checkEndpointId(input.id),
    url: checkUrl(input.url),
    secrets,
    state: 'active',
    stateReason: null,
    settings,
    health: freshHealth(nowMs),
    createdAt: nowMs,
    updatedAt: nowMs,
  };
}
