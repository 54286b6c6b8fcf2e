import {
  InvalidOptionError,
  type EndpointInput,
  type EndpointPatch,
  type IntentInput,
} from 'oncely';
import { checkEndpointByDryRun, scratchJournal } from '../shared/scratch-journal.js';
import { onlyFields, optionalNumber, optionalString, type Fields } from './api-body.js';

/**
 * The journal's own checks, run on a scratch journal in memory before the request reaches the
 * ledger: the API refuses exactly what the journal would, and a refusal stores no receipt.
 */
const scratch = scratchJournal;
const SCRATCH_URL = 'http://scratch.invalid/';

const ENDPOINT_FIELDS = [
  'id',
  'url',
  'secret',
  'ratePerSecond',
  'breaker',
  'autoDisableAfterMs',
  'eventTypes',
  'channels',
];

export async function checkEndpointInput(fields: Fields): Promise<EndpointInput> {
  onlyFields(fields, ENDPOINT_FIELDS);
  const { secret, ...rest } = fields;
  if (secret !== undefined && typeof secret !== 'string')
    throw new InvalidOptionError('secret', '(hidden)', 'a whsec_ secret or a whsk_ secret key');
  const input = { ...rest, ...(secret === undefined ? {} : { secrets: [secret] }) };
  await checkEndpointByDryRun(input as unknown as EndpointInput);
  return input as unknown as EndpointInput;
}

export async function checkEndpointPatch(fields: Fields): Promise<EndpointPatch> {
  if (Object.keys(fields).length === 0)
    throw new InvalidOptionError('body', '{}', 'at least one field to change');
  const journal = scratch();
  await journal.endpoints.add({ id: 'scratch', url: SCRATCH_URL });
  await journal.endpoints.update('scratch', fields as EndpointPatch);
  return fields as EndpointPatch;
}

const MESSAGE_FIELDS = [
  'key',
  'endpoint',
  'url',
  'method',
  'headers',
  'payload',
  'body',
  'maxAttempts',
  'deadline',
  'attemptTimeoutMs',
  'orderingKey',
];

/**
 * A message to publish: to an endpoint by name or to a URL; `payload` (any JSON, sent as
 * application/json) or `body` (a string, sent as given). `deadline`: an ISO instant.
 */
export async function checkMessage(fields: Fields): Promise<IntentInput> {
  onlyFields(fields, MESSAGE_FIELDS);
  const endpoint = optionalString(fields, 'endpoint');
  const url = optionalString(fields, 'url');
  if ((endpoint === undefined) === (url === undefined))
    throw new InvalidOptionError('endpoint', endpoint ?? url, 'either "endpoint" or "url"');
  if (fields['payload'] !== undefined && fields['body'] !== undefined)
    throw new InvalidOptionError('body', '(given)', 'either "payload" or "body", not both');
  const body =
    fields['payload'] !== undefined ? JSON.stringify(fields['payload']) : optionalBody(fields);
  const headers = fields['headers'] ?? {};
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new InvalidOptionError('headers', headers, 'an object of header names to strings');
  const deadline = optionalString(fields, 'deadline');
  const deadlineAt = deadline === undefined ? undefined : Date.parse(deadline);
  if (deadlineAt !== undefined && Number.isNaN(deadlineAt))
    throw new InvalidOptionError('deadline', deadline, 'an ISO instant');
  const input: IntentInput = {
    ...(endpoint === undefined ? { target: url! } : { endpoint }),
    body,
    headers: {
      ...(fields['payload'] !== undefined ? { 'content-type': 'application/json' } : {}),
      ...(headers as Record<string, string>),
    },
    createdBy: 'oncely-outbox-api',
    ...defined({
      key: optionalString(fields, 'key'),
      method: optionalString(fields, 'method'),
      maxAttempts: optionalNumber(fields, 'maxAttempts'),
      attemptTimeoutMs: optionalNumber(fields, 'attemptTimeoutMs'),
      orderingKey: optionalString(fields, 'orderingKey'),
      deadlineAt,
    }),
  };
  const journal = scratch();
  if (endpoint !== undefined) await journal.endpoints.add({ id: endpoint, url: SCRATCH_URL });
  await journal.record(input);
  return input;
}

function optionalBody(fields: Fields): string {
  const body = fields['body'];
  if (body === undefined) return '';
  if (typeof body !== 'string') throw new InvalidOptionError('body', body, 'a string');
  return body;
}

/** The fields that have a value: an absent option is left out, not given as undefined. */
function defined<T extends Record<string, unknown>>(
  record: T,
): { [K in keyof T]?: Exclude<T[K], undefined> } {
  return Object.fromEntries(Object.entries(record).filter(([, v]) => v !== undefined)) as {
    [K in keyof T]?: Exclude<T[K], undefined>;
  };
}

/** `{"reason": "…"}` or nothing. */
export function checkReason(fields: Fields): { reason?: string } {
  onlyFields(fields, ['reason']);
  const reason = optionalString(fields, 'reason');
  return reason === undefined ? {} : { reason };
}

/** `{"secret": "whsec_…", "overlapMs": 3600000}`, each optional. */
export async function checkRotation(
  fields: Fields,
): Promise<{ secret?: string; overlapMs?: number }> {
  onlyFields(fields, ['secret', 'overlapMs']);
  const options = defined({
    secret: optionalString(fields, 'secret'),
    overlapMs: optionalNumber(fields, 'overlapMs'),
  });
  const journal = scratch();
  await journal.endpoints.add({ id: 'scratch', url: SCRATCH_URL });
  await journal.endpoints.rotateSecret('scratch', options);
  return options;
}

/** `{"maxAttempts": 5}` or nothing: a replay of one message. */
export function checkRetry(fields: Fields): { maxAttempts?: number } {
  onlyFields(fields, ['maxAttempts']);
  const maxAttempts = optionalNumber(fields, 'maxAttempts');
  if (maxAttempts !== undefined && !(Number.isSafeInteger(maxAttempts) && maxAttempts >= 1))
    throw new InvalidOptionError('maxAttempts', maxAttempts, 'an integer >= 1');
  return maxAttempts === undefined ? {} : { maxAttempts };
}
