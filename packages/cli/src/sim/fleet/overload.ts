import { InvalidOptionError } from 'oncely/policy';
import type { Random } from 'oncely/policy';
import { checkNumbers, checkOneOf, checkSeed } from './check-params.js';
import { exponential } from './draws.js';
import { EventQueue } from './event-queue.js';
import {
  seedFleet,
  FLEET_STRATEGIES,
  newRequest,
  type FleetStrategy,
  type RequestState,
} from './fleet-strategies.js';

/**
 * The overload model (ours; neither 2015 nor 2022 post has one): a server with finite capacity
 * whose failures rise with its queue, so retries feed the load that causes them. Workers serve a
 * FIFO queue; an arriving request is shed at once with probability queue ÷ queueLimit; a client
 * gives up on an attempt after its timeout, but the server still serves the abandoned request.
 * An outage stalls every worker for a while; the question is whether the fleet recovers after it.
 */
export interface OverloadParams {
  readonly seed: number;
  /** @default 100 */
  readonly clients: number;
  /** First tries per second from all clients together (Poisson). @default 700 */
  readonly totalRatePerSecond: number;
  /** @default 10 */
  readonly workers: number;
  /** Each request takes a worker this long: capacity is workers × 1000 / serviceMs per second. @default 10 */
  readonly serviceMs: number;
  /** Requests the server queues at most; an arrival is shed with probability queue ÷ this. @default 1000 */
  readonly queueLimit: number;
  /** One-way network delay. @default 5 */
  readonly hopMs: number;
  /** A client gives up on an attempt with no answer after this long. @default 250 */
  readonly timeoutMs: number;
  /** The workers stall from outageAtMs for outageMs. @default 5000, 5000 */
  readonly outageAtMs: number;
  readonly outageMs: number;
  /** First tries arrive for this long. @default 40000 */
  readonly durationMs: number;
  /** Goodput is measured per bucket of this length. @default 500 */
  readonly bucketMs: number;
}

export const DEFAULT_OVERLOAD: Omit<OverloadParams, 'seed'> = {
  clients: 100,
  totalRatePerSecond: 700,
  workers: 10,
  serviceMs: 10,
  queueLimit: 1000,
  hopMs: 5,
  timeoutMs: 250,
  outageAtMs: 5000,
  outageMs: 5000,
  durationMs: 40_000,
  bucketMs: 500,
};

/** Recovered: goodput at least this share of the offered first tries ... */
export const RECOVERED_GOODPUT = 0.9;
/** ... in this many consecutive buckets. */
export const RECOVERED_BUCKETS = 4;

export interface OverloadOutcome {
  readonly firstTries: number;
  readonly attempts: number;
  readonly successes: number;
  /** Per bucket: successes answered in time ÷ first tries offered. */
  readonly goodput: readonly number[];
  /** Per bucket: attempts sent ÷ first tries offered. */
  readonly load: readonly number[];
  /** From the end of the outage until goodput recovered; null when it never did (metastable). */
  readonly recoveryMs: number | null;
}

const ARRIVAL = 0;
const AT_SERVER = 1;
const SERVED = 2;
const REPLY = 3;
const TIMEOUT = 4;
const RETRY = 5;
const RESUME = 6;
const OVERLOAD_STREAM = 0x0ef_10ad;
/** Attempts per request fit in 4 bits of an event's data: (request << 4) | attempt. */
const ATTEMPT_BITS = 16;

export function runOverload(
  params: Partial<OverloadParams> & Pick<OverloadParams, 'seed'>,
  strategy: FleetStrategy,
): OverloadOutcome {
  const p: OverloadParams = { ...DEFAULT_OVERLOAD, ...params };
  check(p, strategy);
  const n = p.clients;
  const meanGapMs = (1000 * n) / p.totalRatePerSecond;
  const { randoms, server, strategies } = seedFleet(p.seed, OVERLOAD_STREAM, n, strategy);
  const buckets = Math.ceil((p.durationMs + 10 * p.timeoutMs) / p.bucketMs);
  const offered = new Array<number>(buckets).fill(0);
  const good = new Array<number>(buckets).fill(0);
  const sent = new Array<number>(buckets).fill(0);
  const bucketOf = (t: number): number => Math.min(buckets - 1, Math.floor(t / p.bucketMs));
  const requests: RequestState[] = [];
  const owners: number[] = [];
  /** The attempt each request waits for; 0 once it has ended. */
  const awaiting: number[] = [];
  const outageEndsAt = p.outageAtMs + p.outageMs;
  const queue = new EventQueue();
  const workers = new OverloadServer(p, queue, server);
  let firstTries = 0;
  let attempts = 0;
  let successes = 0;

  const send = (id: number): void => {
    const attempt = requests[id]!.attempts;
    awaiting[id] = attempt;
    attempts++;
    sent[bucketOf(queue.now)]!++;
    queue.push(queue.now + p.hopMs, AT_SERVER, owners[id]!, id * ATTEMPT_BITS + attempt);
    queue.push(queue.now + p.timeoutMs, TIMEOUT, owners[id]!, id * ATTEMPT_BITS + attempt);
  };
  /** The attempt (id, attempt) ended without success; the client's strategy decides what next. */
  const failed = (id: number, timedOut: boolean): void => {
    const request = requests[id]!;
    const delay = strategies[owners[id]!]!.failed(request, timedOut, queue.now);
    if (delay < 0) {
      awaiting[id] = 0;
      return;
    }
    request.attempts++;
    awaiting[id] = -1; // between attempts: no reply or timeout belongs to it
    queue.push(queue.now + delay, RETRY, owners[id]!, id);
  };

  for (let c = 0; c < n; c++) queue.push(exponential(randoms[c]!, meanGapMs), ARRIVAL, c);
  queue.push(outageEndsAt, RESUME, 0);
  for (let kind = queue.pop(); kind >= 0; kind = queue.pop()) {
    const now = queue.now;
    const c = queue.actor;
    const data = queue.data;
    switch (kind) {
      case ARRIVAL: {
        if (now >= p.durationMs) break;
        firstTries++;
        offered[bucketOf(now)]!++;
        strategies[c]!.firstTry();
        const id = requests.length;
        requests.push(newRequest());
        owners.push(c);
        awaiting.push(0);
        send(id);
        queue.push(now + exponential(randoms[c]!, meanGapMs), ARRIVAL, c);
        break;
      }
      case AT_SERVER:
        workers.arrive(c, data);
        break;
      case SERVED:
        workers.served(owners[Math.floor(data / ATTEMPT_BITS)]!, data);
        break;
      case RESUME:
        workers.startService();
        break;
      case REPLY: {
        const ok = data >= 0;
        const key = ok ? data : -data - 1;
        const id = Math.floor(key / ATTEMPT_BITS);
        if (awaiting[id] !== key % ATTEMPT_BITS) break; // too late: the client gave up on it
        if (ok) {
          awaiting[id] = 0;
          successes++;
          good[bucketOf(now)]!++;
          strategies[c]!.succeeded(requests[id]!);
        } else {
          failed(id, false);
        }
        break;
      }
      case TIMEOUT: {
        const id = Math.floor(data / ATTEMPT_BITS);
        if (awaiting[id] === data % ATTEMPT_BITS) failed(id, true);
        break;
      }
      case RETRY:
        send(data);
        break;
    }
  }
  const counts = { firstTries, attempts, successes };
  return overloadOutcome(p, counts, { offered, good, sent }, bucketOf);
}

