import { Hono } from 'hono';
import {
  InvalidOptionError,
  OncelyError,
  keyFor,
  type IntentFilter,
  type IntentInput,
  type IntentRecord,
  type Journal,
} from 'oncely';
import { problemResponse } from 'oncely/http';
import {
  attemptJson,
  intentDetail,
  intentSummary,
  replayResultJson,
} from '../outbox-ui/intent-json.js';
import { listFilter } from '../outbox-ui/outbox-api.js';
import { checkReplayFields, type ReplayRequest } from '../outbox-ui/replay-request.js';
import { checked, noStore, type ApiDeps, type ApiEnv } from './api-env.js';
import { jsonBody } from './api-body.js';
import { API_PROBLEMS, journalProblem, messageNotFound } from './api-problems.js';
import { checkMessage, checkReason, checkRetry } from './api-checks.js';
import {
  checkEventMessage,
  isEventMessage,
  publishEvent,
  type EventMessage,
} from './event-message.js';

/**
 * `/v1/messages`: publish (one intent, to an endpoint or a URL; or by event type, to every
 * subscribed endpoint), list, read with every attempt,
 * cancel, and replay one; `/v1/replay`: replay dead letters by filter (the outbox view's
 * request). A message is an intent of the journal: its key is its id and its `webhook-id`.
 */
export function messageRoutes({ journal, write }: ApiDeps): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  // An endpoint that is not there is bad input, refused before the ledger like any other.
  const checkPublish = async (fields: Readonly<Record<string, unknown>>) => {
    // By event type: fanned out to the subscribed endpoints (event-message.ts).
    if ('eventType' in fields) return checkEventMessage(fields);
    const input = await checkMessage(fields);
    if (input.endpoint !== undefined && !(await journal.endpoints.get(input.endpoint)))
      throw new InvalidOptionError('endpoint', input.endpoint, 'an endpoint of this journal');
    return input;
  };
  app.post('/messages', write(jsonBody('the message', checkPublish)), async (c) => {
    const input = checked<IntentInput | EventMessage>(c);
    const context = c.get('idempotency')!; // set by the guard, as checked() reads it
    if (isEventMessage(input)) return publishEvent(journal, input, context);
    try {
      // Without a key of its own, the message's key is derived from the caller and the
      // Idempotency-Key: should the receipt be lost after the journal committed (the ledger went
      // down), the retry records the same message again, a no-op, instead of a second message.
      const key =
        input.key ?? keyFor({ caller: context.scope, idempotencyKey: context.key }, 'msg');
      const { intent, created } = await journal.record({ ...input, key });
      return c.json({ message: intentSummary(intent), created }, created ? 201 : 200, {
        ...noStore,
        location: `${new URL(c.req.url).pathname}/${encodeURIComponent(intent.key)}`,
      });
    } catch (error) {
      return journalProblem(error);
    }
  });
  app.get('/messages', async (c) => {
    let filter: IntentFilter;
    let intents: IntentRecord[];
    try {
      filter = listFilter(new URL(c.req.url).searchParams);
      intents = await journal.list(filter); // it checks the states named
    } catch (error) {
      if (!(error instanceof InvalidOptionError)) throw error;
      return problemResponse(API_PROBLEMS.invalidQuery, error.message);
    }
    const next = intents.length === (filter.limit ?? 100) ? intents[intents.length - 1]!.key : null;
    return c.json({ messages: intents.map(intentSummary), next }, 200, noStore);
  });
  app.get('/messages/:key', async (c) => {
    const report = await journal.report(c.req.param('key'));
    if (!report) return messageNotFound(c.req.param('key'));
    return c.json({ message: intentDetail(report.intent, report.attempts) }, 200, noStore);
  });
  app.get('/messages/:key/attempts', async (c) => {
    const report = await journal.report(c.req.param('key'));
    if (!report) return messageNotFound(c.req.param('key'));
    return c.json({ attempts: report.attempts.map(attemptJson) }, 200, noStore);
  });
  app.post(
    '/messages/:key/cancel',
    write(jsonBody('the reason', checkReason, { optional: true })),
    async (c) =>
      oneMessage(journal, c.req.param('key'), (key) =>
        journal.cancel(key, checked<{ reason?: string }>(c).reason),
      ),
  );
  app.post(
    '/messages/:key/replay',
    write(jsonBody('the replay', checkRetry, { optional: true })),
    async (c) =>
      oneMessage(journal, c.req.param('key'), (key) =>
        journal.retry(key, checked<{ maxAttempts?: number }>(c)),
      ),
  );
  app.post('/replay', write(jsonBody('the replay filter', replayRequest)), async (c) => {
    const { key, filter, options } = checked<ReplayRequest>(c);
    try {
      if (key !== undefined)
        return oneMessage(journal, key, async (k) =>
          options.dryRun ? (await journal.get(k))! : journal.retry(k, options),
        );
      const result = await journal.replay(filter, options);
      return c.json(replayResultJson(result, options.dryRun), 200, noStore);
    } catch (error) {
      return journalProblem(error);
    }
  });
  return app;
}

/** 404 unless the message exists, then `fn`'s intent as the answer; a state refusal is 409. */
async function oneMessage(
  journal: Journal<unknown>,
  key: string,
  fn: (key: string) => Promise<Parameters<typeof intentSummary>[0]>,
): Promise<Response> {
  if (!(await journal.get(key))) return messageNotFound(key);
  try {
    return Response.json({ message: intentSummary(await fn(key)) }, { headers: noStore });
  } catch (error) {
    return journalProblem(error);
  }
}

/** The outbox view's replay request; its refusals as the API's 422. */
function replayRequest(fields: Readonly<Record<string, unknown>>): ReplayRequest {
  const parsed = checkReplayFields(fields);
  if (typeof parsed === 'string') throw new OncelyError('invalid_request', parsed);
  return parsed;
}
