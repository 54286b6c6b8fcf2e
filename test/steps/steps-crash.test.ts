import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, DEFAULT_LEDGER_OPTIONS } from '#oncely/ledger/index.js';
import { stepKey } from '#oncely/contract/step-key.js';
import { VirtualClock } from '#oncely/time/index.js';
import { openFixtureStore, type FixtureTarget } from '../fixtures/ledger-fixture-store.js';
import {
  checkout,
  checkoutParts,
  KILL_POINTS,
  type KillPoint,
} from '../fixtures/steps-checkout.js';
import { describePostgres, dropSchema, uniqueSchemaName } from '../stores/postgres-env.js';
import { spawnUntilReady } from '../support/ready-child.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The steps crash test: a server killed with SIGKILL at each boundary of a three-step checkout
 * (inside the charge, after each step's commit, before the receipt), then the request retried
 * on another ledger: one charge per request at the payment mock, one order, one email intent,
 * and the finished steps are not run again.
 */
const CHILD = fileURLToPath(new URL('../fixtures/steps-crash-child.js', import.meta.url));
const START_AT = 1_700_000_000_000;
const LEASE_MS = DEFAULT_LEDGER_OPTIONS.leaseMs;

/** A payment service that dedupes by Idempotency-Key, as Stripe does, and counts every call. */
class PaymentMock {
  readonly calls = new Map<string, number>();
  readonly charges = new Map<string, string>();
  #server: Server | undefined;
  url = '';

  async start(): Promise<void> {
    this.#server = createServer((req, res) => {
      const key = String(req.headers['idempotency-key']);
      this.calls.set(key, (this.calls.get(key) ?? 0) + 1);
      if (!this.charges.has(key)) this.charges.set(key, `ch_${this.charges.size + 1}`);
      req.resume();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: this.charges.get(key) }));
    });
    await new Promise<void>((resolve) => this.#server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  close(): Promise<void> {
    return new Promise((resolve) => this.#server!.close(() => resolve()));
  }
}

async function runAndKill(target: FixtureTarget, point: KillPoint, key: string, url: string) {
  const args = [CHILD, JSON.stringify(target), point, String(START_AT), key, url];
  const child = await spawnUntilReady(args);
  const died = child.kill();
  assert.equal(child.ready, `ready ${point}`, child.stderr());
  assert.equal(await died, 'SIGKILL');
}

/** The steps the retry must run, after a kill at each point. */
const LEFT: Record<KillPoint, string[]> = {
  'in-charge': ['charge', 'order', 'email'],
  'after-charge': ['order', 'email'],
  'after-order': ['email'],
  'before-receipt': [],
};

function crashSuite(
  name: string,
  target: () => FixtureTarget,
  options: { skip?: string | boolean },
) {
  describe(`steps crash test: ${name}`, options, () => {
    const payment = new PaymentMock();
    before(() => payment.start());
    after(() => payment.close());

    for (const point of KILL_POINTS) {
      it(`killed ${point}: the retry on another server finishes with one charge, order and email`, async () => {
        const t = target();
        const key = `k-${point}`;
        await runAndKill(t, point, key, payment.url);
        const fixture = await openFixtureStore(t);
        const parts = await checkoutParts(t, fixture);
        try {
          const clock = new VirtualClock({ startAt: START_AT + LEASE_MS });
          const ledger = createLedger({ store: fixture.store, steps: parts.steps, clock });
          const ran: string[] = [];
          const hooks = { at: async () => {}, ran: (step: string) => void ran.push(step) };
          const effect = checkout(t, parts.journal, payment.url, key, hooks);
          const request = { scope: 'crash', key, fingerprint: 'fp-checkout' };
          const result = await ledger.execute(request, effect);
          assert.equal(result.kind, 'executed');
          assert.deepEqual(ran, LEFT[point], 'the finished steps are not run again');
          const chargeKey = stepKey('crash', key, 'charge');
          assert.deepEqual(
            [...payment.charges.keys()].filter((k) => k === chargeKey),
            [chargeKey],
          );
          // Killed inside the charge, before its commit: the retry calls again, under the same key.
          assert.equal(payment.calls.get(chargeKey), point === 'in-charge' ? 2 : 1);
          assert.equal(await parts.orders(key), 1);
          assert.ok(await parts.journal.get(`email:${key}`));
          const replay = await ledger.execute(request, effect);
          assert.equal(replay.kind, 'replayed');
          if (result.kind === 'executed' && replay.kind === 'replayed')
            assert.deepEqual(replay.receipt.body, result.receipt.body);
        } finally {
          await parts.close();
          await fixture.close();
        }
      });
    }
  });
}

const dir = tempDir('oncely-steps-crash-');
crashSuite('sqlite', () => ({ kind: 'sqlite', file: join(dir, 'checkout.db') }), {});

await describePostgres('the steps crash test', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_steps_crash');
  after(async () => {
    if (url) await dropSchema(url, schema);
  });
  crashSuite('postgres', () => ({ kind: 'postgres', url, schema }), options);
});
