// One request path: through the whole server, a keyed request's body is read once and its caller
// resolved once, whichever service answers it (dropbox, notes, hooks). Every Request built while
// handling it is watched, so a service that reads the body and hands the middleware a rebuilt
// copy to read again is caught, as is a second call to the caller lookup.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createCallers, type Callers } from '#cli/serve/callers.js';
import { createServerApp, type ServerApp } from '#cli/serve/create-server-app.js';
import { openBackend, type AnyBackend, type Backend } from '#cli/serve/open-backend.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';
import { bearer, TOKENS } from './server-harness.js';

let dataDir: string;
let backend: AnyBackend;
let app: ServerApp<unknown>;
const counts = { scopeResolutions: 0, bodyReads: 0 };

before(async () => {
  dataDir = await mkdtemp(join(tmpdir(), 'oncely-path-'));
  backend = await openBackend({ dataDir });
  const real = createCallers({ devToken: TOKENS.dev });
  const callers: Callers = {
    names: real.names,
    callerOf: (token) => {
      counts.scopeResolutions++;
      return real.callerOf(token);
    },
  };
  app = await createServerApp<unknown>({
    backend: backend as Backend<unknown>,
    callers,
    clock: new VirtualClock({ startAt: Date.UTC(2026, 8, 14) }),
  });
});
after(async () => {
  await backend.close();
  await rm(dataDir, { recursive: true, force: true });
});

/** Runs `fn` while every Request constructed counts the readers taken on its body. */
async function watchingRequests<T>(fn: (WatchedRequest: typeof Request) => Promise<T>): Promise<T> {
  const Original = globalThis.Request;
  class WatchedRequest extends Original {
    constructor(input: RequestInfo | URL, init?: RequestInit) {
      super(input, init);
      const stream = super.body;
      if (stream !== null) {
        const getReader = stream.getReader.bind(stream) as ReadableStream['getReader'];
        Object.defineProperty(stream, 'getReader', {
          value: (...args: Parameters<ReadableStream['getReader']>) => {
            counts.bodyReads++;
            return getReader(...args);
          },
        });
      }
    }
  }
  globalThis.Request = WatchedRequest;
  try {
    return await fn(WatchedRequest);
  } finally {
    globalThis.Request = Original;
  }
}

const CASES = [
  {
    service: 'dropbox',
    method: 'POST',
    path: '/dropbox/submissions',
    body: '{"student":"achen","assignment":"lab3"}',
    status: 201,
  },
  {
    service: 'notes',
    method: 'PATCH',
    path: '/notes/note-1',
    body: '{"expectedVersion":1,"title":"Agenda, moved"}',
    status: 200,
  },
  {
    service: 'hooks',
    method: 'POST',
    path: '/hooks/run-complete',
    body: '{"run_id":"run-9"}',
    status: 200,
  },
] as const;

for (const c of CASES) {
  test(`${c.service}: one body read and one caller lookup per request, for a first answer, a replay and a refusal`, async () => {
    const send = (body: string, key = `${c.service}-key`) =>
      watchingRequests(async (WatchedRequest) => {
        counts.scopeResolutions = 0;
        counts.bodyReads = 0;
        const request = new WatchedRequest(`http://oncely.test${c.path}`, {
          method: c.method,
          headers: {
            authorization: bearer(TOKENS.dev),
            'idempotency-key': key,
            'content-type': 'application/json',
          },
          body,
        });
        const response = await app.fetch(request);
        await response.arrayBuffer();
        assert.equal(request.bodyUsed, true, 'the body was read');
        return {
          status: response.status,
          replayed: response.headers.get('idempotent-replayed'),
          ...counts,
        };
      });
    assert.deepEqual(await send(c.body), {
      status: c.status,
      replayed: null,
      scopeResolutions: 1,
      bodyReads: 1,
    });
    assert.deepEqual(await send(c.body), {
      status: c.status,
      replayed: 'true',
      scopeResolutions: 1,
      bodyReads: 1,
    });
    // A body the service refuses (the hooks take any body: a reused key instead).
    const refused = await send(
      c.service === 'hooks' ? '{"run_id":"other"}' : '{"nope":1}',
      c.service === 'hooks' ? `${c.service}-key` : `${c.service}-bad`,
    );
    assert.deepEqual([refused.scopeResolutions, refused.bodyReads], [1, 1]);
    assert.equal(refused.status, 422);
  });
}
