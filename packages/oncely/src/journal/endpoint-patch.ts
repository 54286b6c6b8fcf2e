import { InvalidOptionError } from '../contract/errors.js';
import type { EndpointRecord } from './endpoint.js';
import { checkUrl, prepareSettings, type SettingsInput } from './endpoint-input.js';

/**
 * An edit of an endpoint: each field given replaces the current one, the others stay. The
 * breaker's fields merge into the current breaker; `ratePerSecond: null` lifts the limit, and
 * `eventTypes: null` or `channels: null` subscribes to every message.
 */
export interface EndpointPatch extends SettingsInput {
  readonly url?: string | URL;
}

const FIELDS = new Set([
  'url',
  'ratePerSecond',
  'breaker',
  'autoDisableAfterMs',
  'eventTypes',
  'channels',
  'retry',
]);

/**
 * The endpoint with the patch applied, or an InvalidOptionError naming the first bad field (so
 * nothing is written). Its health stays: a new URL or rate does not forgive a failing receiver.
 */
export function applyPatch(endpoint: EndpointRecord, patch: EndpointPatch): EndpointRecord {
  if (typeof patch !== 'object' || patch === null || Array.isArray(patch))
    throw new InvalidOptionError('patch', patch, `an object of ${[...FIELDS].join(', ')}`);
  const unknown = Object.keys(patch).find((field) => !FIELDS.has(field));
  if (unknown !== undefined)
    throw new InvalidOptionError(unknown, '(given)', `one of ${[...FIELDS].join(', ')}`);
  return {
    ...endpoint,
    url: patch.url === undefined ? endpoint.url : checkUrl(patch.url),
    settings: prepareSettings(patch, endpoint.settings),
  };
}
