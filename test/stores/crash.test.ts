import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { createLedger, DEFAULT_LEDGER_OPTIONS, jsonReceipt } from '../../src/ledger/index.js';
import { VirtualClock } from '../../src/time/index.js';
import { openFixtureStore, type FixtureTarget } from '../fixtures/ledger-fixture-store.js';
import {
  describePostgres,
  dropSchema,
  uniqueSchemaName,
  type PostgresTests,
} from './postgres-env.js';

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

/** Starts the child, waits for its "ready" line, kills it with SIGKILL, waits for it to die. */
async function runAndKill(target: FixtureTarget, killPoint: string, key: string): Promise<string> {
  const child = spawn(
    process.execPath,
    [CHILD, JSON.stringify(target), killPoint, String(START_AT), key],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on('exit', (_code, signal) => resolve(signal)),
  );
  const lines = createInterface({ input: child.stdout });
  let ready: string | undefined;
  for await (const line of lines) {
    if (line.startsWith('ready')) {
      ready = line;
      break;
    }
  }
  if (ready === undefined) assert.fail(`the child never got ready: ${stderr}`);
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');
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

const dir = mkdtempSync(join(tmpdir(), 'oncely-crash-'));
after(() => rmSync(dir, { recursive: true, force: true }));
crashSuite('sqlite', () => ({ kind: 'sqlite', file: join(dir, 'crash.db') }), {});

await describePostgres('the crash test', ({ url, options }) => {
  const schema = uniqueSchemaName('oncely_crash');
  if (url) after(() => dropSchema(url, schema));
  crashSuite('postgres', () => ({ kind: 'postgres', url, schema }), options);
});
