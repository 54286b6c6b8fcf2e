import type { IncomingMessage, ServerResponse } from 'node:http';
import { Readable } from 'node:stream';

/**
 * Serves a Fetch API handler on node:http with node's own Request and Response, as a platform
 * that speaks Fetch does (Next.js, Deno, Bun): a plain `new Request` over the socket's stream,
 * and the answer's bytes written with their length. Kept in the tests so the Fetch adapter is
 * not served by oncely's own toNodeListener, whose Request knows its body already.
 */
export function fetchBridge(
  handler: (request: Request) => Promise<Response>,
): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const headers = new Headers();
    for (let i = 0; i + 1 < req.rawHeaders.length; i += 2)
      headers.append(req.rawHeaders[i] as string, req.rawHeaders[i + 1] as string);
    const method = req.method ?? 'GET';
    const body =
      method === 'GET' || method === 'HEAD' ? null : (Readable.toWeb(req) as ReadableStream);
    const request = new Request(`http://${req.headers.host ?? 'localhost'}${req.url ?? '/'}`, {
      method,
      headers,
      body,
      duplex: 'half',
    } as RequestInit);
    const answer = async (): Promise<void> => {
      const response = await handler(request);
      const bytes = Buffer.from(await response.arrayBuffer());
      res.statusCode = response.status;
      for (const [name, value] of response.headers) res.setHeader(name, value);
      res.end(bytes); // unsent headers and a whole body: node writes Content-Length
    };
    answer().catch((error: unknown) => res.destroy(error as Error));
  };
}
