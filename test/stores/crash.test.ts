import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, DEFAULT_LEDGER_OPTIONS, jsonReceipt } from '#oncely/ledger/index.js';
import { VirtualClock } from '#oncely/time/index.js';
import { openFixtureStore, type FixtureTarget } from '../fixtures/ledger-fixture-store.js';
import {
  describePostgres,
  dropSchema,
  uniqueSchemaName,
  type PostgresTests,
} from './postgres-env.js';
import { spawnUntilReady } from '../support/ready-child.js';
import { tempDir } from '../support/temp-dir.js';

/**
 * The crash test: a worker killed with SIGKILL between the effect and the commit leaves
 * neither the effect nor the receipt, only its claim, which blocks the key until the lease
 * expires (not for the retention); one killed after the commit leaves both. Either way a retry
 * with the same key converges to one effect.
 */
const CHILD = fileURLToPath(new URL('../fixtures/ledger-crash-child.js', import.meta.url));
const START_AT = 1_700_000_000_000;
/** The child runs with the default lease (renewed by its heartbeat until it is killed). */
const LEASE_MS = DEFAULT_LEDGER_OPTIONS.leaseMs;

/**
 * Starts the child, waits for its "ready" line, runs `beforeKill` with it (the serving child's
 * requests), kills it with SIGKILL, waits for it to die.
 */
async function runAndKill(
  target: FixtureTarget,
  killPoint: string,
  key: string,
  beforeKill: (ready: string) => Promise<void> = async () => {},
): Promise<string> {
  const child = await spawnUntilReady([
    CHILD,
    JSON.stringify(target),
    killPoint,
    String(START_AT),
    key,
  ]);
  const { ready } = child;
  if (ready === undefined) assert.fail(`the child never got ready: ${child.stderr()}`);
  let died: Promise<NodeJS.Signals | null>;
  try {
    await beforeKill(ready);
  } finally {
    died = child.kill();
  }
  assert.equal(await died, 'SIGKILL');
  return ready;
}

function crashSuite(
  name: string,
  target: () => FixtureTarget,
  options: PostgresTests['options'],
): void {
  describe(`crash test: ${name}`, options, () => {
    it('killed between the effect and the commit: neither effect nor receipt; the key waits for the lease only', async () => {
      const t = target();
      assert.equal(await runAndKill(t, 'before-commit', 'k-before'), 'ready effect-written');
      const fixture = await openFixtureStore(t);
      try {
        const clock = new VirtualClock({ startAt: START_AT });
        const ledger = createLedger({ store: fixture.store, clock, leaseMs: LEASE_MS });
        assert.equal(
          await fixture.countEffects('k-before'),
          0,
          'the effect rolled back with the open transaction',
        );
        const seen = await ledger.lookup('crash', 'k-before');
        assert.equal(seen.kind, 'in_flight', 'only the claim survives');

        const run = () =>
          ledger.execute(
            { scope: 'crash', key: 'k-before', fingerprint: 'fp-crash' },
            async (tx) => {
              await fixture.writeEffect(tx, 'k-before');
              return jsonReceipt(201, { key: 'k-before' });
            },
          );
        const early = await run();
        assert.equal(early.kind, 'in_flight');
        if (early.kind === 'in_flight') assert.equal(early.retryAfterMs, LEASE_MS);
        await clock.advance(LEASE_MS);
        assert.equal(
          (await run()).kind,
          'executed',
          'after the lease, not the retention, the retry runs',
        );
        assert.equal((await run()).kind, 'replayed');
        assert.equal(await fixture.countEffects('k-before'), 1);
      } finally {
        await fixture.close();
      }
    });

    it('killed after the commit: both effect and receipt stay; the retry replays', async () => {
      const t = target();
      assert.equal(await runAndKill(t, 'after-commit', 'k-after'), 'ready executed');
      const fixture = await openFixtureStore(t);
      try {
        const ledger = createLedger({
          store: fixture.store,
          clock: new VirtualClock({ startAt: START_AT }),
        });
        assert.equal(await fixture.countEffects('k-after'), 1);
        const retry = await ledger.execute(
          { scope: 'crash', key: 'k-after', fingerprint: 'fp-crash' },
          () => assert.fail('must replay'),
        );
        assert.equal(retry.kind, 'replayed');
        assert.equal(await fixture.countEffects('k-after'), 1);
      } finally {
        await fixture.close();
      }
    });
  });
}

