import { HANDLER_MEANING, KILL_POINT_MEANING, type CheckoutHandler } from './checkout-route.js';
import {
  CHECKOUT_PLAN,
  type CheckoutHandlerRun,
  type CheckoutLabResult,
  type CheckoutOrderResult,
} from './checkout-lab.js';

const COLUMNS = [
  ['order', 9],
  ['killed at', 16],
  ['retries', 9],
  ['retry after', 13],
  ['charge calls', 14],
  ['charges', 9],
  ['orders', 8],
  ['emails', 8],
  ['answer', 8],
  ['replay', 0],
] as const;

/** The lab's printout: the plan, a table per handler, and the contrast in two lines. */
export function formatCheckoutLab(result: CheckoutLabResult): string {
  const lines = [
    `oncely lab checkout: a checkout server SIGKILLed between its steps, restarted, and retried under the same Idempotency-Key (seed ${result.seed})`,
    '  the checkout: charge the card (a mock payment service), write the order, queue the confirmation email (outbox)',
    ...Object.entries(HANDLER_MEANING).map(([kind, text]) => `  ${`${kind}:`.padEnd(9)}${text}`),
    "  each order's server is killed once (SIGKILL), then started again on the same database:",
    ...CHECKOUT_PLAN.map(
      ({ order, dieAt }) => `    ${order}  ${dieAt.padEnd(15)} ${KILL_POINT_MEANING[dieAt]}`,
    ),
  ];
  for (const run of result.runs) lines.push('', ...handlerTable(run));
  lines.push('', ...result.runs.map(verdict));
  return `${lines.join('\n')}\n`;
}

function handlerTable(run: CheckoutHandlerRun): string[] {
  const sum = (pick: (o: CheckoutOrderResult) => number): number =>
    run.orders.reduce((total, o) => total + pick(o), 0);
  return [
    `${run.handler} handler (${run.lives} server lives, ${run.lives - 1} kills)`,
    row(COLUMNS.map(([name]) => name)),
    ...run.orders.map((o) =>
      row([
        o.order,
        o.killedAt,
        String(o.attempts - 1),
        o.waitsMs.map((ms) => `${ms} ms`).join(', '),
        String(o.chargeCalls),
        String(o.charges),
        String(o.orders),
        String(o.emails),
        String(o.status ?? 'none'),
        o.replaySame ? 'same body' : 'DIFFERENT',
      ]),
    ),
    row([
      'total',
      '',
      String(sum((o) => o.attempts - 1)),
      '',
      String(sum((o) => o.chargeCalls)),
      String(sum((o) => o.charges)),
      String(sum((o) => o.orders)),
      String(sum((o) => o.emails)),
    ]),
  ];
}

function row(cells: readonly string[]): string {
  return `  ${cells.map((cell, i) => cell.padEnd(COLUMNS[i]![1])).join('')}`.trimEnd();
}

function verdict(run: CheckoutHandlerRun): string {
  const orders = run.orders.length;
  const charges = run.orders.reduce((total, o) => total + o.charges, 0);
  const twice = run.orders.filter((o) => o.charges > 1).length;
  const replayed = run.orders.reduce((total, o) => total + o.chargeCalls - o.charges, 0);
  const label = `${run.handler}:`.padEnd(9) as `${CheckoutHandler}:`;
  if (twice > 0)
    return `${label}${charges} charges for ${orders} orders: ${twice} ${twice === 1 ? 'card' : 'cards'} charged more than once`;
  const byKey =
    replayed === 0
      ? ''
      : ` (${replayed} charge ${replayed === 1 ? 'call' : 'calls'} repeated under the step's key, answered from the payment service's record)`;
  return `${label}${charges} charges for ${orders} orders: one each${byKey}`;
}
