import type { Clock } from 'oncely';

/**
 * The first agent-written client of the webhook storm (docs/origins.md), kept as a specimen: no Idempotency-Key, a fixed
 * 50 ms sleep, Retry-After ignored, every non-2xx retried (400 included), a fresh timestamp in
 * every body. The cap exists only so the demo ends.
 */
export const NAIVE_CLIENT = {
  /** @default 50 */
  sleepMs: 50,
  /** @default 30 */
  maxAttempts: 30,
} as const;

export interface NaiveDeliverOptions {
  readonly fetch: typeof globalThis.fetch;
  readonly clock: Clock;
  readonly sleepMs?: number;
  readonly maxAttempts?: number;
}

export interface NaiveResult {
  /** What the naive client tells its dashboard: "delivered" as soon as any attempt got a 2xx. */
  readonly delivered: boolean;
  readonly attempts: number;
  readonly statuses: readonly (number | 'error')[];
}

export async function naiveDeliver(
  url: string,
  payload: Record<string, unknown>,
  options: NaiveDeliverOptions,
): Promise<NaiveResult> {
  const sleepMs = options.sleepMs ?? NAIVE_CLIENT.sleepMs;
  const maxAttempts = options.maxAttempts ?? NAIVE_CLIENT.maxAttempts;
  const statuses: (number | 'error')[] = [];
  for (let attempt = 1; attempt <= maxAttempts; attempt++) {
    try {
      const response = await options.fetch(url, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        // The webhook storm (docs/origins.md): "each retry minted a new body timestamp and no Idempotency-Key".
        body: JSON.stringify({ ...payload, sentAt: options.clock.now() }),
      });
      await response.arrayBuffer();
      statuses.push(response.status);
      if (response.ok) return { delivered: true, attempts: attempt, statuses };
    } catch {
      statuses.push('error');
    }
    if (attempt < maxAttempts) await options.clock.sleep(sleepMs);
  }
  return { delivered: false, attempts: maxAttempts, statuses };
}
