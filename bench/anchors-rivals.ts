/**
 * The routes of bench/anchors guarded by the idempotency middlewares people install today, each
 * set up as its README says, in front of the same route: parse the JSON order, INSERT it into
 * this variant's own SQLite file (anchors-effect.ts), answer 201 with the new row's id. The
 * libraries are imported only when their row runs.
 *
 * - express-idempotency: `idempotency()` before the route, the default (in-memory) adapter; the
 *   route returns early when `isHit(req)` (its README's pattern) and calls `reportError` on failure.
 * - @node-idempotency: its Express plugin (@node-idempotency/express) is not on the package
 *   registry this project installs from, so the middleware below drives @node-idempotency/core as
 *   that core's README describes and as the plugin does: `onRequest` before the route, the
 *   response stored by `onResponse` from a `res.send` hook without waiting for it, the cached
 *   response replayed with `Idempotent-Replayed: true`, its own error codes mapped to HTTP by
 *   @node-idempotency/shared (409 + Retry-After in flight, 422 on another payload). Storage built
 *   by the shared `buildStorageAdapter` ('memory' or 'redis', node-redis 4).
 * - @aws-lambda-powertools/idempotency: built for Lambda. Outside Lambda it is used through
 *   `makeIdempotent` around the function that does the work (its README: "wrap any other arbitrary
 *   function, not just Lambda handlers"), called from the Express route with the key and the body;
 *   `eventKeyJmesPath: 'key'` picks the key, and the persistence layer is its CachePersistenceLayer
 *   over an @redis/client 6 connection. Payload validation stays off, its default: with it on,
 *   2.35.0's cache layer drops the payload hash when a record completes, so every replay is
 *   refused as another payload (a known bug, fixed upstream after 2.35.0). Without a Lambda
 *   context it cannot tell how long an in-progress record may live (it warns on every call, and a
 *   concurrent duplicate would be taken for an orphan and run again), so a context-shaped object
 *   gives it the request's time budget.
 */
import express, {
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import { openEffectTable, orderOf, type EffectTable, type Order } from './anchors-effect.js';
import type { TableDurability } from './anchors-variants.js';

/** One variant's route and what the bench asks of it. */
export interface Mounted {
  /** The middlewares and the route, in order, for `app.post(path, ...handlers)`. */
  readonly handlers: RequestHandler[];
  /** Rows in this variant's effect table (committed). */
  count(): Promise<number>;
  close(): Promise<void>;
}

/** The route's answer for an order just written: the new row's id (a replay must return the same). */
function created(res: Response, id: number, order: Order): void {
  res.status(201).json({ order: id, amount: order.amount });
}

function badOrder(res: Response): void {
  res.status(400).json({ error: 'the body must be {"amount": number, "note": string}' });
}

function tableOf(
  file: string,
  durability: TableDurability,
): {
  table: EffectTable;
  count: () => Promise<number>;
  closeTable: () => void;
} {
  const table = openEffectTable(file, durability);
  return { table, count: async () => table.count(), closeTable: () => table.close() };
}

/** The floor: the same route with nothing in front of it. */
export function mountNone(file: string, durability: TableDurability): Mounted {
  const { table, count, closeTable } = tableOf(file, durability);
  const route: RequestHandler = (req, res) => {
    const order = orderOf(req.body);
    if (!order) return badOrder(res);
    created(res, table.insert(order), order);
  };
  return { handlers: [express.json(), route], count, close: async () => closeTable() };
}

/** Express with nothing in its route: express.json, then a constant answer. No effect, no keys. */
export function mountExpressAlone(): Mounted {
  const route: RequestHandler = (req, res) => {
    const order = orderOf(req.body);
    if (!order) return badOrder(res);
    created(res, 0, order);
  };
  return { handlers: [express.json(), route], count: async () => 0, close: async () => {} };
}

export async function mountExpressIdempotency(
  file: string,
  durability: TableDurability,
): Promise<Mounted> {
  const lib = await import('express-idempotency');
  const { table, count, closeTable } = tableOf(file, durability);
  const guard = lib.idempotency(); // the default adapter: in memory
  const service = lib.getSharedIdempotencyService();
  const route: RequestHandler = (req, res, next) => {
    if (service.isHit(req)) return; // the middleware answered (replay or refusal)
    const order = orderOf(req.body);
    if (!order) return badOrder(res);
    try {
      created(res, table.insert(order), order);
    } catch (error) {
      void service.reportError(req);
      next(error);
    }
  };
  return {
    handlers: [express.json(), guard as RequestHandler, route],
    count,
    close: async () => closeTable(),
  };
}

export async function mountNodeIdempotency(
  file: string,
  durability: TableDurability,
  storage: 'memory' | 'redis',
  redis: { url: string; prefix: string } | undefined,
): Promise<Mounted> {
  const core = await import('@node-idempotency/core');
  const shared = await import('@node-idempotency/shared');
  const adapter = await shared.buildStorageAdapter(
    storage === 'memory'
      ? { adapter: shared.StorageAdapterEnum.memory }
      : { adapter: shared.StorageAdapterEnum.redis, options: { url: redis!.url } },
  );
  // Defaults but for the key prefix, so the bench can delete what it wrote afterwards.
  const idempotency = new core.Idempotency(adapter, {
    ...(redis ? { cacheKeyPrefix: redis.prefix } : {}),
  });
  const { table, count, closeTable } = tableOf(file, durability);

  const guard = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const params = {
      headers: req.headers,
      body: req.body as Record<string, unknown>,
      path: req.url,
      method: req.method,
    };
    let cached: Awaited<ReturnType<typeof idempotency.onRequest>>;
    try {
      cached = await idempotency.onRequest(params);
    } catch (error) {
      if (!(error instanceof core.IdempotencyError)) return next(error);
      const status = shared.idempotency2HttpCodeMap[error.code] ?? 500;
      if (error.code === core.IdempotencyErrorCodes.REQUEST_IN_PROGRESS)
        res.setHeader(shared.HTTPHeaderEnum.retryAfter, '1');
      res.status(status).json({ error: error.message });
      return;
    }
    if (cached === undefined) {
      // First time: store the response once the route sends it (in the background, as the plugin does).
      const send = res.send.bind(res);
      res.send = (body?: unknown) => {
        const contentType = res.getHeader('content-type');
        void idempotency
          .onResponse(params, {
            additional: { statusCode: res.statusCode, 'Content-Type': contentType },
            ...(res.statusCode < 400 ? { body } : { error: body }),
          })
          .catch(() => {});
        return send(body);
      };
      return next();
    }
    const additional = cached.additional ?? {};
    res.status(Number(additional['statusCode'] ?? 200));
    if (typeof additional['Content-Type'] === 'string')
      res.setHeader('content-type', additional['Content-Type']);
    res.setHeader(shared.HTTPHeaderEnum.idempotentReplayed, 'true');
    if (cached.body !== undefined) res.send(cached.body);
    else next(cached.error);
  };
  const route: RequestHandler = (req, res) => {
    const order = orderOf(req.body);
    if (!order) return badOrder(res);
    created(res, table.insert(order), order);
  };
  return {
    handlers: [express.json(), guard as RequestHandler, route],
    count,
    close: async () => {
      const closable = adapter as { disconnect?: () => Promise<void> };
      await closable.disconnect?.();
      closeTable();
    },
  };
}

