import { InvalidOptionError } from 'oncely/policy';
import { checkNumbers, checkOneOf, checkSeed } from './check-params.js';
import { backoffDelayMs, type BackoffOptions } from 'oncely/policy';
import { seededRandom, type Random } from 'oncely/policy';
import { absNormal } from './draws.js';
import { EventQueue } from './event-queue.js';

/**
 * The contention model, after Brooker, "Exponential Backoff and Jitter" (AWS Architecture Blog,
 * 2015): N clients each make one optimistic update of one shared row. A client reads the row's
 * version, then writes with it; a write whose version is stale fails, and the client backs off and
 * reads and writes again, until its update lands. docs/fleet.md restates it.
 */
export const CONTENTION_STRATEGIES = [
  'none',
  'exponential',
  'equal',
  'full',
  'decorrelated',
] as const;
export type ContentionStrategy = (typeof CONTENTION_STRATEGIES)[number];

export const CONTENTION_LABELS: { readonly [s in ContentionStrategy]: string } = {
  none: 'No backoff',
  exponential: 'Exponential',
  equal: 'Equal jitter',
  full: 'Full jitter',
  decorrelated: 'Decorrelated jitter',
};

export interface ContentionParams {
  readonly clients: number;
  readonly seed: number;
  /** Each hop (request or reply) takes |Normal(hopMeanMs, hopSdMs)|. @default 10 */
  readonly hopMeanMs: number;
  /** @default 2 */
  readonly hopSdMs: number;
  /** @default 5 */
  readonly baseMs: number;
  /** @default 2000 */
  readonly capMs: number;
}

export const DEFAULT_CONTENTION: Omit<ContentionParams, 'clients' | 'seed'> = {
  hopMeanMs: 10,
  hopSdMs: 2,
  baseMs: 5,
  capMs: 2000,
};

export interface ContentionOutcome {
  /** Write calls in all, the successful ones included. */
  readonly writes: number;
  /** When the last client's update landed (its success reply received), ms from the start. */
  readonly finishMs: number;
}

export interface ContentionEvent {
  readonly atMs: number;
  readonly kind: 'read' | 'write' | 'written' | 'stale' | 'backoff';
  readonly client: number;
  /** The version read or written; the backoff's delay for 'backoff'. */
  readonly value: number;
}

const READ_ARRIVES = 0;
const READ_REPLY = 1;
const WRITE_ARRIVES = 2;
const WRITE_REPLY = 3;
const BACKOFF_OVER = 4;
/** Stream purpose of the contention model's per-client draws: seededRandom(seed, this, client). */
const CONTENTION_STREAM = 0xc0_2015;

/** The delay before retry `retry` (1 for the first), by oncely's own backoff; 0 for no backoff. */
export function contentionDelayMs(
  strategy: ContentionStrategy,
  retry: number,
  p: ContentionParams,
  random: Random,
  previousMs: number,
): number {
  if (strategy === 'none') return 0;
  const jitter = strategy === 'exponential' ? 'none' : strategy;
  const options: BackoffOptions = { baseDelayMs: p.baseMs, maxDelayMs: p.capMs, jitter };
  return backoffDelayMs(retry, options, random, previousMs);
}

/** Runs one contention world. `trace` collects every event when given. */
export function runContention(
  params: Partial<ContentionParams> & Pick<ContentionParams, 'clients' | 'seed'>,
  strategy: ContentionStrategy,
  trace?: ContentionEvent[],
): ContentionOutcome {
  const p: ContentionParams = { ...DEFAULT_CONTENTION, ...params };
  check(p, strategy);
  const n = p.clients;
  const randoms = Array.from({ length: n }, (_, c) => seededRandom(p.seed, CONTENTION_STREAM, c));
  const readVersion = new Array<number>(n).fill(0);
  const failures = new Array<number>(n).fill(0);
  const previousDelay = new Array<number>(n).fill(0);
  const hop = (c: number): number => absNormal(randoms[c]!, p.hopMeanMs, p.hopSdMs);
  const queue = new EventQueue();
  let version = 0;
  let writes = 0;
  let finishMs = 0;
  const emit = (kind: ContentionEvent['kind'], client: number, value: number): void => {
    trace?.push({ atMs: queue.now, kind, client, value });
  };

  for (let c = 0; c < n; c++) queue.push(hop(c), READ_ARRIVES, c);
  for (let kind = queue.pop(); kind >= 0; kind = queue.pop()) {
    const c = queue.actor;
    const now = queue.now;
    switch (kind) {
      case READ_ARRIVES:
        emit('read', c, version);
        queue.push(now + hop(c), READ_REPLY, c, version);
        break;
      case READ_REPLY:
        readVersion[c] = queue.data;
        writes++;
        queue.push(now + hop(c), WRITE_ARRIVES, c);
        break;
      case WRITE_ARRIVES: {
        const ok = readVersion[c] === version;
        if (ok) version++;
        emit(ok ? 'written' : 'stale', c, readVersion[c]!);
        queue.push(now + hop(c), WRITE_REPLY, c, ok ? 1 : 0);
        break;
      }
      case WRITE_REPLY: {
        if (queue.data === 1) {
          finishMs = Math.max(finishMs, now);
          break;
        }
        const retry = ++failures[c]!;
        const delay = contentionDelayMs(strategy, retry, p, randoms[c]!, previousDelay[c]!);
        previousDelay[c] = delay;
        emit('backoff', c, delay);
        queue.push(now + delay, BACKOFF_OVER, c);
        break;
      }
      case BACKOFF_OVER:
        queue.push(now + hop(c), READ_ARRIVES, c);
        break;
    }
  }
  return { writes, finishMs };
}

function check(p: ContentionParams, strategy: string): void {
  if (!Number.isInteger(p.clients) || p.clients < 1 || p.clients > 100_000) {
    throw new InvalidOptionError('clients', p.clients, 'an integer from 1 to 100000');
  }
  checkSeed(p.seed);
  checkNumbers(p, ['hopMeanMs', 'hopSdMs', 'baseMs', 'capMs'], 0, true);
  checkOneOf('strategy', strategy, CONTENTION_STRATEGIES);
}
