/**
 * One timed run of bench/anchors: autocannon against one variant's route, either every request
 * with a fresh Idempotency-Key ('new') or every request with one key already answered ('replay').
 */
import { randomUUID } from 'node:crypto';
import { autocannon, type AutocannonRequest } from './autocannon.js';
import { CHECK_BODY } from './anchors-check.js';
import type { ServerCount } from './anchors-child.js';
import type { KeyShape, Mode } from './anchors-variants.js';

export interface LoadRun {
  /** The row's route (`/<table>/<variant>`). */
  readonly path: string;
  readonly mode: Mode;
  readonly requestsPerSecond: number;
  readonly p99Ms: number;
  /** The server process's CPU time over the run divided by the responses: less swayed by other load than req/s. */
  readonly cpuMicrosPerRequest: number;
  readonly statuses: Readonly<Record<string, number>>;
  readonly errors: number;
  /** Rows the run added to the variant's effect table (replay: must be 0). */
  readonly effectRows: number;
  /** Lowest and highest req/s over the rounds, on the median row. */
  readonly spread?: readonly [number, number];
}

const HEADERS = { 'content-type': 'application/json' };
let counter = 0;

function requestsFor(path: string, mode: Mode, key: string, keys: KeyShape): AutocannonRequest[] {
  if (mode === 'replay')
    return [
      { method: 'POST', path, headers: { ...HEADERS, 'idempotency-key': key }, body: CHECK_BODY },
    ];
  // A key of its own for every request, set as autocannon builds it.
  return [
    {
      method: 'POST',
      path,
      headers: HEADERS,
      body: CHECK_BODY,
      setupRequest: (request) => ({
        ...request,
        headers: {
          ...request.headers,
          'idempotency-key': keys === 'uuid' ? randomUUID() : `${key}-${++counter}`,
        },
      }),
    },
  ];
}

export async function runLoad(options: {
  url: string;
  /** The row's route on the server, from its URL's root: `/<table>/<variant>`. */
  path: string;
  mode: Mode;
  /** new: the prefix of the fresh keys; replay: the key, already answered once. */
  key: string;
  keys: KeyShape;
  seconds: number;
  connections: number;
  count: () => Promise<ServerCount>;
}): Promise<LoadRun> {
  const before = await options.count();
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.seconds,
    requests: requestsFor(options.path, options.mode, options.key, options.keys),
  });
  const after = await options.count();
  return {
    path: options.path,
    mode: options.mode,
    requestsPerSecond: result.requests.average,
    p99Ms: result.latency.p99,
    cpuMicrosPerRequest: (after.cpuMicros - before.cpuMicros) / result.requests.total,
    statuses: Object.fromEntries(
      Object.entries(result.statusCodeStats).map(([status, { count }]) => [status, Number(count)]),
    ),
    errors: result.errors,
    effectRows: after.rows - before.rows,
  };
}

/** The round with the median req/s (its p99 with it, so the pair comes from one run). */
export function medianRun(runs: readonly LoadRun[]): LoadRun {
  const sorted = [...runs].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  return {
    ...sorted[Math.floor(sorted.length / 2)]!,
    spread: [sorted[0]!.requestsPerSecond, sorted[sorted.length - 1]!.requestsPerSecond],
  };
}
