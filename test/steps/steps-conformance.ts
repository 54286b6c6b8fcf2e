import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, jsonReceipt, type Ledger } from '#oncely/ledger/index.js';
import type { LedgerStore } from '#oncely/ledger/ledger-store.js';
import type { StepContext } from '#oncely/ledger/steps.js';
import type { StepStore } from '#oncely/ledger/step-store.js';
import { isStepMismatchError } from '#oncely/ledger/step-errors.js';
import { stepKey } from '#oncely/contract/step-key.js';
import { VirtualClock } from '#oncely/time/virtual-clock.js';

/** One backend for the steps suite: a ledger store, its step store, and a step's own write. */
export interface StepHarness<Tx> {
  readonly store: LedgerStore<Tx>;
  readonly steps: StepStore<Tx>;
  /** Writes one row `id` in the step's transaction. */
  write(step: StepContext<Tx>, id: string): Promise<void>;
  /** Committed rows `id`. */
  count(id: string): Promise<number>;
  /** The step store drops a run's records with its receipt (StepStore.forget). */
  readonly forgets: boolean;
  close(): Promise<void>;
}

export const START_AT = 1_700_000_000_000;
const LEASE_MS = 30_000;
const RETENTION_MS = 86_400_000;
const FP = 'fp-checkout';

/** A passing failure of the handler: it threw after some steps, as a 5xx or a timeout would. */
class PassingFailure extends Error {}

/**
 * The steps suite every store with a step store passes: a retry skips the finished steps and
 * runs the rest; a failed step leaves nothing; the order is checked; retention removes them.
 * `calls` counts each step's function: a finished step run again makes these tests fail.
 */