/** The first bucket at or after the outage's end that starts RECOVERED_BUCKETS good ones in a row. */
function recoveryAfter(goodput: readonly number[], from: number, p: OverloadParams): number | null {
  let run = 0;
  for (let b = from; b < goodput.length; b++) {
    run = goodput[b]! >= RECOVERED_GOODPUT ? run + 1 : 0;
    if (run === RECOVERED_BUCKETS)
      return Math.max(0, (b - RECOVERED_BUCKETS + 1) * p.bucketMs - (p.outageAtMs + p.outageMs));
  }
  return null;
}

function check(p: OverloadParams, strategy: string): void {
  checkSeed(p.seed);
  for (const name of ['clients', 'workers', 'queueLimit'] as const) {
    if (!Number.isInteger(p[name]) || p[name] < 1 || p[name] > 100_000)
      throw new InvalidOptionError(name, p[name], 'an integer from 1 to 100000');
  }
  checkNumbers(
    p,
    ['totalRatePerSecond', 'serviceMs', 'hopMs', 'timeoutMs', 'durationMs', 'bucketMs'],
    0,
    false,
  );
  checkNumbers(p, ['outageAtMs', 'outageMs'], 0, true);
  if (p.durationMs > 600_000)
    throw new InvalidOptionError('durationMs', p.durationMs, 'at most 600000');
  checkOneOf('strategy', strategy, FLEET_STRATEGIES);
}

/** The run's counts, and goodput and load per bucket up to the end of the first tries. */
function overloadOutcome(
  p: OverloadParams,
  counts: Pick<OverloadOutcome, 'firstTries' | 'attempts' | 'successes'>,
  perBucket: { offered: number[]; good: number[]; sent: number[] },
  bucketOf: (t: number) => number,
): OverloadOutcome {
  const { offered, good, sent } = perBucket;
  const lastBucket = bucketOf(p.durationMs) - 1;
  const goodput = offered.slice(0, lastBucket + 1).map((o, b) => (o === 0 ? 1 : good[b]! / o));
  const load = offered.slice(0, lastBucket + 1).map((o, b) => (o === 0 ? 0 : sent[b]! / o));
  return {
    ...counts,
    goodput,
    load,
    recoveryMs: recoveryAfter(goodput, bucketOf(p.outageAtMs + p.outageMs), p),
  };
}

/**
 * The server's workers and their FIFO queue: an arrival is shed at once with probability
 * queue ÷ queueLimit; during the outage no worker starts a request.
 */
class OverloadServer {
  private readonly waiting: number[] = [];
  private head = 0;
  private busy = 0;

  constructor(
    private readonly p: OverloadParams,
    private readonly queue: EventQueue,
    private readonly random: Random,
  ) {}

  /** An attempt reaches the server: queued, or shed (a fast failure back to client `c`). */
  arrive(c: number, data: number): void {
    const queued = this.waiting.length - this.head;
    if (queued >= this.p.queueLimit || this.random.next() * this.p.queueLimit < queued) {
      this.queue.push(this.queue.now + this.p.hopMs, REPLY, c, -data - 1);
    } else {
      this.waiting.push(data);
      this.startService();
    }
  }

  /** A worker finished `data`: its reply goes to `owner`, and the worker takes the next. */
  served(owner: number, data: number): void {
    this.busy--;
    this.queue.push(this.queue.now + this.p.hopMs, REPLY, owner, data);
    this.startService();
  }

  startService(): void {
    const { p, queue } = this;
    const stalled = queue.now >= p.outageAtMs && queue.now < p.outageAtMs + p.outageMs;
    while (this.busy < p.workers && this.head < this.waiting.length && !stalled) {
      this.busy++;
      queue.push(queue.now + p.serviceMs, SERVED, 0, this.waiting[this.head++]!);
    }
  }
}
