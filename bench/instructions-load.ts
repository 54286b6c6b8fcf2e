/**
 * bench/instructions' load: exactly `requests` POSTs to one route over `connections` kept-alive
 * connections, each connection sending its next request once its last is answered. A count, not
 * a duration: the same requests reach every build however slow valgrind makes it.
 */
import { Agent, request } from 'node:http';
import { CHECK_BODY } from './anchors-check.js';
import type { Mode } from './anchors-variants.js';

export interface FixedLoad {
  readonly url: string;
  /** The row's route: `/<table>/<variant>`. */
  readonly path: string;
  /** new: `<key>-1`, `<key>-2` …; replay: `key` itself, answered before the load starts. */
  readonly mode: Mode;
  readonly key: string;
  readonly requests: number;
  readonly connections: number;
}

function post(agent: Agent, url: URL, key: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method: 'POST',
        agent,
        headers: { 'content-type': 'application/json', 'idempotency-key': key },
      },
      (res) => {
        res.resume();
        res.once('end', () => resolve(res.statusCode ?? 0));
        res.once('error', reject);
      },
    );
    req.once('error', reject);
    req.end(CHECK_BODY);
  });
}

/**
 * A POST, sent again on a fresh connection when its kept-alive one was closed under it: under
 * valgrind the server can be slow enough that its keep-alive timeout ends a connection with the
 * next request already on its way (a resend of a fresh key is at worst a replay).
 */
async function postAgain(agent: Agent, url: URL, key: string): Promise<number> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await post(agent, url, key);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ECONNRESET' || attempt >= 3) throw error;
      resent++;
    }
  }
}

/** Requests sent again after ECONNRESET, since the process started (a run reports them). */
export let resent = 0;

/** Sends the load; resolves to the count of answers by status. */
export async function sendFixedLoad(load: FixedLoad): Promise<Map<number, number>> {
  const agent = new Agent({ keepAlive: true, maxSockets: load.connections });
  const url = new URL(load.path, load.url);
  const statuses = new Map<number, number>();
  let sent = 0;
  const connection = async (): Promise<void> => {
    while (sent < load.requests) {
      const n = ++sent;
      const status = await postAgain(
        agent,
        url,
        load.mode === 'new' ? `${load.key}-${n}` : load.key,
      );
      statuses.set(status, (statuses.get(status) ?? 0) + 1);
    }
  };
  try {
    await Promise.all(Array.from({ length: load.connections }, connection));
  } finally {
    agent.destroy();
  }
  return statuses;
}

/** The load's answers that were not 2xx, as `status×count` (empty when every one was). */
export function failedAnswers(statuses: ReadonlyMap<number, number>): string {
  return [...statuses]
    .filter(([status]) => status < 200 || status >= 300)
    .map(([status, count]) => `${status}×${count}`)
    .join(', ');
}
