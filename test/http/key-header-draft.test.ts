// The IETF Idempotency-Key draft's header, point by point, against the four framework adapters:
// what one key is on the wire (RFC 9651 Item, sf-string or bare), what is refused and why, the
// problem's link to its docs, the minimum key length, the payload option and the scopeOf warning.
import { request as httpRequest } from 'node:http';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { DEFAULT_PROBLEM_TYPE_BASE } from '#oncely/http/problem.js';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStore } from '#oncely/stores/memory/index.js';
import { FRAMEWORK_APPS, type Options, type RunningApp } from './framework-apps.js';

const ORDER = '{"item":"tea","qty":2}';
const UUID = '8e03978e-40d5-43e8-bc93-6894a57f9324';

interface Answer {
  readonly status: number;
  readonly headers: Record<string, string | string[] | undefined>;
  readonly body: Record<string, unknown>;
}

/**
 * A POST through node:http, whose header values may be arrays: `['a', 'b']` goes out as two
 * Idempotency-Key fields, which fetch cannot send (its Headers joins them into one).
 */
function post(
  app: RunningApp,
  key: string | string[],
  body = ORDER,
  token = 'token-alice',
): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(`${app.url}/orders`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        authorization: `Bearer ${token}`,
        'idempotency-key': key,
      },
    });
    sent.on('error', reject);
    sent.on('response', (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({
          status: response.statusCode ?? 0,
          headers: response.headers,
          body: text === '' ? {} : (JSON.parse(text) as Record<string, unknown>),
        }),
      );
    });
    sent.end(body);
  });
}

function assertInvalidKey(answer: Answer, why: RegExp): void {
  assert.equal(answer.status, 400);
  assert.equal(answer.body['code'], 'invalid_key');
  assert.match(String(answer.body['detail']), why);
}

const memoryLedger = () => createLedger({ store: createMemoryStore() });

for (const framework of FRAMEWORK_APPS) {
  describe(`${framework.name}: the Idempotency-Key field as the draft writes it`, () => {
    let app: RunningApp;
    before(async () => {
      app = await framework.start({ ledger: memoryLedger(), onError: () => {} }, true);
    });
    after(() => app.close());

    it('two Idempotency-Key fields are 400, saying the field holds more than one value', async () => {
      const runs = app.book.runs;
      assertInvalidKey(await post(app, ['"k-two-1"', '"k-two-2"']), /list of 2 values/);
      assertInvalidKey(await post(app, ['k-two-1', 'k-two-2']), /list of 2 values/);
      assertInvalidKey(await post(app, [UUID, UUID]), /comma: a list, or the field sent twice/);
      assert.equal(app.book.runs, runs, 'the route never ran');
    });

    it('parameters are 400, naming them', async () => {
      assertInvalidKey(await post(app, '"k-param";v=1'), /parameters \(;v\)/);
      assertInvalidKey(await post(app, 'k-param;v=1'), /parameters \(;v\)/);
      assertInvalidKey(await post(app, `${UUID};v=1`), /semicolon/);
    });

    it('a bare token and the sf-string of the same text are one key: each replays the other', async () => {
      const first = await post(app, 'abc-token');
      assert.equal(first.status, 201);
      const quoted = await post(app, '"abc-token"');
      assert.equal(quoted.status, 201);
      assert.equal(quoted.headers['idempotent-replayed'], 'true');
      assert.deepEqual(quoted.body, first.body);
      const escaped = await post(app, '"q\\"k"');
      assert.equal(escaped.status, 201);
      assert.equal(app.book.keys.at(-1), 'q"k', 'the escape is undone');
    });

    it('a list, or a bare key with commas, is 400 (key,with,commas,longer-than-twenty-chars)', async () => {
      assertInvalidKey(await post(app, '"a", "b"'), /list of 2 values/);
      assertInvalidKey(await post(app, 'key,with,commas,longer-than-twenty-chars'), /list of 4/);
      assertInvalidKey(await post(app, `${UUID},${UUID}`), /comma/);
    });

    it('a bare UUID is accepted, and the route sees the UUID as the key', async () => {
      const answer = await post(app, UUID);
      assert.equal(answer.status, 201);
      assert.equal(app.book.keys.at(-1), UUID);
      assert.equal((await post(app, `"${UUID}"`)).headers['idempotent-replayed'], 'true');
    });

    it("the problem's type links to its docs section, and Link: rel=describedby repeats it", async () => {
      const answer = await post(app, '"unterminated');
      assertInvalidKey(answer, /quoted string/);
      const type = `${DEFAULT_PROBLEM_TYPE_BASE}invalid-key`;
      assert.equal(answer.body['type'], type);
      assert.equal(answer.headers['link'], `<${type}>; rel="describedby"`);
    });
  });

  describe(`${framework.name}: minKeyLength, payloadOf and the scopeOf warning`, () => {
    it('minKeyLength refuses a shorter key, naming the option, and takes a UUID', async () => {
      const app = await framework.start({ ledger: memoryLedger(), minKeyLength: 16 }, true);
      try {
        assertInvalidKey(await post(app, 'short-key'), /at least 16 \(minKeyLength\)/);
        assert.equal((await post(app, UUID)).status, 201);
      } finally {
        await app.close();
      }
    });

    it('payloadOf without the client timestamp: a new sentAt replays, another item is 422', async () => {
      const withoutSentAt: Options['payloadOf'] = ({ body }) => {
        const { sentAt: _sentAt, ...rest } = JSON.parse(new TextDecoder().decode(body)) as Record<
          string,
          unknown
        >;
        return rest;
      };
      const app = await framework.start({ ledger: memoryLedger(), payloadOf: withoutSentAt }, true);
      try {
        const order = (item: string, sentAt: number) => JSON.stringify({ item, qty: 2, sentAt });
        assert.equal((await post(app, 'k-stamped', order('tea', 1))).status, 201);
        const retried = await post(app, 'k-stamped', order('tea', 2));
        assert.equal(retried.status, 201);
        assert.equal(retried.headers['idempotent-replayed'], 'true');
        const changed = await post(app, 'k-stamped', order('cake', 3));
        assert.equal(changed.status, 422);
        assert.equal(changed.body['code'], 'key_reused');
        assert.equal(app.book.runs, 1);
      } finally {
        await app.close();
      }
    });

    it('without scopeOf, one warning when the middleware is made; with scopeOf, none', async () => {
      const warnings: string[] = [];
      const onWarning = (message: string) => void warnings.push(message);
      const unscoped = await framework.start({ ledger: memoryLedger(), onWarning }, false);
      await post(unscoped, 'k-warn');
      await post(unscoped, 'k-warn-2');
      await unscoped.close();
      assert.equal(warnings.length, 1, 'once per middleware, not per request');
      assert.match(warnings[0] ?? '', /no scopeOf/);
      assert.match(warnings[0] ?? '', /every caller shares one key space/);
      assert.match(warnings[0] ?? '', /another's Idempotency-Key is replayed the other's/);
      assert.doesNotMatch(warnings[0] ?? '', /\n/, 'one line');
      const scoped = await framework.start({ ledger: memoryLedger(), onWarning }, true);
      await scoped.close();
      assert.equal(warnings.length, 1);
    });
  });
}
