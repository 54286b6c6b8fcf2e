import { InvalidOptionError } from '../contract/errors.js';
import { newKey, validateKey } from '../contract/idempotency-key.js';
import type { EndpointRecord } from './endpoint.js';
import type { IntentInput } from './prepare-intent.js';
import { checkChannels, checkEventType, isSubscribed } from './subscription.js';

/** A message of an event type, for every endpoint subscribed to it (Svix's messages). */
export interface MessageInput {
  /** The event type: `order.created`. */
  readonly type: string;
  /** The event's data: the `data` of the Standard Webhooks payload, as JSON. */
  readonly data: unknown;
  /** The message's id: publishing it again is a no-op. @default a fresh key */
  readonly id?: string;
  /** Tags: endpoints with channels get the message only when it carries one of theirs. */
  readonly channels?: readonly string[];
  /** When the event happened (ms since the epoch): the payload's `timestamp`. @default now */
  readonly timestamp?: number;
  /** No attempt starts at or after this instant. @default none */
  readonly deadlineAt?: number | null;
}

export interface PublishResult {
  /** The message's id: each endpoint's intent has the key `<id>:<endpoint id>`. */
  readonly id: string;
  /** The endpoints it went to, by id. */
  readonly endpoints: readonly string[];
  /** How many of their intents this call recorded (0 when the message was published before). */
  readonly created: number;
}

/** A message checked once, at the edge, with its id and payload fixed. */
export interface PreparedMessage {
  readonly id: string;
  readonly type: string;
  readonly channels: readonly string[];
  /** The Standard Webhooks payload, `{"type","timestamp","data"}`, the same for every endpoint. */
  readonly body: string;
  readonly deadlineAt: number | null | undefined;
}

export function prepareMessage(message: MessageInput, nowMs: number): PreparedMessage {
  if (typeof message !== 'object' || message === null)
    throw new InvalidOptionError('message', message, 'an object with a type and data');
  const type = checkEventType(message.type);
  const id = validateKey(message.id ?? newKey());
  if (id.includes(':'))
    throw new InvalidOptionError('id', id, 'a message id without ":" (it joins id and endpoint)');
  const channels =
    message.channels === undefined ? [] : checkChannels('channels', message.channels);
  const timestamp = message.timestamp ?? nowMs;
  if (!Number.isSafeInteger(timestamp) || timestamp < 0)
    throw new InvalidOptionError('timestamp', timestamp, 'an instant in ms since the epoch');
  const data = message.data === undefined ? null : message.data;
  const body = JSON.stringify({ type, timestamp: new Date(timestamp).toISOString(), data });
  return { id, type, channels, body, deadlineAt: message.deadlineAt };
}

/**
 * The intents of a message: one per endpoint subscribed to its type and channels that is not
 * disabled (a paused one holds its intents until resumed), each under its own key
 * `<message id>:<endpoint id>`, which the worker also sends as `webhook-id`: the same on every
 * attempt, and one per endpoint at a receiver that dedupes by it.
 */
export function messageIntents(
  message: PreparedMessage,
  endpoints: readonly EndpointRecord[],
): IntentInput[] {
  return endpoints
    .filter(
      (endpoint) =>
        endpoint.state !== 'disabled' &&
        isSubscribed(endpoint.settings.subscription, message.type, message.channels),
    )
    .map((endpoint) => ({
      key: `${message.id}:${endpoint.id}`,
      endpoint: endpoint.id,
      headers: { 'content-type': 'application/json' },
      body: message.body,
      ...(message.deadlineAt === undefined ? {} : { deadlineAt: message.deadlineAt }),
    }));
}

/** Whether a stored payload is the same event as `message`: its type and data (not its timestamp). */
export function sameEvent(stored: Uint8Array, message: PreparedMessage): boolean {
  try {
    const a = JSON.parse(new TextDecoder().decode(stored)) as { type?: unknown; data?: unknown };
    const b = JSON.parse(message.body) as { type: string; data: unknown };
    return a.type === b.type && JSON.stringify(a.data) === JSON.stringify(b.data);
  } catch {
    return false;
  }
}

/** What publishing needs of the journal: its endpoints, and a way to record one intent. */
export interface PublishDeps {
  readonly endpoints: () => Promise<readonly EndpointRecord[]>;
  /** Records one intent: true when this call recorded it, false when it was there already. */
  readonly record: (input: IntentInput) => Promise<boolean>;
  /** The payload stored under a key, to tell a second publish of one message from a clash. */
  readonly storedBody: (key: string) => Promise<Uint8Array | undefined>;
  readonly isConflict: (error: unknown) => boolean;
}

/**
 * Records a message's intents one by one. Publishing the same id again records only what its
 * subscribers lack now; another type or data under that id is the conflict `record` throws.
 */
export async function publishMessage(
  deps: PublishDeps,
  message: PreparedMessage,
): Promise<PublishResult> {
  const intents = messageIntents(message, await deps.endpoints());
  let created = 0;
  for (const input of intents) {
    try {
      if (await deps.record(input)) created += 1;
    } catch (error) {
      // Same event, later timestamp (a retried publish): the payload first stored stands.
      const stored = deps.isConflict(error) ? await deps.storedBody(input.key!) : undefined;
      if (stored === undefined || !sameEvent(stored, message)) throw error;
    }
  }
  return { id: message.id, endpoints: intents.map((input) => input.endpoint!), created };
}
