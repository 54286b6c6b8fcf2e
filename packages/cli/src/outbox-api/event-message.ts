import { InvalidOptionError, keyFor, type Journal, type MessageInput } from 'oncely';
import { scratchJournal } from '../shared/scratch-journal.js';
import { onlyFields, optionalString, type Fields } from './api-body.js';
import { noStore } from './api-env.js';
import { journalProblem } from './api-problems.js';

/** The fields of a message published by event type (Svix's names where they have one). */
const EVENT_FIELDS = ['eventType', 'payload', 'id', 'channels', 'deadline'];

/** A message by event type, checked: published to every endpoint subscribed to its type. */
export interface EventMessage {
  readonly kind: 'event';
  /** The message without its id when none was given: the route derives one. */
  readonly message: Omit<MessageInput, 'id'> & { readonly id?: string };
}

export function isEventMessage(value: unknown): value is EventMessage {
  return (value as Partial<EventMessage>).kind === 'event';
}

/**
 * `{"eventType": "order.created", "payload": {…}, "id"?, "channels"?, "deadline"?}`: checked
 * by the journal's own publish on a scratch journal, so a bad type, id or channel is refused
 * before the ledger, and nothing is recorded.
 */
export async function checkEventMessage(fields: Fields): Promise<EventMessage> {
  onlyFields(fields, EVENT_FIELDS);
  const type = optionalString(fields, 'eventType')!;
  const id = optionalString(fields, 'id');
  const channels = fields['channels'];
  if (channels !== undefined && !Array.isArray(channels))
    throw new InvalidOptionError('channels', channels, 'an array of channel names');
  const deadline = optionalString(fields, 'deadline');
  const deadlineAt = deadline === undefined ? undefined : Date.parse(deadline);
  if (deadlineAt !== undefined && Number.isNaN(deadlineAt))
    throw new InvalidOptionError('deadline', deadline, 'an ISO instant');
  const message = {
    type,
    data: fields['payload'] === undefined ? null : fields['payload'],
    ...(id === undefined ? {} : { id }),
    ...(channels === undefined ? {} : { channels: channels as string[] }),
    ...(deadlineAt === undefined ? {} : { deadlineAt }),
  };
  await scratchJournal().publish(message);
  return { kind: 'event', message };
}

/**
 * Publishes the message: one intent per subscribed endpoint (`<id>:<endpoint>`). Without an id
 * of its own, the id is derived from the caller and the Idempotency-Key, so a retry after a lost
 * receipt publishes the same message again, a no-op. 201 when this call recorded intents, 200
 * when it recorded none (published before, or no endpoint subscribed).
 */
export async function publishEvent(
  journal: Journal<unknown>,
  { message }: EventMessage,
  idempotency: { readonly scope: string; readonly key: string },
): Promise<Response> {
  const id =
    message.id ?? keyFor({ caller: idempotency.scope, idempotencyKey: idempotency.key }, 'evt');
  try {
    const published = await journal.publish({ ...message, id });
    return Response.json(
      { message: { ...published, eventType: message.type } },
      { status: published.created > 0 ? 201 : 200, headers: noStore },
    );
  } catch (error) {
    return journalProblem(error);
  }
}
