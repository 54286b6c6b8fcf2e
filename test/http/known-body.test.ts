import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  createIdempotencyMiddleware,
  toNodeListener,
  withIdempotency,
} from '#oncely/http/index.js';
import { knownRequestBody, requestOfBytes, responseOfBytes } from '#oncely/http/known-body.js';
import { READ_AHEAD_BYTES } from '#oncely/http/node-listener.js';
import { NodeRequest } from '#oncely/http/node-request.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';

const bytes = new TextEncoder().encode('{"amount":1}');
const keyed = (body = bytes) =>
  requestOfBytes(
    'http://localhost/notes',
    { method: 'POST', headers: { 'idempotency-key': 'k1' } },
    body,
  );

function middleware(validate?: (request: Request) => Promise<void>) {
  return createIdempotencyMiddleware({
    ledger: createLedger({ store: createMemoryStore() }),
    ...(validate
      ? {
          validate: async ({ request }) => (
            await validate(request), { ok: true, value: undefined }
          ),
        }
      : {}),
  });
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

describe('bodies oncely already holds as bytes', () => {
  it('the handler gets the very Request whose body the adapter read, its body still unread', async () => {
    const sent = keyed();
    let same = false;
    let text = '';
    const answer = await middleware()(sent, async (received) => {
      same = received === sent;
      text = await received.text();
      return new Response('ok', { status: 201 });
    });
    assert.equal(answer.status, 201);
    assert.ok(same, 'no copy of the request was made');
    assert.equal(text, '{"amount":1}');
  });

  it('a body something else read first is handed on as a copy with the same bytes', async () => {
    const sent = keyed();
    let same = true;
    let text = '';
    const guard = middleware(async (request) => void (await request.text()));
    await guard(sent, async (received) => {
      same = received === sent;
      text = await received.text();
      return new Response('ok', { status: 201 });
    });
    assert.equal(same, false);
    assert.equal(text, '{"amount":1}');
    assert.equal(knownRequestBody(sent), undefined, 'a read body is not known any more');
  });

  it('node:http: small bodies are read ahead into a known Request, larger ones streamed', async () => {
    const seen: Array<[number, boolean]> = [];
    const server = createServer(
      toNodeListener(async (request) => {
        const known = knownRequestBody(request) !== undefined;
        seen.push([(await request.arrayBuffer()).byteLength, known]);
        return new Response(null, { status: 204 });
      }),
    );
    const url = await listen(server);
    try {
      for (const size of [10, READ_AHEAD_BYTES, READ_AHEAD_BYTES + 1])
        await fetch(url, { method: 'POST', body: new Uint8Array(size) });
      assert.deepEqual(seen, [
        [10, true],
        [READ_AHEAD_BYTES, true],
        [READ_AHEAD_BYTES + 1, false],
      ]);
    } finally {
      server.close();
    }
  });

  it('node:http: an answer made from bytes is written whole, with its Content-Length; a stream is chunked', async () => {
    const server = createServer(
      toNodeListener((request) =>
        request.url.endsWith('/bytes')
          ? responseOfBytes(bytes, { status: 201, headers: { 'content-type': 'application/json' } })
          : new Response(new Blob([bytes]).stream(), { status: 201 }),
      ),
    );
    const url = await listen(server);
    try {
      const made = await fetch(`${url}/bytes`);
      assert.equal(made.headers.get('content-length'), String(bytes.byteLength));
      assert.equal(await made.text(), '{"amount":1}');
      const streamed = await fetch(`${url}/stream`);
      assert.equal(streamed.headers.get('transfer-encoding'), 'chunked');
      assert.equal(await streamed.text(), '{"amount":1}');
    } finally {
      server.close();
    }
  });

  it('a replay through the adapter carries the stored bytes and Idempotent-Replayed', async () => {
    const guard = middleware();
    const handler = withIdempotency(guard, async () => Response.json({ n: 1 }, { status: 201 }));
    const server = createServer(toNodeListener(handler));
    const url = await listen(server);
    try {
      const post = () =>
        fetch(`${url}/notes`, { method: 'POST', headers: { 'idempotency-key': 'k1' }, body: '{}' });
      const first = await post();
      const again = await post();
      assert.equal(first.status, 201);
      assert.equal(again.status, 201);
      assert.equal(again.headers.get('idempotent-replayed'), 'true');
      assert.equal(await again.text(), await first.text());
    } finally {
      server.close();
    }
  });
});

describe('NodeRequest: a Request made from bytes the node adapter read', () => {
  const make = (signal = new AbortController().signal) =>
    new NodeRequest(
      new URL('http://localhost/notes'),
      'POST',
      new Headers({ 'content-type': 'application/json' }),
      bytes,
      signal,
    );

  it('reads its body once, like any Request: a second read and a clone after it fail', async () => {
    const request = make();
    assert.equal(request.bodyUsed, false);
    assert.deepEqual(await request.json(), { amount: 1 });
    assert.equal(request.bodyUsed, true);
    await assert.rejects(request.text(), TypeError);
    assert.throws(() => request.clone(), TypeError);
    assert.equal(knownRequestBody(request), undefined);
  });

  it('answers text, arrayBuffer and blob from the bytes, and a copy of it still carries them', async () => {
    assert.equal(await make().text(), '{"amount":1}');
    assert.equal(new TextDecoder().decode(await make().arrayBuffer()), '{"amount":1}');
    const blob = await make().blob();
    assert.equal(blob.type, 'application/json');
    assert.equal(await blob.text(), '{"amount":1}');
    assert.equal(await make().clone().text(), '{"amount":1}');
    assert.equal(await new Request(make()).text(), '{"amount":1}', 'its real body is there too');
    const streamed = make();
    assert.equal(await new Response(streamed.body).text(), '{"amount":1}');
    await assert.rejects(streamed.text(), TypeError, 'read through its stream: used');
  });

  it("its signal is the adapter's own: it aborts when the adapter's does", () => {
    const aborter = new AbortController();
    const request = make(aborter.signal);
    assert.equal(request.signal, aborter.signal);
    aborter.abort();
    assert.equal(request.signal.aborted, true);
  });
});
