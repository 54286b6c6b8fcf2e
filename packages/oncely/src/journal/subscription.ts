import { InvalidOptionError } from '../contract/errors.js';

/**
 * What an endpoint receives of the messages published (Svix's filter types and channels):
 * - `eventTypes`: exact types (`order.created`), a family (`order.*`: `order.created`,
 *   `order.paid.late`, not `order`), or `*`; null for every type;
 * - `channels`: tags a message may carry (a tenant, a region); an endpoint with channels gets
 *   only the messages carrying one of them; null for every message, tagged or not.
 */
export interface Subscription {
  readonly eventTypes: readonly string[] | null;
  readonly channels: readonly string[] | null;
}

export const EVERY_MESSAGE: Subscription = { eventTypes: null, channels: null };

const EVENT_TYPE = /^[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*$/;
const TYPE_PATTERN = /^(?:\*|[A-Za-z0-9_-]+(?:\.[A-Za-z0-9_-]+)*(?:\.\*)?)$/;
const CHANNEL = /^[A-Za-z0-9._:-]{1,128}$/;

/** An event type as a message carries it: dot-separated names, at most 256 characters. */
export function checkEventType(type: unknown): string {
  if (typeof type !== 'string' || type.length > 256 || !EVENT_TYPE.test(type))
    throw new InvalidOptionError(
      'type',
      type,
      'an event type of dot-separated names of letters, digits, _ and - (order.created)',
    );
  return type;
}

/** A message's or an endpoint's channels: tags of letters, digits, `.`, `_`, `:`, `-`. */
export function checkChannels(option: string, channels: unknown): readonly string[] {
  if (!Array.isArray(channels) || channels.length === 0 || channels.length > 32)
    throw new InvalidOptionError(option, channels, 'a list of 1 to 32 channel names');
  for (const channel of channels)
    if (typeof channel !== 'string' || !CHANNEL.test(channel))
      throw new InvalidOptionError(
        option,
        channel,
        'channel names of at most 128 letters, digits, ., _, : and -',
      );
  return [...new Set(channels as string[])];
}

/** An endpoint's subscription from its input: undefined fields keep `base`'s, null is every. */
export function prepareSubscription(
  input: { eventTypes?: readonly string[] | null; channels?: readonly string[] | null },
  base: Subscription,
): Subscription {
  const eventTypes =
    input.eventTypes === undefined
      ? base.eventTypes
      : input.eventTypes === null
        ? null
        : checkTypePatterns(input.eventTypes);
  const channels =
    input.channels === undefined
      ? base.channels
      : input.channels === null
        ? null
        : checkChannels('channels', input.channels);
  return { eventTypes, channels };
}

function checkTypePatterns(patterns: unknown): readonly string[] {
  if (!Array.isArray(patterns) || patterns.length === 0 || patterns.length > 64)
    throw new InvalidOptionError('eventTypes', patterns, 'a list of 1 to 64 event types');
  for (const pattern of patterns)
    if (typeof pattern !== 'string' || pattern.length > 256 || !TYPE_PATTERN.test(pattern))
      throw new InvalidOptionError(
        'eventTypes',
        pattern,
        'event types (order.created), families (order.*) or *',
      );
  return [...new Set(patterns as string[])];
}

/** Whether a message of `type` tagged with `channels` goes to an endpoint so subscribed. */
export function isSubscribed(
  subscription: Subscription | undefined,
  type: string,
  channels: readonly string[],
): boolean {
  // An endpoint made before subscriptions existed has none in its settings: it gets everything.
  const { eventTypes, channels: wanted } = subscription ?? EVERY_MESSAGE;
  if (wanted !== null && !channels.some((channel) => wanted.includes(channel))) return false;
  return eventTypes === null || eventTypes.some((pattern) => typeMatches(pattern, type));
}

function typeMatches(pattern: string, type: string): boolean {
  if (pattern === '*') return true;
  if (pattern.endsWith('.*')) return type.startsWith(pattern.slice(0, -1));
  return pattern === type;
}
