/**
 * The route of bench/steps in three forms, over one store: `plain` calls three services and
 * writes its order with the receipt; `claims` is plain plus one extra claim of a fresh key per
 * service call (the yardstick: what a step may cost is measured against it); `steps` makes each
 * call a step (its own transaction and recovery point). The services answer at once: what is
 * measured is oncely's own work.
 */
import { createLedger, jsonReceipt, type LedgerStore, type StepStore } from 'oncely';

export const ROUTE_FORMS = ['plain', 'claims', 'steps'] as const;
export type RouteForm = (typeof ROUTE_FORMS)[number];

/** A call to another service that answers at once (a resolved promise, one turn). */
const callService = async (key: string): Promise<string> => `ok:${key.length}`;

const SERVICES = ['charge', 'reserve', 'email'] as const;

export interface BenchRoute {
  /** Runs `count` requests of `form`, `concurrency` at a time, each with a new key. */
  run(form: RouteForm, prefix: string, count: number, concurrency: number): Promise<void>;
}

export function benchRoute<Tx>(
  store: LedgerStore<Tx>,
  steps: StepStore<Tx>,
  ordersTable: string,
): BenchRoute {
  const ledger = createLedger({ store, steps });
  let token = 0;
  const extraClaim = async (key: string): Promise<void> => {
    const now = Date.now();
    await store.claim({
      scope: 'bench',
      key,
      fingerprint: 'fp',
      state: 'in_flight',
      token: `extra-${++token}`,
      firstSeenAt: now,
      leaseExpiresAt: now + 30_000,
      expiresAt: now + 86_400_000,
    });
  };
  const one = async (form: RouteForm, key: string): Promise<void> => {
    const result = await ledger.execute(
      { scope: 'bench', key, fingerprint: 'fp' },
      async (tx, _claim, step) => {
        const done: string[] = [];
        for (const name of SERVICES) {
          if (form === 'steps') done.push(await step(name, (s) => callService(s.key)));
          else done.push(await callService(`${key}:${name}`));
          if (form === 'claims') await extraClaim(`${key}:${name}`);
        }
        await store
          .sql(tx)
          .run(`INSERT INTO ${ordersTable} (id, note) VALUES ($1, $2)`, [key, done.join(',')]);
        return jsonReceipt(201, { key });
      },
    );
    if (result.kind !== 'executed') throw new Error(`bench/steps: ${key} answered ${result.kind}`);
  };
  return {
    async run(form, prefix, count, concurrency) {
      let next = 0;
      const worker = async (): Promise<void> => {
        while (next < count) await one(form, `${prefix}-${next++}`);
      };
      await Promise.all(Array.from({ length: concurrency }, worker));
    },
  };
}
