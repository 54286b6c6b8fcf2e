// Steps behind every framework adapter: the route charges in a step, then fails with a 500; the
// retry with the same key resumes after the charge and never charges twice.
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger } from '#oncely/ledger/index.js';
import { createMemoryStepStore, createMemoryStore } from '#oncely/stores/memory/index.js';
import { stepKey } from '#oncely/contract/step-key.js';
import { FRAMEWORK_APPS, type RunningApp } from './framework-apps.js';

const ORDER = '{"item":"tea","qty":2}';

const post = (app: RunningApp, key: string): Promise<Response> =>
  fetch(`${app.url}/orders`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      'idempotency-key': key,
      authorization: 'Bearer token-alice',
    },
    body: ORDER,
  });

for (const framework of FRAMEWORK_APPS) {
  describe(`${framework.name}: context.step`, () => {
    let app: RunningApp;
    before(async () => {
      const store = createMemoryStore();
      const ledger = createLedger({ store, steps: createMemoryStepStore(store) });
      app = await framework.start({ ledger, onError: () => {} }, true);
      app.book.stepped = true;
    });
    after(() => app.close());

    it('a 500 after the charge step: the retry resumes without charging again', async () => {
      app.book.failNext = true;
      const failed = await post(app, 'k-step');
      assert.equal(failed.status, 500);
      assert.deepEqual(app.book.charges, [stepKey('alice', 'k-step', 'charge')]);
      const retried = await post(app, 'k-step');
      assert.equal(retried.status, 201);
      const body = (await retried.json()) as { charge: string };
      assert.equal(body.charge, 'ch-1', 'the recorded result of the first run');
      assert.equal(app.book.runs, 2);
      assert.equal(app.book.charges?.length, 1, 'the finished step did not run again');
      const replay = await post(app, 'k-step');
      assert.equal(replay.headers.get('idempotent-replayed'), 'true');
      assert.deepEqual(await replay.json(), body);
      assert.equal(app.book.charges?.length, 1);
    });
  });
}
