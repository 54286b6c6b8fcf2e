import { Hono, type Context } from 'hono';
import { InvalidOptionError, type IntentFilter, type IntentState, type Journal } from 'oncely';
import { defineProblem, problemResponse } from 'oncely/http';
import { intentDetail, intentSummary, replayResultJson } from './intent-json.js';
import { parseInstant, parseReplayRequest } from './replay-request.js';

export const OUTBOX_PROBLEMS = {
  invalidFilter: defineProblem('invalid_filter', 400, 'Invalid intent filter'),
  invalidReplay: defineProblem('invalid_replay', 400, 'Invalid replay request'),
  notFound: defineProblem('intent_not_found', 404, 'No such intent'),
  notDead: defineProblem('intent_not_dead', 409, 'The intent is not dead'),
} as const;

/** The largest page a listing answers. */
export const MAX_PAGE = 500;

/**
 * The outbox view's JSON API over one journal: a listing with filters and paging, one intent with
 * its attempts, and replay. Bad input is problem+json and changes nothing: a replay request is
 * checked whole before the first intent is reopened.
 */
export function createOutboxApi(journal: Journal<unknown>): Hono {
  const api = new Hono();
  api.get('/api/intents', async (c) => {
    let filter: IntentFilter;
    try {
      filter = listFilter(new URL(c.req.url).searchParams);
      const intents = await journal.list(filter);
      const limit = filter.limit ?? 100;
      return c.json(
        {
          intents: intents.map(intentSummary),
          next: intents.length === limit ? intents[intents.length - 1]!.key : null,
          counts: await journal.counts(),
        },
        200,
        { 'cache-control': 'no-store' },
      );
    } catch (error) {
      if (error instanceof InvalidOptionError)
        return problemResponse(OUTBOX_PROBLEMS.invalidFilter, error.message);
      throw error;
    }
  });
  api.get('/api/intents/:key', async (c) => {
    const report = await journal.report(c.req.param('key'));
    if (!report) return notFound(c.req.param('key'));
    return c.json(intentDetail(report.intent, report.attempts), 200, {
      'cache-control': 'no-store',
    });
  });
  api.post('/api/replay', (c) => replay(c, journal));
  return api;
}

async function replay(c: Context, journal: Journal<unknown>): Promise<Response> {
  const text = await c.req.text();
  const parsed = parseReplayRequest(text);
  if (typeof parsed === 'string') return problemResponse(OUTBOX_PROBLEMS.invalidReplay, parsed);
  const { key, filter, options } = parsed;
  try {
    if (key !== undefined) {
      const intent = await journal.get(key);
      if (!intent) return notFound(key);
      if (intent.state === 'pending' || intent.state === 'delivered')
        return problemResponse(
          OUTBOX_PROBLEMS.notDead,
          `intent ${key} is ${intent.state}: only a refused, given-up, unknown or cancelled intent can be replayed`,
        );
      const reopened = options.dryRun ? [] : [(await journal.retry(key, options)).key];
      return c.json(
        replayResultJson({ selected: [intent], reopened, skipped: [] }, options.dryRun),
      );
    }
    return c.json(replayResultJson(await journal.replay(filter, options), options.dryRun));
  } catch (error) {
    if (error instanceof InvalidOptionError)
      return problemResponse(OUTBOX_PROBLEMS.invalidReplay, error.message);
    throw error;
  }
}

function notFound(key: string): Response {
  return problemResponse(
    OUTBOX_PROBLEMS.notFound,
    `no intent with key ${JSON.stringify(key)} in the journal`,
  );
}

const LIST_PARAMS = new Set([
  'state',
  'target',
  'targetPrefix',
  'endpoint',
  'since',
  'after',
  'limit',
]);

/** `?state=refused,gave_up&target=…&targetPrefix=…&since=2026-12-01T00:00Z&after=KEY&limit=50`. */
export function listFilter(params: URLSearchParams): IntentFilter {
  for (const name of params.keys())
    if (!LIST_PARAMS.has(name))
      throw new InvalidOptionError(
        name,
        params.get(name),
        `parameters among ${[...LIST_PARAMS].join(', ')}`,
      );
  const get = (name: string): string | undefined => params.get(name) ?? undefined;
  const state = get('state');
  const since = get('since');
  const limit = get('limit');
  return {
    ...(state === undefined ? {} : { state: state.split(',') as IntentState[] }),
    ...(get('target') === undefined ? {} : { target: get('target') }),
    ...(get('targetPrefix') === undefined ? {} : { targetPrefix: get('targetPrefix') }),
    ...(get('endpoint') === undefined ? {} : { endpoint: get('endpoint') }),
    ...(since === undefined ? {} : { finishedSince: parseInstant('since', since) }),
    ...(get('after') === undefined ? {} : { after: get('after') }),
    limit: limit === undefined ? 100 : parseLimit(limit),
  };
}

function parseLimit(text: string): number {
  const n = Number(text);
  if (!/^\d+$/.test(text) || n < 1 || n > MAX_PAGE)
    throw new InvalidOptionError('limit', text, `an integer from 1 to ${MAX_PAGE}`);
  return n;
}
