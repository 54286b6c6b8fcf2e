/**
 * bench/chaos's probes: what a client sees from a receiver while a fault lasts, and how long the
 * receiver takes to serve a keyed request again once it ends. Probe keys are in a scope of their
 * own (`x-caller: probe`), so they never mix with the intents' effects.
 */

/** How long a probe waits for an answer: longer is a hang, a violation of the contract. */
export const REQUEST_TIMEOUT_MS = 3000;
const RETRY_EVERY_MS = 50;

export type ProbeAnswer =
  | { readonly kind: 'answer'; readonly status: number; readonly retryAfter: string | null }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'refused'; readonly detail: string };

let probes = 0;
/** A fresh probe key, unique in the run. */
export const nextProbeKey = (): string => `probe-${process.pid}-${++probes}`;

async function ask(url: string, init: RequestInit): Promise<ProbeAnswer> {
  try {
    const response = await fetch(url, { ...init, signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    await response.arrayBuffer();
    return {
      kind: 'answer',
      status: response.status,
      retryAfter: response.headers.get('retry-after'),
    };
  } catch (error) {
    const name = (error as Error).name;
    if (name === 'TimeoutError' || name === 'AbortError') return { kind: 'timeout' };
    const cause = (error as { cause?: { code?: string } }).cause;
    return { kind: 'refused', detail: cause?.code ?? (error as Error).message };
  }
}

export const probeKeyed = (base: string, key = nextProbeKey()): Promise<ProbeAnswer> =>
  ask(`${base}/effects`, {
    method: 'POST',
    headers: { 'idempotency-key': key, 'x-caller': 'probe', 'content-type': 'application/json' },
    body: '{"probe":true}',
  });

export const probeHealth = (base: string): Promise<ProbeAnswer> => ask(`${base}/healthz`, {});

/**
 * While the store is down the contract is 503 with Retry-After, within the request timeout:
 * anything else (a 500, a hang, a 201 that could not have been committed) is a violation. A
 * refused connection is not: that is the process being restarted, not the answer of one.
 */
export function outageViolation(answer: ProbeAnswer, path: string): string | undefined {
  if (answer.kind === 'timeout') return `${path}: no answer within ${REQUEST_TIMEOUT_MS} ms`;
  if (answer.kind === 'refused') return undefined;
  if (answer.status !== 503) return `${path}: ${answer.status} instead of 503`;
  if (answer.retryAfter === null) return `${path}: 503 without Retry-After`;
  return undefined;
}

/**
 * Sends keyed probes until one is answered 201: the instant (performance.now()) that answer
 * came, or undefined when none came within `limitMs`.
 */
export async function firstKeyedSuccess(
  base: string,
  limitMs: number,
): Promise<number | undefined> {
  const until = performance.now() + limitMs;
  while (performance.now() < until) {
    const answer = await probeKeyed(base);
    if (answer.kind === 'answer' && answer.status === 201) return performance.now();
    await new Promise((resolve) => setTimeout(resolve, RETRY_EVERY_MS));
  }
  return undefined;
}

/**
 * Probes a keyed request (and /healthz, with `health`) every `everyMs` until `signal` aborts;
 * the violations seen.
 */
export async function probeDuring(
  bases: readonly string[],
  health: boolean,
  everyMs: number,
  signal: AbortSignal,
): Promise<{ probes: number; violations: string[] }> {
  const violations: string[] = [];
  let count = 0;
  while (!signal.aborted) {
    const answers = await Promise.all(
      bases.flatMap((base) => [
        ...(health
          ? [probeHealth(base).then((answer) => outageViolation(answer, `${base}/healthz`))]
          : []),
        probeKeyed(base).then((answer) => outageViolation(answer, `${base}/effects`)),
      ]),
    );
    // An answer that came after the fault ended is not the outage's.
    if (signal.aborted) break;
    count += answers.length;
    for (const violation of answers) if (violation !== undefined) violations.push(violation);
    await new Promise((resolve) => setTimeout(resolve, everyMs));
  }
  return { probes: count, violations };
}
