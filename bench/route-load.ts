/**
 * The HTTP benches' load: a server in a child process of its own (its CPU time is its own, read
 * with process.cpuUsage() at the parent's 'cpu'), and autocannon runs against one of its routes,
 * each request with a key of its own, one key for all, or none.
 */
import { fork } from 'node:child_process';
import { autocannon, type AutocannonRequest } from './autocannon.js';

export interface ChildServer {
  readonly port: number;
  cpu(): Promise<NodeJS.CpuUsage>;
  /** Asks the server to stop, and waits until its process has ended. */
  exit(): Promise<void>;
}

/** Forks `file` (which sends `{ port }` once listening) and waits for its port. */
export async function forkServer(
  file: string,
  args: readonly string[] = [],
  execArgv: readonly string[] = [],
): Promise<ChildServer> {
  const child = fork(file, [...args], { execArgv: [...execArgv] });
  const ask = <T>(message: string, field: string): Promise<T> =>
    new Promise((resolve, reject) => {
      const onMessage = (reply: Record<string, unknown>): void => {
        if (!(field in reply)) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(reply[field] as T);
      };
      const onExit = (code: number | null): void =>
        reject(new Error(`the bench server ${file} ended (exit ${code}) before it answered`));
      child.on('message', onMessage);
      child.once('exit', onExit);
      if (message !== '') child.send(message);
    });
  const port = await ask<number>('', 'port');
  return {
    port,
    cpu: () => ask<NodeJS.CpuUsage>('cpu', 'cpu'),
    exit: () =>
      new Promise((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once('exit', () => resolve());
        child.send('exit');
      }),
  };
}

export interface RouteLoad {
  readonly path: string;
  /** 'fresh': a new Idempotency-Key each request; 'one': the same for all; 'none': no key. */
  readonly keys: 'fresh' | 'one' | 'none';
  readonly body: string;
  readonly connections: number;
  readonly seconds: number;
}

export interface RouteRun {
  readonly reqPerS: number;
  /** The server process's CPU µs (user + system) per request. */
  readonly cpuUs: number;
  /** Answers that were not 2xx, and requests that failed or timed out. */
  readonly failed: number;
}

let keyCount = 0;

/** One autocannon run against `load.path` of the server. */
export async function loadRoute(server: ChildServer, load: RouteLoad): Promise<RouteRun> {
  const prefix = `${process.pid}-${Date.now()}`;
  const request: AutocannonRequest = {
    method: 'POST',
    path: load.path,
    headers: {
      'content-type': 'application/json',
      ...(load.keys === 'one' ? { 'idempotency-key': 'the-one-key' } : {}),
    },
    body: load.body,
    ...(load.keys === 'fresh'
      ? {
          setupRequest: (r: AutocannonRequest) => ({
            ...r,
            headers: { ...r.headers, 'idempotency-key': `k-${prefix}-${++keyCount}` },
          }),
        }
      : {}),
  };
  const before = await server.cpu();
  const result = await autocannon({
    url: `http://127.0.0.1:${server.port}`,
    connections: load.connections,
    duration: load.seconds,
    requests: [request],
  });
  const after = await server.cpu();
  const cpu = after.user - before.user + (after.system - before.system);
  return {
    reqPerS: result.requests.total / load.seconds,
    cpuUs: cpu / Math.max(1, result.requests.total),
    failed: result.non2xx + result.errors + result.timeouts,
  };
}
