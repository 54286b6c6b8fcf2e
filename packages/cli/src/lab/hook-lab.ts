import {
  createClient,
  isRetryError,
  summarizeReport,
  type RetryReport,
  VirtualClock,
  seededRandom,
} from 'oncely';
import { startHookServer } from '../receivers/hook/hook-server.js';
import type { HookCounts, HookHit } from '../receivers/hook/hook-service.js';
import { naiveDeliver, NAIVE_CLIENT, type NaiveResult } from './hook-naive-client.js';

/** The three scenarios of `oncely lab hook` (docs/origins.md, "The webhook storm"). */
export const HOOK_LAB_SCENARIOS = [
  {
    name: 'throttle',
    title: 'a throttle window',
    script: 'throttle:1s,200',
    explains:
      '429 with Retry-After until 1 s after the first hit: the naive client hammers, oncely waits as told',
  },
  {
    name: 'fatal',
    title: 'a fatal 400',
    script: '400',
    explains: 'the payload is wrong; no second send can fix it: oncely sends once',
  },
  {
    name: 'swallow',
    title: 'a swallowed ack',
    script: 'swallow,200',
    explains: 'the work is done, the reply is lost: without a key the retry is a second completion',
  },
] as const;
export type HookLabScenarioName = (typeof HOOK_LAB_SCENARIOS)[number]['name'];

/** oncely's side of the lab: a key per run, Retry-After obeyed, a small attempt budget. */
export const LAB_ONCELY_CLIENT = { maxAttempts: 5 } as const;

export interface ClientRun {
  readonly hits: readonly HookHit[];
  readonly counts: HookCounts;
  /** What the client itself concluded, in its own words. */
  readonly verdict: string;
}

export interface HookLabScenarioResult {
  readonly name: HookLabScenarioName;
  readonly title: string;
  readonly script: string;
  readonly explains: string;
  readonly naive: ClientRun & { readonly result: NaiveResult };
  readonly oncely: ClientRun & { readonly report: RetryReport };
}

export interface HookLabOptions {
  /** Run only these scenarios. @default all three */
  readonly only?: readonly HookLabScenarioName[];
  /** Seeds oncely's jitter. @default 3 */
  readonly seed?: number;
  /** The virtual instant every run starts at. @default 2026-09-14T12:00:00Z */
  readonly startAt?: number;
}

const PAYLOAD = { run_id: 'run-9', status: 'complete' };
const PATH = '/hooks/run-complete';

/**
 * Runs each scenario twice against the real hook receiver on loopback: once with the naive
 * client, once with oncely's. Both sides share one virtual clock per run, so a 1 s throttle takes
 * no real second and the hit times are exact and repeatable.
 */
export async function runHookLab(options: HookLabOptions = {}): Promise<HookLabScenarioResult[]> {
  const startAt = options.startAt ?? Date.UTC(2026, 8, 14, 12, 0, 0);
  const seed = options.seed ?? 3;
  const results: HookLabScenarioResult[] = [];
  for (const [index, scenario] of HOOK_LAB_SCENARIOS.entries()) {
    if (options.only && !options.only.includes(scenario.name)) continue;

    const naive = await withReceiver(scenario.script, startAt, async (url, clock) => {
      const result = await naiveDeliver(url, PAYLOAD, { fetch: globalThis.fetch, clock });
      return {
        result,
        verdict: result.delivered
          ? `"delivered" (attempt ${result.attempts})`
          : `gave up after ${result.attempts} attempts`,
      };
    });
    const oncely = await withReceiver(scenario.script, startAt, async (url, clock) => {
      const client = createClient({
        clock,
        random: seededRandom(seed, index),
        maxAttempts: LAB_ONCELY_CLIENT.maxAttempts,
      });
      let report: RetryReport;
      try {
        ({ report } = await client.request(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(PAYLOAD),
          idempotencyKey: `run-9-${scenario.name}`,
        }));
      } catch (error) {
        if (!isRetryError(error)) throw error;
        report = error.report;
      }
      return { report, verdict: summarizeReport(report) };
    });
    results.push({ ...scenario, naive, oncely });
  }
  return results;
}

async function withReceiver<T extends object>(
  script: string,
  startAt: number,
  body: (url: string, clock: VirtualClock) => Promise<T>,
): Promise<T & { hits: readonly HookHit[]; counts: HookCounts }> {
  const clock = new VirtualClock({ startAt });
  const hook = await startHookServer({ script, clock });
  try {
    const value = await body(`${hook.url}${PATH}`, clock);
    return { ...value, hits: await hook.service.hits(), counts: await hook.service.counts() };
  } finally {
    await hook.close();
  }
}

/** The naive client's rules, for the printed header. */
export const NAIVE_RULES = `no key, fixed ${NAIVE_CLIENT.sleepMs} ms sleep, Retry-After ignored, 400 retried, at most ${NAIVE_CLIENT.maxAttempts} attempts`;
export const ONCELY_RULES = `one Idempotency-Key, Retry-After obeyed, 400 never retried, at most ${LAB_ONCELY_CLIENT.maxAttempts} attempts`;
