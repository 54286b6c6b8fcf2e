import { Hono, type Context } from 'hono';
import type { Clock, EndpointRecord } from 'oncely';
import { checked, noStore, type ApiDeps, type ApiEnv } from './api-env.js';
import { jsonBody, onlyFields } from './api-body.js';
import { endpointNotFound, journalProblem } from './api-problems.js';
import {
  checkEndpointInput,
  checkEndpointPatch,
  checkReason,
  checkRotation,
} from './api-checks.js';
import { endpointJson } from './endpoint-json.js';
import { isEndpointId } from './endpoint-id.js';

/**
 * `/v1/endpoints`: create, list, read, edit, delete, pause, resume, disable, enable, rotate the
 * secret. A new or rotated secret is in the answer, so in the receipt: a retry under the same
 * Idempotency-Key gets it again, where a lost answer would otherwise lose a secret shown once.
 */
export function endpointRoutes({ journal, write }: ApiDeps, clock: Clock): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const json = (e: EndpointRecord) => endpointJson(e, clock.now());
  /** 404 unless the endpoint exists, then `fn`; the journal's refusals as problems. */
  const onEndpoint =
    (fn: (c: Context<ApiEnv>, id: string) => Promise<Response>) => async (c: Context<ApiEnv>) => {
      const id = c.req.param('id') ?? '';
      if (!isEndpointId(id) || !(await journal.endpoints.get(id))) return endpointNotFound(id);
      return fn(c, id).catch(journalProblem);
    };

  app.get('/', async (c) =>
    c.json({ endpoints: (await journal.endpoints.list()).map(json) }, 200, noStore),
  );
  app.post('/', write(jsonBody('the endpoint', checkEndpointInput)), async (c) => {
    const input = checked<Awaited<ReturnType<typeof checkEndpointInput>>>(c);
    try {
      const e = await journal.endpoints.add(input);
      const generated = input.secrets === undefined ? { secret: e.secrets[0]!.secret } : {};
      return c.json({ endpoint: json(e), ...generated }, 201, {
        ...noStore,
        location: `${new URL(c.req.url).pathname.replace(/\/$/, '')}/${e.id}`,
      });
    } catch (error) {
      return journalProblem(error);
    }
  });
  app.get(
    '/:id',
    onEndpoint(async (c, id) =>
      c.json({ endpoint: json((await journal.endpoints.get(id))!) }, 200, noStore),
    ),
  );
  app.patch(
    '/:id',
    write(jsonBody('the changes', checkEndpointPatch)),
    onEndpoint(async (c, id) =>
      c.json({ endpoint: json(await journal.endpoints.update(id, checked(c))) }, 200, noStore),
    ),
  );
  app.delete(
    '/:id',
    write(jsonBody('the reason', checkReason, { optional: true })),
    onEndpoint(async (c, id) => {
      const { cancelled } = await journal.endpoints.delete(
        id,
        checked<{ reason?: string }>(c).reason,
      );
      return c.json({ deleted: id, cancelled }, 200, noStore);
    }),
  );
  for (const action of ['pause', 'disable'] as const)
    app.post(
      `/:id/${action}`,
      write(jsonBody('the reason', checkReason, { optional: true })),
      onEndpoint(async (c, id) => {
        const e = await journal.endpoints[action](id, checked<{ reason?: string }>(c).reason);
        return c.json({ endpoint: json(e) }, 200, noStore);
      }),
    );
  for (const action of ['resume', 'enable'] as const)
    app.post(
      `/:id/${action}`,
      write(jsonBody('nothing', (fields) => onlyFields(fields, []), { optional: true })),
      onEndpoint(async (c, id) =>
        c.json({ endpoint: json(await journal.endpoints[action](id)) }, 200, noStore),
      ),
    );
  app.post(
    '/:id/rotate-secret',
    write(jsonBody('the rotation', checkRotation, { optional: true })),
    onEndpoint(async (c, id) => {
      const { endpoint, secret } = await journal.endpoints.rotateSecret(id, checked(c));
      return c.json({ endpoint: json(endpoint), secret }, 200, noStore);
    }),
  );
  return app;
}
