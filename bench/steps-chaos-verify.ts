import type pg from 'pg';
import type { PaymentTally } from './steps-chaos-payment.js';
import { ORDERS_TABLE } from './steps-chaos-protocol.js';
import type { LoadOutcome } from './steps-chaos-run.js';

/** How many checkouts have none, exactly one, or more of a thing. */
export interface OnceCount {
  readonly total: number;
  readonly one: number;
  readonly none: number;
  readonly more: number;
}

export interface ChaosVerdict {
  readonly requests: number;
  readonly answered: number;
  readonly charges: OnceCount;
  /** Checkouts whose charges came under more than one derived key. */
  readonly manyKeys: number;
  readonly orders: OnceCount;
  readonly emails: OnceCount;
  /** The replay got the same body, and that body names the charge the payment service made. */
  readonly sameBody: number;
  readonly bodyNamesCharge: number;
  /** The first few problems, each naming its checkout. */
  readonly problems: readonly string[];
  readonly pass: boolean;
}

/** Checks the books: the payment mock's, the orders table, the outbox, and the answers. */
export async function verifyChaos(
  db: pg.Pool,
  schema: string,
  requests: number,
  payment: PaymentTally,
  load: LoadOutcome,
  replays: LoadOutcome,
): Promise<ChaosVerdict> {
  const problems: string[] = [...load.failures, ...replays.failures];
  const orderRows = await db.query<{ request: string; n: string }>(
    `SELECT request, count(*) AS n FROM "${schema}".${ORDERS_TABLE} GROUP BY request`,
  );
  const emailRows = await db.query<{ request: string; n: string }>(
    `SELECT substr(key, 7) AS request, count(*) AS n FROM "${schema}".oncely_intents WHERE key LIKE 'email:%' GROUP BY key`,
  );
  const countsOf = (rows: { request: string; n: string }[]) =>
    new Map(rows.map((row) => [row.request, Number(row.n)]));
  const ids = Array.from({ length: requests }, (_, i) => `r${i}`);
  const charges = onceCount(ids, payment.chargesByRequest, 'charges', problems);
  const orders = onceCount(ids, countsOf(orderRows.rows), 'orders', problems);
  const emails = onceCount(ids, countsOf(emailRows.rows), 'email intents', problems);
  let manyKeys = 0;
  let sameBody = 0;
  let bodyNamesCharge = 0;
  for (const [i, id] of ids.entries()) {
    const keys = [...(payment.keysByRequest.get(id) ?? [])];
    if (keys.length > 1) {
      manyKeys++;
      problems.push(`${id}: charged under ${keys.length} keys`);
    }
    const body = load.bodies[i];
    if (body !== undefined && body === replays.bodies[i]) sameBody++;
    else problems.push(`${id}: the replay's body differs (${body} / ${replays.bodies[i]})`);
    const charge = keys.length === 1 ? payment.chargeByKey.get(keys[0]!) : undefined;
    if (body !== undefined && (JSON.parse(body) as { charge?: string }).charge === charge)
      bodyNamesCharge++;
    else problems.push(`${id}: the body does not name the charge ${charge}`);
  }
  const answered = load.bodies.filter((body) => body !== undefined).length;
  const all = (count: OnceCount): boolean => count.one === requests;
  return {
    requests,
    answered,
    charges,
    manyKeys,
    orders,
    emails,
    sameBody,
    bodyNamesCharge,
    problems: problems.slice(0, 10),
    pass:
      answered === requests &&
      all(charges) &&
      all(orders) &&
      all(emails) &&
      manyKeys === 0 &&
      sameBody === requests &&
      bodyNamesCharge === requests,
  };
}

function onceCount(
  ids: readonly string[],
  counts: ReadonlyMap<string, number>,
  what: string,
  problems: string[],
): OnceCount {
  let total = 0;
  let one = 0;
  let none = 0;
  let more = 0;
  for (const id of ids) {
    const n = counts.get(id) ?? 0;
    total += n;
    if (n === 1) one++;
    else {
      if (n === 0) none++;
      else more++;
      problems.push(`${id}: ${n} ${what}`);
    }
  }
  return { total, one, none, more };
}
