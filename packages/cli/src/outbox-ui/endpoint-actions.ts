import { Hono } from 'hono';
import { systemClock, type Journal } from 'oncely';
import { defineProblem, problemResponse } from 'oncely/http';
import { endpointJson } from '../outbox-api/endpoint-json.js';
import { endpointNotFound, journalProblem } from '../outbox-api/api-problems.js';

/** What the outbox view can do to an endpoint: hold it, stop it, and start it again. */
export const ENDPOINT_ACTIONS = ['pause', 'resume', 'disable', 'enable'] as const;
type EndpointAction = (typeof ENDPOINT_ACTIONS)[number];

const invalidAction = defineProblem('invalid_action', 400, 'Invalid endpoint action');

/**
 * The outbox view's endpoint routes: the endpoints with their state (for the filter and the
 * actions), and pause / resume / disable / enable. A refused action (unknown endpoint, a state
 * that forbids it, a bad body) is problem+json and changes nothing.
 */
export function createEndpointActions(journal: Journal<unknown>): Hono {
  const api = new Hono();
  api.get('/api/endpoints', async (c) =>
    c.json(
      {
        endpoints: (await journal.endpoints.list()).map((e) => endpointJson(e, systemClock.now())),
      },
      200,
      { 'cache-control': 'no-store' },
    ),
  );
  api.post('/api/endpoints/:id/:action', async (c) => {
    const { id, action } = c.req.param();
    if (!(ENDPOINT_ACTIONS as readonly string[]).includes(action))
      return problemResponse(
        invalidAction,
        `${JSON.stringify(action)} is not one of ${ENDPOINT_ACTIONS.join(', ')}`,
      );
    const reason = readReason(await c.req.text());
    if (reason instanceof Error) return problemResponse(invalidAction, reason.message);
    if (!(await journal.endpoints.get(id))) return endpointNotFound(id);
    try {
      const endpoint = await act(journal, id, action as EndpointAction, reason);
      return c.json({ endpoint: endpointJson(endpoint, systemClock.now()) });
    } catch (error) {
      return journalProblem(error);
    }
  });
  return api;
}

function act(journal: Journal<unknown>, id: string, action: EndpointAction, reason?: string) {
  return action === 'pause' || action === 'disable'
    ? journal.endpoints[action](id, reason)
    : journal.endpoints[action](id);
}

/** The body: `{}` or `{"reason": "…"}` (the reason kept on the endpoint for pause and disable). */
function readReason(text: string): string | undefined | Error {
  let body: unknown;
  try {
    body = text.trim() === '' ? {} : JSON.parse(text);
  } catch {
    return new Error('send a JSON object: {} or {"reason": "…"}');
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return new Error('send a JSON object: {} or {"reason": "…"}');
  const { reason, ...rest } = body as Record<string, unknown>;
  if (Object.keys(rest).length > 0)
    return new Error(`unknown field(s): ${Object.keys(rest).join(', ')}; only "reason" is taken`);
  if (reason !== undefined && (typeof reason !== 'string' || reason.length > 500))
    return new Error('"reason" is a string of at most 500 characters');
  return reason as string | undefined;
}
