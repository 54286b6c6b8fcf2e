import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient, isRetryError, seededRandom, type Clock } from 'oncely';
import {
  createSqliteJournalStore,
  createSqliteStore,
  openSqliteDatabase,
} from 'oncely/stores/sqlite';
import {
  CHECKOUT_HANDLERS,
  type CheckoutHandler,
  type CheckoutKillPoint,
} from './checkout-route.js';
import { startPaymentMock, type PaymentMock } from './payment-mock.js';
import { ORDERS_TABLE, ServerLives } from './server-lives.js';

/** The lab's orders: each one's server is killed once, at a different step boundary. */
export const CHECKOUT_PLAN: readonly {
  order: string;
  amountCents: number;
  dieAt: CheckoutKillPoint;
}[] = [
  { order: 'order-1', amountCents: 4200, dieAt: 'in-charge' },
  { order: 'order-2', amountCents: 1999, dieAt: 'after-charge' },
  { order: 'order-3', amountCents: 750, dieAt: 'before-receipt' },
];

/** What one order came to under one handler. */
export interface CheckoutOrderResult {
  readonly order: string;
  readonly killedAt: CheckoutKillPoint;
  readonly attempts: number;
  /** The client's waits before its retries (jittered, on its virtual clock). */
  readonly waitsMs: readonly number[];
  readonly status: number | undefined;
  /** Calls the payment service got for this order, and the charges it made (not replayed). */
  readonly chargeCalls: number;
  readonly charges: number;
  readonly orders: number;
  readonly emails: number;
  /** A later retry under the same key got the same body back. */
  readonly replaySame: boolean;
}

export interface CheckoutHandlerRun {
  readonly handler: CheckoutHandler;
  readonly lives: number;
  readonly orders: readonly CheckoutOrderResult[];
}

export interface CheckoutLabResult {
  readonly seed: number;
  readonly runs: readonly CheckoutHandlerRun[];
}

/** Client retries: up to 4 attempts, 100 ms base with full jitter (virtual: a wait is a restart). */
const CLIENT = { maxAttempts: 4, baseDelayMs: 100 } as const;

/**
 * Runs the plan under each handler: a mock payment service on loopback, the checkout server as
 * a child process on a SQLite file, SIGKILLed at each order's kill point and started again while
 * oncely's client waits to retry under the same Idempotency-Key. The client's clock is virtual
 * (its wait is the restart), so the run is the same on every run of one seed.
 */
export async function runCheckoutLab(options: { seed?: number } = {}): Promise<CheckoutLabResult> {
  const seed = options.seed ?? 7;
  const runs: CheckoutHandlerRun[] = [];
  for (const [index, handler] of CHECKOUT_HANDLERS.entries())
    runs.push(await runHandler(handler, seededRandom(seed, index)));
  return { seed, runs };
}

async function runHandler(
  handler: CheckoutHandler,
  random: ReturnType<typeof seededRandom>,
): Promise<CheckoutHandlerRun> {
  const dir = mkdtempSync(join(tmpdir(), 'oncely-lab-checkout-'));
  const payment = await startPaymentMock();
  const file = join(dir, 'checkout.db');
  const port = await freePort();
  const lives = new ServerLives(
    { file, port, paymentUrl: payment.url, handler },
    [...CHECKOUT_PLAN.map(({ order, dieAt }) => ({ order, point: dieAt })), undefined],
    Date.UTC(2026, 11, 7, 12),
  );
  try {
    await lives.revive();
    let now = Date.UTC(2026, 11, 7, 12);
    const waits: number[] = [];
    // The client's wait before a retry is the time the server takes to come back.
    const clock: Clock = {
      now: () => now,
      sleep: async (ms) => {
        now += ms;
        waits.push(ms);
        await lives.revive();
      },
    };
    const client = createClient({ clock, random, ...CLIENT });
    const url = `http://127.0.0.1:${port}/checkout`;
    const results: CheckoutOrderResult[] = [];
    for (const { order, amountCents, dieAt } of CHECKOUT_PLAN) {
      waits.length = 0;
      const send = () => checkout(client, url, order, amountCents);
      const first = await send();
      const replay = await send();
      results.push({
        order,
        killedAt: dieAt,
        attempts: first.attempts,
        waitsMs: [...waits.slice(0, first.attempts - 1)],
        status: first.status,
        replaySame: first.body !== undefined && replay.body === first.body,
        ...(await effectsOf(payment, file, order)),
      });
    }
    return { handler, lives: lives.lives, orders: results };
  } finally {
    await lives.stop();
    await payment.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

async function checkout(
  client: ReturnType<typeof createClient>,
  url: string,
  order: string,
  amountCents: number,
): Promise<{ attempts: number; status: number | undefined; body: string | undefined }> {
  try {
    const { response, report } = await client.request(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ order, amountCents }),
      idempotencyKey: `checkout-${order}`,
    });
    return {
      attempts: report.attemptCount,
      status: response?.status,
      body: await response?.text(),
    };
  } catch (error) {
    if (!isRetryError(error)) throw error;
    return { attempts: error.report.attemptCount, status: undefined, body: undefined };
  }
}

/** What the payment service, the orders table and the outbox hold for one order. */
async function effectsOf(
  payment: PaymentMock,
  file: string,
  order: string,
): Promise<Pick<CheckoutOrderResult, 'chargeCalls' | 'charges' | 'orders' | 'emails'>> {
  const database = () => openSqliteDatabase(file);
  const store = createSqliteStore({ database });
  const journal = createSqliteJournalStore({ database });
  try {
    const orders = await store.read(
      (tx) =>
        tx.get<{ n: number }>(`SELECT count(*) AS n FROM ${ORDERS_TABLE} WHERE id = ?`, order)!.n,
    );
    const emails = (await journal.get(`email:${order}`)) === undefined ? 0 : 1;
    return {
      chargeCalls: payment.book.callsFor(order),
      charges: payment.book.chargesFor(order),
      orders,
      emails,
    };
  } finally {
    await journal.close();
    await store.close();
  }
}

/** A port free now, for every life of the server to listen on. */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as { port: number };
  await new Promise((resolve) => probe.close(resolve));
  return port;
}
