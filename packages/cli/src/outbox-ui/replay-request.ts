import { InvalidOptionError, type IntentState, type ReplayFilter } from 'oncely';

/** A replay request, checked whole: one key, or a filter (or `all`), and what the reopened get. */
export interface ReplayRequest {
  readonly key?: string | undefined;
  readonly filter: ReplayFilter;
  readonly options: { dryRun: boolean; maxAttempts?: number };
}

const FIELDS = new Set([
  'key',
  'state',
  'target',
  'targetPrefix',
  'endpoint',
  'since',
  'all',
  'dryRun',
  'maxAttempts',
]);

/**
 * `{"key":"order-7"}`, or `{"since":"2026-12-01T00:00Z","target":"…","state":["refused"]}`, or
 * `{"all":true}`; `dryRun` and `maxAttempts` with any. Returns the request, or why it is refused.
 * Like the CLI, a request that names neither a key nor a filter is refused rather than taken for
 * "everything": `all` says so.
 */
export function parseReplayRequest(text: string): ReplayRequest | string {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    return 'the body is not JSON: send {"key": "…"} or a filter such as {"since": "2026-12-01T00:00Z"}';
  }
  if (typeof body !== 'object' || body === null || Array.isArray(body))
    return 'the body must be a JSON object';
  return checkReplayFields(body as Record<string, unknown>);
}

/** The fields of a replay request's JSON object, checked: the request, or why it is refused. */
export function checkReplayFields(
  fields: Readonly<Record<string, unknown>>,
): ReplayRequest | string {
  const unknown = Object.keys(fields).filter((name) => !FIELDS.has(name));
  if (unknown.length > 0)
    return `unknown field(s) ${unknown.join(', ')}; allowed: ${[...FIELDS].join(', ')}`;
  try {
    const filter = replayFilter(fields);
    const { key, all, dryRun, maxAttempts } = fields;
    if (key !== undefined && (typeof key !== 'string' || key === ''))
      return '"key" must be a non-empty string';
    if (all !== undefined && typeof all !== 'boolean') return '"all" must be true or false';
    if (dryRun !== undefined && typeof dryRun !== 'boolean')
      return '"dryRun" must be true or false';
    if (
      maxAttempts !== undefined &&
      !(Number.isSafeInteger(maxAttempts) && (maxAttempts as number) >= 1)
    )
      return '"maxAttempts" must be an integer >= 1';
    const narrowed = Object.keys(filter).length > 0;
    if (key !== undefined && (narrowed || all)) return 'either "key" or a filter, not both';
    if (key === undefined && !narrowed && all !== true)
      return 'name a "key", a filter ("since", "target", "targetPrefix", "endpoint", "state") or "all": true';
    return {
      key: key as string | undefined,
      filter,
      options: {
        dryRun: dryRun === true,
        ...(maxAttempts === undefined ? {} : { maxAttempts: maxAttempts as number }),
      },
    };
  } catch (error) {
    if (error instanceof InvalidOptionError) return error.message;
    throw error;
  }
}

function replayFilter(fields: Record<string, unknown>): ReplayFilter {
  const { state, target, targetPrefix, endpoint, since } = fields;
  const text = (name: string, value: unknown): string => {
    if (typeof value !== 'string' || value === '')
      throw new InvalidOptionError(name, value, 'a non-empty string');
    return value;
  };
  if (state !== undefined && typeof state !== 'string' && !Array.isArray(state))
    throw new InvalidOptionError('state', state, 'a state or a list of states');
  return {
    ...(state === undefined ? {} : { state: state as IntentState | IntentState[] }),
    ...(target === undefined ? {} : { target: text('target', target) }),
    ...(targetPrefix === undefined ? {} : { targetPrefix: text('targetPrefix', targetPrefix) }),
    ...(endpoint === undefined ? {} : { endpoint: text('endpoint', endpoint) }),
    ...(since === undefined ? {} : { finishedSince: parseInstant('since', text('since', since)) }),
  };
}

/** An ISO instant with a zone (2026-12-01T00:00Z) or a date, midnight UTC (2026-12-01). */
export function parseInstant(name: string, text: string): number {
  const date = /^\d{4}-\d{2}-\d{2}$/.test(text);
  const instant = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text);
  const at = date ? Date.parse(`${text}T00:00Z`) : instant ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new InvalidOptionError(name, text, 'an ISO instant such as 2026-12-01T00:00Z, or a date');
  return at;
}
