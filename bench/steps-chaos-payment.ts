import { createServer, type Server } from 'node:http';
import type { Random } from 'oncely';

/** How often the payment mock fails, each half before charging and half after. */
export interface PaymentFaultRates {
  /** Answers 503. */
  readonly error: number;
  /** Holds the answer past the server's timeout, then drops the connection. */
  readonly timeout: number;
}

export interface PaymentTally {
  /** Charges made (not answered from an earlier one), by request. */
  readonly chargesByRequest: Map<string, number>;
  /** The derived keys each request's charges came under. */
  readonly keysByRequest: Map<string, Set<string>>;
  /** The charge each derived key made. */
  readonly chargeByKey: Map<string, string>;
  calls: number;
  errors: { before: number; after: number };
  timeouts: { before: number; after: number };
}

export interface PaymentMock {
  readonly url: string;
  readonly tally: PaymentTally;
  close(): Promise<void>;
}

/**
 * The bench's payment service: POST /charges with Idempotency-Key (the step's derived key) and
 * x-request (the checkout's own id, for counting). Dedupes by key like a real payment API; fails
 * at random, before or after charging: a 503, or no answer within the server's timeout.
 */
export async function startPaymentMock(
  rates: PaymentFaultRates,
  random: Random,
  holdMs: number,
): Promise<PaymentMock> {
  const tally: PaymentTally = {
    chargesByRequest: new Map(),
    keysByRequest: new Map(),
    chargeByKey: new Map(),
    calls: 0,
    errors: { before: 0, after: 0 },
    timeouts: { before: 0, after: 0 },
  };
  let made = 0;
  const server: Server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      tally.calls++;
      const key = String(req.headers['idempotency-key']);
      const request = String(req.headers['x-request']);
      const fault = pickFault(rates, random);
      const hold = (): void => void setTimeout(() => res.destroy(), holdMs).unref();
      if (fault === 'error-before' || fault === 'timeout-before') {
        if (fault === 'error-before') {
          tally.errors.before++;
          res.writeHead(503).end();
        } else {
          tally.timeouts.before++;
          hold();
        }
        return;
      }
      let charge = tally.chargeByKey.get(key);
      if (charge === undefined) {
        charge = `ch_${++made}`;
        tally.chargeByKey.set(key, charge);
        tally.chargesByRequest.set(request, (tally.chargesByRequest.get(request) ?? 0) + 1);
      }
      const keys = tally.keysByRequest.get(request) ?? new Set<string>();
      tally.keysByRequest.set(request, keys.add(key));
      if (fault === 'error-after') {
        tally.errors.after++;
        res.writeHead(503).end();
      } else if (fault === 'timeout-after') {
        tally.timeouts.after++;
        hold();
      } else {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ id: charge }));
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return {
    url: `http://127.0.0.1:${port}`,
    tally,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

type Fault = 'error-before' | 'error-after' | 'timeout-before' | 'timeout-after' | undefined;

function pickFault(rates: PaymentFaultRates, random: Random): Fault {
  const r = random.next();
  const half = (rate: number): number => rate / 2;
  if (r < half(rates.error)) return 'error-before';
  if (r < rates.error) return 'error-after';
  if (r < rates.error + half(rates.timeout)) return 'timeout-before';
  if (r < rates.error + rates.timeout) return 'timeout-after';
  return undefined;
}
