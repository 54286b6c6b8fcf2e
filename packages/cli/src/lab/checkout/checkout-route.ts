import type { SqlHandle } from 'oncely';
import { idempotencyOf, type RouteIdempotency } from 'oncely/fetch';

/**
 * The checkout of `oncely lab checkout` (docs/steps.md): charge the card at a payment service, write
 * the order, queue the confirmation email as an outbox intent. Two versions of one route, both
 * behind the ledger: the naive one does it all in the route's transaction, the stepped one makes
 * each part a recovery point with `step(name, fn)`. This file runs in Node and in the browser.
 */

/** Where a server may die while it handles a checkout: at the step boundaries. */
export const CHECKOUT_KILL_POINTS = ['in-charge', 'after-charge', 'before-receipt'] as const;
export type CheckoutKillPoint = (typeof CHECKOUT_KILL_POINTS)[number];

export const KILL_POINT_MEANING: Readonly<Record<CheckoutKillPoint, string>> = {
  'in-charge': 'the payment service charged; the server dies before the charge is recorded',
  'after-charge': 'the charge is recorded; the server dies before the order is written',
  'before-receipt': 'charge, order and email done; the server dies before the answer is stored',
};

export const CHECKOUT_HANDLERS = ['naive', 'stepped'] as const;
export type CheckoutHandler = (typeof CHECKOUT_HANDLERS)[number];

export const HANDLER_MEANING: Readonly<Record<CheckoutHandler, string>> = {
  naive: "the whole checkout in the route's transaction; the charge is a plain call, no key",
  stepped:
    "step('charge'), step('order'), step('email'): each a recovery point; the charge sends step.key",
};

/** What a write gets: the transaction (of the route, or of a step) and its SQL handle. */
export interface CheckoutTx<Tx> {
  readonly tx: Tx;
  readonly sql: SqlHandle;
}

/** The checkout's world: the payment service, the database, and where the server may die. */
export interface CheckoutWorld<Tx> {
  /** Charges the order's card; `key` is sent as the payment service's Idempotency-Key. */
  charge(order: string, amountCents: number, key: string | undefined): Promise<string>;
  saveOrder(within: CheckoutTx<Tx>, order: string, charge: string): Promise<void>;
  /** Records the confirmation email as an outbox intent inside `within` (journal.recordWithin). */
  queueEmail(within: CheckoutTx<Tx>, order: string, charge: string): Promise<void>;
  /** Passes `point`; never settles when the server is to die there. */
  reach(order: string, point: CheckoutKillPoint): Promise<void>;
}

/** The request's body. */
export interface CheckoutOrder {
  readonly order: string;
  readonly amountCents: number;
}

/** The route of one handler kind, to wrap in oncely's guard (`idempotentHandler`). */
export function checkoutRoute<Tx>(
  kind: CheckoutHandler,
  world: CheckoutWorld<Tx>,
): (request: Request) => Promise<Response> {
  return async (request) => {
    const context = idempotencyOf<Tx>(request);
    if (context === undefined) return Response.json({ error: 'no key' }, { status: 400 });
    const { order, amountCents } = (await request.json()) as CheckoutOrder;
    const charge =
      kind === 'naive'
        ? await naiveCheckout(world, context, order, amountCents)
        : await steppedCheckout(world, context.step, order, amountCents);
    await world.reach(order, 'before-receipt');
    return Response.json({ order, charge, status: 'confirmed' }, { status: 201 });
  };
}

/** As a handler is written before steps: one transaction, which a killed server never commits. */
async function naiveCheckout<Tx>(
  world: CheckoutWorld<Tx>,
  context: CheckoutTx<Tx>,
  order: string,
  amountCents: number,
): Promise<string> {
  const charge = await world.charge(order, amountCents, undefined);
  await world.reach(order, 'in-charge');
  await world.reach(order, 'after-charge');
  await world.saveOrder(context, order, charge);
  await world.queueEmail(context, order, charge);
  return charge;
}

/** Each part a recovery point: a retry skips the parts whose result is recorded. */
async function steppedCheckout<Tx>(
  world: CheckoutWorld<Tx>,
  step: RouteIdempotency<Tx>['step'],
  order: string,
  amountCents: number,
): Promise<string> {
  const charge = await step('charge', async ({ key }) => {
    const id = await world.charge(order, amountCents, key);
    await world.reach(order, 'in-charge');
    return id;
  });
  await world.reach(order, 'after-charge');
  await step('order', (within) => world.saveOrder(within, order, charge));
  await step('email', (within) => world.queueEmail(within, order, charge));
  return charge;
}
