import { InvalidOptionError } from 'oncely/policy';
import { checkNumbers, checkOneOf, checkSeed } from './check-params.js';
import { exponential } from './draws.js';
import { EventQueue } from './event-queue.js';
import {
  seedFleet,
  FLEET_STRATEGIES,
  BUDGET_STRATEGIES,
  newRequest,
  type BudgetStrategy,
  type FleetStrategy,
  type RequestState,
} from './fleet-strategies.js';

/**
 * The failing-dependency model, after Brooker, "Fixing retries with token buckets and circuit
 * breakers" (2022): clients send requests with Poisson arrivals to a server that fails each call
 * independently with probability p; each client retries by its strategy. docs/fleet.md restates it.
 */
export interface DependencyParams {
  readonly seed: number;
  /** Probability that the server fails a call, 0 … 1. */
  readonly failureRate: number;
  /** @default 100 */
  readonly clients: number;
  /** Requests per second offered by all clients together (first tries). @default 1000 */
  readonly totalRatePerSecond: number;
  /** First tries arrive during this long; retries in flight then drain. @default 10000 */
  readonly durationMs: number;
  /** A call's round trip is Exp(mean). @default 10 */
  readonly roundTripMeanMs: number;
}

export const DEFAULT_DEPENDENCY: Omit<DependencyParams, 'seed' | 'failureRate'> = {
  clients: 100,
  totalRatePerSecond: 1000,
  durationMs: 10_000,
  roundTripMeanMs: 10,
};

export interface DependencyOutcome {
  readonly firstTries: number;
  readonly attempts: number;
  readonly successes: number;
}

const ARRIVAL = 0;
const REPLY = 1;
const RETRY = 2;
const DEPENDENCY_STREAM = 0xde_2022;

export function runDependency(
  params: Partial<DependencyParams> & Pick<DependencyParams, 'seed' | 'failureRate'>,
  strategy: FleetStrategy | BudgetStrategy,
): DependencyOutcome {
  const p: DependencyParams = { ...DEFAULT_DEPENDENCY, ...params };
  check(p, strategy);
  const n = p.clients;
  const meanGapMs = (1000 * n) / p.totalRatePerSecond;
  const { randoms, server, strategies } = seedFleet(p.seed, DEPENDENCY_STREAM, n, strategy);
  // Requests in flight, by id (the event's data); ids are reused once a request ends.
  const requests: (RequestState | undefined)[] = [];
  const owners: number[] = [];
  const free: number[] = [];
  const queue = new EventQueue();
  let firstTries = 0;
  let attempts = 0;
  let successes = 0;

  const send = (client: number, id: number): void => {
    attempts++;
    queue.push(queue.now + exponential(randoms[client]!, p.roundTripMeanMs), REPLY, client, id);
  };
  for (let c = 0; c < n; c++) queue.push(exponential(randoms[c]!, meanGapMs), ARRIVAL, c);
  for (let kind = queue.pop(); kind >= 0; kind = queue.pop()) {
    const c = queue.actor;
    const now = queue.now;
    if (kind === ARRIVAL) {
      if (now >= p.durationMs) continue;
      firstTries++;
      strategies[c]!.firstTry();
      const id = free.length > 0 ? free.pop()! : requests.length;
      requests[id] = newRequest();
      owners[id] = c;
      send(c, id);
      queue.push(now + exponential(randoms[c]!, meanGapMs), ARRIVAL, c);
    } else if (kind === REPLY) {
      const id = queue.data;
      const request = requests[id]!;
      if (server.next() >= p.failureRate) {
        successes++;
        strategies[c]!.succeeded(request);
        requests[id] = undefined;
        free.push(id);
        continue;
      }
      const delay = strategies[c]!.failed(request, false, now);
      if (delay < 0) {
        requests[id] = undefined;
        free.push(id);
      } else {
        request.attempts++;
        queue.push(now + delay, RETRY, c, id);
      }
    } else {
      send(c, queue.data);
    }
  }
  return { firstTries, attempts, successes };
}

/** The closed forms for k retries at once: load (1 − p^(k+1)) / (1 − p), success 1 − p^(k+1). */
export function retriesClosedForm(
  failureRate: number,
  retries = 3,
): { load: number; success: number } {
  const tail = failureRate ** (retries + 1);
  return {
    load: failureRate === 1 ? retries + 1 : (1 - tail) / (1 - failureRate),
    success: 1 - tail,
  };
}

function check(p: DependencyParams, strategy: string): void {
  checkSeed(p.seed);
  if (!(p.failureRate >= 0 && p.failureRate <= 1))
    throw new InvalidOptionError('failureRate', p.failureRate, 'a probability from 0 to 1');
  if (!Number.isInteger(p.clients) || p.clients < 1 || p.clients > 100_000)
    throw new InvalidOptionError('clients', p.clients, 'an integer from 1 to 100000');
  checkNumbers(p, ['totalRatePerSecond', 'durationMs', 'roundTripMeanMs'], 0, false);
  checkOneOf('strategy', strategy, [...FLEET_STRATEGIES, BUDGET_STRATEGIES[1]]);
}
