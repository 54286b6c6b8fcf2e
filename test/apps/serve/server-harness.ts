// Shared by the server tests: a real server on 127.0.0.1, port 0, over a throwaway SQLite file,
// and a raw HTTP client that can send what fetch refuses to (non-ASCII header bytes, any method).
import { request as httpRequest } from 'node:http';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallers } from '#cli/serve/callers.js';
import { startServer, type RunningServer, type ServerOptions } from '#cli/serve/start-server.js';

/** Tokens of the test callers (at least 16 characters, as callers.ts requires). */
export const TOKENS = {
  dev: 'dev-token-0123456789abcdef',
  alice: 'alice-token-0123456789abcdef',
  bob: 'bob-token-0123456789abcdef',
} as const;

export interface TestServer {
  readonly server: RunningServer;
  readonly url: string;
  readonly port: number;
  /** Every request-log line so far, parsed. */
  readonly logLines: Array<Record<string, unknown>>;
  close(): Promise<void>;
}

/** Starts a server with dev, alice and bob as callers, on a fresh data directory removed by close(). */
export async function startTestServer(overrides: Partial<ServerOptions> = {}): Promise<TestServer> {
  const dataDir = await mkdtemp(join(tmpdir(), 'oncely-serve-'));
  const logLines: Array<Record<string, unknown>> = [];
  const server = await startServer({
    port: 0,
    dataDir,
    callers: createCallers({
      devToken: TOKENS.dev,
      tokensEnv: `alice=${TOKENS.alice},bob=${TOKENS.bob}`,
    }),
    log: (line) => logLines.push(JSON.parse(line) as Record<string, unknown>),
    graceMs: 2000,
    // No settling at close: a test closes its server once nothing more is coming, and the 100 ms
    // that serve waits in real time for a request on its way cost each server's close that much
    // (a full run closes dozens). The shutdown tests that drain set it back.
    settleMs: 0,
    ...overrides,
  });
  return {
    server,
    url: server.url,
    port: server.port,
    logLines,
    async close() {
      await server.close();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export interface RawRequest {
  readonly method?: string;
  readonly path: string;
  /** Values are sent as latin1 bytes, so a test can send any byte a header can carry. */
  readonly headers?: Record<string, string | undefined>;
  readonly body?: string | Uint8Array;
  /** Send the body in 64 KiB chunks without a Content-Length. */
  readonly chunked?: boolean;
}

export interface RawResponse {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly text: string;
  json<T = Record<string, unknown>>(): T;
}

/** One request on its own connection; resolves with the answer, rejects when there is none. */
export function send(port: number, req: RawRequest): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(req.headers ?? {}))
      if (value !== undefined) headers[name] = value;
    const body =
      typeof req.body === 'string'
        ? Buffer.from(req.body, 'utf8')
        : req.body === undefined
          ? undefined
          : Buffer.from(req.body);
    if (body !== undefined && !req.chunked && headers['content-length'] === undefined)
      headers['content-length'] = String(body.byteLength);
    const r = httpRequest(
      {
        host: '127.0.0.1',
        port,
        method: req.method ?? 'GET',
        path: req.path,
        headers,
        agent: false,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            text,
            json: <T>() => JSON.parse(text) as T,
          });
        });
        res.on('error', reject);
      },
    );
    r.on('error', reject);
    if (body !== undefined && req.chunked) {
      for (let i = 0; i < body.byteLength; i += 65_536) r.write(body.subarray(i, i + 65_536));
      r.end();
    } else {
      r.end(body);
    }
  });
}

export const bearer = (token: string): string => `Bearer ${token}`;

/** Headers of a well-formed submission by `token` under `key`. */
export function submissionHeaders(token: string, key: string): Record<string, string> {
  return {
    authorization: bearer(token),
    'idempotency-key': key,
    'content-type': 'application/json',
  };
}

/**
 * What a caller can see of the store: dropbox rows, ledger receipts, hook hits, and the notes
 * (read without a token, the same for every caller: `notes: false` leaves them out).
 */
export async function snapshot(
  port: number,
  token: string,
  { notes = true }: { notes?: boolean } = {},
): Promise<unknown> {
  const get = async (path: string, auth = true): Promise<unknown> => {
    const response = await send(port, {
      path,
      headers: auth ? { authorization: bearer(token) } : {},
    });
    return { status: response.status, body: response.json() };
  };
  return {
    dropbox: await get('/dropbox/store'),
    receipts: await get('/ledger/receipts'),
    hooks: await get('/hooks/debug/hits'),
    ...(notes && {
      notes: await Promise.all(
        ['note-1', 'note-2', 'note-3'].map((id) => get(`/notes/${id}`, false)),
      ),
    }),
  };
}
