// How the client writes the key: the IETF draft's sf-string by default (section 2.1, RFC 9651
// section 3.3.3), the bare text for a server that takes the header's raw text as the key. Both
// against a real server behind the ledger, so "the same key" is what the receiver says it is.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createClient } from '#oncely/client/fetch-client.js';
import { isInvalidOptionError } from '#oncely/contract/errors.js';
import { idempotentListener } from '#oncely/http/node/index.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';

describe('the client writes the Idempotency-Key as the server reads it', () => {
  const fields: Array<string | undefined> = [];
  let runs = 0;
  let url = '';
  const server = createServer(
    idempotentListener(
      { ledger: createLedger({ store: createMemoryStore() }), scopeOf: () => 'client-test' },
      (_req: IncomingMessage, res: ServerResponse) => {
        runs++;
        res.writeHead(201, { 'content-type': 'text/plain' }).end(`run ${runs}`);
      },
    ),
  );
  server.on('request', (req: IncomingMessage) =>
    fields.push(req.headers['idempotency-key'] as string),
  );
  before(async () => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/orders`;
  });
  after(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it('sends "k" by default, escapes included, and the server reads k', async () => {
    const { response } = await createClient().request(url, {
      method: 'POST',
      body: '{}',
      idempotencyKey: 'order-"7"',
    });
    assert.equal(response.status, 201);
    assert.equal(fields.at(-1), '"order-\\"7\\""');
  });

  it("sends the bare key with keyHeaderForm: 'bare', and that is the same key: a replay", async () => {
    const bare = createClient({ keyHeaderForm: 'bare' });
    const { response } = await bare.request(url, {
      method: 'POST',
      body: '{}',
      idempotencyKey: 'order-8',
    });
    assert.equal(fields.at(-1), 'order-8');
    assert.equal(await response.text(), `run ${runs}`);
    const { response: again } = await createClient().request(url, {
      method: 'POST',
      body: '{}',
      idempotencyKey: 'order-8',
    });
    assert.equal(fields.at(-1), '"order-8"');
    assert.equal(again.headers.get('idempotent-replayed'), 'true');
  });

  it('sends a header set by hand as written, and reads its key like a server', async () => {
    const { report } = await createClient().request(url, {
      method: 'POST',
      body: '{}',
      headers: { 'Idempotency-Key': '"by-hand"' },
      idempotencyKey: 'by-hand',
    });
    assert.equal(fields.at(-1), '"by-hand"');
    assert.equal(report.key, 'by-hand');
    await assert.rejects(
      createClient().request(url, { method: 'POST', headers: { 'Idempotency-Key': 'a, b' } }),
      (e) => isInvalidOptionError(e) && e.option === 'headers',
    );
  });

  it('refuses a keyHeaderForm it does not know, naming the option', () => {
    assert.throws(
      () => createClient({ keyHeaderForm: 'quoted' as never }),
      (e) => isInvalidOptionError(e) && e.option === 'keyHeaderForm',
    );
  });
});
