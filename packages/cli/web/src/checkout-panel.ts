import { byId, h } from './dom.js';
import {
  CHECKOUT_RECORDING,
  type CheckoutOrderRecording,
  type CheckoutRecording,
} from './checkout-recording.js';

/** What each handler does, as `oncely lab checkout` prints it. */
const HANDLERS: Readonly<Record<string, string>> = {
  naive: "The whole checkout in the route's transaction; the charge is a plain call, with no key.",
  stepped:
    "step('charge'), step('order'), step('email'): each a recovery point; the charge sends the step's derived key.",
};

/** Where each order's server is killed. */
const KILL_POINTS: Readonly<Record<string, string>> = {
  'in-charge': 'the payment service charged; the server dies before the charge is recorded',
  'after-charge': 'the charge is recorded; the server dies before the order is written',
  'before-receipt': 'charge, order and email done; the server dies before the answer is stored',
};

const COLUMNS: readonly [string, keyof CheckoutOrderRecording | 'retries'][] = [
  ['Killed at', 'killedAt'],
  ['Retries', 'retries'],
  ['Charge calls', 'chargeCalls'],
  ['Charges', 'charges'],
  ['Orders', 'orders'],
  ['Emails', 'emails'],
];

/**
 * The checkout lab's panel: the recorded run of `oncely lab checkout` (child processes killed
 * with SIGKILL, which a page cannot do), a table per handler and the contrast in one line each.
 */
export function setUpCheckoutPanel(recording: CheckoutRecording = CHECKOUT_RECORDING): void {
  byId('checkout-command').textContent = `npx oncely lab checkout --seed ${recording.seed}`;
  byId('checkout-plan').replaceChildren(
    ...(recording.runs[0]?.orders ?? []).map((o) =>
      h('li', {}, h('strong', {}, o.order), `: killed ${o.killedAt}: ${KILL_POINTS[o.killedAt]}`),
    ),
  );
  byId('checkout-runs').replaceChildren(
    ...recording.runs.map((run) =>
      h(
        'div',
        { class: 'checkout-run', 'data-handler': run.handler },
        h('h3', {}, `${run.handler} handler`),
        h('p', { class: 'small' }, HANDLERS[run.handler] ?? ''),
        h(
          'div',
          { class: 'table-scroll', tabindex: 0, role: 'region', 'aria-label': `${run.handler}` },
          runTable(run.orders),
        ),
        h('p', { class: 'checkout-verdict' }, verdict(run.orders)),
      ),
    ),
  );
}

function cell(o: CheckoutOrderRecording, key: (typeof COLUMNS)[number][1]): string {
  if (key === 'retries') return String(o.attempts - 1);
  return String(o[key] ?? 'none');
}

function runTable(orders: readonly CheckoutOrderRecording[]): HTMLTableElement {
  const total = (key: (typeof COLUMNS)[number][1]): string =>
    key === 'killedAt' ? '' : String(orders.reduce((sum, o) => sum + Number(cell(o, key)), 0));
  return h(
    'table',
    {},
    h(
      'thead',
      {},
      h('tr', {}, h('th', {}, 'Order'), ...COLUMNS.map(([label]) => h('th', {}, label))),
    ),
    h(
      'tbody',
      {},
      ...orders.map((o) =>
        h(
          'tr',
          { 'data-order': o.order },
          h('th', {}, o.order),
          ...COLUMNS.map(([, key]) => h('td', { 'data-metric': key }, cell(o, key))),
        ),
      ),
    ),
    h(
      'tfoot',
      {},
      h(
        'tr',
        { 'data-order': 'total' },
        h('th', {}, 'Total'),
        ...COLUMNS.map(([, key]) => h('td', { 'data-metric': key }, total(key))),
      ),
    ),
  );
}

function verdict(orders: readonly CheckoutOrderRecording[]): string {
  const charges = orders.reduce((sum, o) => sum + o.charges, 0);
  const twice = orders.filter((o) => o.charges > 1).length;
  return twice > 0
    ? `${charges} charges for ${orders.length} orders: ${twice} cards charged more than once.`
    : `${charges} charges for ${orders.length} orders: one each.`;
}