/** Keyed requests the serving child acknowledges before it is killed. */
const ACKNOWLEDGED = 24;

/** Sends ACKNOWLEDGED keyed POSTs at once to the serving child and waits for every answer to be 2xx. */
async function acknowledgedKeys(ready: string): Promise<string[]> {
  const port = Number(/^ready listening (\d+)$/.exec(ready)?.[1]);
  const keys = Array.from({ length: ACKNOWLEDGED }, (_, i) => `k-served-${i}`);
  const statuses = await Promise.all(
    keys.map(async (key) => {
      const response = await fetch(`http://127.0.0.1:${port}/effects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ note: key }),
      });
      await response.arrayBuffer();
      return response.status;
    }),
  );
  assert.deepEqual(
    statuses,
    keys.map(() => 201),
    'every request acknowledged before the kill',
  );
  return keys;
}

/** Keyed requests sent together just before the kill; it comes once the first few are answered. */
const IN_FLIGHT = 60;
const KILL_AFTER_ANSWERS = 6;

/**
 * Sends IN_FLIGHT keyed POSTs at once and returns when KILL_AFTER_ANSWERS of them have been
 * answered 201 (those are acknowledged too), the others still on their way: answered but not
 * read yet, committed but not answered, in the open batch, or not read by the app at all.
 */
async function keysInFlight(ready: string): Promise<{ answered: string[]; unanswered: string[] }> {
  const port = Number(/^ready listening (\d+)$/.exec(ready)?.[1]);
  const keys = Array.from({ length: IN_FLIGHT }, (_, i) => `k-flight-${i}`);
  const answered: string[] = [];
  await new Promise<void>((enough) => {
    for (const key of keys)
      fetch(`http://127.0.0.1:${port}/effects`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
        body: JSON.stringify({ note: key }),
      }).then(
        (response) => {
          if (response.status === 201) answered.push(key);
          if (answered.length === KILL_AFTER_ANSWERS) enough();
        },
        () => {}, // killed before it answered: that is the point
      );
  });
  return { answered: [...answered], unanswered: keys.filter((key) => !answered.includes(key)) };
}

function servedCrashSuite(name: string, target: () => FixtureTarget): void {
  describe(`crash test: ${name}, killed after acknowledged requests through oncely/express`, () => {
    it('finds every acknowledged receipt and exactly one effect for each; the rest all or nothing', async () => {
      const t = target();
      let acknowledged: string[] = [];
      let unanswered: string[] = [];
      const ready = await runAndKill(t, 'serving', '-', async (line) => {
        acknowledged = await acknowledgedKeys(line);
        const flight = await keysInFlight(line);
        acknowledged.push(...flight.answered);
        unanswered = flight.unanswered;
      });
      assert.match(ready, /^ready listening \d+$/);
      assert.equal(acknowledged.length, ACKNOWLEDGED + KILL_AFTER_ANSWERS);
      const fixture = await openFixtureStore(t);
      try {
        const ledger = createLedger({
          store: fixture.store,
          clock: new VirtualClock({ startAt: START_AT }),
        });
        for (const key of acknowledged) {
          const seen = await ledger.lookup('crash', key);
          assert.equal(seen.kind, 'found', `${key}: its receipt survived`);
          if (seen.kind === 'found') assert.equal(seen.receipt.status, 201);
          assert.equal(await fixture.countEffects(key), 1, `${key}: one effect`);
        }
        // A request the kill cut short left its effect and its receipt together, or neither (a
        // claim it wrote blocks its key for one lease, then a retry runs it once).
        for (const key of unanswered) {
          const seen = await ledger.lookup('crash', key);
          const effects = await fixture.countEffects(key);
          assert.equal(
            effects,
            seen.kind === 'found' ? 1 : 0,
            `${key}: ${seen.kind}, ${effects} effect(s)`,
          );
        }
      } finally {
        await fixture.close();
      }
    });
  });
}

const dir = tempDir('oncely-crash-');
crashSuite('sqlite', () => ({ kind: 'sqlite', file: join(dir, 'crash.db') }), {});
servedCrashSuite("sqlite at durability 'process'", () => ({
  kind: 'sqlite',
  file: join(dir, 'served-process.db'),
  durability: 'process',
}));

await describePostgres('the crash test', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_crash');
  if (url) after(() => dropSchema(url, schema));
  crashSuite('postgres', () => ({ kind: 'postgres', url, schema }), options);
});
