import { existsSync } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { MiddlewareHandler } from 'hono';
import { serveStatic } from 'hono/serve-static';
import { STORE_PAGE_PATH } from './store-page.js';

/**
 * What `/` shows: the simulator page once it is built into `web/dist/` (`npm run build`), or
 * else a small index linking every service. The one place that decides; the page's build plugs
 * in by writing `web/dist/index.html`. Checked per request, so a build made while the server
 * runs is served without a restart.
 */
export const DEFAULT_WEB_DIR = fileURLToPath(new URL('../../web/dist/', import.meta.url));

export interface SitePagesOptions {
  /** The built simulator page. @default web/dist of this package */
  readonly webDir?: string;
}

/**
 * GET and HEAD only; anything not found falls through to the app's 404. Static files come from
 * Hono's serve-static, which refuses `..`, doubled slashes, backslashes and encoded traversal
 * before a path is joined, and sets the content type from the extension.
 */
export function sitePages(options: SitePagesOptions = {}): MiddlewareHandler {
  const webDir = options.webDir ?? DEFAULT_WEB_DIR;
  const files = serveStatic({
    root: webDir,
    join,
    isDir: async (path) => (await stat(path).catch(() => undefined))?.isDirectory(),
    getContent: async (path) => {
      // join() cannot leave root for a path serve-static accepted; this check keeps it so.
      if (!path.startsWith(webDir.endsWith('/') ? webDir : `${webDir}/`)) return null;
      const info = await stat(path).catch(() => undefined);
      return info?.isFile() ? new Uint8Array(await readFile(path)) : null;
    },
  });
  return async (c, next) => {
    if (c.req.method !== 'GET' && c.req.method !== 'HEAD') return next();
    if (existsSync(join(webDir, 'index.html'))) return files(c, next);
    if (c.req.path !== '/') return next();
    return c.html(indexPage(), 200, { 'cache-control': 'no-store' });
  };
}

/** The stand-in for the simulator page: every service, with a curl line for each. */
function indexPage(): string {
  const rows: Array<[string, string, string]> = [
    [
      'Store view',
      STORE_PAGE_PATH,
      'your dropbox rows, ledger receipts and hook hits, live (asks for the token)',
    ],
    [
      'Dropbox',
      '/dropbox/store',
      'POST /dropbox/submissions {student, assignment} with an Idempotency-Key; GET /dropbox/submissions/:key; GET /dropbox/store',
    ],
    [
      'Notes',
      '/notes/note-1',
      'GET /notes/:id; PATCH /notes/:id {expectedVersion, title} with an Idempotency-Key (the request ID)',
    ],
    [
      'Hook receiver',
      '/hooks/debug/hits',
      'POST, PUT, PATCH, DELETE on /hooks/…, answered by the hook script; GET /hooks/debug/hits',
    ],
    ['Health', '/healthz', 'is the server up and its store reachable'],
  ];
  const items = rows
    .map(([name, href, what]) => `<li><a href="${href}">${name}</a>: ${escapeHtml(what)}</li>`)
    .join('\n');
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>oncely serve</title>
<style>body{font:15px/1.5 system-ui,sans-serif;margin:2rem;max-width:52rem}code,pre{font-family:ui-monospace,monospace}pre{background:#f4f4f4;padding:.7rem;overflow:auto}</style></head>
<body>
<h1>oncely serve</h1>
<p>One intent, one key, one effect. Writes and dumps need <code>Authorization: Bearer TOKEN</code>; the token is printed when the server starts.</p>
<ul>
${items}
</ul>
<pre>curl -i -X POST "$ONCELY_URL/dropbox/submissions" \\
  -H "Authorization: Bearer $TOKEN" -H 'Idempotency-Key: achen:lab3:v1' \\
  -H 'Content-Type: application/json' -d '{"student":"achen","assignment":"lab3"}'</pre>
<p>The simulator page appears here once it is built (<code>npm run build</code>).</p>
</body>
</html>
`;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (ch) => `&#${ch.charCodeAt(0)};`);
}