/** How long an in-progress record may stand before a retry may take it over (see above). */
const POWERTOOLS_REQUEST_BUDGET_MS = 30_000;

export async function mountPowertools(
  file: string,
  durability: TableDurability,
  redis: { url: string; prefix: string },
): Promise<Mounted> {
  const lib = await import('@aws-lambda-powertools/idempotency');
  const { CachePersistenceLayer } = await import('@aws-lambda-powertools/idempotency/cache');
  const { createClient } = await import('@redis/client');
  const client = await createClient({ url: redis.url }).connect();
  const persistenceStore = new CachePersistenceLayer({ client });
  const config = new lib.IdempotencyConfig({
    eventKeyJmesPath: 'key',
    // A context-shaped stand-in: the in-progress lease is this long from each call.
    lambdaContext: {
      getRemainingTimeInMillis: () => POWERTOOLS_REQUEST_BUDGET_MS,
    } as unknown as NonNullable<
      ConstructorParameters<typeof lib.IdempotencyConfig>[0]
    >['lambdaContext'],
  });
  const { table, count, closeTable } = tableOf(file, durability);
  const recordOrder = lib.makeIdempotent(
    async (request: { key: string; body: Order }) => ({
      status: 201,
      body: { order: table.insert(request.body), amount: request.body.amount },
    }),
    { persistenceStore, config, keyPrefix: redis.prefix },
  );
  const route = async (req: Request, res: Response, next: NextFunction): Promise<void> => {
    const key = req.get('idempotency-key');
    const order = orderOf(req.body);
    if (!order) return badOrder(res);
    if (!key) {
      res.status(400).json({ error: 'an Idempotency-Key header is required' });
      return;
    }
    try {
      const answer = await recordOrder({ key, body: order });
      res.status(answer.status).json(answer.body);
    } catch (error) {
      if (error instanceof lib.IdempotencyAlreadyInProgressError) {
        res.setHeader('retry-after', '1');
        res.status(409).json({ error: error.message });
      } else next(error);
    }
  };
  return {
    handlers: [express.json(), route as RequestHandler],
    count,
    close: async () => {
      await client.quit().catch(() => {});
      closeTable();
    },
  };
}