export function runStepsConformance<Tx>(
  name: string,
  makeHarness: () => Promise<StepHarness<Tx>>,
  options: { readonly skip?: string | undefined } = {},
): void {
  describe(`steps conformance: ${name}`, { skip: options.skip ?? false }, () => {
    async function withLedger(
      fn: (s: {
        h: StepHarness<Tx>;
        clock: VirtualClock;
        ledger: Ledger<Tx>;
        calls: Map<string, number>;
        checkout: Checkout<Tx>;
      }) => Promise<void>,
    ): Promise<void> {
      const h = await makeHarness();
      const clock = new VirtualClock({ startAt: START_AT });
      let n = 0;
      const ledger = createLedger({
        store: h.store,
        steps: h.steps,
        clock,
        leaseMs: LEASE_MS,
        retentionMs: RETENTION_MS,
        generateToken: () => `token-${++n}`,
      });
      const calls = new Map<string, number>();
      try {
        await fn({ h, clock, ledger, calls, checkout: checkoutOf(h, calls) });
      } finally {
        await h.close();
      }
    }

    const req = (key: string, fingerprint = FP) => ({ scope: 'alice', key, fingerprint });

    it('a retry after a failure skips the finished steps, gets their results, and runs the rest', () =>
      withLedger(async ({ h, ledger, calls, checkout }) => {
        await assert.rejects(
          ledger.execute(req('k1'), checkout('k1', { failAfter: 'order' })),
          PassingFailure,
        );
        assert.deepEqual(Object.fromEntries(calls), { charge: 1, order: 1 });
        const retry = await ledger.execute(req('k1'), checkout('k1'));
        assert.equal(retry.kind, 'executed');
        // The mutation check: a finished step run again makes these counts 2.
        assert.deepEqual(Object.fromEntries(calls), { charge: 1, order: 1, email: 1 });
        assert.equal(await h.count('order:k1'), 1);
        assert.equal(await h.count('email:k1'), 1);
        if (retry.kind !== 'executed') return;
        const body = JSON.parse(new TextDecoder().decode(retry.receipt.body)) as Record<
          string,
          unknown
        >;
        // The charge's result is the first run's, through JSON (a Date became its string).
        assert.deepEqual(body, {
          charge: {
            id: `ch_${stepKey('alice', 'k1', 'charge')}`,
            at: new Date(START_AT).toISOString(),
          },
          order: 'order:k1',
        });
        const replay = await ledger.execute(req('k1'), checkout('k1'));
        assert.equal(replay.kind, 'replayed');
        assert.equal(calls.get('email'), 1);
      }));

    it('a step that throws leaves neither its writes nor a record, and runs again on the retry', () =>
      withLedger(async ({ h, ledger, calls, checkout }) => {
        await assert.rejects(
          ledger.execute(req('k2'), checkout('k2', { failIn: 'order' })),
          PassingFailure,
        );
        assert.equal(await h.count('order:k2'), 0);
        const retry = await ledger.execute(req('k2'), checkout('k2'));
        assert.equal(retry.kind, 'executed');
        assert.deepEqual(Object.fromEntries(calls), { charge: 1, order: 2, email: 1 });
        assert.equal(await h.count('order:k2'), 1);
      }));

    it('a failed run keeps its key: another payload gets 422, the same one resumes at once', () =>
      withLedger(async ({ ledger, checkout }) => {
        await assert.rejects(ledger.execute(req('k3'), checkout('k3', { failAfter: 'charge' })));
        const other = await ledger.execute(req('k3', 'fp-other'), checkout('k3'));
        assert.equal(other.kind, 'conflict');
        const lookup = await ledger.lookup('alice', 'k3');
        assert.equal(lookup.kind, 'in_flight');
        if (lookup.kind === 'in_flight') assert.equal(lookup.leaseExpired, true);
        assert.equal((await ledger.execute(req('k3'), checkout('k3'))).kind, 'executed');
      }));

    it("a run's records after its receipt: dropped where the store forgets, kept once taken over", () =>
      withLedger(async ({ h, ledger, checkout }) => {
        const recorded = (key: string) =>
          h.steps.resume('alice', key, START_AT, START_AT + RETENTION_MS);
        // One claim held the run from its start: no other worker can record one of its steps.
        assert.equal((await ledger.execute(req('k8'), checkout('k8'))).kind, 'executed');
        assert.equal((await recorded('k8')).length, h.forgets ? 0 : 3);
        // Resumed after a failure: an earlier owner may still run, and its next step must meet
        // the record (first writer wins), so every store keeps them until the key's retention.
        await assert.rejects(ledger.execute(req('k9'), checkout('k9', { failAfter: 'order' })));
        assert.equal((await ledger.execute(req('k9'), checkout('k9'))).kind, 'executed');
        assert.deepEqual(
          (await recorded('k9')).map((step) => step.name),
          ['charge', 'order', 'email'],
        );
        assert.equal((await ledger.execute(req('k8'), checkout('k8'))).kind, 'replayed');
      }));

    it('a retry while the first run still holds its lease gets in_flight, and runs nothing', () =>
      withLedger(async ({ ledger, calls, checkout }) => {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        const first = ledger.execute(req('k4'), checkout('k4', { holdAfter: 'charge', held }));
        while (calls.get('charge') !== 1) await new Promise((r) => setImmediate(r));
        const second = await ledger.execute(req('k4'), checkout('k4'));
        assert.equal(second.kind, 'in_flight');
        release();
        assert.equal((await first).kind, 'executed');
        assert.deepEqual(Object.fromEntries(calls), { charge: 1, order: 1, email: 1 });
      }));

    it('a worker that lost its lease mid-run: the next one resumes; each step commits once', () =>
      withLedger(async ({ h, ledger, calls, checkout }) => {
        let release!: () => void;
        const held = new Promise<void>((resolve) => (release = resolve));
        let onHold!: () => void;
        const holding = new Promise<void>((resolve) => (onHold = resolve));
        const first = ledger.execute(
          req('k5'),
          checkout('k5', { holdAfter: 'charge', held, onHold }),
        );
        await holding; // the charge is recorded
        // Another server, whose clock is past the first one's lease (its heartbeat is stopped).
        const later = new VirtualClock({ startAt: START_AT + LEASE_MS + 1 });
        const other = createLedger({
          store: h.store,
          steps: h.steps,
          clock: later,
          leaseMs: LEASE_MS,
        });
        assert.equal((await other.execute(req('k5'), checkout('k5'))).kind, 'executed');
        release();
        const stale = await first.then(
          (result) => result.kind,
          (error: unknown) => (error as { code?: string }).code,
        );
        // The stale run finds the order recorded (or its step transaction conflicts): never twice.
        assert.ok(['lease_lost', 'write_conflict'].includes(String(stale)), String(stale));
        assert.equal(calls.get('charge'), 1);
        assert.equal(await h.count('order:k5'), 1);
        assert.equal(await h.count('email:k5'), 1);
      }));

    it('a step name that differs on a retry is a StepMismatchError, not a re-run', () =>
      withLedger(async ({ ledger, calls, checkout }) => {
        await assert.rejects(ledger.execute(req('k6'), checkout('k6', { failAfter: 'order' })));
        const renamed = ledger.execute(
          req('k6'),
          checkout('k6', { rename: { order: 'order-v2' } }),
        );
        await assert.rejects(renamed, (error: unknown) => {
          assert.ok(isStepMismatchError(error));
          assert.equal(error.position, 1);
          assert.equal(error.recorded, 'order');
          assert.equal(error.called, 'order-v2');
          return true;
        });
        const reordered = ledger.execute(req('k6'), checkout('k6', { order: ['order', 'charge'] }));
        await assert.rejects(reordered, (error: unknown) => isStepMismatchError(error));
        assert.deepEqual(Object.fromEntries(calls), { charge: 1, order: 1 });
        assert.equal((await ledger.execute(req('k6'), checkout('k6'))).kind, 'executed');
      }));

    it('a final refusal after a step is stored as the answer; its replay runs nothing', () =>
      withLedger(async ({ ledger, calls, checkout }) => {
        const refused = await ledger.execute(req('k7'), checkout('k7', { refuseAfter: 'charge' }));
        assert.equal(refused.kind, 'executed');
        if (refused.kind === 'executed') assert.equal(refused.receipt.status, 402);
        const again = await ledger.execute(req('k7'), checkout('k7'));
        assert.equal(again.kind, 'replayed');
        assert.deepEqual(Object.fromEntries(calls), { charge: 1 });
      }));

    it('steps live as long as the key: the sweep deletes them with its retention, and the key starts over', () =>
      withLedger(async ({ h, clock, ledger, calls, checkout }) => {
        await assert.rejects(ledger.execute(req('k8'), checkout('k8', { failAfter: 'order' })));
        await clock.advance(RETENTION_MS - 1);
        assert.equal((await ledger.purgeExpired()).steps, 0);
        await clock.advance(1);
        const swept = await ledger.purgeExpired();
        assert.equal(swept.steps, 2);
        assert.equal((await ledger.execute(req('k8'), checkout('k8'))).kind, 'executed');
        assert.deepEqual(Object.fromEntries(calls), { charge: 2, order: 2, email: 1 });
        assert.equal(await h.count('order:k8'), 2);
      }));

    it('the first run gets each result as a retry will, through JSON', () =>
      withLedger(async ({ ledger }) => {
        const results: unknown[] = [];
        const values: unknown[] = ['id', 7, true, null, undefined, -0, Number.NaN, [1], { a: 1 }];
        const handler =
          (failAtEnd: boolean) =>
          async (
            _tx: Tx,
            _claim: unknown,
            step: Parameters<Parameters<Ledger<Tx>['execute']>[1]>[2],
          ) => {
            const got: unknown[] = [];
            for (const [i, value] of values.entries()) got.push(await step(`v${i}`, () => value));
            results.push(got);
            if (failAtEnd) throw new PassingFailure('after the steps');
            return jsonReceipt(200, {});
          };
        await assert.rejects(ledger.execute(req('k10'), handler(true)), PassingFailure);
        assert.equal((await ledger.execute(req('k10'), handler(false))).kind, 'executed');
        const [first, retried] = results as unknown[][];
        // -0 and NaN come back as JSON has them (0, null), on the first run as on the retry.
        assert.deepEqual(first, ['id', 7, true, null, undefined, 0, null, [1], { a: 1 }]);
        assert.ok(!Object.is(first![5], -0));
        assert.deepEqual(retried, first);
      }));

    it('refuses overlapping and repeated steps with a clear error', () =>
      withLedger(async ({ ledger }) => {
        const overlap = ledger.execute(req('k9'), async (_tx, _claim, step) => {
          const a = step('a', () => new Promise((r) => setImmediate(() => r(1))));
          await assert.rejects(
            step('b', () => 2),
            /await each step before the next/,
          );
          await a;
          await assert.rejects(
            step('a', () => 3),
            /called twice/,
          );
          return jsonReceipt(200, {});
        });
        assert.equal((await overlap).kind, 'executed');
      }));
  });
}

