/**
 * The check bench/anchors makes before it times anything: does the variant really answer a key
 * once? One key sent twice, one after the other, must run the effect once and answer the retry
 * with the first answer (a 409 while the first is still being stored is retried, as a client
 * would). Then one key sent by several requests at once: how many effects ran is reported (a
 * middleware that checks and then writes, with an await between, lets some through).
 */
import { setTimeout as sleep } from 'node:timers/promises';

export const CHECK_BODY = JSON.stringify({ amount: 1, note: 'bench' });

export interface DedupeResult {
  /** Status of the first request and of its retry. */
  readonly statuses: readonly [number, number];
  /** Effects (rows) the two requests added. */
  readonly effects: number;
  /** The retry got the first answer (the same order id) rather than a new one. */
  readonly sameAnswer: boolean;
  /** Concurrent requests with one key, and the effects they added. */
  readonly concurrent: { readonly requests: number; readonly effects: number };
  /** One effect, two 2xx, the same answer. */
  readonly ok: boolean;
}

export interface Answer {
  readonly status: number;
  readonly order: unknown;
}

async function post(url: string, key: string): Promise<Answer> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': key },
    body: CHECK_BODY,
  });
  const text = await response.text();
  let order: unknown;
  try {
    order = (JSON.parse(text) as { order?: unknown }).order;
  } catch {
    order = undefined;
  }
  return { status: response.status, order };
}

/** A POST, repeated while the key's first request is still in flight (409), up to about a second. */
export async function postUntilAnswered(url: string, key: string): Promise<Answer> {
  for (let attempt = 0; ; attempt++) {
    const answer = await post(url, key);
    if (answer.status !== 409 || attempt >= 50) return answer;
    await sleep(20);
  }
}

const ok2xx = (status: number): boolean => status >= 200 && status < 300;

export async function checkDedupe(
  url: string,
  rows: () => Promise<number>,
  keyPrefix: string,
  concurrency = 8,
): Promise<DedupeResult> {
  const before = await rows();
  const first = await post(url, `${keyPrefix}-twice`);
  const second = await postUntilAnswered(url, `${keyPrefix}-twice`);
  const effects = (await rows()) - before;

  const beforeConcurrent = await rows();
  await Promise.all(Array.from({ length: concurrency }, () => post(url, `${keyPrefix}-together`)));
  const concurrentEffects = (await rows()) - beforeConcurrent;

  const sameAnswer = first.order !== undefined && first.order === second.order;
  return {
    statuses: [first.status, second.status],
    effects,
    sameAnswer,
    concurrent: { requests: concurrency, effects: concurrentEffects },
    ok: effects === 1 && ok2xx(first.status) && ok2xx(second.status) && sameAnswer,
  };
}

/** One line for the report: what the check saw. */
export function describeDedupe(result: DedupeResult): string {
  const together = `${result.concurrent.requests} at once: ${result.concurrent.effects} effect(s)`;
  if (result.ok) return `ok (twice: 1 effect, same answer; ${together})`;
  return `FAILED: twice gave ${result.statuses.join(' then ')}, ${result.effects} effect(s)${result.sameAnswer ? '' : ', a different answer'}; ${together}`;
}
