import { randomBytes } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Hono } from 'hono';
import type { Journal } from 'oncely';
import { problemResponse, toNodeListener } from 'oncely/http';
import { listen } from '../serve/listen.js';
import { createOutboxApi } from './outbox-api.js';
import { outboxGuard } from './outbox-guard.js';
import { createEndpointActions } from './endpoint-actions.js';

/** The built page: web/dist of this package (`npm run build` writes outbox.html and outbox.js there). */
export const DEFAULT_OUTBOX_WEB_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

/** Only this origin's script and requests: nothing inline, nothing third-party. */
const PAGE_CSP =
  "default-src 'none'; script-src 'self'; connect-src 'self'; style-src 'self'; img-src data:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

/** The page's files by path: the page, its script (and the chunks it shares with the lab page), the styles. */
const FILES: readonly [RegExp, string][] = [
  [/^\/$/, 'text/html; charset=utf-8'],
  [/^\/outbox\.js$/, 'text/javascript; charset=utf-8'],
  [/^\/(styles|outbox)\.css$/, 'text/css; charset=utf-8'],
];

export interface OutboxUiOptions {
  readonly journal: Journal<unknown>;
  /** @default '127.0.0.1' */
  readonly host?: string;
  /** @default 0 (a free port) */
  readonly port?: number;
  /** @default a fresh random token */
  readonly token?: string | undefined;
  readonly webDir?: string;
}

export interface OutboxUi {
  /** The page's address with the token in its fragment: what to open. */
  readonly url: string;
  readonly origin: string;
  readonly token: string;
  close(): Promise<void>;
}

/** The outbox view's whole app: the guarded API and the page's static files. */
export function createOutboxUiApp(journal: Journal<unknown>, token: string, webDir: string): Hono {
  const app = new Hono();
  app.use('/api/*', outboxGuard(token));
  app.route('/', createOutboxApi(journal));
  app.route('/', createEndpointActions(journal));
  app.get('*', async (c) => {
    const path = c.req.path;
    const type = FILES.find(([pattern]) => pattern.test(path))?.[1];
    if (!type) return problemResponse('not_found', `nothing at ${path}`);
    const file = join(webDir, path === '/' ? 'outbox.html' : path.slice(1));
    const bytes = await readFile(file).catch(() => undefined);
    if (!bytes)
      return path === '/'
        ? c.text('The outbox page is not built: run `npm run build`.', 503)
        : problemResponse('not_found', `nothing at ${path}`);
    return c.body(new Uint8Array(bytes), 200, {
      'content-type': type,
      'content-security-policy': PAGE_CSP,
      'x-content-type-options': 'nosniff',
      'cache-control': 'no-store',
    });
  });
  app.onError((error) =>
    problemResponse('internal_error', String((error as Error).message ?? error)),
  );
  return app;
}

/** Serves the outbox view on host:port (127.0.0.1 unless told), until close(). */
export async function startOutboxUi(options: OutboxUiOptions): Promise<OutboxUi> {
  const host = options.host ?? '127.0.0.1';
  const token = options.token ?? randomBytes(18).toString('base64url');
  const app = createOutboxUiApp(options.journal, token, options.webDir ?? DEFAULT_OUTBOX_WEB_DIR);
  const server = createServer(toNodeListener(app.fetch));
  await listen(server, options.port ?? 0, host);
  const { port } = server.address() as AddressInfo;
  const origin = `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return {
    url: `${origin}/#token=${token}`,
    origin,
    token,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
