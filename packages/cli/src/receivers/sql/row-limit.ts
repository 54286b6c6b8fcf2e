import { defineProblem, problemResponse } from 'oncely/http';

/**
 * How many rows one listing returns (`GET /dropbox/store`, `GET /ledger/receipts`): a caller's
 * rows grow without bound, and a dump of all of them would grow the response, the server's memory
 * and the store view's polling with them.
 */
export const DEFAULT_ROW_LIMITS = {
  /** Rows sent when the request names no `?limit=`. @default 100 */
  defaultLimit: 100,
  /** The largest `?limit=` accepted; past it, 400. @default 1000 */
  maxLimit: 1000,
} as const;

/** A listing's query that asks for no valid number of rows. */
export const INVALID_QUERY = defineProblem('invalid_query', 400, 'Invalid query parameter');

/** The query parameter that asks for another number of rows. */
export const ROW_LIMIT_PARAMETER = 'limit';

/** The number of rows asked for, or the 400 to answer instead. */
export type RowLimitRead =
  | { readonly kind: 'limit'; readonly limit: number }
  | { readonly kind: 'refused'; readonly response: Response };

/**
 * Reads `?limit=` from a listing's URL: absent is the default; a whole number from 1 to the
 * maximum, given once, is that; anything else (`0`, `1001`, `abc`, `1.5`, `-1`, empty, twice) is
 * 400 problem+json naming the parameter and the allowed range. Refused, not clamped: a client
 * that asks for 5000 rows and silently gets 1000 would take them for all there are.
 */
export function readRowLimit(url: URL): RowLimitRead {
  const { defaultLimit, maxLimit } = DEFAULT_ROW_LIMITS;
  const values = url.searchParams.getAll(ROW_LIMIT_PARAMETER);
  if (values.length === 0) return { kind: 'limit', limit: defaultLimit };
  const raw = values[0]!;
  const limit = /^\d{1,7}$/.test(raw) ? Number(raw) : Number.NaN;
  if (values.length === 1 && limit >= 1 && limit <= maxLimit) return { kind: 'limit', limit };
  const sent = values.length > 1 ? `${values.length} values` : JSON.stringify(raw);
  const response = problemResponse(
    INVALID_QUERY,
    `?${ROW_LIMIT_PARAMETER}= must be one whole number from 1 to ${maxLimit} (default ${defaultLimit}), not ${sent}`,
    {
      extensions: {
        parameter: ROW_LIMIT_PARAMETER,
        minimum: 1,
        maximum: maxLimit,
        default: defaultLimit,
      },
    },
  );
  return { kind: 'refused', response };
}

/** What a listing says about its size besides its rows: how many there are in all, and whether some were left out. */
export interface RowPage {
  /** The caller's rows in all. */
  readonly total: number;
  /** The limit this listing was cut at. */
  readonly limit: number;
  /** True when `total` is more than the rows sent: only the newest `limit` are. */
  readonly truncated: boolean;
}

export function rowPage(total: number, limit: number, sent: number): RowPage {
  return { total, limit, truncated: total > sent };
}