interface CheckoutOptions {
  readonly failAfter?: string;
  readonly failIn?: string;
  readonly refuseAfter?: string;
  readonly holdAfter?: string;
  readonly held?: Promise<void>;
  /** Called when the run reaches holdAfter: that step has committed. */
  readonly onHold?: () => void;
  readonly rename?: Readonly<Record<string, string>>;
  readonly order?: readonly string[];
}

type Checkout<Tx> = (
  key: string,
  options?: CheckoutOptions,
) => Parameters<Ledger<Tx>['execute']>[1];

/** Three steps: a charge (its result carries a Date), an order row, an email row. */
function checkoutOf<Tx>(h: StepHarness<Tx>, calls: Map<string, number>): Checkout<Tx> {
  return (key, o = {}) =>
    async (_tx, _claim, step) => {
      const results: Record<string, unknown> = {};
      const bodies: Record<string, (s: StepContext<Tx>) => Promise<unknown>> = {
        charge: async (s) => ({ id: `ch_${s.key}`, at: new Date(START_AT) }),
        order: async (s) => {
          await h.write(s, `order:${key}`);
          return `order:${key}`;
        },
        email: async (s) => {
          await h.write(s, `email:${key}`);
        },
      };
      for (const name of o.order ?? ['charge', 'order', 'email']) {
        const called = o.rename?.[name] ?? name;
        results[name] = await step(called, async (s) => {
          calls.set(name, (calls.get(name) ?? 0) + 1);
          const value = await bodies[name]!(s);
          if (o.failIn === name) throw new PassingFailure(`${name} failed`);
          return value;
        });
        if (o.failAfter === name) throw new PassingFailure(`after ${name}`);
        if (o.refuseAfter === name) return jsonReceipt(402, { refused: name });
        if (o.holdAfter === name) {
          o.onHold?.();
          await o.held;
        }
      }
      return jsonReceipt(201, { charge: results['charge'], order: results['order'] });
    };
}
